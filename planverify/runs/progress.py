"""Progress of a batch: a live bar on a terminal, a plain line every few seconds elsewhere.

CI logs and `nohup` files get no control characters: `PlainProgress` writes one line such as
`verify: 120/3000 done, 2 failed, 41.3/s, ETA 1m10s` to stderr every `interval` seconds, and a
last one when the batch ends.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import IO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from planverify.llm.concurrency import call_progress

PLAIN_INTERVAL = 5.0  # seconds between plain progress lines


@dataclass
class Tally:
    """What a batch has done so far."""

    total: int  # episodes expected (an upper bound until the input is read)
    done: int = 0  # episodes with a result
    failed: int = 0  # of which ended in an error
    tokens: int = 0  # model tokens spent
    cost: str = ""  # estimated cost so far, as text
    extra: Callable[[], str] | None = None  # more to show (the model-call limits, say)
    calls_before: int = field(default_factory=lambda: call_progress()[0])  # ended before it


def model_calls(since: int = 0) -> str:
    """`model calls: 12 done, 2 in flight`, counting the calls ended after `since` of them had
    ("" before the first)."""
    ended, inflight = call_progress()
    ended -= since
    if not ended and not inflight:
        return ""
    return f"model calls: {ended} done, {inflight} in flight"


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


@dataclass
class PlainProgress:
    """One plain line of progress every `interval` seconds (checked on each update and by the
    batch's ticker), and one at the end."""

    tally: Tally
    stream: IO[str] = field(default_factory=lambda: sys.stderr)
    interval: float = PLAIN_INTERVAL
    clock: Callable[[], float] = time.monotonic
    started: float = 0.0
    last: float = 0.0

    def __enter__(self) -> PlainProgress:
        self.started = self.last = self.clock()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if kind is None and self.tally.done:
            self.emit()

    def line(self) -> str:
        """The current progress line; until an episode is done, the model calls done and in
        flight stand for the rate and ETA (which would read 0.0/s and grow for minutes)."""
        t = self.tally
        elapsed = max(self.clock() - self.started, 1e-9)
        rate = t.done / elapsed
        parts = [f"verify: {t.done}/{t.total} done", f"{t.failed} failed"]
        calls = model_calls(t.calls_before)
        if t.done:  # a slow model's rate reads as time per episode, never `0.0/s`
            parts.append(f"{rate:.1f}/s" if rate >= 0.1 else f"{_duration(1 / rate)}/episode")
        if calls:
            parts.append(calls)
        if rate > 0 and t.total > t.done:
            parts.append(f"ETA {_duration((t.total - t.done) / rate)}")
        if t.tokens:
            parts.append(f"{t.tokens} tokens {t.cost}".strip())
        if t.extra is not None and (more := t.extra()):
            parts.append(more)
        return ", ".join(parts)

    def emit(self) -> None:
        """Write the line now."""
        self.last = self.clock()
        print(self.line(), file=self.stream, flush=True)

    def refresh(self) -> None:
        """Write the line when `interval` has passed since the last one."""
        if self.clock() - self.last >= self.interval:
            self.emit()


class LiveProgress:
    """A rich progress bar (terminals only)."""

    def __init__(self, tally: Tally, console: Console) -> None:
        self.tally = tally
        columns = (
            TextColumn("[bold]verifying"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]} failed"),
            TextColumn("{task.fields[tokens]} tokens {task.fields[cost]}"),
            TextColumn("{task.fields[calls]}"),
            TextColumn("{task.fields[extra]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
        )
        self.bar = Progress(*columns, console=console, transient=True)
        self.task = self.bar.add_task(
            "verify", total=tally.total, failed=0, tokens=0, cost="", calls="", extra=""
        )

    def __enter__(self) -> LiveProgress:
        self.bar.__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.bar.__exit__(kind, exc, tb)

    def refresh(self) -> None:
        """Show the tally."""
        t = self.tally
        extra = t.extra() if t.extra is not None else ""
        self.bar.update(
            self.task,
            completed=t.done,
            total=t.total,
            failed=t.failed,
            tokens=t.tokens,
            cost=t.cost,
            calls=model_calls(t.calls_before),
            extra=extra,
        )


def progress_for(tally: Tally, console: Console) -> LiveProgress | PlainProgress:
    """A live bar when `console` is a terminal, plain lines otherwise."""
    if console.is_terminal:
        return LiveProgress(tally, console)
    return PlainProgress(tally, stream=console.file)
