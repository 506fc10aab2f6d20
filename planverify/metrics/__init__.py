"""Scoring verification results against annotated episodes: recall, precision and F1 over errors,
at label and plan level, per evidence level, with bootstrap intervals.

May import `records` and `world`.
"""
