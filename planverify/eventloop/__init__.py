"""Running on the event loop: the async pipeline from sync code, and turn-taking of episodes' CPU
work.

A bottom layer: imports nothing else of planverify.
"""
