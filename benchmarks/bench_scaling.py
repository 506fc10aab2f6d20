"""How one `rules` Judge pass grows with plan length: real-looking plans repeated to 1,000-20,000
actions.

Each episode's plan (the README's examples by default, or TEACh games) is repeated until it is as
long as asked, and one Judge pass over it is timed (`judge_plan`: the plan simulated and its
minimal repair searched, within `WORK_BUDGET`), with the episode's scene and task definition, or
from its goal text alone (`--goal-only`). It prints seconds per pass; the last column is the time
at the longest length over the time at half of it: about 2 for a pass that grows linearly, 4 for
one that grows quadratically. `--profile ID N` profiles one pass.

Usage: python benchmarks/bench_scaling.py [--episodes PATH ...] [--lengths 1000 2000 ...]
       [--goal-only] [--profile ID N]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from pathlib import Path

from planverify.agents.rules import judge_plan
from planverify.inputs.sources import load_episodes
from planverify.records.episode import Episode
from planverify.records.notation import dialogue_lines, parse_action
from planverify.world import Grounding, ground

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "episodes.jsonl"
LENGTHS = [1_000, 2_000, 5_000, 10_000, 20_000]


def repeated(plan: list[str], length: int) -> list[str]:
    """The plan repeated until it has `length` actions."""
    return (plan * (length // len(plan) + 1))[:length]


def grounding(episode: Episode, plan: list[str], *, goal_only: bool) -> Grounding:
    """What the Judge verifies the long plan against."""
    said = dialogue_lines(parse_action(line) for line in plan)
    if goal_only:
        return ground(episode.goal, said, None, task=None, teach_task=None, plan=plan)
    return ground(
        episode.goal, said, episode.scene, task=episode.task, teach_task=episode.teach_task
    )


def one_pass(episode: Episode, length: int, *, goal_only: bool) -> float:
    """Seconds for one Judge pass over the episode's plan repeated to `length` actions."""
    plan = repeated(episode.actions, length)
    given = grounding(episode, plan, goal_only=goal_only)
    started = time.perf_counter()
    judge_plan(episode.goal, plan, given)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=Path, nargs="+", default=[EXAMPLES])
    parser.add_argument("--lengths", type=int, nargs="+", default=LENGTHS)
    parser.add_argument("--goal-only", action="store_true", help="no scene, no task definition")
    parser.add_argument("--profile", nargs=2, metavar=("ID", "N"), help="profile one pass")
    args = parser.parse_args()
    episodes = [ep for ep in load_episodes(args.episodes) if ep.actions]
    if args.profile:
        wanted, length = args.profile[0], int(args.profile[1])
        episode = next(ep for ep in episodes if ep.id == wanted)
        profiler = cProfile.Profile()
        profiler.runcall(one_pass, episode, length, goal_only=args.goal_only)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
        return
    lengths = sorted(args.lengths)
    print("| episode | " + " | ".join(f"{n:,}" for n in lengths) + " | growth |")
    print("| --- " * (len(lengths) + 2) + "|")
    for episode in episodes:
        seconds = [one_pass(episode, n, goal_only=args.goal_only) for n in lengths]
        half = next((s for n, s in zip(lengths, seconds, strict=True) if 2 * n == lengths[-1]), 0)
        growth = f"{seconds[-1] / half:.1f}" if half else "-"
        cells = " | ".join(f"{s:.2f}" for s in seconds)
        print(f"| {episode.id} | {cells} | {growth} |", flush=True)


if __name__ == "__main__":
    main()
