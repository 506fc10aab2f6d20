"""Score verification results against annotated episodes: recall, precision and F1 over errors.

The positives are the erroneous steps of an annotated episode (`Episode.labels`): every REMOVE
label (a step that should go) and every MISSING label (a step that should be added). Dialogue
(`Say`) lines are never scored, neither as positives nor as false alarms.

Two steps *match* when they have the same verb and the same object types, the instance number
of a name being ignored (`Mug2` matches `Mug`); see `same_step`.

Static mode scores the first Judge pass (`VerificationResult.history[0].critique`):

- a REMOVE label is a true positive (TP) when its step is flagged, a false negative (FN) if not;
- a flag on an unlabelled, non-dialogue step is a false positive (FP);
- a MISSING label is found when a `#MISSING` critique matches it (`missing_matches`): the
  critique contains a matching action, or it names the label's object type(s) together with
  the verb or one of its synonyms (`planverify.world.mentions.VERB_SYNONYMS`); a critique that finds no label is an FP.

Iterative mode scores the refined plan against the input:

- a removed labelled step is a TP, a removed unlabelled step an FP, a kept labelled step an FN;
- a MISSING label is found when a step inserted by the loop (`result.inserted`) matches it;
  an insertion that finds no label is an FP, a MISSING label left unfound an FN.

Rules shared by both modes:

- *Twins.* When a labelled step is kept but an identical unlabelled step of the same run was
  removed (or flagged) instead, the plan comes out the same, so the pair counts as one TP and
  that removal is not an FP. A run is a stretch of identical action lines, dialogue between
  them ignored (`ToggleOn('Toaster')`, `Say(..)`, `ToggleOn('Toaster')`); identical lines with
  other steps between them are not twins, since removing the other one gives another plan.
- *One to one.* Each label is found at most once and each critique or insertion accounts for
  at most one label. Among several possible pairings the largest one is used, found by
  augmenting paths that try proposals in their order and labels in label order, so the result
  is deterministic.
- The position a `#MISSING` critique or an insertion gives is not checked, only what it adds.

Plan-level scores (`score_plan`) need the annotated record's `clean` plan, the plan before any
error was injected, and do not depend on which labelled step a removal hits: over non-dialogue
steps compared as canonical lines, the errors are the noisy steps outside a longest common
subsequence (LCS) of the noisy and clean plans; a removal is a false positive only when it
shortens the LCS of the kept plan and the clean plan (FP = |LCS(noisy, clean)| - |LCS(kept,
clean)|), TP = removals - FP and FN = errors - TP. Proposed steps are paired with MISSING labels
as above. Both label-level and plan-level scores are also given without motion steps
(`motionless`: `Move`, `TurnLeft`, `TurnRight` dropped from the plans, the labels and the
proposals).

Counts are kept overall and per error type (the label's `error`, `"other"` when unset). False
positives have no error type: they count overall (and per task family) only, so per error type
only recall is defined. A result whose status is "error" (or that was computed on another
plan) finds nothing: all labels of its episode are FNs.

Conventions for empty denominators (`Counts`): recall is None when there are no positives,
precision is None when nothing was flagged or added, and F1 = 2TP / (2TP + FP + FN) -- the
harmonic mean of precision and recall when both are defined -- is None only when all three
counts are zero. So a judge that flags nothing on an erroneous plan has recall 0, precision
None and F1 0; a judge that flags nothing on a clean plan has all three None.

Confidence intervals (`bootstrap`) are percentile bootstrap intervals over episodes: the
episodes are drawn with replacement, counts summed and the metric recomputed, 1000 times by
default, with a seeded `random.Random`, so a report is reproducible.

>>> episode = Episode(id="e1", actions=["Driver.PickUp('Mug')", "Driver.PickUp('Mug')"],
...     labels=[Label(type="REMOVE", index=1, error="duplicate")])
>>> score_static(episode, Critique(flags=[Flag(step=1, action="", reason="again")])).counts
Counts(tp=1, fp=0, fn=0, tn=1)
"""

from __future__ import annotations

import bisect
import math
import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Literal, TypeVar

from pydantic import BaseModel, Field

from planverify.records.critique import Critique, Flag, Missing
from planverify.records.episode import Episode, Label
from planverify.records.evidence import LEVELS, Evidence, levels_from
from planverify.records.notation import MOTION_VERBS, Action, NotationError, parse_action
from planverify.records.result import VerificationResult
from planverify.world.mentions import mentions_type, mentions_verb

__all__ = [
    "OTHER",
    "UNKNOWN_TASK",
    "Counts",
    "EpisodeScore",
    "Interval",
    "LevelScores",
    "Mode",
    "Report",
    "Scores",
    "actions_in",
    "bootstrap",
    "canonical",
    "clean_plan",
    "common_subsequence_length",
    "evidence_levels",
    "format_report",
    "gold_plan",
    "infer_mode",
    "missing_matches",
    "motion_step",
    "motionless",
    "plan_counts",
    "same_step",
    "score_episode",
    "score_iterative",
    "score_plan",
    "score_results",
    "score_static",
    "summarize",
]

Mode = Literal["static", "iterative"]
OTHER = "other"  # error type of a label without one
UNKNOWN_TASK = "unknown"  # task family of an episode without one

# --------------------------------------------------------------------------- matching steps

_ACTION_IN_TEXT = re.compile(
    r"(?:\b[A-Z]\w*\.)?\b[A-Za-z_]\w*\((?:[^()'\"]|'(?:\\.|[^'\\])*'|\"[^\"]*\")*\)"
)


def same_step(a: Action, b: Action) -> bool:
    """Whether two steps match: same verb and same object types (instance numbers ignored).

    >>> same_step(parse_action("Driver.PickUp('Mug2')"), parse_action("Driver.PickUp('Mug')"))
    True
    >>> same_step(parse_action("Driver.Move(0.5)"), parse_action("Driver.Move(-1.0)"))
    True
    """
    if not (a.known and b.known):
        return a.raw == b.raw
    return a.verb == b.verb and a.object_types == b.object_types


