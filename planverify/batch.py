"""Verifying a stream of episodes: bounded concurrency, progress, and an output file that is
written as results arrive and rewritten in input order at the end.

A result is reused (from `OUTPUT.partial` left by an interrupted run, or from `--retry-failed`)
only when it belongs to the episode: same id, same input digest, same settings. An existing
output file is only replaced by a run that read at least one episode.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson

from planverify.console import err, say
from planverify.costs import Spend
from planverify.episode import Episode, EpisodeError, dump_jsonl_line
from planverify.progress import PLAIN_INTERVAL, Tally, progress_for
from planverify.result import VerificationResult
from planverify.runner import fewer_collections
from planverify.teach import reason_of


@dataclass
class BatchReport:
    """What a batch did."""

    results: list[VerificationResult]  # one per episode read, in input order
    skipped: list[EpisodeError] = field(default_factory=list)  # inputs that could not be read
    stopped: str | None = None  # why the batch stopped starting episodes, if it did
    not_started: int = 0  # episodes read but never started because the batch stopped

    def skipped_by_reason(self) -> Counter[str]:
        """Skipped lines and files, by the kind of problem."""
        return Counter(reason_of(error) for error in self.skipped)


def read_journal(path: Path, key: str) -> list[VerificationResult]:
    """Finished results in a partial output written under the same settings (`key`).

    A line cut short by a kill, or written under other settings, is ignored.
    """
    done: list[VerificationResult] = []
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
                done.append(result)
    return done


def read_results(path: Path) -> list[VerificationResult]:
    """The records of an output file (unreadable lines are skipped)."""
    found: list[VerificationResult] = []
    with path.open("rb") as fh:
        for line in fh:
            try:
                found.append(VerificationResult.model_validate_json(line))
            except ValueError:
                continue
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


class _Journal:
    """`OUTPUT.partial`: each result appended as it finishes, with the run's settings key."""

    def __init__(self, path: Path | None, key: str) -> None:
        self.path, self.key = path, key
        self.sink: IO[bytes] | None = None

    def write(self, result: VerificationResult) -> None:
        if self.path is None:
            return
        if self.sink is None:  # opened on the first result: a run that reads nothing leaves no file
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.sink = self.path.open("ab")
        record = {"settings": self.key, "result": result.model_dump(mode="json")}
        self.sink.write(orjson.dumps(record) + b"\n")
        self.sink.flush()

    def close(self) -> None:
        if self.sink is not None:
            self.sink.close()


async def run_batch(
    verifier: Any,
    items: Iterable[Episode | EpisodeError],
    *,
    total: int,
    limit: int | None,
    output: Path | None,
    concurrency: int,
    reuse: Iterable[VerificationResult] = (),
    progress_interval: float = PLAIN_INTERVAL,
) -> BatchReport:
    """Verify episodes as they stream in, at most `concurrency` at once.

    Each result is appended to `OUTPUT.partial` (with the run's settings key) as it finishes;
    at the end `OUTPUT` is written in input order, atomically, and the partial file removed.
    Results in `reuse`, and finished results in a partial file left by an interrupted run with
    the same settings, are taken as they are instead of verifying those episodes again, but
    only for the input they were computed on. When the verifier reports a model server it
    cannot reach (`verifier.unreachable`), no further episode is started.
    """
    key = str(getattr(verifier, "key", ""))
    partial = output.with_name(output.name + ".partial") if output else None
    known: dict[tuple[str, str | None], VerificationResult] = {}
    for result in [*reuse, *(read_journal(partial, key) if partial else [])]:
        if result.settings is None or result.settings.key == key:
            known[(result.id, result.input_digest)] = result
    journal = _Journal(partial, key)
    report = BatchReport(results=[])
    order: list[str] = []
    first_seen: dict[str, str] = {}  # id -> where it was read
    results: dict[str, VerificationResult] = {}
    gate = asyncio.Semaphore(concurrency)
    running: set[asyncio.Task[None]] = set()
    spend = Spend(dict(getattr(verifier, "models", {})))
    tally = Tally(total=total, extra=getattr(verifier, "describe_limits", None))

    with fewer_collections(), progress_for(tally, err) as progress:

        def finish(result: VerificationResult, *, record: bool) -> None:
            results[result.id] = result
            tally.done += 1
            tally.failed += result.status == "error"
            if record:
                journal.write(result)
                spend.add(result.usage)
                tally.tokens = spend.tokens
                tally.cost = spend.describe() if spend.tokens else ""
            progress.refresh()

        async def one(episode: Episode) -> None:
            try:
                result = await verifier.averify(episode)
            finally:
                gate.release()
            finish(result, record=True)

        async def tick() -> None:
            while True:
                await asyncio.sleep(progress_interval)
                progress.refresh()

        ticker = asyncio.create_task(tick())
        try:
            for item in items:
                if limit is not None and len(order) >= limit:
                    break
                if isinstance(item, Episode) and item.id in first_seen:
                    message = (
                        f"episode id {item.id!r} appears more than once (first at "
                        f"{first_seen[item.id]}); ids must be unique"
                    )
                    item = EpisodeError(item.origin, 0, message)
                if isinstance(item, EpisodeError):
                    report.skipped.append(item)
                    say(err, "skipped", "red", str(item))
                    tally.total = max(tally.total - 1, tally.done)
                    continue
                first_seen[item.id] = item.origin
                if report.stopped is not None:
                    report.not_started += 1
                    continue
                order.append(item.id)
                reused = known.get((item.id, item.input_digest)) if known else None
                if reused is not None:
                    finish(reused, record=False)
                    continue
                await gate.acquire()
                if (why := getattr(verifier, "unreachable", None)) is not None:
                    gate.release()
                    order.pop()
                    report.stopped, report.not_started = why, report.not_started + 1
                    continue
                job = asyncio.create_task(one(item))
                running.add(job)
                job.add_done_callback(running.discard)
            if running:
                await asyncio.gather(*running)
        finally:
            ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ticker
            for job in running:
                job.cancel()
            journal.close()
    report.stopped = report.stopped or getattr(verifier, "unreachable", None)
    report.results = [results[i] for i in order]
    if output is not None and partial is not None and order:
        # input order, whatever order episodes finished in
        write_atomically(
            output, (dump_jsonl_line(r.model_dump(mode="json")) for r in report.results)
        )
        partial.unlink(missing_ok=True)
    return report
