"""`planverify convert`: TEACh game files, or VirtualHome programs, as episodes (JSONL)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Literal, Protocol

import typer

from planverify.cli.shared import (
    check_clash,
    check_output,
    check_sources,
    fail,
    writing,
)
from planverify.records.episode import Episode, EpisodeError, dump_jsonl_line
from planverify.runs.console import err, literal, out, say


def convert(
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Write the episodes here as JSONL.")
    ],
    inputs: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="INPUTS",
            help="TEACh game files (*.game.json), directories or globs; with --from virtualhome, "
            "one folder (or file) of VirtualHome programs, by default the installed eai-eval's.",
        ),
    ] = None,
    split: Annotated[
        str | None,
        typer.Option(
            help="Keep only games under a directory of this name (train, valid_seen, ...)."
        ),
    ] = None,
    source: Annotated[
        Literal["teach", "virtualhome"],
        typer.Option("--from", help="What the inputs are: TEACh games or VirtualHome programs."),
    ] = "teach",
) -> None:
    """Convert TEACh game files (or VirtualHome programs) into episode records (the input of
    verify, corrupt and score)."""
    if source == "virtualhome":
        convert_virtualhome(inputs or [], output, split)
        return
    if not inputs:
        raise fail("missing argument 'INPUTS...': TEACh game files, directories or globs")
    from planverify.inputs.teach import LoadSummary, iter_games

    check_sources(inputs, split, games_only=True)
    check_output(output)
    check_clash([output], inputs, split)
    summary = LoadSummary()
    write_episodes(summary.track(iter_games(inputs, split=split)), output, summary)


def convert_virtualhome(inputs: list[str], output: Path, split: str | None) -> None:
    """Every VirtualHome program under one path (by default, the installed package's) as an
    episode record."""
    from planverify.domains import DomainUnavailable, domain_of

    if split is not None:
        raise fail("--split is for TEACh games; VirtualHome programs have no splits")
    if len(inputs) > 1:
        raise fail(f"--from virtualhome reads one folder or file of programs, not {len(inputs)}")
    path = Path(inputs[0]) if inputs else None
    if path is not None and not path.exists():
        raise fail(f"no such file or directory: {path}")
    check_output(output)
    check_clash([output], inputs, None)
    summary = ProgramSummary()
    try:
        records = domain_of("virtualhome").records(path)
        write_episodes(summary.track(records), output, summary)
    except DomainUnavailable as exc:
        raise fail(str(exc)) from None


class Summary(Protocol):
    """What a conversion counts."""

    read: int  # episodes written
    skipped: int  # sources (or records) left out, each said on stderr


class ProgramSummary:
    """Counts of a conversion of VirtualHome programs: read and skipped."""

    def __init__(self) -> None:
        self.read = 0
        self.skipped = 0

    def track(self, items: Iterable[Episode | EpisodeError]) -> Iterable[Episode | EpisodeError]:
        """Pass `items` through, counting each."""
        for item in items:
            if isinstance(item, EpisodeError):
                self.skipped += 1
            else:
                self.read += 1
            yield item

    def __str__(self) -> str:
        return f"read {self.read} program(s), skipped {self.skipped}"


def write_episodes(
    items: Iterable[Episode | EpisodeError],
    output: Path,
    summary: Summary,
) -> None:
    """Write the episodes to `output` (replaced only when there is one), say each error, and
    exit 1 when any item was skipped."""
    from planverify.stores.files import replacing

    with writing(output), replacing(output) as temporary, temporary.open("wb") as sink:
        for item in items:
            if isinstance(item, EpisodeError):
                say(err, "skipped", "red", str(item))
            else:
                sink.write(dump_jsonl_line(item))
        if summary.read == 0:  # an existing output is only replaced by episodes
            raise fail(f"{summary}: no episode to write; {output} is left as it was", 1)
    out.print(literal(f"{summary}; wrote {summary.read} episode(s) to {output}"))
    if summary.skipped:
        raise typer.Exit(1)