def actions_in(text: str) -> list[Action]:
    """The known actions written in the notation inside a text (`Agent.` may be left out).

    >>> [str(a) for a in actions_in("add Driver.ToggleOn('Toaster') after the bread")]
    ["Driver.ToggleOn('Toaster')"]
    >>> [str(a) for a in actions_in("first Slice('Bread2'), then go on")]
    ["Driver.Slice('Bread2')"]
    """
    found: list[Action] = []
    for candidate in [text.strip(), *(m.group(0) for m in _ACTION_IN_TEXT.finditer(text))]:
        for line in (candidate, f"Driver.{candidate}"):
            try:
                action = parse_action(line)
            except NotationError:
                continue
            if action.known and not action.is_dialogue:
                found.append(action)
                break
    return found


def missing_matches(critique: Missing, wanted: Action) -> bool:
    """Whether a `#MISSING` critique asks for the step `wanted` (a MISSING label's action).

    It does when an action in its `action` or `description` matches `wanted` (`same_step`), or
    when its text names `wanted`'s verb (a synonym will do) and its object types: both objects
    of `PutAOnB`, the target of `PourFromAIntoB` (the source is usually named by its contents,
    "pour the water into the plant"), the object of any other verb. A missing motion step is
    only found through a concrete action.

    >>> toggle = parse_action("Driver.ToggleOn('CoffeeMachine')")
    >>> missing_matches(Missing(description="Switch on the coffee machine"), toggle)
    True
    >>> missing_matches(Missing(description="Turn on the toaster"), toggle)
    False
    >>> missing_matches(Missing(description="x", action="Driver.ToggleOn('CoffeeMachine2')"), toggle)
    True
    """
    text = f"{critique.description} {critique.action or ''}"
    if any(same_step(found, wanted) for found in actions_in(text)):
        return True
    if not wanted.known or wanted.is_dialogue or wanted.verb in MOTION_VERBS:
        return False
    needed = wanted.objects[1:] if wanted.verb == "PourFromAIntoB" else wanted.objects
    return mentions_verb(text, wanted.verb) and all(mentions_type(text, o) for o in needed)


def _max_matching(edges: Sequence[Sequence[int]]) -> dict[int, int]:
    """A largest one-to-one pairing of proposals (by position) with labels (the values).

    `edges[p]` lists the labels proposal `p` may account for, in label order. Augmenting paths
    try proposals in order and labels in the listed order, so the result is deterministic.
    """
    owner: dict[int, int] = {}  # label -> proposal

    def augment(p: int, seen: set[int]) -> bool:
        for label in edges[p]:
            if label in seen:
                continue
            seen.add(label)
            if label not in owner or augment(owner[label], seen):
                owner[label] = p
                return True
        return False

    for p in range(len(edges)):
        augment(p, set())
    return {p: label for label, p in owner.items()}


def _same_run(lines: Sequence[str], steps: Sequence[Action], i: int, j: int) -> bool:
    """Whether steps i and j are identical and only identical steps or dialogue lie between."""
    if lines[i] != lines[j]:
        return False
    lo, hi = min(i, j), max(i, j)
    return all(steps[k].is_dialogue or lines[k] == lines[i] for k in range(lo + 1, hi))


def _twins(
    lines: Sequence[str], steps: Sequence[Action], labelled: set[int], removed: set[int]
) -> dict[int, int]:
    """Kept labelled steps paired with removed unlabelled twins (nearest first, then earlier)."""
    spare = sorted(j for j in removed if j not in labelled and not steps[j].is_dialogue)
    pairs: dict[int, int] = {}
    for i in sorted(labelled - removed):
        options = [j for j in spare if j not in pairs.values() and _same_run(lines, steps, i, j)]
        if options:
            pairs[i] = min(options, key=lambda j: (abs(j - i), j))
    return pairs


# --------------------------------------------------------------------------- counts


class Counts(BaseModel):
    """Confusion counts. `tn` counts unlabelled non-dialogue steps left alone (steps only).

    >>> c = Counts(tp=3, fp=1, fn=1)
    >>> c.recall, c.precision, c.f1
    (0.75, 0.75, 0.75)
    >>> Counts(fn=2).precision is None, Counts(fn=2).f1
    (True, 0.0)
    """

    tp: int = 0  # errors found
    fp: int = 0  # flags or additions that are not errors
    fn: int = 0  # errors missed
    tn: int = 0  # correct steps kept

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            tp=self.tp + other.tp,
            fp=self.fp + other.fp,
            fn=self.fn + other.fn,
            tn=self.tn + other.tn,
        )

    def __repr__(self) -> str:
        return f"Counts(tp={self.tp}, fp={self.fp}, fn={self.fn}, tn={self.tn})"

    @property
    def recall(self) -> float | None:
        """TP / (TP + FN); None without positives."""
        return _recall(self.tp, self.fp, self.fn)

    @property
    def precision(self) -> float | None:
        """TP / (TP + FP); None when nothing was flagged or added."""
        return _precision(self.tp, self.fp, self.fn)

    @property
    def f1(self) -> float | None:
        """2TP / (2TP + FP + FN); None when all three are zero."""
        return _f1(self.tp, self.fp, self.fn)


def _recall(tp: int, fp: int, fn: int) -> float | None:
    return tp / (tp + fn) if tp + fn else None


def _precision(tp: int, fp: int, fn: int) -> float | None:
    return tp / (tp + fp) if tp + fp else None


def _f1(tp: int, fp: int, fn: int) -> float | None:
    return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None


METRICS: dict[str, Callable[[int, int, int], float | None]] = {
    "recall": _recall,
    "precision": _precision,
    "f1": _f1,
}


class EpisodeScore(BaseModel):
    """How one episode scored."""

    id: str  # episode id
    task: str  # task family (`UNKNOWN_TASK` when the episode has none)
    mode: Mode  # how it was scored
    status: Literal["ok", "error"] = "ok"  # "error": the result could not be used, labels are FN
    counts: Counts = Field(default_factory=Counts)  # overall
    by_error: dict[str, Counts] = Field(default_factory=dict)  # TP/FN per label error type
    found: list[int] = Field(default_factory=list)  # indices into `labels` of the errors found
    missed: list[int] = Field(default_factory=list)  # indices into `labels` of the errors missed
    false_positives: list[str] = Field(default_factory=list)  # what was flagged or added wrongly
    notes: list[str] = Field(default_factory=list)  # anything unusual about the input
    without_motion: Counts | None = None  # label level, motion steps and labels left out
    plan_level: dict[str, Counts] | None = None  # "with_motion", "without_motion"; needs `clean`


