"""Score offline judges on annotated TEACh episodes: both error generators, several seeds, pooled.

For each generator (`injected`: the paper's taxonomy; `natural`: human-like mistakes), seed and
judge it does what these commands do, and pools the counts over the seeds:

    planverify corrupt ../shared/teach/games --generator G --seed S -o annotated-G-S.jsonl
    planverify verify annotated-G-S.jsonl --judge J --no-checkpoint -o results-J-G-S.jsonl
    planverify score annotated-G-S.jsonl results-J-G-S.jsonl

in two input conditions: `full` records (scene, task and any TEACh task definition kept) and
`goal` text alone (`scene`, `task` and `teach_task` removed before verifying; the goal and the
plan with its dialogue kept). Annotation keys are never given to the verifier. It prints how
many results were unusable (a verification that ended in an error, or a result on other content:
scored as removing nothing, so a fault cannot hide in the figures), label-level and plan-level
recall and precision, with and without motion steps, then label-level recall per error type
(full records).

Precision counts every removal the clean plan does not make as a false positive, but the clean
plan is a human demonstration with redundancies of its own. The last column, `plan P excused`,
tells them apart: the judge also verifies each uncorrupted episode (in the same input condition),
and a removal counts as false there only when it shortens the LCS with the plan that judge keeps
of it. It is a diagnostic of how much of the precision lost is the base plans' own redundancy,
not a replacement for the plan-level precision.

The hand-annotated set (`benchmarks/annotated/hand.jsonl`, `hand_set.py`, docs/annotation.md:
real demonstrations labelled by reading them) is verified in the same two conditions. Its clean
plans are the gold, so nothing is excused, and its labels never name motion, so it is scored at
plan level without motion. A last table gives that score for every set, generators included, with
percentile bootstrap 95% intervals over episodes.

Every table is printed for each trim policy (`--trims natural minimal`): the judges run under it,
and are scored against the labels that are errors under it (`planverify.records.trim.labels_under`:
a generator label of a step `natural` keeps carries `"policy": "minimal"`), with the clean plan
the labels make under `natural` (`planverify.metrics.episode_under`). The `natural` annotation files are scored too:
`hand-natural` (`benchmarks/annotated/hand_natural.jsonl`, the hand set read again under
`natural`) and `natural-test-1` to `natural-test-12` (`natural_test.jsonl` to
`natural_test12.jsonl`, the twelve test parts, development data since each was scored once,
blind, at the end of its round) always, and the blind part (`natural_set.BLIND_SET`, when one is
drawn) only with `--held-out`, at the end of a round of Judge work.

The evidence table scores the removals at each evidence level (`proven`, `goal-text`, `heuristic`;
`planverify.metrics.evidence_levels`) as if only they had been made: how many there are, their
share of all removals, and their plan-level precision, raw and, for the generators, excused. The
generators are scored with motion, the hand set without (its labels never name motion).

Usage: python benchmarks/judge_quality.py [--games DIR] [--seeds 1 2 3 4 5]
       [--judges rules baseline] [--generators [injected natural]] [--no-hand]
       [--mode iterative|static] [--resamples 1000] [--trims natural minimal] [--held-out]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from hand_set import HandSetUnavailable, load_hand_set
from natural_set import BLIND_SET, DEVELOPMENT_SETS, load_natural

from planverify import verify_many
from planverify.inputs.sources import load_episodes
from planverify.metrics import (
    Counts,
    Report,
    Scores,
    episode_under,
    evidence_levels,
    plan_counts,
    score_results,
    summarize,
)
from planverify.noise import ANNOTATION_KEYS, GENERATORS
from planverify.records.episode import Episode
from planverify.records.evidence import LEVELS as EVIDENCE
from planverify.records.result import VerificationResult
from planverify.records.trim import TRIM_POLICIES, TrimPolicy

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
CONDITIONS = {
    "full": (),  # what the record has
    "goal": ("scene", "task", "teach_task"),  # the goal text and the plan alone
}
LEVELS = ("labels", "labels -motion", "plan", "plan -motion")
HAND = "hand"  # the hand-annotated set's name in the tables
HAND_SETS = (  # read by people: scored without motion
    HAND,
    *DEVELOPMENT_SETS,
    *([BLIND_SET[0]] if BLIND_SET is not None else []),
)
Key = tuple[str, str, str]  # (set, input condition, judge)


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def without(episode: Episode, keys: tuple[str, ...]) -> Episode:
    """The episode without these record keys."""
    data = episode.model_dump(mode="json", exclude_none=True)
    for key in keys:
        data.pop(key, None)
    return Episode.model_validate(data)


def kept_plan(result: VerificationResult) -> list[str]:
    """The input steps a judge kept (its insertions left out)."""
    return [v.action for v in result.verdicts if v.verdict == "keep"]


def excused(
    scored: list[Episode], results: list[VerificationResult], base: dict[str, list[str]]
) -> Counts:
    """Plan-level counts of removals against what the judge keeps of the uncorrupted episode."""
    total = Counts()
    for episode, result in zip(scored, results, strict=True):
        removed = {v.index for v in result.verdicts if v.verdict == "remove"}
        if result.status == "ok" and episode.id in base:
            total += plan_counts(episode.actions, base[episode.id], removed)
    return total


def interval(scores: Scores, metric: str) -> str:
    """A metric with its bootstrap interval, in percent: `87.5 [80.1, 93.0]`."""
    value, ci = getattr(scores, metric), getattr(scores, f"{metric}_ci")
    return pct(value) + ("" if ci is None else f" [{pct(ci.low)}, {pct(ci.high)}]")


def plan_without_motion(report: Report) -> list[Counts]:
    """The plan-level counts without motion of each scored episode (those with a `clean` plan)."""
    return [s.plan_level["without_motion"] for s in report.episodes if s.plan_level is not None]


def levels(report: Report) -> dict[str, Counts]:
    """The pooled counts of a report at each level."""
    out = {"labels": report.overall.counts}
    if report.without_motion is not None:
        out["labels -motion"] = report.without_motion.counts
    for key, name in (("with_motion", "plan"), ("without_motion", "plan -motion")):
        if report.plan_level is not None:
            out[name] = report.plan_level[key].counts
    return out


class Tally:
    """What the runs counted, pooled per (set, input condition, judge)."""

    def __init__(self) -> None:
        self.levels: dict[Key, dict[str, Counts]] = defaultdict(lambda: defaultdict(Counts))
        self.by_error: dict[tuple[str, str], dict[str, Counts]] = defaultdict(
            lambda: defaultdict(Counts)
        )
        self.episodes: dict[Key, list[Counts]] = defaultdict(list)  # plan -motion, per episode
        self.unusable: list[str] = []  # "set/input/judge: id" of results scored as no change
        self.annotated = Counts()  # tp: annotated episodes, fn: with labels
        # per key and evidence level: removals, plan-level counts, excused plan-level counts
        self.evidence: dict[Key, dict[str, list[Any]]] = defaultdict(
            lambda: {level: [0, Counts(), Counts()] for level in EVIDENCE}
        )

    def add_evidence(
        self,
        key: Key,
        scored: list[Episode],
        results: list[VerificationResult],
        mode: str,
        base: dict[str, list[str]] | None,
    ) -> None:
        """Pool one run's removals per evidence level."""
        table = evidence_levels(
            scored, results, mode=mode, base=base, motion=key[0] not in HAND_SETS
        )  # type: ignore[arg-type]
        for level, scores in table.items():
            pooled = self.evidence[key][level]
            pooled[0] += scores.removals
            pooled[1] += scores.plan or Counts()
            pooled[2] += scores.excused or Counts()

    def add(self, key: Key, report: Report) -> None:
        """Pool one scored run."""
        for name, counts in levels(report).items():
            self.levels[key][name] += counts
        self.episodes[key] += plan_without_motion(report)
        self.unusable += [f"{'/'.join(key)}: {i}" for i in report.failed + report.mismatched]
        if key[1] == "full":
            for kind, scores in report.by_error.items():
                self.by_error[(key[0], key[2])][kind] += scores.counts


