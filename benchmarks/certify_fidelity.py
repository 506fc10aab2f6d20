"""Whether `certify` lets a perfect model Judge through: it must veto none of its removals.

The perfect Judge is a fake chat model answering in the Judge's text protocol. On an annotated
episode's input plan it flags exactly the non-dialogue steps outside the leftmost longest common
subsequence with the episode's clean plan, and names (`#MISSING`) the clean plan's steps outside
it; on any later pass it raises nothing. Asked as the Planner, it inserts the missing steps where
the clean plan has them. Each annotated set (generators `injected` and `natural`, as
`planverify corrupt --generator G --seed S` writes them; full records, annotation keys removed)
runs through `verify_many` with default settings, so `certify` is on wherever the episode is
grounded. It prints, per set, plan-level removal recall and precision (the LCS scoring of
`planverify score`); both are 1.0 when `certify` vetoes nothing right. Otherwise each vetoed
flag is listed with the simulator's reason, for a reader to tell a gap in the simulator from a
wrong label in the set. A verification that ends in an error is listed too, and fails the run.

Each set is scored under each trim policy (`--trims natural minimal`): the episode's labels are
those that are errors under it and its clean plan the one they make
(`planverify.metrics.episode_under`), and the loop runs under it, so under `natural` certify must
veto none of the perfect Judge's flags although it vetoes the steps the trim policy keeps.

Usage: python benchmarks/certify_fidelity.py [--games DIR] [--seeds 1 2 3 4 5]
       [--generators injected natural] [--trims natural minimal] [--show 20]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Sequence
from itertools import product
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from planverify import verify_many
from planverify.inputs.sources import load_episodes
from planverify.metrics import Counts, canonical, clean_plan, episode_under, plan_counts
from planverify.noise import ANNOTATION_KEYS, GENERATORS
from planverify.records.episode import Episode
from planverify.records.notation import parse_action
from planverify.records.trim import TRIM_POLICIES, TrimPolicy

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
_STEP = re.compile(r"^(\d+)\. (.+)$", re.M)


def leftmost_common(plan: Sequence[str], clean: Sequence[str]) -> dict[int, int]:
    """A longest common subsequence of two plans (canonical lines), as plan index -> clean
    index: of all such, the one whose plan indices come first (compared in order)."""
    n, m = len(plan), len(clean)
    longest = [[0] * (m + 1) for _ in range(n + 1)]  # of plan[i:] and clean[j:]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            longest[i][j] = (
                longest[i + 1][j + 1] + 1
                if plan[i] == clean[j]
                else max(longest[i + 1][j], longest[i][j + 1])
            )
    matched: dict[int, int] = {}
    i = j = 0
    while longest[i][j]:
        # the earliest plan step that can start a longest rest, with its earliest partner
        i, j = next(
            (a, b)
            for a in range(i, n)
            for b in range(j, m)
            if plan[a] == clean[b] and longest[a + 1][b + 1] + 1 == longest[i][j]
        )
        matched[i] = j
        i, j = i + 1, j + 1
    return matched


def _steps(lines: Sequence[str]) -> list[tuple[int, str]]:
    """(index, canonical line) of the non-dialogue steps."""
    return [
        (i, canonical(line)) for i, line in enumerate(lines) if not parse_action(line).is_dialogue
    ]


def alignment(lines: Sequence[str], clean: Sequence[str]) -> tuple[set[int], dict[int, int]]:
    """The non-dialogue steps of `lines` outside the leftmost LCS with the clean plan, and for
    each clean step outside it the index in `lines` it goes after (-1: first)."""
    steps, gold = _steps(lines), _steps(clean)
    matched = leftmost_common([s for _, s in steps], [s for _, s in gold])
    outside = {steps[k][0] for k in range(len(steps)) if k not in matched}
    anchor = {j: steps[k][0] for k, j in matched.items()}
    places: dict[int, int] = {}
    last = -1
    for j in range(len(gold)):
        if j in anchor:
            last = anchor[j]
        else:
            places[gold[j][0]] = last
    return outside, places


def shown_plan(messages: Sequence[BaseMessage], tag: str = "plan") -> list[str]:
    """The numbered steps of a prompt's `<plan>` block."""
    text = str(messages[-1].content)
    block = text.split(f"<{tag}>")[1].split(f"</{tag}>")[0]
    return [action for _, action in _STEP.findall(block)]


