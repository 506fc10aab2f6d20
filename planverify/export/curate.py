"""Results joined with their input episodes, and human decisions applied: the curated episodes
every export format is made from.

A result belongs to an episode when the ids agree and the result was computed on the episode's
content (`input_digest`; results written before digests existed must at least have the same
plan). Results on other content are refused, never joined. A result with status `error` is left
out. Decisions (from `planverify review`) overrule verdicts step by step: a decisions file of
version 2 names an input step by its 0-based `index` (and its 1-based `step`), one of version 1
by its 0-based index under `step` (`Decisions`). A plan the decisions left with steps the
simulator finds impossible is kept, marked (`Curated.impossible`, `feasible`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Self

import orjson
from pydantic import BaseModel, Field, StrictInt, ValidationError, model_validator

from planverify.export.feasible import (
    Impossible,
    episode_problems,
    impossible_steps,
    made_impossible,
)
from planverify.records.episode import Episode, EpisodeError
from planverify.records.evidence import Evidence
from planverify.records.jsonl import UnusableFile, expect, first_error, load_json, read_all
from planverify.records.reading import as_read
from planverify.records.result import VerificationResult, plan_of
from planverify.records.trim import TrimPolicy

DECISIONS_FORMAT = "planverify-decisions"  # the `format` of a decisions file
DECISIONS_VERSION: Literal[2] = 2  # the version written; version 1 is read too
Verdict = Literal["keep", "remove"]


class CurationError(ValueError):
    """Inputs that cannot be exported as given (one line, names what is wrong)."""


class Decision(BaseModel):
    """A person's verdict on one step of one result (made in the review site): an input step,
    by its 0-based `index` (its number on the site, `step`, may be given instead or as well),
    or an insertion."""

    id: str  # episode id
    input_digest: str | None = None  # the content the reviewed result was computed on
    index: StrictInt | None = None  # 0-based input index of the step (`verdicts[*].index`)
    step: StrictInt | None = None  # the same step counted from 1, as the site shows it
    inserted: StrictInt | None = None  # or: 0-based position in the result's `inserted` list
    verdict: Verdict  # what the person decided
    action: str | None = None  # the step, as shown (a check, and for people reading the file)
    note: str | None = None  # why, when given

    @model_validator(mode="after")
    def _on_one_step(self) -> Self:
        if self.step is not None:
            if self.index is None:
                self.index = self.step - 1
            elif self.step != self.index + 1:
                raise ValueError(
                    f"step {self.step} is not the step at index {self.index}, which is step "
                    f"{self.index + 1} (`step` counts from 1, `index` from 0)"
                )
        if (self.index is None) == (self.inserted is None):
            raise ValueError(
                "a decision names either an input step (`index`, or `step` counted from 1) "
                "or an `inserted` step, not both"
            )
        if self.index is not None:
            self.step = self.index + 1
        return self


class Decisions(BaseModel):
    """A decisions file: `{"format": "planverify-decisions", "version": 2, "decisions": [...]}`;
    when a step is decided twice, the later decision counts. Version 1 (and a file without a
    version) named a step by its 0-based index under `step`: it is read as such."""

    format: str = DECISIONS_FORMAT
    version: Literal[2] = DECISIONS_VERSION
    decisions: list[Decision] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _version_1_as_2(cls, data: Any) -> Any:
        if not isinstance(data, dict) or data.get("version", 1) != 1:
            return data
        listed = data.get("decisions")
        decisions = (
            [as_version_2(k, d) for k, d in enumerate(listed, start=1)]
            if isinstance(listed, list)
            else listed
        )
        return {**data, "version": DECISIONS_VERSION, "decisions": decisions}


def as_version_2(number: int, decision: Any) -> Any:
    """A decision of a version 1 file in version 2's terms: its `step`, a 0-based index, is
    the `index` (a `step` that is no integer stays, to be refused under its own name)."""
    if not isinstance(decision, dict) or "step" not in decision:
        return decision
    if "index" in decision:
        raise ValueError(
            f"decision {number}: a version 1 file names a step by `step` (0-based) alone; "
            "`index` is version 2's"
        )
    step = decision["step"]
    if not isinstance(step, int) or isinstance(step, bool):
        return decision
    return {**{k: v for k, v in decision.items() if k != "step"}, "index": step}


def read_decisions(path: Path) -> list[Decision]:
    """The decisions in a file written by the review site; `UnusableFile` when it cannot be
    read as one."""
    try:
        data = load_json(path)
    except (OSError, ValueError) as exc:
        raise UnusableFile(f"cannot read the decisions file {path}: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != DECISIONS_FORMAT:
        raise UnusableFile(
            f"{path} is not a decisions file (expected a JSON object with "
            f'"format": "{DECISIONS_FORMAT}", as the review site downloads)'
        )
    if (version := data.get("version", 1)) not in (1, DECISIONS_VERSION) or isinstance(
        version, bool
    ):
        raise UnusableFile(
            f"{path} is a decisions file of version {version!r}; this planverify reads "
            f"versions 1 and {DECISIONS_VERSION}"
        )
    try:
        return Decisions.model_validate(data).decisions
    except ValidationError as exc:
        raise UnusableFile(f"{path}: {first_error(exc)}") from None


@dataclass
class Curated:
    """One exportable episode: its input, its result and the final plan after decisions."""

    episode: Episode
    result: VerificationResult
    kept: list[bool]  # per input step: in the final plan
    dropped: set[int] = field(default_factory=set)  # positions in `result.inserted` undone
    decided: int = 0  # decisions that changed something
    reasons: dict[int, str] = field(default_factory=dict)  # decisions' notes by input index
    restored: set[int] = field(default_factory=set)  # input steps removed below the min level
    withheld: set[int] = field(default_factory=set)  # positions in `inserted` below it
    min_evidence: Evidence | None = None  # the level removals and insertions had to reach
    trim: TrimPolicy | None = None  # the trim policy its verdicts are read under
    impossible: list[Impossible] = field(default_factory=list)  # steps decisions made impossible

    @property
    def original(self) -> list[str]:
        """The input plan."""
        return list(self.result.original)

    @property
    def plan(self) -> list[str]:
        """The final plan: kept input steps with the insertions that were not undone."""
        return rebuild(self.result.original, self.kept, self.result, self.dropped)

    @property
    def removed(self) -> list[int]:
        """Input indices of the steps left out of the final plan."""
        return [i for i, keep in enumerate(self.kept) if not keep]

    @property
    def insertions(self) -> int:
        """Inserted steps in the final plan."""
        return len(self.result.inserted) - len(self.dropped)

    @property
    def changed(self) -> bool:
        """Whether the final plan differs from the input."""
        return bool(self.removed) or self.insertions > 0

    def evidence(self, index: int) -> Evidence | None:
        """The level of the Judge's removal of input step `index` when that removal stands;
        None for a kept step and for one only a reviewer's decision removed."""
        verdict = self.result.verdicts[index]
        return None if self.kept[index] or verdict.verdict == "keep" else verdict.evidence

    def reason(self, index: int) -> str | None:
        """Why input step `index` is where it is: the Judge's reason, or the decision's."""
        return self.reasons.get(index) or self.result.verdicts[index].reason

    @property
    def task(self) -> str | None:
        """The task family."""
        return self.episode.task

    def extra(self, key: str) -> Any:
        """An input key that is not a model field (`split`, `source`, ...)."""
        return (self.episode.model_extra or {}).get(key)


