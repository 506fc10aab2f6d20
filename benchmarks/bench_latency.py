"""How close the batch runner gets to the model-latency bound, and what the framework costs.

A fake chat model waits a fixed latency per call and answers in the Judge's text protocol: the
first pass flags the plan's first Move, the next pass finds nothing, so every episode makes two
model calls. Prints, for the given episodes, latency and concurrency:

- wall time, the ideal (total model latency / concurrency) and their ratio, without a
  checkpointer and with the default SQLite checkpointer;
- the framework's own time per Judge pass with SQLite (latency 0, so model time is excluded);
- checkpoint bytes per Judge pass for a 50-step plan;
- peak memory of a run of --memory-episodes episodes.

Usage: python benchmarks/bench_latency.py [--episodes 500] [--latency 0.1] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import resource
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from planverify.api import Verifier, open_checkpointer
from planverify.batch import run_batch
from planverify.episode import Episode

_STEP = re.compile(r"^(\d+)\. (.+)$", re.M)


class SlowJudgeModel(BaseChatModel):
    """Waits `latency` seconds, then flags the first Move of the plan it was shown."""

    latency: float = 0.1

    @property
    def _llm_type(self) -> str:
        return "slow-judge"

    def _answer(self, messages: list[BaseMessage]) -> str:
        plan = str(messages[-1].content).split("<plan>")[1].split("</plan>")[0]
        lines = []
        flagged = False
        for number, action in _STEP.findall(plan):
            note = "needed"
            if not flagged and ".Move(" in action:
                note, flagged = "goes nowhere #REMOVE: not needed", True
            lines += [f"ACTION: {number}. {action}", f"ANNOTATION: {note}"]
        return "\n".join(lines)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        time.sleep(self.latency)
        return self._result(messages)

    async def _agenerate(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> ChatResult:
        await asyncio.sleep(self.latency)
        return self._result(messages)

    def _result(self, messages: list[BaseMessage]) -> ChatResult:
        message = AIMessage(
            self._answer(messages),
            usage_metadata={"input_tokens": 300, "output_tokens": 100, "total_tokens": 400},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


def episodes(count: int, steps: int = 8) -> list[Episode]:
    plan = ["Commander.Say('make coffee')", "Driver.PickUp('Mug')", "Driver.Move(1.0)"]
    plan += [f"Driver.TurnLeft({90 * (n % 3 + 1)}.0)" for n in range(steps - 4)]
    plan += ["Driver.PutAOnB('Mug', 'CoffeeMachine')"]
    return [Episode(id=f"e{n}", goal="Make coffee.", actions=plan) for n in range(count)]


async def run(
    count: int, latency: float, concurrency: int, checkpoint: Path | None, steps: int = 8
) -> tuple[float, int]:
    async with open_checkpointer(checkpoint) as saver:
        verifier = Verifier(judge=SlowJudgeModel(latency=latency), checkpointer=saver)
        started = time.perf_counter()
        results, _ = await run_batch(
            verifier,
            episodes(count, steps),
            total=count,
            limit=None,
            goal="given",
            output=None,
            concurrency=concurrency,
        )
        elapsed = time.perf_counter() - started
    assert all(r.status == "ok" for r in results), [r.error for r in results if r.error][:1]
    return elapsed, sum(r.iterations for r in results)


def db_bytes(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        rows = conn.execute(
            "SELECT SUM(LENGTH(checkpoint) + LENGTH(metadata)) FROM checkpoints"
        ).fetchone()
        writes = conn.execute("SELECT SUM(LENGTH(value)) FROM writes").fetchone()
    return int(rows[0] or 0) + int(writes[0] or 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=500)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--memory-episodes", type=int, default=3000)
    args = parser.parse_args()
    calls = 2 * args.episodes
    ideal = calls * args.latency / args.concurrency
    print(
        f"{args.episodes} episodes, {calls} model calls of {args.latency * 1000:.0f} ms, concurrency {args.concurrency}"
    )
    print(f"ideal (total latency / concurrency): {ideal:.2f} s")
    with tempfile.TemporaryDirectory(prefix="planverify-latency-") as tmp:
        work = Path(tmp)
        wall, _ = asyncio.run(run(args.episodes, args.latency, args.concurrency, None))
        print(f"no checkpointer: {wall:.2f} s, ratio {wall / ideal:.2f}")
        wall, _ = asyncio.run(run(args.episodes, args.latency, args.concurrency, work / "a.sqlite"))
        print(f"SQLite checkpointer: {wall:.2f} s, ratio {wall / ideal:.2f}")

        wall, passes = asyncio.run(run(args.episodes, 0.0, args.concurrency, work / "b.sqlite"))
        print(
            f"framework time per Judge pass (SQLite, no model latency): {1000 * wall / passes:.2f} ms"
        )

        _, passes = asyncio.run(run(20, 0.0, 4, work / "c.sqlite", steps=50))
        print(
            f"checkpoint bytes per Judge pass, 50-step plan: {db_bytes(work / 'c.sqlite') / passes / 1000:.1f} kB"
        )

        asyncio.run(run(args.memory_episodes, 0.0, args.concurrency, work / "d.sqlite"))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"peak RSS of the whole benchmark ({args.memory_episodes} episodes the largest run): {peak:.0f} MB"
    )


if __name__ == "__main__":
    main()