T = TypeVar("T")


def _tally(
    episode: Episode,
    mode: Mode,
    removed: set[int],
    proposals: Sequence[T],
    matches: Callable[[T, Action], bool],
    describe: Callable[[T], str],
    notes: list[str],
) -> EpisodeScore:
    """Score removals (of input steps) and proposals (of missing steps) against the labels."""
    labels = episode.labels or []
    lines, steps = episode.actions, episode.parsed()
    remove_labels = {
        label.index: k
        for k, label in enumerate(labels)
        if label.type == "REMOVE" and label.index is not None
    }
    missing_labels = [
        (k, parse_action(label.action))
        for k, label in enumerate(labels)
        if label.type == "MISSING" and label.action is not None
    ]
    for i in sorted(removed):
        if not 0 <= i < len(steps):
            notes.append(f"ignored a removal of step {i + 1}: out of range")
        elif steps[i].is_dialogue:
            notes.append(f"ignored a removal of dialogue line {i + 1}")
    removed = {i for i in removed if 0 <= i < len(steps) and not steps[i].is_dialogue}
    twins = _twins(lines, steps, set(remove_labels), removed)

    found: set[int] = set()
    fps: list[str] = []
    tn = 0
    for i, step in enumerate(steps):
        if step.is_dialogue:
            continue
        if i in remove_labels:
            if i in removed or i in twins:
                found.add(remove_labels[i])
        elif i in removed:
            if i not in twins.values():
                fps.append(f"step {i + 1}: {lines[i]}")
        else:
            tn += 1

    edges = [
        [k for k, wanted in missing_labels if matches(proposal, wanted)] for proposal in proposals
    ]
    pairing = _max_matching(edges)
    found.update(pairing.values())
    fps += [describe(p) for n, p in enumerate(proposals) if n not in pairing]

    by_error: dict[str, Counts] = {}
    for k, label in enumerate(labels):
        kind = label.error or OTHER
        hit = Counts(tp=1) if k in found else Counts(fn=1)
        by_error[kind] = by_error.get(kind, Counts()) + hit
    return EpisodeScore(
        id=episode.id,
        task=episode.task or UNKNOWN_TASK,
        mode=mode,
        counts=Counts(tp=len(found), fp=len(fps), fn=len(labels) - len(found), tn=tn),
        by_error=by_error,
        found=sorted(found),
        missed=[k for k in range(len(labels)) if k not in found],
        false_positives=fps,
        notes=notes,
    )


def _labels_of(episode: Episode) -> list[Label]:
    if episode.labels is None:
        raise ValueError(f"episode {episode.id} has no labels: it cannot be scored")
    return episode.labels


def _failed(episode: Episode, mode: Mode, note: str) -> EpisodeScore:
    """An episode whose result is unusable: nothing found, every label missed."""
    score = _tally(episode, mode, set(), [], lambda _p, _a: False, str, [note])
    score.status = "error"
    score.counts = Counts(fn=score.counts.fn)  # no steps were judged: no true negatives either
    return score


def score_static(episode: Episode, critique: Critique) -> EpisodeScore:
    """Score one Judge pass over the input plan (flags index the episode's `actions`).

    >>> plan = ["Driver.PickUp('Mug')", "Driver.TurnLeft(90.0)", "Driver.TurnRight(90.0)",
    ...         "Driver.PutAOnB('Mug', 'CoffeeMachine')"]
    >>> episode = Episode(id="e", actions=plan, labels=[
    ...     Label(type="REMOVE", index=1, error="cancelling_navigation"),
    ...     Label(type="REMOVE", index=2, error="cancelling_navigation"),
    ...     Label(type="MISSING", after=3, action="Driver.ToggleOn('CoffeeMachine')")])
    >>> critique = Critique(
    ...     flags=[Flag(step=1, action=plan[1], reason="turns back"),
    ...            Flag(step=3, action=plan[3], reason="not needed")],
    ...     missing=[Missing(description="switch on the coffee machine"),
    ...              Missing(description="wash the mug")])
    >>> score = score_static(episode, critique)
    >>> score.counts
    Counts(tp=2, fp=2, fn=1, tn=1)
    >>> score.found, score.missed, score.false_positives
    ([0, 2], [1], ["step 4: Driver.PutAOnB('Mug', 'CoffeeMachine')", 'missing: wash the mug'])
    """
    _labels_of(episode)
    return _tally(
        episode,
        "static",
        {flag.step for flag in critique.flags},
        critique.missing,
        missing_matches,
        lambda m: f"missing: {m.description}" + (f" ({m.action})" if m.action else ""),
        [],
    )


def _inserted_matches(line: str, wanted: Action) -> bool:
    try:
        return same_step(parse_action(line), wanted)
    except NotationError:
        return False


OTHER_CONTENT = "the result was computed on other content than the episode's"


def _plan_mismatch(episode: Episode, result: VerificationResult) -> str | None:
    if result.input_digest is not None and result.input_digest != episode.input_digest:
        return OTHER_CONTENT
    if result.original and result.original != episode.actions:
        return "the result was computed on another plan than the episode's"
    if result.verdicts and len(result.verdicts) != len(episode.actions):
        return "the result's verdicts do not cover the episode's plan"
    return None


