"""`planverify corrupt`: inject labelled errors into episodes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
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


InputsArgument = Annotated[
    list[str],
    typer.Argument(
        metavar="INPUTS",
        help="Episodes: JSONL files, or TEACh game files, directories and globs.",
    ),
]
OutputOption = Annotated[
    Path, typer.Option("--output", "-o", help="Write the annotated episodes here as JSONL.")
]
SeedOption = Annotated[int, typer.Option(help="Random seed; the same seed gives the same output.")]
ErrorsPerEpisodeOption = Annotated[
    str, typer.Option(help="Errors injected per corrupted episode, LOW..HIGH.")
]
CleanFractionOption = Annotated[
    float, typer.Option(min=0.0, max=1.0, help="Share of episodes left without errors.")
]
MaxStepsOption = Annotated[
    int, typer.Option(min=1, help="Keep episodes with at most this many non-dialogue steps.")
]
GameSplitOption = Annotated[
    str | None, typer.Option(help="TEACh inputs: keep only games under this directory name.")
]
GeneratorOption = Annotated[
    GeneratorChoice,
    typer.Option(
        help="injected (the paper's error taxonomy) or natural (human-like mistakes), on "
        "TEACh episodes; virtualhome: one labelled error per VirtualHome program (records "
        "of `convert --from virtualhome`), checked by its simulator."
    ),
]


def corrupt(
    inputs: InputsArgument,
    output: OutputOption,
    seed: SeedOption = 0,
    errors_per_episode: ErrorsPerEpisodeOption = "1..3",
    clean_fraction: CleanFractionOption = 0.2,
    max_steps: MaxStepsOption = 25,
    split: GameSplitOption = None,
    generator: GeneratorOption = "injected",
) -> None:
    """Inject labelled errors (detours, misplacements, needless toggles, ...) into real episodes."""
    from planverify.noise import GENERATORS, CorruptSummary
    from planverify.stores.files import replacing

    bounds = _range(errors_per_episode)
    _check_files(inputs, split, output)
    episodes = _Unannotated(inputs, split)
    summary = CorruptSummary()
    make = _virtualhome() if generator == "virtualhome" else GENERATORS[generator]
    with writing(output), replacing(output) as temporary, temporary.open("wb") as sink:
        for episode in make(
            iter(episodes),
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
    if episodes.skipped:
        raise typer.Exit(1)


def _check_files(inputs: list[str], split: str | None, output: Path) -> None:
    """A usage error (exit 2) when the inputs cannot be read as episodes without labels, or
    the output cannot be written or is one of them."""
    check_sources(inputs, split, labelled=False)
    check_output(output)
    check_clash([output], inputs, split)


@dataclass
class _Unannotated:
    """The episodes of the inputs, in order; a line that is unreadable, already annotated or
    an id seen before is said and counted in `skipped` instead."""

    inputs: list[str]
    split: str | None
    skipped: int = 0

    def __iter__(self) -> Iterator[Episode]:
        from planverify.inputs.sources import iter_inputs

        seen: dict[str, str] = {}
        for item in iter_inputs(self.inputs, split=self.split):
            problem = _problem(item, seen)
            if problem is not None:
                self.skipped += 1
                say(err, "skipped", "red", problem)
                continue
            assert isinstance(item, Episode)
            seen[item.id] = item.origin
            yield item


def _problem(item: Episode | EpisodeError, seen: dict[str, str]) -> str | None:
    """Why an input item is not corrupted (`seen`: the origin of each id so far), or None."""
    if isinstance(item, EpisodeError):
        return str(item)
    if item.labels is not None:
        return f"{item.origin}: {item.id} is already annotated"
    if item.id in seen:
        return f"{item.origin}: episode id {item.id!r} appears more than once (first at {seen[item.id]})"
    return None
