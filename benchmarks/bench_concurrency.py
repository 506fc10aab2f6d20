"""Where the adaptive limit on model calls in flight settles, and what it delivers.

`--workers` episodes at once (the `--concurrency` cap) each make calls through a `CallPolicy`
around `ChatOpenAI.ainvoke`, until `--calls` calls are answered, against:

- loopback fake OpenAI-compatible servers (`tests/fake_openai.py`) with 1 and N slots, each
  call holding a slot for `--delay` seconds, the rest queued on the server like llama.cpp;
- with `--base-url URL --model NAME` (and `--api-key`), a real server instead.

Prints per server: the settled limit (median over the second half of the calls) and the
highest, answers per second over the second half, the latency of a call from sending to its
answer (p50/p95; the timeout counts from sending) and the time calls waited in this process
for the limit (p50), and how many timed out.

Usage: python benchmarks/bench_concurrency.py [--calls 80] [--workers 8] [--delay 0.25]
       [--slots 1 4] [--timeout 30] [--base-url URL --model NAME [--api-key KEY]]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_openai import ChatOpenAI

from planverify.llm.calls import CallPolicy
from planverify.llm.concurrency import gate_for
from planverify.llm.errors import ModelCallFailed

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.fake_openai

PROMPT = "List three things a robot needs to make coffee, one per line."


@dataclass
class Run:
    """What one server gave."""

    limits: list[int] = field(default_factory=list)  # the limit after each call
    ends: list[float] = field(default_factory=list)  # when each call was answered
    latencies: list[float] = field(default_factory=list)  # sent -> answered
    waits: list[float] = field(default_factory=list)  # waited here before sending
    timeouts: int = 0  # calls that failed


async def drive(model: ChatOpenAI, policy: CallPolicy, calls: int, workers: int) -> Run:
    run = Run()
    gate = gate_for(policy.provider, policy.concurrency)
    pending = iter(range(calls))

    async def one() -> None:
        started = time.monotonic()
        sent: list[float] = []

        async def send() -> Any:
            sent.append(time.monotonic())
            return await model.ainvoke(PROMPT)

        try:
            await policy.call(send)
        except ModelCallFailed:
            run.timeouts += 1
            return
        finally:
            run.limits.append(gate.limit)
        now = time.monotonic()
        run.ends.append(now)
        run.latencies.append(now - sent[-1])
        run.waits.append(sent[0] - started)

    async def worker() -> None:
        for _ in pending:
            await one()

    await asyncio.gather(*(worker() for _ in range(workers)))
    return run


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def report(name: str, run: Run, cap: int) -> None:
    half = len(run.limits) // 2
    settled = int(statistics.median(run.limits[half:])) if run.limits else 0
    ends = sorted(run.ends)[len(run.ends) // 2 :]
    rate = (len(ends) - 1) / (ends[-1] - ends[0]) if len(ends) > 1 else float("nan")
    print(
        f"{name:>24}: limit settled {settled}/{cap} (highest {max(run.limits, default=0)}), "
        f"{rate:.2f} answers/s, latency p50 {percentile(run.latencies, 0.5):.2f} s "
        f"p95 {percentile(run.latencies, 0.95):.2f} s, waited here p50 "
        f"{percentile(run.waits, 0.5):.2f} s, {run.timeouts} failed"
    )


def policy_for(url: str, model: str, args: argparse.Namespace) -> CallPolicy:
    return CallPolicy(
        provider=url, model=model, timeout=args.timeout, max_retries=0, concurrency=args.workers
    )


async def main(args: argparse.Namespace) -> None:
    if args.base_url:
        model = ChatOpenAI(
            model=args.model, base_url=args.base_url, api_key=args.api_key, max_retries=0
        )
        run = await drive(
            model, policy_for(args.base_url, args.model, args), args.calls, args.workers
        )
        report(args.base_url, run, args.workers)
        return
    from tests.fake_openai import FakeOpenAI, Reply

    answer = Reply(content="water\nbeans\nmug", delay=args.delay, usage=(40, 6))
    for slots in args.slots:
        with FakeOpenAI(lambda body: answer, slots=slots) as server:
            model = ChatOpenAI(model="fake", base_url=server.base_url, api_key="x", max_retries=0)
            policy = policy_for(server.base_url, "fake", args)
            run = await asyncio.to_thread(
                asyncio.run, drive(model, policy, args.calls, args.workers)
            )
        report(f"fake server, {slots} slot{'s' * (slots > 1)}", run, args.workers)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=80)
    parser.add_argument("--workers", type=int, default=8, help="episodes at once (the cap)")
    parser.add_argument("--delay", type=float, default=0.25, help="fake servers: s per call")
    parser.add_argument("--slots", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--base-url")
    parser.add_argument("--model", default="")
    parser.add_argument("--api-key", default="none")
    asyncio.run(main(parser.parse_args()))
