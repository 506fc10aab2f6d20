"""How well two readings of the same demonstrations agree, and where the rules Judge stands.

The quality targets ask a Judge to match the `natural` annotation files at recall 0.93 and
precision 0.96. A file is one reading of the guide (docs/annotation.md), which may leave room:
so this script measures how far a second, independent reading of the same episodes agrees with
the first, by the very score the Judge gets. `annotated/second_reading.jsonl` holds
that reading: `SAMPLE_PER_SET` episodes of each development set, chosen from their ids alone
(`draw_sample`), labelled again from the guide by annotators who saw neither the first labels nor
any Judge output. Each first reading keeps its own file.

For each trim policy, at plan level (a removal is wrong only if it shortens the longest common
subsequence with the reference's clean plan), without motion unless `--motion`:

- `second vs first`: the second reading's removals scored against the first reading's clean plan,
  as `judge_quality.py` scores a Judge; `first vs second` the other way round;
- `rules (full) vs first` and `... vs second`: the rules Judge on the same episodes, with scene
  and task; `rules (goal)`, from the goal text alone.

Recall and precision come with 95% bootstrap intervals over episodes; `--detail` lists the steps
the two readings disagree on, with both reasons.

`--adjudication` reads `annotated/adjudication.jsonl` instead: 60 disputes between the rules Judge
(world version 29, `natural`, scene and task) and the first readings of the development sets, 30
of the Judge's false removals and 30 of its misses (grouped by reason, drawn at random), each
decided under the guide by an adjudicator told only that "one reading removes these steps, the
other keeps them". It prints, per side, how many disputed steps the adjudicators gave to the
Judge and how many to the reading, and which side today's rules Judge takes on the same steps.

    python benchmarks/annotator_agreement.py [--games DIR] [--motion] [--detail] [--draw]
    python benchmarks/annotator_agreement.py --adjudication [--games DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hand_set import HandSetUnavailable
from judge_quality import CONDITIONS, SHARED, interval, without
from natural_set import ADJUDICATION_FILE, DEVELOPMENT_SETS, SECOND_READING_FILE, load_natural

from planverify import verify_many
from planverify.metrics import Counts, plan_counts, summarize
from planverify.noise import ANNOTATION_KEYS
from planverify.records.episode import Episode
from planverify.records.trim import TRIM_POLICIES, TrimPolicy, labels_under

SAMPLE_PER_SET = 2  # episodes of each development set read a second time
SAMPLE_SEED = "second-reading"  # with an episode's id, orders each set for the draw
Pair = tuple[Episode, Episode]  # (first reading, second reading) of one episode


def draw_sample(episodes: Sequence[Episode], per_set: int = SAMPLE_PER_SET) -> list[Episode]:
    """The episodes of one set read a second time: the first `per_set` by the SHA-256 of the
    seed and their id, a rule that looks at nothing but the ids.

    >>> ids = [Episode(id=f"e{i}", actions=[]) for i in range(5)]
    >>> [ep.id for ep in draw_sample(ids)]
    ['e4', 'e2']
    """
    return sorted(episodes, key=lambda ep: _rank(ep.id))[:per_set]


def _rank(episode_id: str) -> str:
    return hashlib.sha256(f"{SAMPLE_SEED}:{episode_id}".encode()).hexdigest()


def removed(episode: Episode, trim: TrimPolicy) -> set[int]:
    """The steps a reading removes under a trim policy."""
    return {
        label.index
        for label in labels_under(episode.labels or [], trim)
        if label.type == "REMOVE" and label.index is not None
    }


def clean(episode: Episode, trim: TrimPolicy) -> list[str]:
    """A reading's clean plan under a trim policy (`load_natural` made both)."""
    plans: dict[str, list[str]] = (episode.model_extra or {})["clean"]
    return plans[trim]


def score(reference: Episode, steps: set[int], trim: TrimPolicy, *, motion: bool) -> Counts:
    """Plan-level counts of removing `steps` from the episode, against the reference's plan."""
    return plan_counts(
        reference.actions, clean(reference, trim), steps, motion=motion, read=reference.step_of
    )


def judge_removals(episodes: Sequence[Episode], trim: TrimPolicy, condition: str) -> list[set[int]]:
    """What the rules Judge removes of each episode, given the input condition's record."""
    inputs = [without(episode, ANNOTATION_KEYS + CONDITIONS[condition]) for episode in episodes]
    results = verify_many(inputs, judge="rules", trim=trim)
    for result in results:
        if result.status != "ok":
            sys.exit(f"{result.id}: the verification ended in {result.status}")
    return [{v.index for v in r.verdicts if v.verdict == "remove"} for r in results]


def rows(pairs: Sequence[Pair], trim: TrimPolicy, *, motion: bool) -> dict[str, list[Counts]]:
    """Per-episode counts of every comparison the table shows, by row name."""
    table = {
        "second vs first": [score(a, removed(b, trim), trim, motion=motion) for a, b in pairs],
        "first vs second": [score(b, removed(a, trim), trim, motion=motion) for a, b in pairs],
    }
    for condition in CONDITIONS:
        judged = judge_removals([first for first, _ in pairs], trim, condition)
        for name, which in (("first", 0), ("second", 1)):
            table[f"rules ({condition}) vs {name}"] = [
                score(pair[which], steps, trim, motion=motion)
                for pair, steps in zip(pairs, judged, strict=True)
            ]
    return table


def line(name: str, per_episode: list[Counts]) -> str:
    """One table row: pooled counts, recall and precision with their intervals."""
    scores = summarize(per_episode, seed=name)
    c = scores.counts
    recall, precision = interval(scores, "recall"), interval(scores, "precision")
    return f"{name:<24}  {c.tp:>4} {c.fp:>4} {c.fn:>4}  recall {recall}  precision {precision}"


