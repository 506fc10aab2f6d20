"""The two labelled-error generators: `injected` (the paper's error taxonomy) and `natural`
(human-like mistakes), and what they share.

May import `records` and `world`.
"""