def score_iterative(episode: Episode, result: VerificationResult) -> EpisodeScore:
    """Score the refined plan of a full run against the input plan.

    >>> from planverify.records.result import Inserted, Verdict
    >>> plan = ["Driver.ToggleOn('Toaster')", "Driver.ToggleOn('Toaster')", "Driver.Move(0.5)"]
    >>> episode = Episode(id="e", actions=plan, labels=[
    ...     Label(type="REMOVE", index=1, error="duplicate"),
    ...     Label(type="MISSING", after=-1, action="Driver.PutAOnB('BreadSliced', 'Toaster')")])
    >>> result = VerificationResult(id="e", original=plan, verdicts=[
    ...     Verdict(index=0, action=plan[0], verdict="remove"),
    ...     Verdict(index=1, action=plan[1], verdict="keep"),
    ...     Verdict(index=2, action=plan[2], verdict="keep")],
    ...     inserted=[Inserted(after_index=-1, action="Driver.PutAOnB('BreadSliced2', 'Toaster')",
    ...                        iteration=1)])
    >>> score_iterative(episode, result).counts  # step 0 is the twin of labelled step 1
    Counts(tp=2, fp=0, fn=0, tn=1)
    """
    _labels_of(episode)
    if result.status == "error":
        return _failed(episode, "iterative", f"verification failed: {result.error}")
    mismatch = _plan_mismatch(episode, result)
    if mismatch:
        return _failed(episode, "iterative", mismatch)
    return _tally(
        episode,
        "iterative",
        {v.index for v in result.verdicts if v.verdict == "remove"},
        [step.action for step in result.inserted],
        _inserted_matches,
        lambda line: f"inserted: {line}",
        [],
    )


def score_episode(episode: Episode, result: VerificationResult, *, mode: Mode) -> EpisodeScore:
    """Score one result in either mode; static mode reads the first pass of `result.history`.

    Without a recorded history, static mode falls back on the removals in `result.verdicts`
    (and has no `#MISSING` critiques to score), and says so in the notes.

    Besides the label-level `counts`, the score carries `without_motion` (the same scoring with
    motion steps and their labels left out, see `motionless`) and, when the episode has a
    `clean` plan, `plan_level` (`score_plan`, with and without motion).
    """
    score = _score_labels(episode, result, mode)
    score.without_motion = _motionless_counts(episode, result, mode)
    try:
        with_motion = score_plan(episode, result, mode=mode)
    except ValueError as exc:  # a `clean` that is no plan: no plan-level figures
        score.notes.append(str(exc))
        with_motion = None
    if with_motion is not None:
        without = score_plan(episode, result, mode=mode, motion=False)
        assert without is not None
        score.plan_level = {"with_motion": with_motion, "without_motion": without}
    return score


def _score_labels(episode: Episode, result: VerificationResult, mode: Mode) -> EpisodeScore:
    if mode == "iterative":
        return score_iterative(episode, result)
    _labels_of(episode)
    if result.status == "error":
        return _failed(episode, "static", f"verification failed: {result.error}")
    mismatch = _plan_mismatch(episode, result)
    if mismatch:
        return _failed(episode, "static", mismatch)
    if result.history:
        return score_static(episode, result.history[0].critique)
    critique = Critique(
        flags=[
            Flag(step=v.index, action=v.action, reason=v.reason or "")
            for v in result.verdicts
            if v.verdict == "remove"
        ]
    )
    score = score_static(episode, critique)
    score.notes.append("no Judge history in the result: flags taken from its verdicts")
    return score


# --------------------------------------------------------------------------- plan level

ANNOTATION_CLEAN = "clean"  # the record key of the plan before any error was injected


def motion_step(action: Action) -> bool:
    """Whether a step is a motion step (`Move`, `TurnLeft`, `TurnRight`)."""
    return action.known and action.verb in MOTION_VERBS


def canonical(line: str) -> str:
    """A step as the notation writes it, so that equal steps compare equal as text.

    >>> canonical('Driver.PutAOnB("Mug",  "Sink")')
    "Driver.PutAOnB('Mug', 'Sink')"
    """
    return str(parse_action(line))


def clean_plan(episode: Episode) -> list[str] | None:
    """The episode's `clean` plan (the plan before errors were injected), or None without one.

    Raises ValueError when `clean` is not a list of lines in the notation.
    """
    value = (episode.model_extra or {}).get(ANNOTATION_CLEAN)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(line, str) for line in value):
        raise ValueError(f"episode {episode.id}: clean must be a list of action lines")
    try:
        for line in value:
            parse_action(line)
    except NotationError as exc:
        raise ValueError(f"episode {episode.id}: clean: {exc}") from None
    return [line.strip() for line in value]


def common_subsequence_length(a: Sequence[str], b: Sequence[str]) -> int:
    """The length of a longest common subsequence of two sequences.

    >>> common_subsequence_length("ABCBDAB", "BDCABA"), common_subsequence_length([], ["x"])
    (4, 0)
    """
    if len(a) < len(b):
        a, b = b, a
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def _plan_steps(lines: Sequence[str], motion: bool) -> list[tuple[int, str]]:
    """(index, canonical line) of the scored steps: no dialogue, no motion unless `motion`."""
    out = []
    for i, line in enumerate(lines):
        step = parse_action(line)
        if step.is_dialogue or (not motion and motion_step(step)):
            continue
        out.append((i, str(step)))
    return out


def plan_counts(
    noisy: Sequence[str], clean: Sequence[str], removed: Iterable[int], *, motion: bool = True
) -> Counts:
    """Plan-level counts of removals from `noisy` (indices into it) against the `clean` plan.

    Over non-dialogue steps (and non-motion steps when `motion` is False), compared as
    canonical lines: the errors are the noisy steps outside a longest common subsequence (LCS)
    of the noisy and clean plans; a removal is a false positive only when it shortens that
    LCS, so FP = |LCS(noisy, clean)| - |LCS(kept, clean)|, TP = removals - FP, FN = errors -
    TP, and TN = |LCS(kept, clean)| (the correct steps kept). Which of two identical steps
    goes does not matter: removing either of two steps that leave the same plan scores the same.

    >>> clean = ["Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'Sink')"]
    >>> noisy = ["Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'Shelf')",
    ...          "Driver.Say('oops')", "Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'Sink')"]
    >>> plan_counts(noisy, clean, {1, 3}), plan_counts(noisy, clean, {0, 1})
    (Counts(tp=2, fp=0, fn=0, tn=2), Counts(tp=2, fp=0, fn=0, tn=2))
    >>> plan_counts(noisy, clean, {1, 4})  # the second put-down is needed
    Counts(tp=1, fp=1, fn=1, tn=1)
    """
    steps = _plan_steps(noisy, motion)
    gold = [line for _, line in _plan_steps(clean, motion)]
    drop = set(removed)
    everything = [line for _, line in steps]
    kept = [line for i, line in steps if i not in drop]
    common = common_subsequence_length(everything, gold)
    left = common_subsequence_length(kept, gold)
    fp = common - left
    tp = len(everything) - len(kept) - fp
    return Counts(tp=tp, fp=fp, fn=len(everything) - common - tp, tn=left)


