"""The consoles the command line writes to, and how text from files, models and users is shown.

Such text is never read as rich markup or emoji codes: `hundred.jsonl:100:` stays as written,
`[red]` in a model's answer is printed, not applied. Nor does it reach the terminal as control
characters: an id or goal holding `ESC ]0;...` (which would retitle the window) or a newline is
printed escaped, `\\x1b]0;...`, by `printable`, which `say` and `literal` apply.
"""

from __future__ import annotations

import re

from rich.console import Console
from rich.text import Text

from planverify.records.redaction import scrub

err = Console(stderr=True, emoji=False, highlight=False)  # messages, progress
out = Console(emoji=False, highlight=False)  # results and tables

# C0 and C1 controls, DEL, and the bidirectional overrides and isolates that reorder text
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object) -> str:
    """Text with every control character escaped, safe to print on a terminal.

    >>> printable("ep\\x1b]0;pwned\\x07 1\\nnext")
    'ep\\\\x1b]0;pwned\\\\x07 1\\\\x0anext'
    """
    return _CONTROL.sub(_escape, str(text))


def say(console: Console, label: str, style: str, message: str) -> None:
    """Print `label message` with the label styled and the message exactly as it is, but for
    control characters (escaped) and the user info of URLs (credentials are never printed)."""
    console.print(Text.assemble((label, style), " ", printable(scrub(message))), soft_wrap=True)


def literal(text: object, style: str = "") -> Text:
    """A table cell or line shown exactly as written (control characters escaped)."""
    return Text(printable(text), style=style)
