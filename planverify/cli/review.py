"""`planverify review`: a Typer command function, registered by `planverify.cli.program`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from planverify.cli.export import episode_inputs
from planverify.cli.options import SplitOption
from planverify.cli.shared import fail
from planverify.runs.console import err, literal, out, say

if TYPE_CHECKING:
    from planverify.records.episode import Episode
    from planverify.review import Entry, Site

ResultsArgument = Annotated[
    list[str],
    typer.Argument(metavar="RESULTS", help="Results of `planverify verify` (JSONL)."),
]
HtmlOption = Annotated[
    Path,
    typer.Option(
        "--html",
        help="Write the review site into this folder (new, empty, or an earlier site's).",
    ),
]
EpisodesOption = Annotated[
    list[str] | None,
    typer.Option(
        "--episodes",
        help="The input episodes (JSONL, TEACh games, directories, globs): their task "
        "family, split and source are shown. Without them, what the results hold.",
    ),
]
TitleOption = Annotated[
    str | None, typer.Option(help="The site's title (default: the results file name).")
]


def review_command(
    arguments: ResultsArgument,
    html: HtmlOption,
    episodes: EpisodesOption = None,
    split: SplitOption = None,
    title: TitleOption = None,
) -> None:
    """Build a static review site: episode table, plans side by side, decisions to export."""
    from planverify.review import build_site

    if html.exists() and not html.is_dir():
        raise fail(f"--html {html} is a file; give a folder")
    results, inputs = _results_and_inputs(arguments, episodes, split)
    entries = _read_entries(results, inputs, split, html)
    mismatched, skipped = _attach_inputs(entries, inputs, split)
    site = build_site(entries, html, title=title or results.name, mismatched=mismatched)
    _tell(entries, site, html)
    if skipped or mismatched:
        raise typer.Exit(1)


def _results_and_inputs(
    arguments: list[str], episodes: list[str] | None, split: str | None
) -> tuple[Path, list[str]]:
    """RESULTS and the episode inputs, after a usage error (exit 2) for unusable inputs."""
    from planverify.inputs.sources import InputError, check_inputs

    if episodes or len(arguments) > 1:
        results, inputs = episode_inputs(arguments, episodes)
        try:
            check_inputs(inputs, split=split)
        except InputError as exc:
            raise fail(str(exc)) from None
        return results, inputs
    return Path(arguments[0]), []


def _read_entries(results: Path, inputs: list[str], split: str | None, html: Path) -> list[Entry]:
    """The entries of the results file, after an error when it or the folder cannot be used or
    the site would write over an input (exit 2), or when it holds nothing to review (exit 1)."""
    from planverify.inputs.sources import input_files
    from planverify.records.jsonl import UnusableFile
    from planverify.review import ReviewError, SiteRefused, earlier_files, read_entries, site_files
    from planverify.stores.files import OutputClash, clash

    try:
        entries = read_entries(results)
        earlier = earlier_files(html)
        files = [html / name for name in [*earlier, *site_files(entries)]]
        clash(files, [results, *input_files(inputs, split=split)])
    except (UnusableFile, SiteRefused, OutputClash) as exc:
        raise fail(str(exc)) from None
    except ReviewError as exc:
        raise fail(f"{exc}; {html} is left as it was" if html.exists() else str(exc), 1) from None
    return entries


def _attach_inputs(
    entries: list[Entry], inputs: list[str], split: str | None
) -> tuple[list[str], int]:
    """Give the entries their input episodes, warning of the unreadable and the mismatched
    ones: the ids of episodes with other content than their results, and the number skipped."""
    from planverify.inputs.sources import iter_inputs
    from planverify.records.episode import EpisodeError
    from planverify.review import attach

    skipped = 0

    def readable() -> Iterator[Episode]:
        nonlocal skipped
        for item in iter_inputs(inputs, split=split):
            if isinstance(item, EpisodeError):
                skipped += 1
                say(err, "skipped", "red", str(item))
            else:
                yield item

    mismatched = attach(entries, readable())
    if mismatched:
        say(
            err,
            "warning:",
            "yellow",
            f"{len(mismatched)} input episode(s) have other content than their results "
            f"(their metadata is not shown), e.g. {', '.join(mismatched[:3])}",
        )
    return mismatched, skipped


def _tell(entries: list[Entry], site: Site, html: Path) -> None:
    """What was written and where to open it, then the optional steps, when there are some."""
    index = (html / "index.html").resolve()
    out.print(
        literal(
            f"{len(entries)} episode(s); wrote {site.files} files, {site.bytes_total / 1e6:.1f} MB "
            f"({site.bytes_first_view / 1e3:.0f} kB for the first view); open {index.as_uri()}"
        )
    )
    optional = sum(entry.optional for entry in entries)
    if optional:
        out.print(
            literal(
                f"{optional} optional step(s): kept under natural, removed under minimal; the "
                f"site opens on {site.trim}"
            )
        )