def rebuild(
    original: Sequence[str],
    kept: Sequence[bool],
    result: VerificationResult,
    dropped: set[int] | frozenset[int] = frozenset(),
) -> list[str]:
    """The plan of kept input steps and insertions: each insertion goes after the input step it
    follows (`after_index`), several after one step in their order.

    >>> r = VerificationResult(id="x", original=["A", "B"], inserted=[
    ...     {"after_index": -1, "action": "S", "iteration": 1},
    ...     {"after_index": 0, "action": "C", "iteration": 1}])
    >>> rebuild(["A", "B"], [True, False], r)
    ['S', 'A', 'C']
    """
    inserted = [item for k, item in enumerate(result.inserted) if k not in dropped]
    return plan_of(original, kept, inserted)


def same_content(episode: Episode, result: VerificationResult) -> bool:
    """Whether a result was computed on this episode's content."""
    if result.input_digest is not None:
        return result.input_digest == episode.input_digest
    return result.original == episode.actions


@dataclass
class Curation:
    """What pairing did: the curated episodes, and what was left out, by reason."""

    curated: list[Curated] = field(default_factory=list)
    left_out: Counter[str] = field(default_factory=Counter)  # reason -> results
    examples: dict[str, list[str]] = field(default_factory=dict)  # reason -> a few ids
    decisions: int = 0  # decisions that changed a plan
    unmatched_decisions: list[str] = field(default_factory=list)  # why some were not applied
    skipped_inputs: list[EpisodeError] = field(default_factory=list)
    min_evidence: Evidence | None = None  # removals and insertions below it were undone
    trim: TrimPolicy | None = None  # the trim policy results were read under (None: their own)

    @property
    def restored(self) -> int:
        """Removals below `min_evidence` that were undone (their steps kept)."""
        return sum(len(item.restored) for item in self.curated)

    @property
    def withheld(self) -> int:
        """Insertions below `min_evidence` that were left out."""
        return sum(len(item.withheld) for item in self.curated)

    @property
    def impossible(self) -> list[Curated]:
        """The episodes whose decisions left steps the simulator finds impossible."""
        return [item for item in self.curated if item.impossible]

    def leave_out(self, reason: str, episode_id: str) -> None:
        self.left_out[reason] += 1
        ids = self.examples.setdefault(reason, [])
        if len(ids) < 3:
            ids.append(episode_id)

    def describe(self) -> str:
        """One line: exported and left out, by reason."""
        text = f"{len(self.curated)} episode(s)"
        if self.left_out:
            text += "; left out: " + ", ".join(
                f"{reason} {count}" for reason, count in sorted(self.left_out.items())
            )
        if self.trim is not None:
            text += f"; read under trim {self.trim}"
        if self.min_evidence is not None:
            text += (
                f"; below {self.min_evidence}: {self.restored} removal(s) undone, "
                f"{self.withheld} insertion(s) left out"
            )
        if self.decisions:
            text += f"; {self.decisions} decision(s) applied"
        if marked := self.impossible:
            text += f"; {len(marked)} marked impossible after decisions"
        return text


