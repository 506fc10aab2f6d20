"""`planverify show`: an episode's stored runs, pass by pass, from a checkpoint store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from planverify.cli.shared import (
    DEFAULT_CHECKPOINT,
    fail,
)
from planverify.runs.console import literal, out, printable


def show(
    episode_id: Annotated[str, typer.Argument(metavar="ID", help="Episode id.")],
    checkpoint: Annotated[
        str, typer.Option(help="SQLite checkpoint file or postgresql:// URL written by verify.")
    ] = str(DEFAULT_CHECKPOINT),
) -> None:
    """Print an episode's iterations (critiques and edits) from the checkpoint store."""
    from planverify.api import is_postgres_url
    from planverify.stores.checkpoints import StoreError, episode_threads, load_history

    if not is_postgres_url(checkpoint) and not Path(checkpoint).is_file():
        raise fail(f"no checkpoint file at {checkpoint}")
    try:
        threads = episode_threads(checkpoint, episode_id)
        if not threads:
            raise fail(f"episode {episode_id!r} is not in {checkpoint}")
        runs = [(thread, load_history(checkpoint, thread)) for thread in threads]
    except StoreError as exc:
        raise fail(str(exc)) from None
    for thread, stored in runs:
        state = stored.state
        out.rule(style="bold")
        lines: list[Text] = [  # whole, never cut to the width: runs differ by these lines
            literal(f"{episode_id}: {stored.label()}", style="bold"),
            literal(f"started {stored.start_time()}"),
            literal(f"input digest {state.input_digest or 'not recorded'}"),
            literal(f"thread {thread}, {stored.checkpoints} checkpoints", style="dim"),
            literal(f"goal: {state.goal}"),
        ]
        for record in state.history:
            lines.append(Text(f"Judge pass {record.iteration}", style="bold"))
            if not record.critique.objections:
                lines.append(Text("  no objections"))
            for flag in record.critique.flags:
                lines.append(literal(f"  flag    {flag.step + 1}. {flag.action}  - {flag.reason}"))
            for missing in record.critique.missing:
                lines.append(literal(f"  missing {missing.description}"))
            for dropped in record.critique.dropped + record.dropped:
                lines.append(literal(f"  dropped {dropped.text!r}: {dropped.why}"))
            for edit in record.edits:
                style = "red" if edit.kind == "remove" else "green"
                action = printable(edit.action)
                lines.append(Text.assemble("  ", (f"{edit.kind:7}", style), f" {action}"))
        lines.append(literal(f"stop: {state.stop_reason or 'not finished'}; refined plan:"))
        lines += [literal(f"  {i}. {line}") for i, line in enumerate(state.lines(), start=1)]
        for line in lines:
            line.overflow = "fold"  # long actions and reasons wrap at the terminal's width
            out.print(line)