def run_generators(
    source: list[Episode], args: argparse.Namespace, tally: Tally, trim: TrimPolicy
) -> None:
    """Corrupt, verify and score the shared episodes for every generator, seed and judge."""
    static = args.mode == "static"
    base = {  # what each judge keeps of the uncorrupted episodes, per input condition
        (condition, judge): {
            r.id: kept_plan(r)
            for r in verify_many(
                [without(ep, dropped) for ep in source], judge=judge, static=static, trim=trim
            )
        }
        for condition, dropped in CONDITIONS.items()
        for judge in args.judges
    }
    for generator in args.generators:
        for seed in args.seeds:
            annotated = [episode_under(ep, trim) for ep in GENERATORS[generator](source, seed=seed)]
            tally.annotated += Counts(
                tp=len(annotated), fn=sum(bool(ep.labels) for ep in annotated)
            )
            for condition, dropped in CONDITIONS.items():
                # scored as verified: the same content, with its annotations
                scored = [without(ep, dropped) for ep in annotated] if dropped else annotated
                inputs = [without(ep, ANNOTATION_KEYS) for ep in scored]
                for judge in args.judges:
                    results = verify_many(inputs, judge=judge, static=static, trim=trim)
                    report = score_results(scored, results, mode=args.mode, resamples=0)
                    tally.add((generator, condition, judge), report)
                    tally.levels[(generator, condition, judge)]["excused"] += excused(
                        scored, results, base[(condition, judge)]
                    )
                    tally.add_evidence(
                        (generator, condition, judge),
                        scored,
                        results,
                        args.mode,
                        base[(condition, judge)],
                    )


