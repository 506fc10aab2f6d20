"""Taking turns on the event loop: each episode's CPU work runs to the next wait uninterrupted.

Many episodes share one event loop. Left alone, asyncio interleaves them step by step, so
episodes whose model calls return together also finish their CPU work together and call the
model again together: their bursts stay in lockstep and the waits stop overlapping with work.
With turns, an episode holds the loop's single turn while it computes and gives it up only while
it waits (a model call, a rate-limit pause), so episodes leave a burst one by one, in the order
they arrived, and their next waits are staggered.

`Turns` is a fair lock. `turns.hold()` wraps one episode; `waiting()` wraps each wait inside
it. Code that waits without `waiting()` still works, it only keeps the others waiting.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass
class _Turn:
    turns: Turns
    held: bool = False


@dataclass
class Turns:
    """One turn, handed to waiting episodes first come, first served."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        """Run the body holding the turn, except while it is in `waiting()`."""
        turn = _Turn(self)
        await self.lock.acquire()
        turn.held = True
        token = _current.set(turn)
        try:
            yield
        finally:
            _current.reset(token)
            if turn.held:
                turn.held = False
                self.lock.release()


_current: ContextVar[_Turn | None] = ContextVar("planverify_turn", default=None)


@asynccontextmanager
async def waiting() -> AsyncIterator[None]:
    """Give up the turn (when this task's episode holds it) until the body is done."""
    turn = _current.get()
    if turn is None or not turn.held:
        yield
        return
    turn.held = False
    turn.turns.lock.release()
    try:
        yield
    finally:
        await turn.turns.lock.acquire()
        turn.held = True
