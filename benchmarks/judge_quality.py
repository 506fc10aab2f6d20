"""Score offline judges on error-injected TEACh episodes, several seeds, one table.

Does what these commands do, for each seed and judge, and pools the counts:

    planverify corrupt ../shared/teach/games --seed S -o annotated-S.jsonl
    planverify verify annotated-S.jsonl --judge J --no-checkpoint -o results-J-S.jsonl
    planverify score annotated-S.jsonl results-J-S.jsonl

Usage: python benchmarks/judge_quality.py [--games DIR] [--seeds 1 2 3 4 5] [--judges rules baseline]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

from planverify import verify_many
from planverify.corrupt import corrupt_many
from planverify.scoring import Counts, score_results
from planverify.sources import load_episodes

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=Path, default=SHARED / "teach" / "games")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--judges", nargs="+", default=["rules", "baseline"])
    parser.add_argument("--mode", choices=["iterative", "static"], default="iterative")
    args = parser.parse_args()
    if not args.games.is_dir():
        sys.exit(f"no TEACh games at {args.games}; pass --games DIR")

    source = list(load_episodes([args.games]))
    totals: dict[str, dict[str, Counts]] = defaultdict(lambda: defaultdict(Counts))
    per_seed: dict[str, list[str]] = defaultdict(list)
    started = time.perf_counter()
    for seed in args.seeds:
        annotated = list(corrupt_many(source, seed=seed))
        for judge in args.judges:
            results = verify_many(annotated, judge=judge, static=args.mode == "static")
            report = score_results(annotated, results, mode=args.mode, resamples=0)
            o = report.overall
            per_seed[judge].append(f"seed {seed}: R {pct(o.recall)} P {pct(o.precision)}")
            groups = {"overall": o, **{f"error: {k}": v for k, v in report.by_error.items()}}
            for name, scores in groups.items():
                c = totals[judge][name]
                totals[judge][name] = Counts(
                    tp=c.tp + scores.counts.tp,
                    fp=c.fp + scores.counts.fp,
                    fn=c.fn + scores.counts.fn,
                    tn=c.tn + scores.counts.tn,
                )
    elapsed = time.perf_counter() - started
    print(f"{len(source)} games, seeds {args.seeds}, {args.mode} mode, {elapsed:.0f} s")
    names = sorted(
        {n for judge in totals.values() for n in judge}, key=lambda n: (n != "overall", n)
    )
    header = "| group | " + " | ".join(f"{j} recall | {j} precision | {j} F1" for j in args.judges)
    print(header + " |")
    print("|" + " --- |" * (1 + 3 * len(args.judges)))
    for name in names:
        cells = []
        for judge in args.judges:
            c = totals[judge][name]
            precision = pct(c.precision) if name == "overall" else "-"
            f1 = pct(c.f1) if name == "overall" else "-"
            cells += [pct(c.recall), precision, f1]
        print(f"| {name} | " + " | ".join(cells) + " |")
    for judge, lines in per_seed.items():
        print(f"{judge}: " + "; ".join(lines))


if __name__ == "__main__":
    main()