class PerfectJudge(BaseChatModel):
    """The perfect Judge (and Planner) as a fake chat model; see the module docstring."""

    episodes: dict[tuple[str, ...], Episode]  # input plan (canonical lines) -> its episode
    by_goal: dict[str, list[Episode]]  # goal -> its episodes (to place the Planner's steps)
    judged: set[tuple[str, ...]] = Field(default_factory=set)  # input plans answered already

    @property
    def _llm_type(self) -> str:
        return "perfect-judge"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        text = str(messages[-1].content)
        if "<missing>" in text:
            answer = self.planner_answer(messages)
        elif "<plan>" in text:
            answer = self.judge_answer(messages)
        else:  # asked for a goal: the records have theirs
            answer = ""
        return ChatResult(generations=[ChatGeneration(message=AIMessage(answer))])

    def judge_answer(self, messages: Sequence[BaseMessage]) -> str:
        plan = shown_plan(messages)
        key = tuple(canonical(line) for line in plan)
        episode = None if key in self.judged else self.episodes.get(key)
        self.judged.add(key)
        clean = (clean_plan(episode) or []) if episode is not None else []
        # the input plan: later passes (and plans never seen) raise nothing
        outside, places = alignment(plan, clean) if clean else (set(), {})
        lines = []
        for n, action in enumerate(plan, start=1):
            note = "not in the clean plan #REMOVE: not needed" if n - 1 in outside else "needed"
            lines += [f"ACTION: {n}. {action}", f"ANNOTATION: {note}"]
        lines += [f"#MISSING: {canonical(clean[j])}" for j in sorted(places)]
        return "\n".join(lines)

    def planner_answer(self, messages: Sequence[BaseMessage]) -> str:
        plan = shown_plan(messages)
        goal = str(messages[-1].content).split("<goal>")[1].split("</goal>")[0].strip()
        wanted = {
            canonical(line.removeprefix("- ").strip())
            for line in str(messages[-1].content)
            .split("<missing>")[1]
            .split("</missing>")[0]
            .splitlines()
            if line.strip()
        }
        for episode in self.by_goal.get(goal, []):
            places = self.places(episode, plan)
            if {action for _, action in places} >= wanted:
                return "\n".join(
                    f"INSERT AFTER {after + 1}: {action}"
                    for after, action in places
                    if action in wanted
                )
        return "NONE"

    def places(self, episode: Episode, plan: Sequence[str]) -> list[tuple[int, str]]:
        """Where the clean plan's missing steps go in `plan`, as (the index they follow,
        action): after the input step the MISSING label names, when `plan` is the input without
        the steps flagged (as `certify` should leave it); else after the plan step the LCS
        matches with the clean step before them."""
        outside, _ = alignment(episode.actions, clean_plan(episode) or [])
        kept = [i for i in range(len(episode.actions)) if i not in outside]
        if [canonical(episode.actions[i]) for i in kept] == [canonical(line) for line in plan]:
            return [
                (sum(1 for i in kept if i <= label.after) - 1, canonical(label.action))
                for label in episode.labels or []
                if label.type == "MISSING" and label.action and label.after is not None
            ]
        clean = clean_plan(episode) or []
        _, anchors = alignment(plan, clean)
        return [(after, canonical(clean[j])) for j, after in sorted(anchors.items())]


