"""A cooperative deadline for the world model's long work: a review (`repair.review`, the rules
Judge) or a certification checks it as it goes and stops with `Stopped` once the time is up or
its caller cancels it, instead of running to the end after nobody waits for it.

The caller sets it around the work, for the current context; a thread started with a copy of
that context (`asyncio.to_thread`, `contextvars.copy_context().run`) sees it too:

>>> import threading
>>> from planverify.world.repair import review
>>> cancel = threading.Event()
>>> cancel.set()  # the caller gave up: a review started now stops at its first check
>>> with stop_when(cancel=cancel):
...     review(["Driver.Move(0.25)"] * 10)
Traceback (most recent call last):
...
planverify.world.deadline.Stopped: the work was cancelled

Without one, nothing is checked and nothing stops (the work budget, `repair.WORK_BUDGET`,
still bounds a review).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

CHECK_EVERY = 1024  # steps simulated in one run between two checks


class Stopped(Exception):
    """The work stopped before its end: its deadline passed or its caller cancelled it."""


@dataclass(frozen=True)
class Deadline:
    """When the work must stop: at a time, or once an event is set, whichever comes first."""

    at: float | None = None  # `time.monotonic()` from which on the work stops
    cancel: threading.Event | None = None  # set by the caller to stop the work now
    outer: Deadline | None = None  # the enclosing deadline, which holds as well

    def check(self) -> None:
        """Raise `Stopped` when the work must stop."""
        if self.cancel is not None and self.cancel.is_set():
            raise Stopped("the work was cancelled")
        if self.at is not None and time.monotonic() >= self.at:
            raise Stopped("the work ran past its deadline")
        if self.outer is not None:
            self.outer.check()


_CURRENT: ContextVar[Deadline | None] = ContextVar("planverify_world_deadline", default=None)


def current() -> Deadline | None:
    """The deadline the work in this context runs under, if any."""
    return _CURRENT.get()


@contextmanager
def stop_when(
    *, seconds: float | None = None, cancel: threading.Event | None = None
) -> Iterator[Deadline]:
    """Within the block, the world model's work stops with `Stopped` once `seconds` have passed
    or `cancel` is set. An enclosing deadline still holds."""
    at = None if seconds is None else time.monotonic() + seconds
    deadline = Deadline(at, cancel, _CURRENT.get())
    token = _CURRENT.set(deadline)
    try:
        yield deadline
    finally:
        _CURRENT.reset(token)


__all__ = ["CHECK_EVERY", "Deadline", "Stopped", "current", "stop_when"]