def _never(_proposal: object, _wanted: Action) -> bool:
    return False


def _outcome(
    episode: Episode, result: VerificationResult, mode: Mode, *, checked: bool = True
) -> tuple[set[int], list[object], Callable[[object], Action | None], Callable[..., bool]]:
    """What a result did to the input plan, in a scoring mode.

    (removed step indices, proposals of missing steps, the concrete action of a proposal when
    it has one, the function that matches a proposal with a MISSING label's action). An
    unusable result (status "error", another plan; not looked at unless `checked`) removed and
    proposed nothing.
    """
    if checked and (result.status == "error" or _plan_mismatch(episode, result)):
        return set(), [], lambda _p: None, _never
    if mode == "iterative":
        removed = {v.index for v in result.verdicts if v.verdict == "remove"}
        lines: list[object] = [step.action for step in result.inserted]
        return removed, lines, _action_of_line, _inserted_matches
    if not result.history:
        return {v.index for v in result.verdicts if v.verdict == "remove"}, [], _no_action, _never
    critique = result.history[0].critique
    return (
        {f.step for f in critique.flags},
        list(critique.missing),
        _action_of_missing,
        missing_matches,
    )


def _no_action(_proposal: object) -> Action | None:
    return None


def _action_of_line(line: object) -> Action | None:
    try:
        return parse_action(str(line))
    except NotationError:
        return None


def _action_of_missing(critique: object) -> Action | None:
    assert isinstance(critique, Missing)
    return _action_of_line(critique.action) if critique.action else None


def score_plan(
    episode: Episode, result: VerificationResult, *, mode: Mode, motion: bool = True
) -> Counts | None:
    """Plan-level counts of one result, or None when the episode has no `clean` plan.

    Removals (static: the first Judge pass's flags; iterative: the verdicts that remove) are
    counted by `plan_counts` against the `clean` plan. Proposed steps (static: `#MISSING`
    critiques; iterative: insertions) are paired with MISSING labels as in label-level
    scoring; unpaired proposals are false positives, unfound MISSING labels false negatives.
    With `motion` False, motion steps, motion labels and motion proposals are left out.

    >>> from planverify.records.result import Verdict
    >>> clean = ["Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'Sink')"]
    >>> noisy = ["Driver.PickUp('Mug')", "Driver.Move(1.0)", "Driver.PutAOnB('Mug', 'Shelf')",
    ...          "Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'Sink')"]
    >>> episode = Episode(id="e", actions=noisy, clean=clean, labels=[
    ...     Label(type="REMOVE", index=1), Label(type="REMOVE", index=2),
    ...     Label(type="REMOVE", index=3)])
    >>> result = VerificationResult(id="e", verdicts=[
    ...     Verdict(index=i, action=line, verdict="remove" if i in (0, 2) else "keep")
    ...     for i, line in enumerate(noisy)])
    >>> score_plan(episode, result, mode="iterative")  # the move is kept: one error missed
    Counts(tp=2, fp=0, fn=1, tn=2)
    >>> score_plan(episode, result, mode="iterative", motion=False)
    Counts(tp=2, fp=0, fn=0, tn=2)
    """
    clean = clean_plan(episode)
    if clean is None:
        return None
    labels = _labels_of(episode)
    removed, proposals, action_of, matches = _outcome(episode, result, mode)
    counts = plan_counts(episode.actions, clean, removed, motion=motion)
    wanted = [
        parse_action(label.action)
        for label in labels
        if label.type == "MISSING" and label.action is not None
    ]
    if not motion:
        wanted = [w for w in wanted if not motion_step(w)]
        proposals = [
            p for p in proposals if (found := action_of(p)) is None or not motion_step(found)
        ]
    edges = [[k for k, w in enumerate(wanted) if matches(p, w)] for p in proposals]
    paired = len(_max_matching(edges))
    return counts + Counts(tp=paired, fp=len(proposals) - paired, fn=len(wanted) - paired)


def _motionless_counts(episode: Episode, result: VerificationResult, mode: Mode) -> Counts:
    """Label-level counts without motion (`motionless`); the result is checked on the input."""
    plain, outcome = motionless(episode, result)
    if result.status == "error" or _plan_mismatch(episode, result):
        return _failed(plain, mode, "unusable result").counts
    removed, proposals, _, matches = _outcome(plain, outcome, mode, checked=False)
    return _tally(plain, mode, removed, proposals, matches, str, []).counts


def _after(kept: Sequence[int], after: int) -> int:
    """The new position of the last kept step at or before old position `after` (-1: none)."""
    return bisect.bisect_right(kept, after) - 1


