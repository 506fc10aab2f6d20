"""`planverify show`: an episode's stored runs, pass by pass, from a checkpoint store."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from planverify.cli.shared import DEFAULT_CHECKPOINT, fail, known_stores
from planverify.records.critique import Flag
from planverify.records.history import Edit, Iteration
from planverify.runs.console import err, literal, out, printable, say


def show(
    episode_id: Annotated[str, typer.Argument(metavar="ID", help="Episode id.")],
    checkpoint: Annotated[
        str | None,
        typer.Option(
            help="SQLite checkpoint file or postgresql:// URL written by verify (default: "
            f"{DEFAULT_CHECKPOINT}, or the store under {DEFAULT_CHECKPOINT.parent} that holds "
            "ID, such as make demo's).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Print an episode's iterations (critiques and edits) from the checkpoint store."""
    from planverify.stores.checkpoints import StoreError, load_history

    store, threads = _find(episode_id, checkpoint)
    try:
        runs = [(thread, load_history(store, thread)) for thread in threads]
    except StoreError as exc:
        raise fail(str(exc)) from None
    several = len(runs) > 1  # only then do the digest and thread tell the runs apart
    for thread, stored in runs:
        state = stored.state
        out.rule(style="bold")
        lines: list[Text] = [  # whole, never cut to the width: runs differ by these lines
            literal(f"{episode_id}: {stored.label()}", style="bold"),
            literal(f"started {stored.start_time()}"),
        ]
        if several:
            lines.append(literal(f"input digest {state.input_digest or 'not recorded'}"))
            lines.append(literal(f"thread {thread}, {stored.checkpoints} checkpoints", "dim"))
        lines.append(literal(f"goal: {state.goal}"))
        for record in state.history:
            lines += _pass_lines(record)
        lines.append(literal(f"stop: {state.stop_reason or 'not finished'}; refined plan:"))
        lines += [literal(f"  {i}. {line}") for i, line in enumerate(state.lines(), start=1)]
        for line in lines:
            line.overflow = "fold"  # long actions and reasons wrap at the terminal's width
            out.print(line)


def _find(episode_id: str, checkpoint: str | None) -> tuple[str, list[str]]:
    """The store to read and the episode's threads in it: the one given, else the first known
    store that holds the episode (the default one first); a usage error naming what was
    searched when there is none."""
    from planverify.api import is_postgres_url
    from planverify.stores.checkpoints import StoreError, episode_threads

    given = checkpoint is not None
    stores = [checkpoint] if checkpoint is not None else [str(s) for s in known_stores()]
    if not given and not stores:
        raise fail(
            f"no checkpoint file at {DEFAULT_CHECKPOINT}: `planverify verify` keeps its "
            "checkpoints there (make demo's go under "
            f"{DEFAULT_CHECKPOINT.parent / 'demo'}); run verify first, or give --checkpoint FILE"
        )
    for store in stores:
        if not is_postgres_url(store) and not Path(store).is_file():
            raise fail(f"no checkpoint file at {store}")
        try:
            threads = episode_threads(store, episode_id)
        except StoreError as exc:
            if given:
                raise fail(str(exc)) from None
            continue
        if threads:
            if not given and store != str(DEFAULT_CHECKPOINT):
                say(err, "reading", "dim", f"{store} (give --checkpoint for another store)")
            return store, threads
    searched = ", ".join(stores)
    hint = "" if given else "; give --checkpoint FILE for a store elsewhere"
    raise fail(f"episode {episode_id!r} is not in {searched}{hint}")


def _pass_lines(record: Iteration) -> list[Text]:
    """One Judge pass: each removal once (with its step number and reason), the flags that
    led to none, what was missing, dropped and inserted; a reason shared by neighbouring
    lines is said once, after them."""
    lines = [Text(f"Judge pass {record.iteration}", style="bold")]
    if not record.critique.objections:
        lines.append(Text("  no objections"))
    items: list[tuple[str, str, str | None]] = list(_removals(record.critique.flags, record.edits))
    items += [("missing", missing.description, None) for missing in record.critique.missing]
    items += [
        ("dropped", f"{d.text!r}: {d.why}", None) for d in record.critique.dropped + record.dropped
    ]
    items += [("insert", edit.action, None) for edit in record.edits if edit.kind == "insert"]
    for index, (kind, text, reason) in enumerate(items):
        style = {"remove": "red", "insert": "green"}.get(kind, "")
        lines.append(Text.assemble("  ", (f"{kind:7}", style), " ", printable(text)))
        following = items[index + 1][2] if index + 1 < len(items) else None
        if reason is not None and reason != following:
            lines.append(literal(f"          - {reason}", style="dim"))
    return lines


def _removals(flags: Sequence[Flag], edits: Sequence[Edit]) -> Iterator[tuple[str, str, str]]:
    """(kind, step, reason) for each flag: `remove` when an edit removed it, `flag` when none
    did (a static run, a rejected critique); then removals no flag asked for (a reviewer's)."""
    removed = [edit for edit in edits if edit.kind == "remove"]
    for flag in flags:
        match = next(
            (e for e in removed if e.action == flag.action and e.reason == flag.reason), None
        )
        if match is not None:
            removed.remove(match)
        yield ("remove" if match else "flag", f"{flag.step + 1}. {flag.action}", flag.reason)
    for edit in removed:
        yield ("remove", edit.action, edit.reason)