def read_results(path: Path) -> list[VerificationResult]:
    """Every record of a results file; `UnusableFile` naming a missing file or its first line
    that is not a result."""
    if (problem := expect(path, "results", "RESULTS")) is not None:
        raise UnusableFile(problem)
    results = []
    for record, result in read_all(path, VerificationResult, "a result record"):
        if (wrong := result.inconsistency()) is not None:
            raise UnusableFile(f"{path}:{record.line}: not a result record ({wrong})")
        results.append(result)
    return results


def curate(
    results: Iterable[VerificationResult],
    episodes: Iterable[Episode | EpisodeError],
    decisions: Sequence[Decision] = (),
    *,
    min_evidence: Evidence | None = None,
    trim: TrimPolicy | None = None,
) -> Curation:
    """Pair results with their episodes by id and content and apply decisions.

    With `trim`, each result is read under that trim policy (`VerificationResult.under`; None:
    the one it ran under). Then, with `min_evidence`, removals below that evidence level are
    undone (the step stays in the plan) and insertions below it left out
    (`planverify.records.reading.as_read`), before decisions, which overrule them as they
    overrule verdicts. Raises `CurationError` when some results were computed on other content
    than the episodes with their ids (it names them). Results with status `error`, results
    without an episode, and episodes without a result are left out and counted.
    """
    by_id: dict[str, Episode] = {}
    curation = Curation(min_evidence=min_evidence, trim=trim)
    for item in episodes:
        if isinstance(item, EpisodeError):
            curation.skipped_inputs.append(item)
        elif item.id not in by_id:
            by_id[item.id] = item
    pairs: list[tuple[Episode, VerificationResult]] = []
    other: list[str] = []
    seen: set[str] = set()
    for result in results:
        if result.id in seen:
            raise CurationError(f"the results hold episode {result.id!r} more than once")
        seen.add(result.id)
        if (wrong := result.inconsistency()) is not None:
            raise CurationError(f"the result of {result.id!r} does not fit together: {wrong}")
        episode = by_id.get(result.id)
        if episode is None:
            curation.leave_out("no input episode", result.id)
        elif not same_content(episode, result):
            other.append(result.id)
        elif result.status == "error":
            curation.leave_out("status error", result.id)
        else:
            pairs.append((episode, as_read(result, trim=trim)))
    if other:
        raise CurationError(
            f"{len(other)} result(s) were computed on other content than the episodes with "
            f"their ids: {', '.join(other[:10])}{' ...' if len(other) > 10 else ''}; verify "
            "those episodes again, or give the inputs the results were made from"
        )
    for episode_id in by_id.keys() - seen:
        curation.leave_out("no result", episode_id)
    by_episode: dict[str, list[Decision]] = {}
    for decision in decisions:
        by_episode.setdefault(decision.id, []).append(decision)
    for episode, result in pairs:
        fresh = Curated(episode=episode, result=result, kept=[], trim=trim or result.trim)
        made = judged(fresh, min_evidence)
        chosen = by_episode.pop(result.id, [])
        judged_kept, judged_dropped = list(made.kept), set(made.dropped)
        curation.decisions += apply(made, chosen, curation)
        # the simulator of the episode's domain runs only on plans a decision changed
        if made.decided and (problems := episode_problems(episode)) is not None:
            before = impossible_steps(result, problems, judged_kept, judged_dropped)
            after = impossible_steps(result, problems, made.kept, made.dropped)
            made.impossible = made_impossible(before, after, made.plan)
        curation.curated.append(made)
    for episode_id, unused in by_episode.items():
        curation.unmatched_decisions.append(
            f"{len(unused)} decision(s) on {episode_id!r}, which is not exported"
        )
    return curation