def motionless(episode: Episode, result: VerificationResult) -> tuple[Episode, VerificationResult]:
    """The episode and result with motion steps left out, indices renumbered.

    Motion steps leave the plan (and the result's `original`, `refined`, verdicts and first
    Judge pass), REMOVE labels on them and MISSING labels, insertions and `#MISSING` critiques
    that add a motion step are dropped, and positions are renumbered. A result computed on
    another plan than the episode's is left as it is (it stays unusable).

    >>> episode = Episode(id="e", actions=["Driver.Move(1.0)", "Driver.PickUp('Mug')"],
    ...     labels=[Label(type="REMOVE", index=0), Label(type="REMOVE", index=1)])
    >>> plain, _ = motionless(episode, VerificationResult(id="e"))
    >>> plain.actions, [label.index for label in plain.labels]
    (["Driver.PickUp('Mug')"], [0])
    """
    steps = episode.parsed()
    kept = [i for i, step in enumerate(steps) if not motion_step(step)]
    new = {old: n for n, old in enumerate(kept)}
    labels: list[Label] = []
    for label in episode.labels or []:
        if label.type == "REMOVE":
            if label.index in new:
                labels.append(label.model_copy(update={"index": new[label.index]}))
        elif label.action is None or not motion_step(parse_action(label.action)):
            after = -1 if label.after is None else _after(kept, label.after)
            labels.append(label.model_copy(update={"after": after}))
    plain = episode.model_copy(
        update={
            "actions": [episode.actions[i] for i in kept],
            "labels": labels if episode.labels is not None else None,
        }
    )
    if result.status == "error" or _plan_mismatch(episode, result):
        return plain, result

    def still(line: str) -> bool:
        action = _action_of_line(line)
        return action is None or not motion_step(action)

    verdicts = [
        v.model_copy(update={"index": new[v.index]}) for v in result.verdicts if v.index in new
    ]
    inserted = [
        step.model_copy(update={"after_index": _after(kept, step.after_index)})
        for step in result.inserted
        if still(step.action)
    ]
    history = []
    if result.history:
        first = result.history[0]
        critique = first.critique.model_copy(
            update={
                "flags": [
                    f.model_copy(update={"step": new[f.step]})
                    for f in first.critique.flags
                    if f.step in new
                ],
                "missing": [
                    m for m in first.critique.missing if m.action is None or still(m.action)
                ],
            }
        )
        history = [first.model_copy(update={"critique": critique})]
    outcome = result.model_copy(
        update={
            "original": [line for line in result.original if still(line)],
            "refined": [line for line in result.refined if still(line)],
            "verdicts": verdicts,
            "inserted": inserted,
            "history": history,
        }
    )
    return plain, outcome


# --------------------------------------------------------------------------- aggregates


class Interval(BaseModel):
    """A confidence interval."""

    low: float
    high: float


class Scores(BaseModel):
    """Summed counts of a group of episodes, the metrics and their bootstrap intervals."""

    episodes: int = 0  # episodes in the group
    counts: Counts = Field(default_factory=Counts)  # summed confusion counts
    recall: float | None = None
    precision: float | None = None  # None per error type: false positives have no type
    f1: float | None = None
    recall_ci: Interval | None = None
    precision_ci: Interval | None = None
    f1_ci: Interval | None = None


def bootstrap(
    counts: Sequence[tuple[int, int, int]],
    *,
    resamples: int = 1000,
    seed: int | str = 0,
    confidence: float = 0.95,
    metrics: Iterable[str] = ("recall", "precision", "f1"),
) -> dict[str, Interval | None]:
    """Percentile bootstrap intervals of the metrics, resampling the (tp, fp, fn) of episodes.

    Each resample draws as many episodes as there are, with replacement, and recomputes the
    metric from the summed counts; resamples where the metric is undefined are left out, and a
    metric never defined gets None. Same input and seed, same intervals.

    >>> data = [(1, 0, 0), (0, 1, 1), (2, 0, 0), (1, 0, 1)]
    >>> ci = bootstrap(data, seed=1)
    >>> ci["recall"].low <= 4 / 6 <= ci["recall"].high
    True
    >>> bootstrap(data, seed=1) == ci
    True
    """
    wanted = list(metrics)
    if not counts or resamples <= 0:
        return {name: None for name in wanted}
    rng = random.Random(seed)
    tps, fps, fns = (list(column) for column in zip(*counts, strict=True))
    population = range(len(counts))
    values: dict[str, list[float]] = {name: [] for name in wanted}
    for _ in range(resamples):
        draw = rng.choices(population, k=len(counts))
        tp = sum(map(tps.__getitem__, draw))
        fp = sum(map(fps.__getitem__, draw))
        fn = sum(map(fns.__getitem__, draw))
        for name in wanted:
            value = METRICS[name](tp, fp, fn)
            if value is not None:
                values[name].append(value)
    tail = (1 - confidence) / 2
    out: dict[str, Interval | None] = {}
    for name in wanted:
        got = sorted(values[name])
        if not got:
            out[name] = None
            continue
        last = len(got) - 1
        out[name] = Interval(
            low=got[math.floor(tail * last)], high=got[math.ceil((1 - tail) * last)]
        )
    return out


def summarize(
    counts: Sequence[Counts],
    *,
    typed: bool = True,
    resamples: int = 1000,
    seed: int | str = 0,
    confidence: float = 0.95,
) -> Scores:
    """The `Scores` of a group of episodes given their counts (one `Counts` per episode).

    With `typed=False` (per error type) false positives are unknown, so only recall is given.

    >>> s = summarize([Counts(tp=1), Counts(tp=1, fp=1, fn=1)], resamples=200)
    >>> s.counts, s.recall, s.precision
    (Counts(tp=2, fp=1, fn=1, tn=0), 0.6666666666666666, 0.6666666666666666)
    """
    total = sum(counts, Counts())
    metrics = ("recall", "precision", "f1") if typed else ("recall",)
    ci = bootstrap(
        [(c.tp, c.fp, c.fn) for c in counts],
        resamples=resamples,
        seed=seed,
        confidence=confidence,
        metrics=metrics,
    )
    return Scores(
        episodes=len(counts),
        counts=total,
        recall=total.recall,
        precision=total.precision if typed else None,
        f1=total.f1 if typed else None,
        recall_ci=ci.get("recall"),
        precision_ci=ci.get("precision"),
        f1_ci=ci.get("f1"),
    )


class Report(BaseModel):
    """The scores of a run: overall, per error type, per task family, and per episode."""

    mode: Mode  # how results were scored
    overall: Scores  # all scored episodes
    by_error: dict[str, Scores] = Field(default_factory=dict)  # recall per label error type
    by_task: dict[str, Scores] = Field(default_factory=dict)  # per task family
    episodes: list[EpisodeScore] = Field(default_factory=list)  # one per scored episode
    failed: list[str] = Field(default_factory=list)  # scored episodes whose result was unusable
    mismatched: list[str] = Field(default_factory=list)  # results computed on other content
    missing: list[str] = Field(default_factory=list)  # episodes without a result (not scored)
    unmatched: list[str] = Field(default_factory=list)  # results without an episode
    unlabelled: list[str] = Field(default_factory=list)  # episodes without labels (not scored)
    notes: list[str] = Field(default_factory=list)  # anything unusual about the input
    without_motion: Scores | None = None  # like `overall`, motion steps and labels left out
    plan_level: dict[str, Scores] | None = None  # "with_motion", "without_motion": episodes
    # with a `clean` plan only (None when none has one)
    min_evidence: Evidence | None = None  # only changes at or above this level were scored


