"""How well goal specs are read from words, measured on TEACh games.

For each game, the spec `read_goal` reads is compared with the spec of the game's own task
definition (`parse_teach_task(teach_task)`) by `signature` (components as object types, counts
and states; relations as heads, tail and single tail; component names left out), in two
conditions:

- description: the game's task description plus the Commander's lines;
- dialogue only: the goal "hi", the Commander's lines, no task family, no scene.

Usage: python benchmarks/goal_reading.py [--games DIR] [--misses N]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from planverify.inputs.sources import load_episodes
from planverify.records.notation import dialogue_lines
from planverify.world.goals import parse_teach_task
from planverify.world.text_goals import read_goal, signature

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", type=Path, default=SHARED / "teach" / "games")
    parser.add_argument(
        "--misses", type=int, default=0, help="print this many misses per condition"
    )
    args = parser.parse_args()
    if not args.games.is_dir():
        sys.exit(f"no TEACh games at {args.games}; pass --games DIR")

    total: Counter[str] = Counter()
    hits: dict[str, Counter[str]] = {"description": Counter(), "dialogue only": Counter()}
    misses: dict[str, list[str]] = {"description": [], "dialogue only": []}
    for episode in load_episodes([args.games]):
        if not episode.teach_task:
            continue
        truth = parse_teach_task(episode.teach_task)
        family = truth.task
        dialogue = dialogue_lines(episode.parsed())
        total[family] += 1
        for condition, goal in (("description", episode.goal), ("dialogue only", "hi")):
            reading = read_goal(goal, dialogue)
            if reading.spec is not None and signature(reading.spec) == signature(truth):
                hits[condition][family] += 1
            else:
                got = reading.spec.text if reading.spec else reading.note
                misses[condition].append(f"{episode.id} [{family}] {truth.text!r}: read {got!r}")

    width = max(len(f) for f in total) + 2
    print(f"{'family':<{width}} {'games':>5} {'description':>12} {'dialogue only':>14}")
    for family in sorted(total, key=lambda f: -total[f]):
        n = total[family]
        row = [f"{100 * hits[c][family] / n:.1f}" for c in hits]
        print(f"{family:<{width}} {n:>5} {row[0]:>12} {row[1]:>14}")
    n = sum(total.values())
    row = [f"{100 * sum(hits[c].values()) / n:.1f}" for c in hits]
    print(f"{'all':<{width}} {n:>5} {row[0]:>12} {row[1]:>14}")
    for condition, lines in misses.items():
        for line in lines[: args.misses]:
            print(f"miss ({condition}): {line}")


if __name__ == "__main__":
    main()
