"""Verifying a stream of episodes: bounded concurrency, progress, and an output file that is
written as results arrive and rewritten in input order at the end."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from planverify.episode import Episode, EpisodeError, dump_jsonl_line
from planverify.result import VerificationResult

GoalMode = Literal["given", "dialogue", "infer"]
err = Console(stderr=True)


def with_goal(episode: Episode, mode: GoalMode) -> Episode:
    if mode == "given":
        return episode
    if mode == "infer":
        return episode.model_copy(update={"goal": None})
    said = [a.text or "" for a in episode.parsed() if a.is_dialogue and a.agent == "Commander"]
    return episode.model_copy(update={"goal": " ".join(said) or episode.goal})


def progress_bar() -> Progress:
    columns = (
        TextColumn("[bold]verifying"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[failed]} failed"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    return Progress(*columns, console=err, transient=True, disable=not err.is_terminal)


async def run_batch(
    verifier: Any,
    items: Iterable[Episode | EpisodeError],
    *,
    total: int,
    limit: int | None,
    goal: GoalMode,
    output: Path | None,
    concurrency: int,
) -> tuple[list[VerificationResult], int]:
    """Verify episodes as they stream in, at most `concurrency` at once.

    Results are appended to `OUTPUT.partial` as they finish; at the end the output is written in
    input order and the partial file removed. Returns the results and the number of skipped inputs.
    """
    partial = output.with_name(output.name + ".partial") if output else None
    if partial is not None:
        partial.parent.mkdir(parents=True, exist_ok=True)
    sink = partial.open("wb") if partial else None
    order: list[str] = []
    seen: set[str] = set()
    results: dict[str, VerificationResult] = {}
    skipped = 0
    gate = asyncio.Semaphore(concurrency)
    running: set[asyncio.Task[None]] = set()
    with progress_bar() as progress:
        task = progress.add_task("verify", total=total, failed=0)

        async def one(episode: Episode) -> None:
            try:
                result = await verifier.averify(episode)
            finally:
                gate.release()
            results[episode.id] = result
            if sink is not None:
                sink.write(dump_jsonl_line(result.model_dump(mode="json")))
                sink.flush()
            failed = sum(r.status == "error" for r in results.values())
            progress.update(task, advance=1, failed=failed)

        try:
            for item in items:
                if limit is not None and len(order) >= limit:
                    break
                if isinstance(item, Episode) and item.id in seen:
                    where = (item.model_extra or {}).get("source", "input")
                    message = f"episode id {item.id!r} appears more than once; ids must be unique"
                    item = EpisodeError(str(where), 0, message)
                if isinstance(item, EpisodeError):
                    skipped += 1
                    err.print(f"[red]skipped[/] {item}", highlight=False, soft_wrap=True)
                    progress.update(task, total=max(total - skipped, 0))
                    continue
                await gate.acquire()
                order.append(item.id)
                seen.add(item.id)
                job = asyncio.create_task(one(with_goal(item, goal)))
                running.add(job)
                job.add_done_callback(running.discard)
            if running:
                await asyncio.gather(*running)
        finally:
            for job in running:
                job.cancel()
            if sink is not None:
                sink.close()
    if output is not None and partial is not None:
        with output.open("wb") as fh:  # input order, whatever order episodes finished in
            for episode_id in order:
                fh.write(dump_jsonl_line(results[episode_id].model_dump(mode="json")))
        partial.unlink()
    return [results[i] for i in order], skipped
