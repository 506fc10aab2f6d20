"""Running the async pipeline from sync code, on uvloop where it is installed.

A batch keeps thousands of episodes in flight on one event loop, and the loop's own bookkeeping
(tasks, callbacks, timers) is a good share of the work; uvloop does it in compiled code (about a
fifth less CPU per episode in `benchmarks/bench_latency.py`). Where uvloop is missing (Windows)
asyncio's own loop runs the same code.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's event loop factory, or None for asyncio's default loop."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def run(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run`, on uvloop when it is installed."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(coro)
