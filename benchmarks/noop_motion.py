"""How much motion that changes nothing the `rules` Judge removes from the shared TEACh games, by
form (issue 37, "Motion that changes nothing").

It verifies the shared games as recorded (scene and task kept) with the `rules` Judge and
Planner, as `planverify verify` does, and counts the motion steps removed, by the form their
reason names (`Reviewer.remove_noop_motion`), with the evidence levels they carry:

- `adjacent pair`: a motion and its reverse next to each other;
- `pair, dialogue between`: a motion and its reverse with only dialogue between;
- `whole turn`: one turn by a multiple of 360 degrees (or a move of 0);
- `pair around motion`: a motion and its inverse around motion whose net they leave;
- `run, moves only` / `run, turns only` / `run, moves and turns`: a longer run that nets to zero
  (dialogue inside or not).

A block that removals brought together (a detour between) is counted apart, as `after removals`.
It then counts, in the input plans, the two patterns a user found in exported SFT data (as
`Move(-0.25)`, a `Say`, `Move(0.25)`, and `TurnRight(360.0)`), in general form, and how many of
them are removed.

Usage: python benchmarks/noop_motion.py [--games DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

from planverify import verify_many
from planverify.inputs.sources import load_episodes
from planverify.records.notation import MOTION_VERBS, Action, parse_action
from planverify.records.result import VerificationResult
from planverify.world.rules import cancels

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
DIALOGUE = "a motion, only dialogue, its reverse"
WHOLE = "a turn by a multiple of 360"


def form(actions: list[Action], steps: list[int], reason: str) -> str:
    """The form of one removed block of motion, from its reason and its steps."""
    if "undone by the next step" in reason:
        return "adjacent pair"
    if "goes nowhere" in reason or "to face as it did" in reason:
        return "whole turn"
    if "and the motion between" in reason:
        return "pair around motion"
    verbs = {actions[s].verb for s in steps}
    if len(steps) == 2 and "only dialogue between" in reason:
        return "pair, dialogue between"
    if verbs == {"Move"}:
        return "run, moves only"
    if "Move" not in verbs:
        return "run, turns only"
    return "run, moves and turns"


def motion_blocks(result: VerificationResult) -> list[tuple[list[int], str, str | None]]:
    """The removed blocks made only of motion: their steps, reason and evidence."""
    actions = [parse_action(line) for line in result.original]
    by_reason: dict[str, list[int]] = {}
    levels: dict[str, str | None] = {}
    for verdict in result.verdicts:
        if verdict.verdict == "remove" and verdict.reason is not None:
            by_reason.setdefault(verdict.reason, []).append(verdict.index)
            levels[verdict.reason] = verdict.evidence
    return [
        (steps, reason, levels[reason])
        for reason, steps in by_reason.items()
        if all(actions[s].verb in MOTION_VERBS for s in steps)
    ]


def user_patterns(result: VerificationResult) -> Counter[str]:
    """The two patterns of the report in one input plan, found and removed: a motion and its
    reverse with only dialogue (one line or more) between, and a turn by a multiple of 360."""
    actions = [parse_action(line) for line in result.original]
    removed = {v.index for v in result.verdicts if v.verdict == "remove"}
    counts: Counter[str] = Counter()
    for i, action in enumerate(actions):
        if action.verb in ("TurnLeft", "TurnRight") and (action.value or 0) % 360 == 0:
            counts[f"{WHOLE} found"] += 1
            counts[f"{WHOLE} removed"] += i in removed
        j = i + 1
        while j < len(actions) and actions[j].is_dialogue:
            j += 1
        if j > i + 1 and j < len(actions) and cancels(action, actions[j]):
            counts[f"{DIALOGUE} found"] += 1
            counts[f"{DIALOGUE} removed"] += {i, j} <= removed
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=Path, default=SHARED / "teach" / "games")
    args = parser.parse_args()
    if not args.games.is_dir():
        print(f"no games at {args.games}", file=sys.stderr)
        return 1
    episodes = list(load_episodes([args.games]))
    started = time.perf_counter()
    results = verify_many(episodes, concurrency=8)
    steps: Counter[str] = Counter()
    blocks: Counter[str] = Counter()
    evidence: Counter[tuple[str, str | None]] = Counter()
    patterns: Counter[str] = Counter()
    motion = 0
    for result in results:
        actions = [parse_action(line) for line in result.original]
        motion += sum(a.verb in MOTION_VERBS for a in actions)
        patterns += user_patterns(result)
        for block, reason, level in motion_blocks(result):
            interactions = [
                s
                for s in range(block[0] + 1, block[-1])
                if s not in block and not actions[s].is_dialogue
            ]
            name = form(actions, block, reason) + (" (after removals)" if interactions else "")
            steps[name] += len(block)
            blocks[name] += 1
            evidence[(name, level)] += len(block)
    elapsed = time.perf_counter() - started
    print(f"{len(results)} games, {motion} motion steps, {elapsed:.0f} s\n")
    print("| form | blocks | steps | proven | other evidence |")
    print("| --- | --- | --- | --- | --- |")
    for name in sorted(steps):
        proven = evidence[(name, "proven")]
        print(f"| {name} | {blocks[name]} | {steps[name]} | {proven} | {steps[name] - proven} |")
    total = sum(steps.values())
    print(
        f"| all | {sum(blocks.values())} | {total} | {sum(n for (_, lv), n in evidence.items() if lv == 'proven')} | |"
    )
    print("\n| pattern in the input | found | removed |")
    print("| --- | --- | --- |")
    for pattern in (DIALOGUE, WHOLE):
        print(f"| {pattern} | {patterns[f'{pattern} found']} | {patterns[f'{pattern} removed']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
