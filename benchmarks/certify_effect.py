"""What `certify` does for a noisy model Judge: vetoes of false removals and useless insertions,
and what it costs in recall.

The stand-in for a model Judge flags every true error of an annotated episode, plus a share of
the steps the plan needs (random interactions that are not errors), and proposes, besides every
true missing step, useless insertions (a switch-on repeated a little later, the device still on). Each annotated
episode runs once with `certify` and once without, at one revision (`max_iterations=1`) with the
`rules` Planner. It prints how many false removals and useless insertions were vetoed, and the
label-level recall with and without certify.

Usage: python benchmarks/certify_effect.py [--games DIR] [--seeds 1 2] [--noise 0.2]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from planverify import verify_many
from planverify.agents.base import JudgeReply
from planverify.corrupt import corrupt_many
from planverify.critique import Critique, Flag, Missing
from planverify.episode import Episode, Scene
from planverify.notation import MOTION_VERBS, Action, parse_action
from planverify.result import VerificationResult
from planverify.scoring import score_results
from planverify.sources import load_episodes

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


class NoisyJudge:
    """Flags every true error and a share of needed steps; adds useless insertions."""

    name = "noisy-judge"

    def __init__(self, episodes: Sequence[Episode], noise: float) -> None:
        self.by_plan = {tuple(e.actions): e for e in episodes}
        self.noise = noise
        self.false_flags: dict[str, set[int]] = {}  # episode id -> needed steps it flagged
        self.useless: dict[str, list[str]] = {}  # episode id -> useless insertions proposed

    async def ajudge(self, goal: str, plan: Sequence[str], scene: Scene | None) -> JudgeReply:
        episode = self.by_plan.get(tuple(plan))
        if episode is None:  # a later pass over a revised plan: no objections
            return JudgeReply(Critique())
        rng = random.Random(episode.id)
        labels = episode.labels or []
        errors = {label.index for label in labels if label.type == "REMOVE"}
        actions = [parse_action(line) for line in plan]
        needed = [
            i
            for i, a in enumerate(actions)
            if a.known and not a.is_dialogue and a.verb not in MOTION_VERBS and i not in errors
        ]
        wrong = {i for i in needed if rng.random() < self.noise}
        self.false_flags[episode.id] = wrong
        flags = [
            Flag(step=i, action=plan[i], reason="error" if i in errors else "looks unneeded")
            for i in sorted(errors | wrong)
        ]
        missing = [
            Missing(description="the plan lacks it", action=label.action, after=label.after)
            for label in labels
            if label.type == "MISSING" and label.action is not None
        ]
        toggles = [i for i, a in enumerate(actions) if a.verb == "ToggleOn" and i not in errors]
        useless = [
            Missing(description="switch it on", action=str(actions[i]), after=_later(actions, i))
            for i in toggles[:1]
        ]
        self.useless[episode.id] = [m.action or "" for m in useless]
        return JudgeReply(Critique(flags=flags, missing=missing + useless))


def _later(actions: Sequence[Action], on: int, gap: int = 2) -> int:
    """Where a second switch-on of the device switched on at `on` changes nothing, and is no
    plain repeat a Planner drops on sight: `gap` steps later, unless it is switched off first."""
    device = actions[on].objects
    for i in range(on + 1, min(on + gap, len(actions) - 1) + 1):
        if actions[i].verb == "ToggleOff" and actions[i].objects == device:
            return i - 1
    return min(on + gap, len(actions) - 1)


def tally(
    episodes: Sequence[Episode], results: Sequence[VerificationResult], judge: NoisyJudge
) -> tuple[int, int, int, int, float | None]:
    """False removals made and offered, useless insertions made and offered, label recall."""
    by_id = {r.id: r for r in results}
    removed = offered = inserted = proposed = 0
    for episode in episodes:
        result = by_id[episode.id]
        wrong = judge.false_flags.get(episode.id, set())
        offered += len(wrong)
        removed += sum(1 for v in result.verdicts if v.verdict == "remove" and v.index in wrong)
        useless = Counter(judge.useless.get(episode.id, []))
        proposed += sum(useless.values())
        # what went in beyond the true missing steps, as far as it is a useless proposal
        extra = Counter(step.action for step in result.inserted) - Counter(
            label.action for label in episode.labels if label.type == "MISSING"
        )
        inserted += sum((extra & useless).values())
    report = score_results(episodes, results, mode="iterative", resamples=0)
    return removed, offered, inserted, proposed, report.overall.recall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=Path, default=SHARED / "teach" / "games")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--noise", type=float, default=0.2, help="share of needed steps flagged")
    args = parser.parse_args()
    if not args.games.is_dir():
        sys.exit(f"no TEACh games at {args.games}; pass --games DIR")
    source = list(load_episodes([args.games]))
    totals = {True: [0, 0, 0, 0], False: [0, 0, 0, 0]}
    recalls: dict[bool, list[float]] = {True: [], False: []}
    started = time.perf_counter()
    for seed in args.seeds:
        annotated = list(corrupt_many(source, seed=seed))
        for certify in (False, True):
            judge = NoisyJudge(annotated, args.noise)
            results = verify_many(
                annotated, judge=judge, planner="rules", max_iterations=1, certify=certify
            )
            removed, offered, inserted, proposed, recall = tally(annotated, results, judge)
            for k, v in enumerate((removed, offered, inserted, proposed)):
                totals[certify][k] += v
            if recall is not None:
                recalls[certify].append(recall)
    elapsed = time.perf_counter() - started
    print(
        f"{len(args.seeds)} seed(s), noise {args.noise}, max_iterations 1, rules planner, {elapsed:.0f} s"
    )
    for certify in (False, True):
        removed, offered, inserted, proposed = totals[certify]
        recall = sum(recalls[certify]) / len(recalls[certify]) if recalls[certify] else None
        print(
            f"certify {'on ' if certify else 'off'}: false removals {removed}/{offered}, "
            f"useless insertions {inserted}/{proposed}, label recall "
            f"{'-' if recall is None else f'{100 * recall:.1f}'}"
        )
    off, on = totals[False], totals[True]
    vetoed = (off[0] - on[0]) + (off[2] - on[2])
    offered_total = off[0] + off[2]
    if offered_total:
        print(
            f"vetoed: {vetoed}/{offered_total} = {100 * vetoed / offered_total:.1f}% of the noise"
        )
    if recalls[True] and recalls[False]:
        loss = sum(recalls[False]) / len(recalls[False]) - sum(recalls[True]) / len(recalls[True])
        print(f"recall lost to certify: {100 * loss:.1f} points")


if __name__ == "__main__":
    main()
