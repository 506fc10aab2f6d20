"""Verifying a stream of episodes: bounded concurrency, progress, and an output file that is
written as results arrive and rewritten in input order at the end.

A result is reused (from `OUTPUT.partial` left by an interrupted run, or from `--retry-failed`)
only when it belongs to the episode: same id, same input digest, same settings.

An existing output file is only replaced by a run that read at least one episode, and never by
a run that stopped early because a model server could not be reached, nor, unless
`accept_skipped`, by one that skipped input lines: such a run leaves its results in the journal
`OUTPUT.partial`, where the next run finds them. When it is replaced, an `ok` record it held for
an episode (same id, content and settings) is kept over this run's error for it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson

from planverify.eventloop.runner import fewer_collections
from planverify.inputs.teach import reason_of
from planverify.llm.costs import Spend
from planverify.records.episode import Episode, EpisodeError, dump_jsonl_line
from planverify.records.jsonl import records
from planverify.records.result import VerificationResult
from planverify.runs.console import err, say
from planverify.runs.progress import PLAIN_INTERVAL, Tally, progress_for
from planverify.stores.files import disk_full, write_atomically


@dataclass
class BatchReport:
    """What a batch did."""

    results: list[VerificationResult]  # one per episode read, in input order
    skipped: list[EpisodeError] = field(default_factory=list)  # inputs that could not be read
    stopped: str | None = None  # why the batch stopped starting episodes, if it did
    not_started: int = 0  # episodes read but never started because the batch stopped
    kept_output: str | None = None  # why an existing output was left as it was, if it was
    kept_over_errors: list[str] = field(default_factory=list)  # ids whose earlier ok record won
    unsaved: str | None = None  # why the checkpoint store could not keep its last checkpoints

    def skipped_by_reason(self) -> Counter[str]:
        """Skipped lines and files, by the kind of problem."""
        return Counter(reason_of(error) for error in self.skipped)


class OutputStopped(Exception):
    """A batch stopped because a file or the checkpoint store could not be written (a full
    disk, say): no episode can get past that. Says what was written where."""

    def __init__(self, target: Path | None, *, journal: Path | None, journaled: int) -> None:
        super().__init__(f"cannot write {target}" if target else "cannot store checkpoints")
        self.target = target  # the file that could not be written; None: the checkpoint store
        self.journal = journal  # OUTPUT.partial, when there is an output
        self.journaled = journaled  # finished results in the journal


def read_journal(path: Path, key: str) -> list[VerificationResult]:
    """Finished results in a partial output written under the same settings (`key`).

    A line cut short by a kill, or written under other settings, is ignored.
    """
    done: list[VerificationResult] = []
    if not path.is_file():
        return done
    for record in records(path):
        try:
            if record.data.get("settings") != key:
                continue
            result = VerificationResult.model_validate(record.data["result"])
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        if result.status == "ok":
            done.append(result)
    return done


def read_results(path: Path) -> list[VerificationResult]:
    """The records of an output file (unreadable lines are skipped)."""
    found: list[VerificationResult] = []
    for record in records(path):
        with contextlib.suppress(ValueError):
            found.append(VerificationResult.model_validate(record.data))
    return found


class _Journal:
    """`OUTPUT.partial`: each result appended as it finishes, with the run's settings key."""

    def __init__(self, path: Path | None, key: str, *, reused: int) -> None:
        self.path, self.key = path, key
        self.sink: IO[bytes] | None = None
        self.results = reused  # finished results it holds for this run's settings

    def write(self, result: VerificationResult) -> None:
        if self.path is None:
            return
        record = {"settings": self.key, "result": result.model_dump(mode="json")}
        try:
            if self.sink is None:  # opened on the first result: a run that reads nothing
                self.path.parent.mkdir(parents=True, exist_ok=True)  # leaves no file
                self.sink = self.path.open("ab")
            self.sink.write(orjson.dumps(record) + b"\n")
            self.sink.flush()
        except OSError as exc:
            raise OutputStopped(self.path, journal=self.path, journaled=self.results) from exc
        self.results += result.status == "ok"

    def close(self) -> None:
        if self.sink is not None:
            with contextlib.suppress(OSError):  # a full disk was reported when it happened
                self.sink.close()


def keep_earlier_ok(
    results: list[VerificationResult], output: Path, key: str
) -> tuple[list[VerificationResult], list[str]]:
    """`results` with each error replaced by the ok record `output` holds for the same episode,
    content and settings; and the ids of those kept."""
    if not any(r.status == "error" for r in results):
        return results, []
    earlier = {
        (r.id, r.input_digest): r
        for r in read_results(output)
        if r.status == "ok" and r.settings is not None
    }
    kept: list[str] = []
    merged: list[VerificationResult] = []
    for result in results:
        ok = earlier.get((result.id, result.input_digest)) if result.status == "error" else None
        wanted = result.settings.key if result.settings is not None else key  # its domain's
        if ok is not None and ok.settings is not None and ok.settings.key != wanted:
            ok = None
        if ok is not None:
            kept.append(result.id)
        merged.append(ok or result)
    return merged, kept


def _why_kept(report: BatchReport, accept_skipped: bool) -> str | None:
    """Why this run must not replace an existing output, or None."""
    if report.stopped is not None:
        return "the run stopped early"
    if report.skipped and not accept_skipped:
        return f"{len(report.skipped)} input(s) were skipped (--accept-skipped replaces it)"
    return None


