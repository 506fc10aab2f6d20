"""Where the rules Judge and the `natural` annotation files disagree, episode by episode.

A development aid for Judge work. It verifies the development sets (`natural_set.DEVELOPMENT_SETS`:
`hand-natural` and `natural-test-1` to `natural-test-12`; never a blind part, which only
`judge_quality.py --held-out` scores) with the rules Judge, under one trim policy and one input
condition (`full` records, or the `goal` text alone, as `judge_quality.py` runs them), and prints
the episodes with plan-level errors without motion, the worst first:

- a false removal is a removed step that a longest common subsequence (LCS) of the input and
  clean plans holds, shown with the Judge's reason and evidence;
- a miss is a kept step outside it, shown with its label's error and reason and, when the Judge
  kept it as optional, the optional kind;
- a false insertion is a proposed step that no MISSING label accounts for, and a missed
  insertion a MISSING label that no proposal accounts for (paired as the score pairs them).

Of the LCSs, the one holding the most steps the Judge kept decides, so that which of two identical
steps goes does not matter, as in the plan-level score. The lists then have as many steps as that
score counts, but in the odd episode where no LCS holds all the steps the refined plan shares
with the clean plan: there a false removal and a miss more are listed.
The pooled counts at the end are `judge_quality.py`'s plan-level figures for the sets read.

    python benchmarks/judge_errors.py [--games DIR] [--trim natural|minimal]
        [--input full|goal] [--set NAME ...] [--top 20] [--episode ID-PREFIX]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hand_set import HandSetUnavailable
from judge_quality import CONDITIONS, SHARED, without
from natural_set import DEVELOPMENT_SETS, load_natural

from planverify import verify_many
from planverify.metrics import Counts, episode_under, score_plan
from planverify.metrics.plan import plan_steps, proposal_errors
from planverify.noise import ANNOTATION_KEYS
from planverify.records.episode import Episode
from planverify.records.notation import parse_action
from planverify.records.result import VerificationResult
from planverify.records.trim import TRIM_POLICIES


def plan_errors(
    noisy: Sequence[str], clean: Sequence[str], removed: Collection[int]
) -> tuple[list[int], list[int]]:
    """The false removals and the misses of one plan without motion: of the longest common
    subsequences of the noisy and clean plans, the one that keeps the most steps the Judge kept
    decides; a removed step in it is a false removal, a kept step outside it a miss.

    >>> clean = ["Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'Sink')"]
    >>> noisy = ["Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'Shelf')",
    ...          "Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'Sink')"]
    >>> plan_errors(noisy, clean, removed={0, 1})  # which of two identical steps goes: no error
    ([], [])
    >>> plan_errors(noisy, clean, removed={1, 3})
    ([3], [2])
    """
    steps = plan_steps(noisy, False, parse_action)
    gold = [line for _, line in plan_steps(clean, False, parse_action)]
    drop = set(removed)
    # a match counts far more than keeping a kept step: the alignment is an LCS first
    weight = [1 + len(steps) + (i not in drop) for i, _ in steps]
    best = [[0] * (len(gold) + 1) for _ in range(len(steps) + 1)]
    for x in range(len(steps) - 1, -1, -1):
        for y in range(len(gold) - 1, -1, -1):
            best[x][y] = max(best[x + 1][y], best[x][y + 1])
            if steps[x][1] == gold[y]:
                best[x][y] = max(best[x][y], weight[x] + best[x + 1][y + 1])
    aligned: set[int] = set()
    x = y = 0
    while x < len(steps) and y < len(gold):
        if steps[x][1] == gold[y] and best[x][y] == weight[x] + best[x + 1][y + 1]:
            aligned.add(steps[x][0])
            x, y = x + 1, y + 1
        elif best[x][y] == best[x + 1][y]:
            x += 1
        else:
            y += 1
    false = sorted(drop & aligned)
    missed = [i for i, _ in steps if i not in drop and i not in aligned]
    return false, missed


@dataclass
class EpisodeErrors:
    """One episode's disagreements with its labels."""

    set_name: str  # the annotation set it comes from
    episode: Episode  # as scored: the labels and the clean plan of the trim policy
    result: VerificationResult  # the rules Judge's
    counts: Counts  # plan level, without motion
    false: list[int] = field(default_factory=list)  # false removals (input indices)
    missed: list[int] = field(default_factory=list)  # misses (input indices)
    false_inserted: list[str] = field(default_factory=list)  # proposals no label asks for
    missed_inserted: list[str] = field(default_factory=list)  # MISSING labels not proposed

    @property
    def errors(self) -> int:
        return self.counts.fp + self.counts.fn


