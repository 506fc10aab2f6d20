"""Running the async pipeline from sync code, on uvloop where it is installed.

A batch keeps thousands of episodes in flight on one event loop, and the loop's own bookkeeping
(tasks, callbacks, timers) is a good share of the work; uvloop does it in compiled code (about a
fifth less CPU per episode in `benchmarks/bench_latency.py`). Where uvloop is missing (Windows)
asyncio's own loop runs the same code.

While a batch runs, `fewer_collections()` has Python's cyclic garbage collector look at new
objects less often. A batch keeps every finished result (hundreds of objects each) until it
writes its output, and each full collection walks all of them: with the default threshold a
3,000-episode run of `benchmarks/bench_verify.py` spent some 2 ms CPU an episode in full
collections, a tenth of its work. Garbage is still collected, only in larger rounds. What
exists when the batch starts (its inputs, when they were read beforehand, and the modules) is
frozen (`gc.freeze`) until it ends: a full collection then walks only what the batch made. One
over 2,000 episodes read beforehand stopped the event loop for half a second in
`benchmarks/bench_latency.py --real`, and the adaptive call limit took that stall for a loaded
server.
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
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


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine from sync code, also when this thread already runs an event loop (a
    notebook, an async caller of sync code): then on a loop of its own in another thread, with
    this thread's context variables (LangGraph's run config among them)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run(coro)
    box: dict[str, Any] = {}
    context = contextvars.copy_context()

    def target() -> None:
        try:
            box["value"] = context.run(run, coro)
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


YOUNG_THRESHOLD = 20_000  # new objects between collections while a batch runs (Python: 700)
_batches = 0  # batches running (they may overlap: threads, or several on one loop)
_saved: tuple[int, int, int] | None = None  # the thresholds before the first of them
_froze = False  # whether the first of them froze the objects that existed (`gc.freeze`)
_lock = threading.Lock()


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Collect cyclic garbage less often until the outermost such block ends (see above)."""
    global _batches, _saved, _froze
    with _lock:
        if _batches == 0:
            _saved = gc.get_threshold()
            gc.set_threshold(max(YOUNG_THRESHOLD, _saved[0]), *_saved[1:])
            _froze = gc.get_freeze_count() == 0  # never thaw what the program froze itself
            if _froze:
                gc.freeze()
        _batches += 1
    try:
        yield
    finally:
        with _lock:
            _batches -= 1
            if _batches == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                if _froze:
                    gc.unfreeze()
