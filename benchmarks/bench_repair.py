"""How long the `rules` Judge takes to judge one plan of the corrupt sets, repairs included.

For each generator (`injected`, `natural`) and seed it corrupts the shared TEACh games (episodes
of at most 25 non-dialogue steps, as `planverify corrupt` does by default) and times one Judge
pass over every annotated plan: reading the goal spec (TEACh's task definition for `full`
records, the goal text and dialogue for `goal` records), simulating the plan and searching its
minimal repair. Nothing else is timed: no graph, no Planner, no checkpoint. Prints the median,
95th percentile and slowest pass in ms per input, with the plans' mean length.

Usage: python benchmarks/bench_repair.py [--games DIR] [--seeds 1 2] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from planverify.agents.rules import judge_plan
from planverify.inputs.sources import load_episodes
from planverify.noise import GENERATORS
from planverify.records.episode import Episode
from planverify.records.notation import dialogue_lines, parse_action
from planverify.world import Grounding, ground

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def grounding(episode: Episode, *, full: bool) -> Grounding:
    """What the Judge verifies against: with the record's scene and task, or its goal text alone."""
    said = dialogue_lines(episode.parsed())
    if not full:
        return ground(episode.goal, said, None, task=None, teach_task=None)
    return ground(
        episode.goal, said, episode.scene, task=episode.task, teach_task=episode.teach_task
    )


def one_pass_ms(episode: Episode, *, full: bool, repeat: int) -> float:
    """The fastest of `repeat` Judge passes over the episode's plan, in ms."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        judge_plan(episode.goal, episode.actions, grounding(episode, full=full))
        best = min(best, time.perf_counter() - started)
    return 1000 * best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=Path, default=SHARED / "teach" / "games")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeat", type=int, default=3, help="passes per plan; the fastest counts")
    args = parser.parse_args()
    if not args.games.is_dir():
        sys.exit(f"no TEACh games at {args.games}; pass --games DIR")
    source = list(load_episodes([args.games]))
    print("| generator | input | plans | steps (mean) | median ms | p95 ms | slowest ms |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for generator in sorted(GENERATORS):
        episodes = [ep for seed in args.seeds for ep in GENERATORS[generator](source, seed=seed)]
        steps = statistics.mean(
            sum(not parse_action(line).is_dialogue for line in ep.actions) for ep in episodes
        )
        for condition in ("full", "goal"):
            times = sorted(
                one_pass_ms(ep, full=condition == "full", repeat=args.repeat) for ep in episodes
            )
            p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
            print(
                f"| {generator} | {condition} | {len(times)} | {steps:.1f} | "
                f"{statistics.median(times):.1f} | {p95:.1f} | {times[-1]:.1f} |"
            )


if __name__ == "__main__":
    main()
