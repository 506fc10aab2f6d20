"""End-to-end throughput of `planverify verify` with the offline judge on TEACh games.

Loads game files (cycling the shared games to reach --count, each file parsed afresh, episode
ids made unique per cycle), judges, revises, converges, checkpoints every step to SQLite and
writes the output JSONL: the same code path as the CLI. Prints episodes/s and peak memory, then
verifies every distinct game once more, one at a time, and prints the slowest episode's time
(judging, revising and checkpointing, nothing else running). The main process's CPU time per
episode is printed too: the main process is the bottleneck, and its CPU time varies less than
the wall time on a shared host.

Usage: python benchmarks/bench_verify.py [--count 3000] [--games DIR] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import itertools
import resource
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from planverify.api import Verifier, open_checkpointer
from planverify.eventloop import runner
from planverify.inputs.sources import default_workers, prefetch_games
from planverify.inputs.teach import expand_inputs
from planverify.records.episode import Episode, EpisodeError
from planverify.runs.batch import run_batch

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def cycled(games: list[Path], count: int, workers: int) -> Iterator[Episode | EpisodeError]:
    paths = itertools.islice(itertools.cycle(games), count)
    for n, item in enumerate(prefetch_games(paths, workers=max(workers, 1))):
        cycle = n // len(games)
        if isinstance(item, Episode) and cycle:
            item = item.model_copy(update={"id": f"{item.id}#{cycle}"})
        yield item


async def slowest(games: list[Path], work: Path, judge: str) -> tuple[float, str, int]:
    """The longest single-episode verification over the distinct games, run one at a time:
    (seconds, episode id, its number of steps)."""
    worst = (0.0, "", 0)
    async with open_checkpointer(work / "latency.sqlite") as saver:
        verifier = Verifier(judge=judge, checkpointer=saver)
        for item in prefetch_games(iter(games), workers=max(default_workers(), 1)):
            if not isinstance(item, Episode):
                continue
            started = time.perf_counter()
            await verifier.averify(item)
            elapsed = time.perf_counter() - started
            if elapsed > worst[0]:
                worst = (elapsed, item.id, len(item.actions))
    return worst


async def run(args: argparse.Namespace, games: list[Path], work: Path) -> tuple[int, float]:
    async with open_checkpointer(work / "checkpoints.sqlite") as saver:
        verifier = Verifier(judge=args.judge, checkpointer=saver)
        started = time.perf_counter()
        report = await run_batch(
            verifier,
            cycled(games, args.count, default_workers()),
            total=args.count,
            limit=None,
            output=work / "results.jsonl",
            concurrency=args.concurrency,
        )
        elapsed = time.perf_counter() - started
    results = report.results
    failed = sum(r.status == "error" for r in results) + len(report.skipped)
    if failed:
        print(f"warning: {failed} episode(s) failed or were skipped", file=sys.stderr)
    return len(results), elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=3000)
    parser.add_argument("--games", type=Path, default=SHARED / "teach" / "games")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--judge", default="rules")
    args = parser.parse_args()
    games = expand_inputs([args.games])
    if not games:
        sys.exit(f"no TEACh games under {args.games}; pass --games DIR")
    with tempfile.TemporaryDirectory(prefix="planverify-bench-") as tmp:
        work = Path(tmp)
        cpu = time.process_time()
        done, elapsed = runner.run(run(args, games, work))
        cpu = time.process_time() - cpu  # this process only: the loaders are children
        if not done:
            sys.exit(f"no episode was verified from {args.games}: nothing to time")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        loader = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        worst, worst_id, worst_steps = runner.run(slowest(games, work, args.judge))
        size = (work / "checkpoints.sqlite").stat().st_size
        wal = work / "checkpoints.sqlite-wal"
        size += wal.stat().st_size if wal.exists() else 0
    print(
        f"episodes: {done} from {len(games)} game files, judge {args.judge}, concurrency {args.concurrency}"
    )
    print(f"wall time: {elapsed:.1f} s, {done / elapsed:.1f} episodes/s")
    # steadier than wall time on a shared host: what the main process spends per episode
    print(f"main process CPU: {1000 * cpu / done:.1f} ms per episode")
    print(f"checkpoints: {size / 1e6:.0f} MB ({size / done / 1e3:.0f} kB per episode)")
    print(f"peak RSS: {peak:.0f} MB (loader process {loader:.0f} MB)")
    print(
        f"slowest episode, alone: {1000 * worst:.0f} ms ({worst_id}, {worst_steps} steps), "
        f"over {len(games)} distinct games"
    )


if __name__ == "__main__":
    main()
