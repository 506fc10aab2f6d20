"""Score offline judges on annotated TEACh episodes: both error generators, several seeds, pooled.

For each generator (`injected`: the paper's taxonomy; `natural`: human-like mistakes), seed and
judge it does what these commands do, and pools the counts over the seeds:

    planverify corrupt ../shared/teach/games --generator G --seed S -o annotated-G-S.jsonl
    planverify verify annotated-G-S.jsonl --judge J --no-checkpoint -o results-J-G-S.jsonl
    planverify score annotated-G-S.jsonl results-J-G-S.jsonl

in two input conditions: `full` records (scene, task and any TEACh task definition kept) and
`goal` text alone (`scene`, `task` and `teach_task` removed before verifying; the goal and the
plan with its dialogue kept). Annotation keys are never given to the verifier. It prints
label-level and plan-level recall and precision, with and without motion steps, then label-level
recall per error type (full records).

Precision counts every removal the clean plan does not make as a false positive, but the clean
plan is a human demonstration with redundancies of its own. The last column, `plan P excused`,
tells them apart: the judge also verifies each uncorrupted episode (in the same input condition),
and a removal counts as false there only when it shortens the LCS with the plan that judge keeps
of it. It is a diagnostic of how much of the precision lost is the base plans' own redundancy,
not a replacement for the plan-level precision.

Usage: python benchmarks/judge_quality.py [--games DIR] [--seeds 1 2 3 4 5]
       [--judges rules baseline] [--generators injected natural] [--mode iterative|static]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

from planverify import verify_many
from planverify.corrupt import ANNOTATION_KEYS, GENERATORS
from planverify.episode import Episode
from planverify.result import VerificationResult
from planverify.scoring import Counts, Report, plan_counts, score_results
from planverify.sources import load_episodes

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
CONDITIONS = {
    "full": (),  # what the record has
    "goal": ("scene", "task", "teach_task"),  # the goal text and the plan alone
}
LEVELS = ("labels", "labels -motion", "plan", "plan -motion")


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


def levels(report: Report) -> dict[str, Counts]:
    """The pooled counts of a report at each level."""
    out = {"labels": report.overall.counts}
    if report.without_motion is not None:
        out["labels -motion"] = report.without_motion.counts
    for key, name in (("with_motion", "plan"), ("without_motion", "plan -motion")):
        if report.plan_level is not None:
            out[name] = report.plan_level[key].counts
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=Path, default=SHARED / "teach" / "games")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--judges", nargs="+", default=["rules", "baseline"])
    parser.add_argument(
        "--generators", nargs="+", choices=sorted(GENERATORS), default=["injected", "natural"]
    )
    parser.add_argument("--mode", choices=["iterative", "static"], default="iterative")
    args = parser.parse_args()
    if not args.games.is_dir():
        sys.exit(f"no TEACh games at {args.games}; pass --games DIR")

    source = list(load_episodes([args.games]))
    base = {  # what each judge keeps of the uncorrupted episodes, per input condition
        (condition, judge): {
            r.id: kept_plan(r)
            for r in verify_many(
                [without(ep, dropped) for ep in source], judge=judge, static=args.mode == "static"
            )
        }
        for condition, dropped in CONDITIONS.items()
        for judge in args.judges
    }
    totals: dict[tuple[str, str, str], dict[str, Counts]] = defaultdict(lambda: defaultdict(Counts))
    by_error: dict[tuple[str, str], dict[str, Counts]] = defaultdict(lambda: defaultdict(Counts))
    episodes = Counts()  # tp: annotated episodes, fn: with labels
    started = time.perf_counter()
    for generator in args.generators:
        for seed in args.seeds:
            annotated = list(GENERATORS[generator](source, seed=seed))
            episodes += Counts(tp=len(annotated), fn=sum(bool(ep.labels) for ep in annotated))
            for condition, dropped in CONDITIONS.items():
                # scored as verified: the same content, with its annotations
                scored = [without(ep, dropped) for ep in annotated] if dropped else annotated
                inputs = [without(ep, ANNOTATION_KEYS) for ep in scored]
                for judge in args.judges:
                    results = verify_many(inputs, judge=judge, static=args.mode == "static")
                    report = score_results(scored, results, mode=args.mode, resamples=0)
                    for name, counts in levels(report).items():
                        totals[(generator, condition, judge)][name] += counts
                    totals[(generator, condition, judge)]["excused"] += excused(
                        scored, results, base[(condition, judge)]
                    )
                    if condition == "full":
                        for kind, scores in report.by_error.items():
                            by_error[(generator, judge)][kind] += scores.counts
    elapsed = time.perf_counter() - started
    print(
        f"{len(source)} games, generators {' '.join(args.generators)}, seeds {args.seeds}, "
        f"{args.mode} mode: {episodes.tp} annotated episodes ({episodes.fn} with errors), "
        f"{elapsed:.0f} s"
    )
    print()
    head = " | ".join(f"{level} R | {level} P" for level in LEVELS)
    print(f"| generator | input | judge | {head} | plan P excused |")
    print("|" + " --- |" * (4 + 2 * len(LEVELS)))
    for (generator, condition, judge), counts in totals.items():
        cells = [f"{pct(counts[lv].recall)} | {pct(counts[lv].precision)}" for lv in LEVELS]
        cells.append(pct(counts["excused"].precision))
        print(f"| {generator} | {condition} | {judge} | " + " | ".join(cells) + " |")
    print()
    print("label-level recall per error type, full records")
    print()
    columns = [(g, j) for g in args.generators for j in args.judges]
    print("| error | " + " | ".join(f"{g} {j}" for g, j in columns) + " |")
    print("|" + " --- |" * (1 + len(columns)))
    kinds = sorted({kind for counts in by_error.values() for kind in counts})
    for kind in kinds:
        cells = [
            pct(by_error[column][kind].recall) if kind in by_error[column] else ""
            for column in columns
        ]
        print(f"| {kind} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
