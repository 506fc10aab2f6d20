"""`planverify corrupt`: inject labelled errors into episodes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Literal

import typer

from planverify.cli.shared import (
    check_clash,
    check_output,
    check_sources,
    fail,
    writing,
)
from planverify.noise import Generator
from planverify.records.episode import Episode, EpisodeError, dump_jsonl_line
from planverify.runs.console import err, literal, out, say

GeneratorChoice = Literal["injected", "natural", "virtualhome"]
"""`--generator`: TEACh's generators (`planverify.noise.GENERATORS`), then VirtualHome's."""


def _range(text: str) -> tuple[int, int]:
    low, _, high = text.partition("..")
    try:
        bounds = (int(low), int(high or low))
    except ValueError:
        raise fail(f"--errors-per-episode must look like 1..3 or 2, not {text!r}") from None
    if not 0 <= bounds[0] <= bounds[1]:
        raise fail(f"--errors-per-episode must be LOW..HIGH with 0 <= LOW <= HIGH, not {text!r}")
    return bounds


def _virtualhome() -> Generator:
    """VirtualHome's error generator, through the domain registry."""
    from planverify.domains import DomainUnavailable, domain_of

    try:
        return domain_of("virtualhome").corrupt
    except DomainUnavailable as exc:
        raise fail(str(exc)) from None


def corrupt(
    inputs: Annotated[
        list[str],
        typer.Argument(
            metavar="INPUTS",
            help="Episodes: JSONL files, or TEACh game files, directories and globs.",
        ),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Write the annotated episodes here as JSONL.")
    ],
    seed: Annotated[
        int, typer.Option(help="Random seed; the same seed gives the same output.")
    ] = 0,
    errors_per_episode: Annotated[
        str, typer.Option(help="Errors injected per corrupted episode, LOW..HIGH.")
    ] = "1..3",
    clean_fraction: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Share of episodes left without errors.")
    ] = 0.2,
    max_steps: Annotated[
        int, typer.Option(min=1, help="Keep episodes with at most this many non-dialogue steps.")
    ] = 25,
    split: Annotated[
        str | None, typer.Option(help="TEACh inputs: keep only games under this directory name.")
    ] = None,
    generator: Annotated[
        GeneratorChoice,
        typer.Option(
            help="injected (the paper's error taxonomy) or natural (human-like mistakes), on "
            "TEACh episodes; virtualhome: one labelled error per VirtualHome program (records "
            "of `convert --from virtualhome`), checked by its simulator."
        ),
    ] = "injected",
) -> None:
    """Inject labelled errors (detours, misplacements, needless toggles, ...) into real episodes."""
    from planverify.inputs.sources import iter_inputs
    from planverify.noise import GENERATORS, CorruptSummary
    from planverify.stores.files import replacing

    bounds = _range(errors_per_episode)
    check_sources(inputs, split, labelled=False)
    check_output(output)
    check_clash([output], inputs, split)
    skipped = 0
    seen: dict[str, str] = {}

    def episodes() -> Iterator[Episode]:
        nonlocal skipped
        for item in iter_inputs(inputs, split=split):
            problem = None
            if isinstance(item, EpisodeError):
                problem = str(item)
            elif item.labels is not None:
                problem = f"{item.origin}: {item.id} is already annotated"
            elif item.id in seen:
                problem = f"{item.origin}: episode id {item.id!r} appears more than once (first at {seen[item.id]})"
            if problem is not None:
                skipped += 1
                say(err, "skipped", "red", problem)
                continue
            assert isinstance(item, Episode)
            seen[item.id] = item.origin
            yield item

    summary = CorruptSummary()
    make = _virtualhome() if generator == "virtualhome" else GENERATORS[generator]
    with writing(output), replacing(output) as temporary, temporary.open("wb") as sink:
        for episode in make(
            episodes(),
            seed=seed,
            errors_per_episode=bounds,
            clean_fraction=clean_fraction,
            max_steps=max_steps,
            summary=summary,
        ):
            sink.write(dump_jsonl_line(episode))
        written = summary.clean + summary.corrupted
        if not written:  # an existing output is only replaced by episodes
            raise fail(f"{summary}: no episode to write; {output} is left as it was", 1)
    out.print(literal(f"{summary}; wrote {written} to {output}"))
    if skipped:
        raise typer.Exit(1)