def perfect_judge(annotated: Sequence[Episode]) -> PerfectJudge:
    """The perfect Judge of these annotated episodes."""
    by_goal: dict[str, list[Episode]] = {}
    for episode in annotated:
        by_goal.setdefault((episode.goal or "").strip(), []).append(episode)
    return PerfectJudge(
        episodes={tuple(canonical(line) for line in e.actions): e for e in annotated},
        by_goal=by_goal,
    )


def stripped(episode: Episode) -> Episode:
    """The episode as a verifier gets it: without its annotations."""
    data = episode.model_dump(mode="json", exclude_none=True)
    for key in ANNOTATION_KEYS:
        data.pop(key, None)
    return Episode.model_validate(data)


def check(
    annotated: Sequence[Episode], trim: TrimPolicy
) -> tuple[Counts, list[str], int, int, list[str]]:
    """Plan-level removal counts of the perfect Judge under a trim policy, its vetoed flags (as
    lines to print), how many of the steps it asked for went in and were vetoed, and the
    verifications that ended in an error (as lines to print)."""
    model = perfect_judge(annotated)
    results = verify_many([stripped(e) for e in annotated], judge=model, planner=model, trim=trim)
    counts = Counts()
    vetoes: list[str] = []
    inserted = refused = 0
    failures: list[str] = []
    for episode, result in zip(annotated, results, strict=True):
        if result.status == "error":
            failures.append(f"  {episode.id}: the verification failed: {result.error}")
        removed = {v.index for v in result.verdicts if v.verdict == "remove"}
        counts += plan_counts(episode.actions, clean_plan(episode) or [], removed)
        inserted += len(result.inserted)
        for record in result.history:
            refused += sum(v.kind == "insertion" for v in record.vetoes)
            vetoes += [
                f"  {episode.id} step {(v.step or 0) + 1} {v.action}: {v.reason}"
                for v in record.vetoes
                if v.kind == "flag"
            ]
    return counts, vetoes, inserted, refused, failures


def set_options(description: str) -> argparse.ArgumentParser:
    """A parser with the options that choose the annotated sets (also `certify_effect.py`'s)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--games", type=Path, default=SHARED / "teach" / "games")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument(
        "--generators", nargs="+", choices=sorted(GENERATORS), default=["injected", "natural"]
    )
    parser.add_argument("--trims", nargs="+", choices=TRIM_POLICIES, default=list(TRIM_POLICIES))
    return parser


def source_of(args: argparse.Namespace) -> list[Episode]:
    """The games the sets are made from; exits when there are none."""
    if not args.games.is_dir():
        sys.exit(f"no TEACh games at {args.games}; pass --games DIR")
    return list(load_episodes([args.games]))


def main() -> None:
    parser = set_options(__doc__.splitlines()[0])
    parser.add_argument("--show", type=int, default=20, help="vetoes listed per set")
    args = parser.parse_args()
    source = source_of(args)
    started = time.perf_counter()
    failed = False
    for trim, generator, seed in product(args.trims, args.generators, args.seeds):
        annotated = [episode_under(e, trim) for e in GENERATORS[generator](source, seed=seed)]
        counts, vetoes, inserted, refused, failures = check(annotated, trim)
        print(
            f"{trim} {generator} seed {seed}: {len(annotated)} episodes, removal recall "
            f"{_figure(counts.recall)}, precision {_figure(counts.precision)} "
            f"(tp {counts.tp}, fp {counts.fp}, fn {counts.fn}), flags vetoed {len(vetoes)}; "
            f"missing steps inserted {inserted}, vetoed {refused}; failed {len(failures)}"
        )
        for line in (failures + vetoes)[: args.show]:
            print(line)
        failed |= bool(vetoes or failures) or counts.fp > 0 or counts.fn > 0
    print(f"{time.perf_counter() - started:.0f} s; {'FAIL' if failed else 'all 1.0'}")
    sys.exit(1 if failed else 0)


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


if __name__ == "__main__":
    main()
