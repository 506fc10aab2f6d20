"""Benchmark the TEACh loader: convert N game files one by one and report speed and peak memory.

The shared games (../shared/teach/games next to the repository) are cycled until N files have been
loaded; every file is read from disk and parsed afresh, exactly as `iter_games` does, and each
episode is dropped before the next is loaded.

    .venv/bin/python benchmarks/bench_load.py --count 3000
"""

from __future__ import annotations

import argparse
import itertools
import resource
import sys
import time
from pathlib import Path

from planverify.inputs.teach import LoadSummary, expand_inputs, load_game
from planverify.records.episode import EpisodeError

GAMES = Path(__file__).resolve().parents[1].parent / "shared" / "teach" / "games"


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MB (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=3000, help="game files to load (default 3000)")
    args = parser.parse_args(argv)
    if not GAMES.is_dir():
        print(
            f"error: TEACh games not found at {GAMES} (the shared data sits next to the repository)"
        )
        return 2
    files = expand_inputs([GAMES])
    if not files or args.count < 1:
        print(f"error: nothing to load (found {len(files)} game files, --count {args.count})")
        return 2
    start_rss = peak_rss_mb()
    summary, total_bytes = LoadSummary(), 0
    started = time.perf_counter()
    for path in itertools.islice(itertools.cycle(files), args.count):
        total_bytes += path.stat().st_size
        try:
            summary.add(load_game(path))
        except EpisodeError as exc:
            summary.add(exc)
    elapsed = time.perf_counter() - started
    print(f"files:     {args.count} ({len(files)} distinct, cycled); {summary}")
    print(f"time:      {elapsed:.1f} s, {args.count / elapsed:.0f} files/s")
    print(f"read:      {total_bytes / 1e6:.0f} MB, {total_bytes / 1e6 / elapsed:.0f} MB/s")
    print(f"peak RSS:  {peak_rss_mb():.0f} MB (after imports: {start_rss:.0f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
