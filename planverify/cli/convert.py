"""`planverify convert`: TEACh game files as episodes (JSONL)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from planverify.cli.shared import (
    check_clash,
    check_output,
    check_sources,
    fail,
    writing,
)
from planverify.records.episode import EpisodeError, dump_jsonl_line
from planverify.runs.console import err, literal, out, say


def convert(
    inputs: Annotated[
        list[str],
        typer.Argument(
            metavar="INPUTS", help="TEACh game files (*.game.json), directories or globs."
        ),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Write the episodes here as JSONL.")
    ],
    split: Annotated[
        str | None,
        typer.Option(
            help="Keep only games under a directory of this name (train, valid_seen, ...)."
        ),
    ] = None,
) -> None:
    """Convert TEACh game files into episode records (the input of verify, corrupt and score)."""
    from planverify.inputs.teach import LoadSummary, iter_games
    from planverify.stores.files import replacing

    check_sources(inputs, split, games_only=True)
    check_output(output)
    check_clash([output], inputs, split)
    summary = LoadSummary()
    with writing(output), replacing(output) as temporary, temporary.open("wb") as sink:
        for item in summary.track(iter_games(inputs, split=split)):
            if isinstance(item, EpisodeError):
                say(err, "skipped", "red", str(item))
            else:
                sink.write(dump_jsonl_line(item))
        if summary.read == 0:  # an existing output is only replaced by episodes
            raise fail(f"{summary}: no episode to write; {output} is left as it was", 1)
    out.print(literal(f"{summary}; wrote {summary.read} episode(s) to {output}"))
    if summary.skipped:
        raise typer.Exit(1)
