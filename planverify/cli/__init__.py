"""The `planverify` command line: one module per command, with shared options in one place.

The top layer: may import everything else.
"""

from planverify.cli.program import app, main

__all__ = ["app", "main"]
