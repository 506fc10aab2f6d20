"""What `certify` does for a noisy model Judge: vetoes of false removals and useless insertions,
and what it costs in recall.

The stand-in for a model Judge flags every true error of an annotated episode, plus a share of
the steps the plan needs (`--noise`, 0.3), and proposes, besides every true missing step, a
useless insertion (a switch-on repeated a little later, the device still on). The steps the
plan needs are its interaction steps that are no error and that change something in the
simulation (`--pool needed`): a step that cannot happen or has no effect, or that with the step
undoing it next leaves the world as it was (a put-down and the pick-up that takes the object
straight back, an open and its close) is no step a Judge is wrong to flag. `--pool all` draws
the noise from every interaction step that is no error. Each annotated episode (both generators,
full records) runs once with `certify` and once without, at one revision (`max_iterations=1`)
with the `rules` Planner.

It prints the false removals at plan level (a removal is false only when it shortens the
longest common subsequence with the clean plan, motion left out: the Judge flags no motion,
and taking away the pick-up before a misplacement rather than the one after it leaves the same
plan but for where the walking falls), the useless insertions that went in, and the recall of
the removals and of the whole plan (removals and insertions) at that level, with label-level
recall for reference, and how many verifications ended in an error (they remove nothing,
which would pass for vetoes); then the share of the noise `certify` vetoed.

Each generator is measured under each trim policy (`--trims natural minimal`): the labels are
those that are errors under it (`planverify.metrics.episode_under`), so under `natural` a step
only `minimal` removes is a needed step the noise may fall on, and the loop runs under it.

Usage: python benchmarks/certify_effect.py [--games DIR] [--seeds 1 2 3 4 5]
       [--generators injected natural] [--trims natural minimal] [--noise 0.3]
       [--pool needed|all]
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import product

from certify_fidelity import set_options, source_of  # the script next to this one

from planverify import verify_many
from planverify.agents.base import JudgeReply
from planverify.metrics import Counts, clean_plan, episode_under, plan_counts, score_results
from planverify.noise import GENERATORS
from planverify.records.critique import Critique, Flag, Missing
from planverify.records.episode import Episode, Scene
from planverify.records.notation import MOTION_VERBS, Action, dialogue_lines, parse_action
from planverify.records.result import VerificationResult
from planverify.records.trim import TrimPolicy
from planverify.world import ground
from planverify.world.repair import Reviewer

UNDOING = {"PutAOnB": "PickUp", "PickUp": "PutAOnB", "Open": "Close", "ToggleOn": "ToggleOff"}


def idle_steps(episode: Episode) -> set[int]:
    """The steps of an episode that change nothing in its simulation: they cannot happen or
    have no effect, or they and the step that undoes them next leave the world as it was (a
    put-down and the pick-up that takes the object back, an open and its close)."""
    actions = [parse_action(line) for line in episode.actions]
    dialogue = dialogue_lines(actions)
    grounding = ground(
        episode.goal, dialogue, episode.scene, task=episode.task, teach_task=episode.teach_task
    )
    reviewer = Reviewer(episode.actions, grounding.scene, grounding.spec, grounding.focus)
    trace = reviewer.trace
    idle = {
        s
        for s, o in zip(trace.order, trace.outcomes, strict=True)
        if o.problem or o.changed is False
    }
    for i, action in enumerate(actions):
        undo = UNDOING.get(action.verb)
        if undo is None or not reviewer.active(i):
            continue
        then = next(
            (
                k
                for k in range(i + 1, len(actions))
                if reviewer.active(k)
                and actions[k].objects[:1] == action.objects[:1]
                and actions[k].verb in (action.verb, undo)
            ),
            None,
        )
        if (
            then is not None
            and actions[then].verb == undo
            and reviewer.sim.settles(trace, {i, then})
        ):
            idle |= {i, then}
    return idle


class NoisyJudge:
    """Flags every true error and a share of needed steps; adds useless insertions."""

    name = "noisy-judge"

    def __init__(self, episodes: Sequence[Episode], noise: float, *, pool: str = "needed") -> None:
        self.by_plan = {tuple(e.actions): e for e in episodes}
        self.noise = noise
        self.pool = pool  # "needed": steps that change something; "all": any interaction
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
        if self.pool == "needed":
            wrong -= idle_steps(episode)
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


@dataclass
class Tally:
    """What one certify setting let through, pooled over episodes."""

    false_removals: Counts = field(default_factory=Counts)  # plan level, motion left out
    plan: Counts = field(default_factory=Counts)  # removals and insertions, plan level, no motion
    labels: Counts = field(default_factory=Counts)  # label level, for reference
    offered: int = 0  # flags on needed steps
    inserted: int = 0  # useless insertions that went in
    proposed: int = 0  # useless insertions proposed
    unusable: int = 0  # results with status "error": they remove nothing, which looks like vetoes

    def add(
        self, episodes: Sequence[Episode], results: Sequence[VerificationResult], judge: NoisyJudge
    ) -> None:
        by_id = {r.id: r for r in results}
        for episode in episodes:
            result = by_id[episode.id]
            self.unusable += result.status == "error"
            self.offered += len(judge.false_flags.get(episode.id, set()))
            removed = {v.index for v in result.verdicts if v.verdict == "remove"}
            self.false_removals += plan_counts(
                episode.actions, clean_plan(episode) or [], removed, motion=False
            )
            useless = Counter(judge.useless.get(episode.id, []))
            self.proposed += sum(useless.values())
            # what went in beyond the true missing steps, as far as it is a useless proposal
            extra = Counter(step.action for step in result.inserted) - Counter(
                label.action for label in episode.labels if label.type == "MISSING"
            )
            self.inserted += sum((extra & useless).values())
        report = score_results(episodes, results, mode="iterative", resamples=0)
        self.labels += report.overall.counts
        if report.plan_level is not None:
            self.plan += report.plan_level["without_motion"].counts


def measure(
    source: Sequence[Episode],
    generator: str,
    seeds: Sequence[int],
    noise: float,
    pool: str,
    trim: TrimPolicy,
) -> dict[bool, Tally]:
    """Per certify setting, what went through on these seeds under a trim policy."""
    out = {certify: Tally() for certify in (False, True)}
    for seed in seeds:
        annotated = [episode_under(e, trim) for e in GENERATORS[generator](source, seed=seed)]
        for certify, tally in out.items():
            judge = NoisyJudge(annotated, noise, pool=pool)
            results = verify_many(
                annotated,
                judge=judge,
                planner="rules",
                max_iterations=1,
                certify=certify,
                trim=trim,
            )
            tally.add(annotated, results, judge)
    return out


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def main() -> None:
    parser = set_options(__doc__.splitlines()[0])
    parser.add_argument("--noise", type=float, default=0.3, help="share of needed steps flagged")
    parser.add_argument(
        "--pool",
        choices=["needed", "all"],
        default="needed",
        help="steps the noise falls on: those that change something, or every interaction",
    )
    args = parser.parse_args()
    source = source_of(args)
    print(
        f"seeds {args.seeds}, noise {args.noise} of the {args.pool} steps, max_iterations 1, "
        "rules planner"
    )
    for trim, generator in product(args.trims, args.generators):
        started = time.perf_counter()
        off, on = measure(source, generator, args.seeds, args.noise, args.pool, trim).values()
        print(
            f"{trim} {generator} ({time.perf_counter() - started:.0f} s, "
            f"{off.offered} steps flagged by mistake)"
        )
        for name, tally in (("off", off), ("on ", on)):
            removals = tally.false_removals
            print(
                f"  certify {name}: false removals {removals.fp}, useless insertions "
                f"{tally.inserted}/{tally.proposed}; recall: removals {pct(removals.recall)}, "
                f"plan {pct(tally.plan.recall)} (labels {pct(tally.labels.recall)}); "
                f"unusable results {tally.unusable}"
            )
        noise = off.false_removals.fp + off.inserted
        vetoed = noise - on.false_removals.fp - on.inserted
        if noise:
            print(f"  vetoed: {vetoed}/{noise} = {100 * vetoed / noise:.1f}% of the noise")
        for what, before, after in (
            ("removal", off.false_removals.recall, on.false_removals.recall),
            ("plan", off.plan.recall, on.plan.recall),
        ):
            if before is not None and after is not None:
                print(f"  {what} recall lost to certify: {100 * (before - after):.1f} points")


if __name__ == "__main__":
    main()