def detail(pairs: Sequence[Pair], trim: TrimPolicy) -> None:
    """The non-dialogue steps one reading removes and the other keeps, with the reasons."""
    for first, second in pairs:
        a, b = removed(first, trim), removed(second, trim)
        if a == b:
            continue
        reasons = {
            name: {label.index: label.reason for label in ep.labels or []}
            for name, ep in (("first", first), ("second", second))
        }
        print(f"## {first.id} ({first.task})")
        for index in sorted(a ^ b):
            only = "first" if index in a else "second"
            print(f"  {index:4d} only {only:<6} {first.actions[index]}  ({reasons[only][index]})")


def development_sets(games: Path) -> dict[str, list[Episode]]:
    """Every development set, rebuilt and checked (`load_natural`), by its name."""
    return {name: load_natural(path, games) for name, path in DEVELOPMENT_SETS.items()}


def read_pairs(games: Path, sets: dict[str, list[Episode]]) -> list[Pair]:
    """Each second reading with its first, found in the development sets."""
    second = {ep.id: ep for ep in load_natural(SECOND_READING_FILE, games)}
    pairs = [(ep, second.pop(ep.id)) for eps in sets.values() for ep in eps if ep.id in second]
    if second:
        sys.exit(f"second readings of episodes no development set holds: {sorted(second)}")
    return pairs


def adjudicated_sides(
    items: Sequence[dict[str, Any]], removed_now: dict[str, set[int]]
) -> Counter[tuple[str, str]]:
    """Disputed steps counted by (who removed them, whom the adjudicator sided with: "judge",
    "reading" or "unclear") and by (who removed them, "today: agrees" or "today: disagrees":
    whether today's rules Judge, removing `removed_now` of each episode, does what the
    adjudicator decided).

    >>> items = [{"id": "e", "removed_by": "judge", "decision": {"3": "REMOVE", "4": "KEEP"}}]
    >>> sorted(adjudicated_sides(items, {"e": {3, 4}}).items())
    [(('judge', 'judge'), 1), (('judge', 'reading'), 1), (('judge', 'today: agrees'), 1), \
(('judge', 'today: disagrees'), 1)]
    """
    sides: Counter[tuple[str, str]] = Counter()
    for item in items:
        for step, decision in item["decision"].items():
            if decision == "UNCLEAR":
                sides[(item["removed_by"], "unclear")] += 1
                continue
            removes = item["removed_by"] == "judge"  # the side that removes the step
            winner = "judge" if (decision == "REMOVE") == removes else "reading"
            sides[(item["removed_by"], winner)] += 1
            today = int(step) in removed_now[item["id"]]
            agrees = today == (decision == "REMOVE")
            sides[(item["removed_by"], f"today: {'agrees' if agrees else 'disagrees'}")] += 1
    return sides


def adjudication(sets: dict[str, list[Episode]]) -> None:
    """Print how the adjudicated disputes fell, and where today's rules Judge stands on them."""
    items = [json.loads(line) for line in ADJUDICATION_FILE.read_text().splitlines() if line]
    wanted = {item["id"] for item in items}
    episodes = [episode for eps in sets.values() for episode in eps if episode.id in wanted]
    judged = judge_removals(episodes, "natural", "full")
    removed_now = {episode.id: steps for episode, steps in zip(episodes, judged, strict=True)}
    sides = adjudicated_sides(items, removed_now)
    print(f"{len(items)} disputes over {len(wanted)} episodes; disputed steps, under natural\n")
    for removed_by, name in (
        ("judge", "removed by the Judge, kept by the reading"),
        ("reading", "removed by the reading, kept by the Judge"),
    ):
        count = Counter({k[1]: n for k, n in sides.items() if k[0] == removed_by})
        decided = count["judge"] + count["reading"]
        print(f"{name}: {decided + count['unclear']} steps")
        print(
            f"  the adjudicator sided with the Judge on {count['judge']}, with the reading on "
            f"{count['reading']}, undecided on {count['unclear']}"
        )
        print(
            f"  today's rules Judge agrees with the adjudicator on {count['today: agrees']}, "
            f"not on {count['today: disagrees']}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=Path, default=SHARED / "teach" / "games")
    parser.add_argument("--motion", action="store_true", help="score motion steps too")
    parser.add_argument("--detail", action="store_true", help="list the steps readings differ on")
    parser.add_argument("--draw", action="store_true", help="list the sample and stop")
    parser.add_argument(
        "--adjudication", action="store_true", help="the adjudicated Judge disputes instead"
    )
    args = parser.parse_args()
    if not args.games.is_dir():
        sys.exit(f"no TEACh games at {args.games}; pass --games DIR")
    try:
        sets = development_sets(args.games)
        if args.adjudication:
            adjudication(sets)
            return
        if args.draw:
            for name, episodes in sets.items():
                for episode in draw_sample(episodes):
                    print(f"{name}\t{episode.id}\t{episode.task}")
            return
        pairs = read_pairs(args.games, sets)
    except HandSetUnavailable as exc:
        sys.exit(str(exc))
    scope = "with motion" if args.motion else "without motion"
    print(f"{len(pairs)} episodes read twice; plan level {scope}; tp fp fn\n")
    for trim in TRIM_POLICIES:
        print(f"trim {trim}")
        for name, per_episode in rows(pairs, trim, motion=args.motion).items():
            print("  " + line(name, per_episode))
        print()
        if args.detail:
            detail(pairs, trim)
            print()


if __name__ == "__main__":
    main()
