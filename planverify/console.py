"""The consoles the command line writes to, and how text from files, models and users is shown.

Such text is never read as rich markup or emoji codes: `hundred.jsonl:100:` stays as written,
`[red]` in a model's answer is printed, not applied.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from planverify.redaction import scrub

err = Console(stderr=True, emoji=False, highlight=False)  # messages, progress
out = Console(emoji=False, highlight=False)  # results and tables


def say(console: Console, label: str, style: str, message: str) -> None:
    """Print `label message` with the label styled and the message exactly as it is, but for
    the user info of URLs in it (credentials are never printed)."""
    console.print(Text.assemble((label, style), " ", scrub(message)), soft_wrap=True)


def literal(text: object) -> Text:
    """A table cell or line shown exactly as written."""
    return Text(str(text))