def score_results(
    episodes: Iterable[Episode],
    results: Iterable[VerificationResult],
    *,
    mode: Mode,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    min_evidence: Evidence | None = None,
) -> Report:
    """Score results against annotated episodes, pairing them by id.

    With `min_evidence`, only removals and insertions at or above that evidence level are
    scored: those below it are treated as if they had not been made (the step is kept, the
    insertion left out; `VerificationResult.only`), so a labelled step removed below the level
    is a false negative, and a wrong removal below it no false positive.

    An episode is scored when it has labels (`[]` is a clean episode) and a result; a result
    with status "error" counts as finding nothing (its episode's labels are FNs) and is listed
    in `failed`. Episodes without a result are listed in `missing` and not scored, results
    without an episode in `unmatched`, episodes without labels in `unlabelled`. When an id
    appears more than once, the first episode and the first result are used.

    Per-episode bootstrap intervals resample all scored episodes for the overall and per-error
    scores and the episodes of a family for its scores.

    >>> plan = ["Driver.PickUp('Mug')", "Driver.PickUp('Mug')"]
    >>> eps = [Episode(id="a", actions=plan, task="Coffee",
    ...                labels=[Label(type="REMOVE", index=1, error="duplicate")]),
    ...        Episode(id="b", actions=plan, labels=[])]
    >>> from planverify.records.result import Verdict
    >>> res = [VerificationResult(id="a", verdicts=[
    ...            Verdict(index=0, action=plan[0], verdict="keep"),
    ...            Verdict(index=1, action=plan[1], verdict="remove")]),
    ...        VerificationResult(id="b", status="error", error="timeout"),
    ...        VerificationResult(id="c")]
    >>> report = score_results(eps, res, mode="iterative", resamples=100)
    >>> report.overall.counts, report.overall.recall, report.overall.precision
    (Counts(tp=1, fp=0, fn=0, tn=1), 1.0, 1.0)
    >>> report.failed, report.unmatched, sorted(report.by_task)
    (['b'], ['c'], ['Coffee', 'unknown'])
    """
    report_notes: list[str] = []
    by_id: dict[str, VerificationResult] = {}
    if min_evidence is not None:
        results = (result.only(levels_from(min_evidence)) for result in results)
    for result in results:
        if result.id in by_id:
            report_notes.append(f"result {result.id}: repeated id, the first one is used")
        else:
            by_id[result.id] = result
    scored: list[EpisodeScore] = []
    seen: set[str] = set()
    missing: list[str] = []
    unlabelled: list[str] = []
    for episode in episodes:
        if episode.id in seen:
            report_notes.append(f"episode {episode.id}: repeated id, the first one is used")
            continue
        seen.add(episode.id)
        if episode.labels is None:
            unlabelled.append(episode.id)
        elif episode.id not in by_id:
            missing.append(episode.id)
        else:
            scored.append(score_episode(episode, by_id[episode.id], mode=mode))

    def group(items: Sequence[Counts], key: str, *, typed: bool = True) -> Scores:
        return summarize(
            items,
            typed=typed,
            resamples=resamples,
            seed=f"{seed}:{key}",
            confidence=confidence,
        )

    error_types = sorted({kind for s in scored for kind in s.by_error})
    tasks = sorted({s.task for s in scored})
    planned = [s.plan_level for s in scored if s.plan_level is not None]
    return Report(
        mode=mode,
        overall=group([s.counts for s in scored], "overall"),
        by_error={
            kind: group(
                [s.by_error.get(kind, Counts()) for s in scored], f"error:{kind}", typed=False
            )
            for kind in error_types
        },
        by_task={
            task: group([s.counts for s in scored if s.task == task], f"task:{task}")
            for task in tasks
        },
        episodes=scored,
        failed=[s.id for s in scored if s.status == "error"],
        mismatched=[s.id for s in scored if OTHER_CONTENT in s.notes],
        missing=missing,
        unmatched=[rid for rid in by_id if rid not in seen],
        unlabelled=unlabelled,
        notes=report_notes,
        without_motion=group([s.without_motion or s.counts for s in scored], "without_motion"),
        plan_level={
            key: group([p[key] for p in planned], f"plan:{key}")
            for key in ("with_motion", "without_motion")
        }
        if planned
        else None,
        min_evidence=min_evidence,
    )


BELOW_LEVEL = (
    "only removals and insertions at level {level} or stronger are scored; those below it "
    "count as not made (the step kept, the insertion left out)"
)  # what `min_evidence` means, as reports say it


class LevelScores(BaseModel):
    """The removals at one evidence level, scored as if no other change had been made."""

    level: Evidence  # the evidence level
    removals: int = 0  # removals at this level, over the usable results
    share: float | None = None  # their share of all removals (None: there is none)
    labels: Counts = Field(default_factory=Counts)  # label level (MISSING labels are FNs)
    plan: Counts | None = None  # plan level, over episodes with a `clean` plan (None: none has)
    excused: Counts | None = None  # plan level against the base's own plan (`base` given)


