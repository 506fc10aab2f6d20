"""The plain progress line of a model run: until an episode is done, the model calls done and
in flight, never a rate of 0.0/s with an ETA that grows."""

from __future__ import annotations

import io

from planverify.llm.concurrency import CALLS, gate_for
from planverify.runs.progress import PlainProgress, Tally


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_calls_stand_for_the_rate_until_an_episode_is_done() -> None:
    clock = Clock()
    CALLS.add()  # a call of an earlier batch of this process
    tally = Tally(total=50)
    progress = PlainProgress(tally, stream=io.StringIO(), clock=clock)
    with progress:
        ticket = await gate_for("http://progress.test/v1", 4).enter()
        clock.now += 240.0  # four minutes into the first episode
        waiting = progress.line()
        assert "/s" not in waiting and "ETA" not in waiting, waiting
        assert "model calls: 0 done, 1 in flight" in waiting  # this batch's calls only
        ticket.release()
        assert "model calls: 1 done, 0 in flight" in progress.line()
        tally.done = 5
        clock.now += 10.0
        going = progress.line()
        assert "/episode" in going and "ETA" in going and "model calls:" in going


def test_a_slow_rate_reads_as_time_per_episode() -> None:
    clock = Clock()
    tally = Tally(total=10)
    progress = PlainProgress(tally, stream=io.StringIO(), clock=clock)
    with progress:
        tally.done = 1
        clock.now += 300.0
        line = progress.line()
    assert "0.0/s" not in line and "5m00s/episode" in line and "ETA 45m00s" in line