async def run_batch(
    verifier: Any,
    items: Iterable[Episode | EpisodeError],
    *,
    total: int,
    limit: int | None,
    output: Path | None,
    concurrency: int,
    reuse: Iterable[VerificationResult] = (),
    accept_skipped: bool = False,
    progress_interval: float = PLAIN_INTERVAL,
) -> BatchReport:
    """Verify episodes as they stream in, at most `concurrency` at once.

    Each result is appended to `OUTPUT.partial` (with the run's settings key) as it finishes;
    at the end `OUTPUT` is written in input order, atomically, and the partial file removed,
    unless the rules in the module docstring keep an existing `OUTPUT` (`report.kept_output`
    says why). Results in `reuse`, and finished results in a partial file left by an
    interrupted run with the same settings, are taken as they are instead of verifying those
    episodes again, but only for the input they were computed on. When the verifier reports a
    model server it cannot reach (`verifier.unreachable`), no further episode is started. A
    file or checkpoint store that cannot be written stops the batch with `OutputStopped`.
    """
    key = str(getattr(verifier, "key", ""))
    partial = output.with_name(output.name + ".partial") if output else None
    journaled = read_journal(partial, key) if partial else []
    known: dict[tuple[str, str | None], VerificationResult] = {}
    for result in [*reuse, *journaled]:  # the settings are checked per episode (`_reusable`)
        known[(result.id, result.input_digest)] = result
    journal = _Journal(partial, key, reused=len(journaled))
    report = BatchReport(results=[])
    try:
        results, order = await _stream(
            verifier,
            items,
            report=report,
            journal=journal,
            known=known,
            total=total,
            limit=limit,
            concurrency=concurrency,
            progress_interval=progress_interval,
        )
    finally:
        journal.close()
    report.stopped = report.stopped or getattr(verifier, "unreachable", None)
    report.results = [results[i] for i in order]
    if output is None or partial is None or not order:
        return report
    if output.exists():
        report.kept_output = _why_kept(report, accept_skipped)
        if report.kept_output is not None:
            return report
        report.results, report.kept_over_errors = keep_earlier_ok(report.results, output, key)
    try:  # input order, whatever order episodes finished in
        write_atomically(
            output, (dump_jsonl_line(r.model_dump(mode="json")) for r in report.results)
        )
    except OSError as exc:
        raise OutputStopped(output, journal=partial, journaled=journal.results) from exc
    partial.unlink(missing_ok=True)
    return report


def _accepted(
    item: Episode | EpisodeError,
    first_seen: dict[str, str],
    report: BatchReport,
    tally: Tally,
) -> Episode | None:
    """The episode to verify, or None when the item is skipped (a bad record, or an id seen
    before): the skip is reported and said."""
    if isinstance(item, Episode) and item.id in first_seen:
        message = (
            f"episode id {item.id!r} appears more than once (first at "
            f"{first_seen[item.id]}); ids must be unique"
        )
        item = EpisodeError(item.origin, 0, message, reason="repeated id")
    if isinstance(item, EpisodeError):
        report.skipped.append(item)
        say(err, "skipped", "red", str(item))
        tally.total = max(tally.total - 1, tally.done)
        return None
    first_seen[item.id] = item.origin
    return item


def _reusable(result: VerificationResult, verifier: Any, episode: Episode) -> bool:
    """Whether a finished result was computed under the settings this run gives the episode
    (the run's key, or for another domain than TEACh the key with its package version)."""
    if result.settings is None:
        return True
    key_for = getattr(verifier, "key_for", None)
    key = key_for(episode) if key_for is not None else getattr(verifier, "key", "")
    return bool(result.settings.key == key)


async def _stream(
    verifier: Any,
    items: Iterable[Episode | EpisodeError],
    *,
    report: BatchReport,
    journal: _Journal,
    known: dict[tuple[str, str | None], VerificationResult],
    total: int,
    limit: int | None,
    concurrency: int,
    progress_interval: float,
) -> tuple[dict[str, VerificationResult], list[str]]:
    """Verify the items (see `run_batch`); the results by id, and the ids in input order."""
    order: list[str] = []
    first_seen: dict[str, str] = {}  # id -> where it was read
    results: dict[str, VerificationResult] = {}
    gate = asyncio.Semaphore(concurrency)
    running: set[asyncio.Task[None]] = set()
    failures: list[BaseException] = []  # what stopped the batch: a file it cannot write
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
                finish(await verifier.averify(episode), record=True)
            except Exception as exc:  # the journal, or a full checkpoint store: the batch stops
                failures.append(exc)
            finally:
                gate.release()

        async def tick() -> None:
            while True:
                await asyncio.sleep(progress_interval)
                progress.refresh()

        ticker = asyncio.create_task(tick())
        try:
            for item in items:
                if limit is not None and len(order) >= limit:
                    break
                episode = _accepted(item, first_seen, report, tally)
                if episode is None:
                    continue
                if report.stopped is not None:
                    report.not_started += 1
                    continue
                order.append(episode.id)
                reused = known.get((episode.id, episode.input_digest)) if known else None
                if reused is not None and _reusable(reused, verifier, episode):
                    finish(reused, record=False)
                    continue
                await gate.acquire()
                if failures:
                    gate.release()
                    break
                if (why := getattr(verifier, "unreachable", None)) is not None:
                    gate.release()
                    order.pop()
                    report.stopped, report.not_started = why, report.not_started + 1
                    continue
                job = asyncio.create_task(one(episode))
                running.add(job)
                job.add_done_callback(running.discard)
            if running:
                await asyncio.gather(*running)
        finally:
            ticker.cancel()
            for job in running:
                job.cancel()
            await asyncio.gather(ticker, *running, return_exceptions=True)
    if failures:
        failure = failures[0]
        if isinstance(failure, OutputStopped) or disk_full(failure) is None:
            raise failure
        raise OutputStopped(None, journal=journal.path, journaled=journal.results) from failure
    return results, order
