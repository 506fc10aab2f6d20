"""What flows through everything: episodes in the action notation, critiques, evidence levels, the
history of a run and its result record, token usage, and the redaction of secrets in them.

The bottom layer: imports nothing else of planverify.
"""
