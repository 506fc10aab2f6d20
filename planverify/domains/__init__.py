"""Household domains beside TEACh, each behind a small API of its own.

Nothing in the core imports a domain yet: the domain interface that will make TEACh one domain
among others wraps these APIs later.
"""