def run_hand_set(
    name: str, hand: list[Episode], args: argparse.Namespace, tally: Tally, trim: TrimPolicy
) -> None:
    """Verify and score a set annotated by reading it with every judge, in both conditions."""
    hand = [episode_under(ep, trim) for ep in hand]
    for condition, dropped in CONDITIONS.items():
        scored = [without(ep, dropped) for ep in hand] if dropped else hand
        inputs = [without(ep, ANNOTATION_KEYS) for ep in scored]
        for judge in args.judges:
            static = args.mode == "static"
            results = verify_many(inputs, judge=judge, static=static, trim=trim)
            tally.add((name, condition, judge), score_results(scored, results, mode=args.mode))
            tally.add_evidence((name, condition, judge), scored, results, args.mode, None)


def print_levels(tally: Tally) -> None:
    """The generators' table: every level, and the excused precision."""
    head = " | ".join(f"{level} R | {level} P" for level in LEVELS)
    print(f"| generator | input | judge | {head} | plan P excused |")
    print("|" + " --- |" * (4 + 2 * len(LEVELS)))
    for (generator, condition, judge), counts in tally.levels.items():
        if generator in HAND_SETS:
            continue
        cells = [f"{pct(counts[lv].recall)} | {pct(counts[lv].precision)}" for lv in LEVELS]
        cells.append(pct(counts["excused"].precision))
        print(f"| {generator} | {condition} | {judge} | " + " | ".join(cells) + " |")


def print_intervals(tally: Tally, resamples: int) -> None:
    """Plan level without motion, every set, with bootstrap 95% intervals over episodes."""
    print("plan level without motion, bootstrap 95% intervals over episodes")
    print()
    print("| set | input | judge | episodes | recall | precision |")
    print("|" + " --- |" * 6)
    for (name, condition, judge), per_episode in tally.episodes.items():
        scores = summarize(per_episode, resamples=resamples, seed=f"{name}:{condition}:{judge}")
        row = f"{interval(scores, 'recall')} | {interval(scores, 'precision')}"
        print(f"| {name} | {condition} | {judge} | {scores.episodes} | {row} |")


