"""`planverify presets`: the named model presets."""

from __future__ import annotations

import os

from rich.table import Table

from planverify.llm.models import presets
from planverify.runs.console import literal, out, printable


def list_presets() -> None:
    """List the named model presets (override them with a TOML file in $PLANVERIFY_PRESETS)."""
    table = Table.grid(padding=(0, 2))
    table.add_column(no_wrap=True, style="bold")
    table.add_column(overflow="fold", ratio=1)  # the spec line is whole; the note wraps
    for name, entry in presets(os.environ.get("PLANVERIFY_PRESETS")).items():
        details = literal(entry.get("spec"), style="bold")
        if paper := entry.get("paper_model"):
            details.append(f"\npaper's model: {printable(paper)}")
        if note := entry.get("note"):
            details.append(f"\n{printable(note)}", style="dim")
        table.add_row(literal(name), details)
        table.add_row("", "")
    out.print(table)