def judged(item: Curated, min_evidence: Evidence | None) -> Curated:
    """The item's plan as the Judge left it (a static result's is the input), with removals
    below `min_evidence` undone and insertions below it left out (`as_read`)."""
    result = item.result
    item.min_evidence = min_evidence
    static = result.stop_reason == "static"
    view = as_read(result, min_evidence=min_evidence)
    if not static:
        item.restored = {
            v.index
            for v, seen in zip(result.verdicts, view.verdicts, strict=True)
            if v.verdict == "remove" and seen.verdict == "keep"
        }
    item.withheld = _left_out(result.inserted, view.inserted)
    item.kept = [static or v.verdict == "keep" for v in view.verdicts]
    item.dropped = set(item.withheld)
    return item


def _left_out(every: Sequence[object], some: Sequence[object]) -> set[int]:
    """Positions in `every` of the items `some` (an ordered selection of them) leaves out."""
    out: set[int] = set()
    k = 0
    for position, thing in enumerate(every):
        if k < len(some) and some[k] == thing:
            k += 1
        else:
            out.add(position)
    return out


def apply(item: Curated, decisions: Sequence[Decision], curation: Curation) -> int:
    """Apply one episode's decisions in order; returns how many changed the plan."""
    changed = 0
    result = item.result
    for decision in decisions:
        where = f"{decision.id!r}"
        if decision.input_digest is not None and decision.input_digest != result.input_digest:
            curation.unmatched_decisions.append(
                f"a decision on {where} was made on a result for other content"
            )
            continue
        if decision.index is not None:
            index = decision.index
            if not 0 <= index < len(result.verdicts):
                curation.unmatched_decisions.append(f"{where}: no step {index + 1}")
                continue
            line = result.verdicts[index].action
            if decision.action is not None and decision.action != line:
                curation.unmatched_decisions.append(
                    f"{where}: step {index + 1} is {line!r}, not {decision.action!r}"
                )
                continue
            if item.episode.step_of(line).is_dialogue:
                curation.unmatched_decisions.append(
                    f"{where}: step {index + 1} is dialogue, always kept"
                )
                continue
            keep = decision.verdict == "keep"
            if item.kept[index] != keep:
                item.kept[index] = keep
                changed += 1
                item.decided += 1
            item.reasons[index] = decision.note or f"reviewer: {decision.verdict}"
        elif decision.inserted is not None:
            if not 0 <= decision.inserted < len(result.inserted):
                curation.unmatched_decisions.append(
                    f"{where}: no insertion {decision.inserted + 1}"
                )
                continue
            line = result.inserted[decision.inserted].action
            if decision.action is not None and decision.action != line:  # another run's
                curation.unmatched_decisions.append(
                    f"{where}: insertion {decision.inserted + 1} is {line!r}, "
                    f"not {decision.action!r}"
                )
                continue
            was = decision.inserted in item.dropped
            if decision.verdict == "remove" and not was:
                item.dropped.add(decision.inserted)
            elif decision.verdict == "keep" and was:
                item.dropped.discard(decision.inserted)
            else:
                continue
            changed += 1
            item.decided += 1
    return changed


def plain(data: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON-ready copy of a mapping (models dumped)."""
    return orjson.loads(orjson.dumps(dict(data), default=_dump))  # type: ignore[no-any-return]


def _dump(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    raise TypeError(f"cannot write {type(value).__name__} as JSON")
