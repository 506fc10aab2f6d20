"""Verifying a stream of episodes: bounded concurrency, progress, and an output file that is
written as results arrive and rewritten in input order at the end."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

import orjson
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from planverify.costs import Spend
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
        TextColumn("{task.fields[tokens]} tokens {task.fields[cost]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    return Progress(*columns, console=err, transient=True, disable=not err.is_terminal)


def read_journal(path: Path, key: str) -> dict[str, VerificationResult]:
    """Finished results in a partial output written under the same settings (`key`).

    A line cut short by a kill, or written under other settings, is ignored.
    """
    done: dict[str, VerificationResult] = {}
    if not path.is_file():
        return done
    with path.open("rb") as fh:
        for line in fh:
            try:
                record = orjson.loads(line)
                if record.get("settings") != key:
                    continue
                result = VerificationResult.model_validate(record["result"])
            except (orjson.JSONDecodeError, ValueError, KeyError, TypeError, AttributeError):
                continue
            if result.status == "ok":
                done[result.id] = result
    return done


def read_results(path: Path) -> dict[str, VerificationResult]:
    """The records of an output file by id (unreadable lines are skipped)."""
    found: dict[str, VerificationResult] = {}
    with path.open("rb") as fh:
        for line in fh:
            try:
                result = VerificationResult.model_validate_json(line)
            except ValueError:
                continue
            found.setdefault(result.id, result)
    return found


def write_atomically(path: Path, lines: Iterable[bytes]) -> None:
    """Write a file through a temporary sibling and a rename, so it is never seen half written."""
    temporary = path.with_name(path.name + ".tmp")
    with temporary.open("wb") as fh:
        for line in lines:
            fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(temporary, path)


async def run_batch(
    verifier: Any,
    items: Iterable[Episode | EpisodeError],
    *,
    total: int,
    limit: int | None,
    goal: GoalMode,
    output: Path | None,
    concurrency: int,
    reuse: Mapping[str, VerificationResult] | None = None,
) -> tuple[list[VerificationResult], int]:
    """Verify episodes as they stream in, at most `concurrency` at once.

    Each result is appended to `OUTPUT.partial` (with the run's settings key) as it finishes;
    at the end `OUTPUT` is written in input order, atomically, and the partial file removed.
    Results in `reuse`, and finished results in a partial file left by an interrupted run with
    the same settings, are taken as they are instead of verifying those episodes again.
    Returns the results and the number of skipped inputs.
    """
    key = str(getattr(verifier, "key", ""))
    partial = output.with_name(output.name + ".partial") if output else None
    known: dict[str, VerificationResult] = dict(reuse or {})
    if partial is not None:
        partial.parent.mkdir(parents=True, exist_ok=True)
        known.update(read_journal(partial, key))
    sink = partial.open("ab") if partial else None
    order: list[str] = []
    seen: set[str] = set()
    results: dict[str, VerificationResult] = {}
    skipped = 0
    gate = asyncio.Semaphore(concurrency)
    running: set[asyncio.Task[None]] = set()
    failed: set[str] = set()  # ids of episodes that ended in an error
    with progress_bar() as progress:
        spend = Spend(dict(getattr(verifier, "models", {})))
        task = progress.add_task("verify", total=total, failed=0, tokens=0, cost="")

        def finish(result: VerificationResult, *, record: bool) -> None:
            if result.status == "error":
                failed.add(result.id)
            results[result.id] = result
            if sink is not None and record:
                sink.write(
                    orjson.dumps({"settings": key, "result": result.model_dump(mode="json")})
                    + b"\n"
                )
                sink.flush()
            if record:
                spend.add(result.usage)
            cost = spend.describe() if spend.tokens else ""
            progress.update(task, advance=1, failed=len(failed), tokens=spend.tokens, cost=cost)

        async def one(episode: Episode) -> None:
            try:
                result = await verifier.averify(episode)
            finally:
                gate.release()
            finish(result, record=True)

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
                order.append(item.id)
                seen.add(item.id)
                if item.id in known:
                    finish(known[item.id], record=False)
                    continue
                await gate.acquire()
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
        # input order, whatever order episodes finished in
        write_atomically(
            output, (dump_jsonl_line(results[i].model_dump(mode="json")) for i in order)
        )
        partial.unlink()
    return [results[i] for i in order], skipped
