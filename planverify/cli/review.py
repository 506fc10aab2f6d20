"""`planverify review`: a Typer command function, registered by `planverify.cli.program`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from planverify.cli.export import episode_inputs
from planverify.cli.options import SplitOption
from planverify.cli.shared import fail
from planverify.runs.console import err, literal, out, say


def review_command(
    arguments: Annotated[
        list[str],
        typer.Argument(metavar="RESULTS", help="Results of `planverify verify` (JSONL)."),
    ],
    html: Annotated[
        Path,
        typer.Option(
            "--html",
            help="Write the review site into this folder (new, empty, or an earlier site's).",
        ),
    ],
    episodes: Annotated[
        list[str] | None,
        typer.Option(
            "--episodes",
            help="The input episodes (JSONL, TEACh games, directories, globs): their task "
            "family, split and source are shown. Without them, what the results hold.",
        ),
    ] = None,
    split: SplitOption = None,
    title: Annotated[
        str | None, typer.Option(help="The site's title (default: the results file name).")
    ] = None,
) -> None:
    """Build a static review site: episode table, plans side by side, decisions to export."""
    from planverify.inputs.sources import InputError, check_inputs, input_files, iter_inputs
    from planverify.records.episode import Episode, EpisodeError
    from planverify.records.jsonl import UnusableFile
    from planverify.review import (
        ReviewError,
        SiteRefused,
        attach,
        build_site,
        earlier_files,
        read_entries,
        site_files,
    )
    from planverify.stores.files import OutputClash, clash

    if html.exists() and not html.is_dir():
        raise fail(f"--html {html} is a file; give a folder")
    if episodes or len(arguments) > 1:
        results, inputs = episode_inputs(arguments, episodes)
        try:
            check_inputs(inputs, split=split)
        except InputError as exc:
            raise fail(str(exc)) from None
    else:
        results, inputs = Path(arguments[0]), []
    try:
        entries = read_entries(results)
        earlier = earlier_files(html)
        files = [html / name for name in [*earlier, *site_files(entries)]]
        clash(files, [results, *input_files(inputs, split=split)])
    except (UnusableFile, SiteRefused, OutputClash) as exc:
        raise fail(str(exc)) from None
    except ReviewError as exc:
        raise fail(f"{exc}; {html} is left as it was" if html.exists() else str(exc), 1) from None
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
    site = build_site(entries, html, title=title or results.name, mismatched=mismatched)
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
    if skipped or mismatched:
        raise typer.Exit(1)