def disagreements(set_name: str, episode: Episode, result: VerificationResult) -> EpisodeErrors:
    """Score one verified episode against its labels at plan level, without motion."""
    removed = {v.index for v in result.verdicts if v.verdict == "remove"}
    clean = (episode.model_extra or {})["clean"]
    counts = score_plan(episode, result, mode="iterative", motion=False)
    assert counts is not None  # every annotation set's episode has its clean plan
    false, missed = plan_errors(episode.actions, clean, removed)
    inserted, wanted, _ = proposal_errors(episode, result, mode="iterative", motion=False)
    return EpisodeErrors(
        set_name,
        episode,
        result,
        counts,
        false,
        missed,
        [str(line) for line in inserted],
        [str(action) for action in wanted],
    )


def describe(errors: EpisodeErrors) -> list[str]:
    """The lines printed for one episode."""
    ep, verdicts = errors.episode, {v.index: v for v in errors.result.verdicts}
    labels = {label.index: label for label in ep.labels or [] if label.index is not None}
    c = errors.counts
    lines = [f"## {errors.set_name} {ep.id}: tp {c.tp}, fp {c.fp}, fn {c.fn} | {ep.goal or ''}"]
    for index in sorted(errors.false + errors.missed):
        verdict = verdicts[index]
        if index in errors.false:
            lines.append(f"  false removal {index:4d} {ep.actions[index]}  [{verdict.evidence}]")
            lines.append(f"      {verdict.reason or ''}")
            continue
        label = labels.get(index)
        optional = f"; kept as optional: {verdict.optional.kind}" if verdict.optional else ""
        error = label.error if label is not None else "not labelled"
        lines.append(f"  miss          {index:4d} {ep.actions[index]}  ({error}{optional})")
        if label is not None:
            lines.append(f"      {label.reason or ''}")
    inserted = {step.action: step for step in errors.result.inserted}
    for line in errors.false_inserted:
        step = inserted.get(line)
        where = f" after {step.after_index}" if step is not None else ""
        lines.append(f"  false insertion{where} {line}  [{step.evidence if step else ''}]")
        lines.append(f"      {step.reason if step is not None else ''}")
    lines += [f"  missed insertion {line}" for line in errors.missed_inserted]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=Path, default=SHARED / "teach" / "games")
    parser.add_argument("--trim", choices=TRIM_POLICIES, default="natural")
    parser.add_argument("--input", choices=sorted(CONDITIONS), default="full")
    parser.add_argument("--set", nargs="+", choices=list(DEVELOPMENT_SETS), dest="sets")
    parser.add_argument("--top", type=int, default=20, help="episodes shown (0: all)")
    parser.add_argument("--episode", help="only the episodes whose id starts with this")
    args = parser.parse_args()
    if not args.games.is_dir():
        sys.exit(f"no TEACh games at {args.games}; pass --games DIR")
    found: list[EpisodeErrors] = []
    total = Counts()
    for name in args.sets or DEVELOPMENT_SETS:
        try:
            episodes = load_natural(DEVELOPMENT_SETS[name], args.games)
        except HandSetUnavailable as exc:
            sys.exit(f"{name} cannot be rebuilt: {exc}")
        scored = [episode_under(ep, args.trim) for ep in episodes]
        scored = [without(ep, CONDITIONS[args.input]) for ep in scored]
        if args.episode:
            scored = [ep for ep in scored if ep.id.startswith(args.episode)]
        inputs = [without(ep, ANNOTATION_KEYS) for ep in scored]
        results = verify_many(inputs, judge="rules", trim=args.trim)
        for episode, result in zip(scored, results, strict=True):
            if result.status != "ok":
                sys.exit(f"{name} {episode.id}: the verification ended in {result.status}")
            errors = disagreements(name, episode, result)
            total += errors.counts
            if errors.errors:
                found.append(errors)
    found.sort(key=lambda e: (-e.errors, e.set_name, e.episode.id))
    for errors in found[: args.top or None]:
        print("\n".join(describe(errors)))
        print()
    print(
        f"{args.trim}, {args.input}: {len(found)} episodes with errors; plan level without "
        f"motion tp {total.tp}, fp {total.fp}, fn {total.fn}, recall "
        f"{100 * (total.recall or 0):.1f}, precision {100 * (total.precision or 0):.1f}"
    )


if __name__ == "__main__":
    main()
