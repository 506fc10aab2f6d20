"""Where the world model's long work runs: on the event loop, or in a thread beside it.

A batch (`planverify verify`) runs many episodes that take turns on one event loop, and a
review of a plan of ordinary length takes milliseconds: the work runs on the loop, where it costs
nothing to hand over. A server answers many clients from one loop, and one long plan would hold
every one of them, health checks included, for as long as its review takes. There the work runs
in a thread (`off_the_loop`), and a caller that stops waiting (a deadline, a cancelled run)
stops the work as well, at the world model's next check (`planverify.world.deadline`).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from contextvars import ContextVar
from typing import ParamSpec, TypeVar

from planverify.world.deadline import stop_when

P = ParamSpec("P")
T = TypeVar("T")

OFF_THE_LOOP: ContextVar[bool] = ContextVar("planverify_off_the_loop", default=False)
"""Whether the world model's work of this context runs in a thread (set by the served graph)."""


async def world_work(work: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """`work(*args, **kwargs)`, on the loop or, under `OFF_THE_LOOP`, in a thread that stops
    (`Stopped`) once the awaiting task is cancelled."""
    if not OFF_THE_LOOP.get():
        return work(*args, **kwargs)
    cancel = threading.Event()

    def stoppable() -> T:
        with stop_when(cancel=cancel):
            return work(*args, **kwargs)

    try:
        return await asyncio.to_thread(stoppable)
    finally:
        cancel.set()  # nobody waits any more: the thread stops at its next check