def print_evidence(tally: Tally) -> None:
    """Per set and evidence level: the removals, their share, and their plan-level precision."""
    print("removals per evidence level, each level scored alone (plan level)")
    print()
    print("| set | input | judge | level | removals | share | precision | excused |")
    print("|" + " --- |" * 8)
    for (name, condition, judge), pooled in tally.evidence.items():
        total = sum(pooled[level][0] for level in EVIDENCE)
        for level in EVIDENCE:
            count, plan, excused_counts = pooled[level]
            share = pct(count / total) if total else "-"
            spared = "-" if name in HAND_SETS else pct(excused_counts.precision)
            cells = f"{count} | {share} | {pct(plan.precision)} | {spared}"
            print(f"| {name} | {condition} | {judge} | {level} | {cells} |")


def print_by_error(tally: Tally, columns: list[tuple[str, str]]) -> None:
    """Label-level recall per error type, full records."""
    print("label-level recall per error type, full records")
    print()
    print("| error | " + " | ".join(f"{g} {j}" for g, j in columns) + " |")
    print("|" + " --- |" * (1 + len(columns)))
    kinds = sorted({kind for counts in tally.by_error.values() for kind in counts})
    for kind in kinds:
        cells = [
            pct(tally.by_error[column][kind].recall) if kind in tally.by_error[column] else ""
            for column in columns
        ]
        print(f"| {kind} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=Path, default=SHARED / "teach" / "games")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--judges", nargs="+", default=["rules", "baseline"])
    parser.add_argument(
        "--generators", nargs="*", choices=sorted(GENERATORS), default=["injected", "natural"]
    )
    parser.add_argument("--hand", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--mode", choices=["iterative", "static"], default="iterative")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--trims", nargs="+", choices=TRIM_POLICIES, default=list(TRIM_POLICIES))
    parser.add_argument(
        "--held-out", action="store_true", help="also score the blind natural test part"
    )
    args = parser.parse_args()
    if not args.games.is_dir():
        sys.exit(f"no TEACh games at {args.games}; pass --games DIR")
    if args.held_out and BLIND_SET is None:
        sys.exit("no blind part is drawn: every natural test part has been scored")
    sets: dict[str, list[Episode]] = {}
    if args.hand:
        try:
            sets[HAND] = load_hand_set(args.games)
            for name, path in DEVELOPMENT_SETS.items():
                sets[name] = load_natural(path, args.games)
            if args.held_out and BLIND_SET is not None:
                sets[BLIND_SET[0]] = load_natural(BLIND_SET[1], args.games)
        except HandSetUnavailable as exc:
            sys.exit(f"the hand sets cannot be rebuilt: {exc}")
    source = list(load_episodes([args.games])) if args.generators else []
    for trim in args.trims:
        report(source, sets, args, trim)


def report(
    source: list[Episode],
    sets: dict[str, list[Episode]],
    args: argparse.Namespace,
    trim: TrimPolicy,
) -> None:
    """Run every judge under one trim policy and print its tables."""
    tally = Tally()
    started = time.perf_counter()
    if args.generators:
        run_generators(source, args, tally, trim)
    for name, episodes in sets.items():
        run_hand_set(name, episodes, args, tally, trim)
    elapsed = time.perf_counter() - started
    counted = ", ".join(
        f"{name} {len(eps)} ({sum(bool(ep.labels) for ep in eps)} with errors)"
        for name, eps in sets.items()
    )
    print(f"## trim policy: {trim}")
    print()
    print(
        f"{len(source)} games, generators {' '.join(args.generators) or '-'}, seeds {args.seeds}, "
        f"{args.mode} mode: {tally.annotated.tp} annotated episodes "
        f"({tally.annotated.fn} with errors); {counted or 'no hand sets'}; {elapsed:.0f} s"
    )
    shown = ", ".join(tally.unusable[:5]) + (", ..." if len(tally.unusable) > 5 else "")
    print(
        f"unusable results (an error, or computed on other content), scored as removing "
        f"nothing: {len(tally.unusable)}{f' ({shown})' if shown else ''}"
    )
    if args.generators:
        print()
        print_levels(tally)
    print()
    print_intervals(tally, args.resamples)
    print()
    print_evidence(tally)
    print()
    names = [*args.generators, *sets]
    print_by_error(tally, [(name, judge) for name in names for judge in args.judges])
    print()


if __name__ == "__main__":
    main()
