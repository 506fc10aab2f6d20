"""How well goal specs are read from words, measured on TEACh games.

For each game, the spec `read_goal` reads is compared with the spec of the game's own task
definition (`parse_teach_task(teach_task)`) by `signature` (components as object types, counts
and states; relations as heads, tail and single tail; component names left out), in three
conditions, each given the game's plan as the Judge is (it settles near types):

- description: the game's task description plus the Commander's lines;
- dialogue only: the goal "hi", the Commander's lines, no task family, no scene;
- typos: the description and the Commander's lines with typos made in them (`typos`: in about a
  third of the words of five letters or more, one letter dropped, two neighbours swapped or a
  space put inside, by a generator seeded with the game's id).

Usage: python benchmarks/goal_reading.py [--games DIR] [--misses N]
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from collections import Counter
from pathlib import Path

from planverify.inputs.sources import load_episodes
from planverify.records.notation import dialogue_lines
from planverify.world.goal_families import signature
from planverify.world.goals import parse_teach_task
from planverify.world.text_goals import read_goal

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
CONDITIONS = ("description", "dialogue only", "typos")
RATE = 1 / 3  # the share of long words given a typo


def typo(word: str, rng: random.Random) -> str:
    """A word with one typo: an inner letter dropped, two inner neighbours swapped, or a space
    put inside it."""
    at = rng.randrange(1, len(word) - 2)
    kind = rng.choice(("drop", "swap", "space"))
    if kind == "drop":
        return word[:at] + word[at + 1 :]
    if kind == "swap":
        return word[:at] + word[at + 1] + word[at] + word[at + 2 :]
    return f"{word[: at + 1]} {word[at + 1 :]}"


def typos(text: str, rng: random.Random) -> str:
    """A text with typos in about `RATE` of its words of five letters or more."""
    return re.sub(
        r"[A-Za-z]{5,}",
        lambda m: typo(m.group(0), rng) if rng.random() < RATE else m.group(0),
        text,
    )


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
    hits: dict[str, Counter[str]] = {c: Counter() for c in CONDITIONS}
    misses: dict[str, list[str]] = {c: [] for c in CONDITIONS}
    for episode in load_episodes([args.games]):
        if not episode.teach_task:
            continue
        truth = parse_teach_task(episode.teach_task)
        family = truth.task
        dialogue = dialogue_lines(episode.parsed())
        rng = random.Random(episode.id)
        mistyped = [typos(line, rng) for line in dialogue]
        total[family] += 1
        for condition, goal, said in (
            ("description", episode.goal, dialogue),
            ("dialogue only", "hi", dialogue),
            ("typos", typos(episode.goal, rng), mistyped),
        ):
            reading = read_goal(goal, said, plan=episode.actions)
            if reading.spec is not None and signature(reading.spec) == signature(truth):
                hits[condition][family] += 1
            else:
                got = reading.spec.text if reading.spec else reading.note
                misses[condition].append(
                    f"{episode.id} [{family}] {truth.text!r}: {goal!r} read {got!r}"
                )

    width = max(len(f) for f in total) + 2
    print(f"{'family':<{width}} {'games':>5} " + " ".join(f"{c:>13}" for c in CONDITIONS))
    for family in sorted(total, key=lambda f: -total[f]):
        row = [f"{100 * hits[c][family] / total[family]:.1f}" for c in CONDITIONS]
        print(f"{family:<{width}} {total[family]:>5} " + " ".join(f"{r:>13}" for r in row))
    n = sum(total.values())
    row = [f"{100 * sum(hits[c].values()) / n:.1f}" for c in CONDITIONS]
    print(f"{'all':<{width}} {n:>5} " + " ".join(f"{r:>13}" for r in row))
    for condition, lines in misses.items():
        for line in lines[: args.misses]:
            print(f"miss ({condition}): {line}")


if __name__ == "__main__":
    main()