def evidence_levels(
    episodes: Iterable[Episode],
    results: Iterable[VerificationResult],
    *,
    mode: Mode,
    base: Mapping[str, Sequence[str]] | None = None,
    motion: bool = True,
) -> dict[Evidence, LevelScores]:
    """Per evidence level, how many removals are at that level and how precise they are, each
    level scored as if only its removals had been made (insertions left out, so `precision` is
    the removals' own). Counts are pooled over the labelled episodes with a usable result,
    paired by id (the first of each); unusable results remove nothing.

    `labels` are label-level counts, `plan` plan-level counts (`plan_counts` against `clean`,
    episodes that have it), and `excused`, when `base` maps episode ids to the plan the same
    judge keeps of the uncorrupted episode, plan-level counts against that plan instead: a
    removal the base makes itself is not held against the judge. With `motion` False, motion
    steps, their labels and their removals are left out of the counts and of `removals`.

    >>> plan = ["Driver.PickUp('Mug')", "Driver.Move(1.0)", "Driver.PickUp('Mug')"]
    >>> episode = Episode(id="e", actions=plan, labels=[Label(type="REMOVE", index=2)])
    >>> from planverify.records.result import Verdict
    >>> result = VerificationResult(id="e", verdicts=[
    ...     Verdict(index=0, action=plan[0], verdict="keep"),
    ...     Verdict(index=1, action=plan[1], verdict="remove", evidence="heuristic"),
    ...     Verdict(index=2, action=plan[2], verdict="remove", evidence="proven")])
    >>> table = evidence_levels([episode], [result], mode="iterative")
    >>> [(s.level, s.removals, s.share, s.labels.precision) for s in table.values()]
    [('proven', 1, 0.5, 1.0), ('goal-text', 0, 0.0, None), ('heuristic', 1, 0.5, 0.0)]
    """
    by_id: dict[str, VerificationResult] = {}
    for item in results:
        by_id.setdefault(item.id, item)
    table = {level: LevelScores(level=level) for level in LEVELS}
    seen: set[str] = set()
    for episode in episodes:
        result = by_id.get(episode.id)
        if episode.id in seen or episode.labels is None or result is None:
            continue
        seen.add(episode.id)
        if result.status == "error" or _plan_mismatch(episode, result):
            continue
        for level, scores in table.items():
            _add_level(scores, episode, result.only({level}), mode, base, motion)
    total = sum(scores.removals for scores in table.values())
    for scores in table.values():
        scores.share = scores.removals / total if total else None
    return table


def _add_level(
    scores: LevelScores,
    episode: Episode,
    view: VerificationResult,
    mode: Mode,
    base: Mapping[str, Sequence[str]] | None,
    motion: bool,
) -> None:
    """Add one episode's removals at one level (`view`: the result with only those made)."""
    removed = _outcome(episode, view, mode)[0]
    scored, outcome = (episode, view) if motion else motionless(episode, view)
    counted = removed if motion else _outcome(scored, outcome, mode, checked=False)[0]
    scores.removals += len(counted)
    scores.labels += _tally(scored, mode, counted, [], _never, str, []).counts
    clean = clean_plan(episode)
    if clean is not None:
        here = plan_counts(episode.actions, clean, removed, motion=motion)
        scores.plan = here if scores.plan is None else scores.plan + here
    if base is not None and episode.id in base:
        here = plan_counts(episode.actions, base[episode.id], removed, motion=motion)
        scores.excused = here if scores.excused is None else scores.excused + here


def infer_mode(results: Sequence[VerificationResult]) -> Mode:
    """How results were made: their settings say; for records written before results carried
    settings, a run with any `static` stop is static (an iterative run never stops so, and a
    static run whose Judge raised nothing anywhere scores the same either way).

    Raises ValueError when the results mix static and iterative runs.
    """
    modes: set[str] = {r.settings.mode for r in results if r.settings is not None}
    legacy = [r for r in results if r.settings is None]
    if legacy:
        modes.add("static" if any(r.stop_reason == "static" for r in legacy) else "iterative")
    if len(modes) > 1:
        raise ValueError("the results mix static and iterative runs: score them separately")
    return "static" if modes == {"static"} else "iterative"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}"


def _ci(interval: Interval | None) -> str:
    return "" if interval is None else f" [{_pct(interval.low)}, {_pct(interval.high)}]"


def format_report(report: Report) -> str:
    """A plain-text summary of a report: one line per group, percentages with 95% intervals."""
    rows = [("overall", report.overall)]
    rows += [(f"error {k}", v) for k, v in report.by_error.items()]
    rows += [(f"task {k}", v) for k, v in report.by_task.items()]
    if report.without_motion is not None:
        rows.append(("overall without motion", report.without_motion))
    for key, value in (report.plan_level or {}).items():
        rows.append((f"plan level {key.replace('_', ' ')}", value))
    out = [f"mode: {report.mode}, episodes scored: {report.overall.episodes}"]
    if report.min_evidence is not None:
        out.append(f"evidence: {BELOW_LEVEL.format(level=report.min_evidence)}")
    for name, s in rows:
        c = s.counts
        out.append(
            f"{name}: tp={c.tp} fp={c.fp} fn={c.fn} "
            f"recall={_pct(s.recall)}{_ci(s.recall_ci)} "
            f"precision={_pct(s.precision)}{_ci(s.precision_ci)} "
            f"f1={_pct(s.f1)}{_ci(s.f1_ci)}"
        )
    for name, ids in (
        ("failed", report.failed),
        ("without result", report.missing),
        ("results without episode", report.unmatched),
        ("without labels", report.unlabelled),
    ):
        if ids:
            out.append(
                f"{name}: {len(ids)} ({', '.join(ids[:5])}{', ...' if len(ids) > 5 else ''})"
            )
    return "\n".join(out)


def gold_plan(episode: Episode) -> list[str]:
    """The plan its labels describe: REMOVE-labelled steps dropped, MISSING steps added.

    MISSING steps with the same `after` go in label order.

    >>> gold_plan(Episode(id="e", actions=["Driver.Move(1.0)", "Driver.PickUp('Mug')"],
    ...     labels=[Label(type="REMOVE", index=0),
    ...             Label(type="MISSING", after=-1, action="Driver.Open('Fridge')")]))
    ["Driver.Open('Fridge')", "Driver.PickUp('Mug')"]
    """
    labels = _labels_of(episode)
    drop = {label.index for label in labels if label.type == "REMOVE"}
    added: dict[int, list[str]] = {}
    for label in labels:
        if label.type == "MISSING" and label.after is not None and label.action is not None:
            added.setdefault(label.after, []).append(label.action)
    out = list(added.get(-1, []))
    for i, line in enumerate(episode.actions):
        if i not in drop:
            out.append(line)
        out += added.get(i, [])
    return out
