"""Confusion counts of one episode's labels: static (the first critique) and iterative (the
refined plan).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, TypeVar

from pydantic import BaseModel, Field

from planverify.metrics.matching import (
    max_matching,
    missing_matches,
    same_step,
    twins_of,
)
from planverify.records.critique import Critique, Flag
from planverify.records.episode import Episode, Label
from planverify.records.notation import Action, NotationError, parse_action
from planverify.records.result import VerificationResult

Mode = Literal["static", "iterative"]
OTHER = "other"  # error type of a label without one
UNKNOWN_TASK = "unknown"  # task family of an episode without one

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


def tally(
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
        (k, episode.step_of(label.action))
        for k, label in enumerate(labels)
        if label.type == "MISSING" and label.action is not None
    ]
    for i in sorted(removed):
        if not 0 <= i < len(steps):
            notes.append(f"ignored a removal of step {i + 1}: out of range")
        elif steps[i].is_dialogue:
            notes.append(f"ignored a removal of dialogue line {i + 1}")
    removed = {i for i in removed if 0 <= i < len(steps) and not steps[i].is_dialogue}
    twins = twins_of(lines, steps, set(remove_labels), removed)

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
    pairing = max_matching(edges)
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


def labels_of(episode: Episode) -> list[Label]:
    if episode.labels is None:
        raise ValueError(f"episode {episode.id} has no labels: it cannot be scored")
    return episode.labels


def failed_score(episode: Episode, mode: Mode, note: str) -> EpisodeScore:
    """An episode whose result is unusable: nothing found, every label missed."""
    score = tally(episode, mode, set(), [], lambda _p, _a: False, str, [note])
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
    >>> from planverify.records.critique import Missing
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
    labels_of(episode)
    return tally(
        episode,
        "static",
        {flag.step for flag in critique.flags},
        critique.missing,
        missing_matches,
        lambda m: f"missing: {m.description}" + (f" ({m.action})" if m.action else ""),
        [],
    )


def inserted_matches(line: str, wanted: Action) -> bool:
    if not wanted.known:  # another domain's step, or a verb TEACh's notation does not know
        return line.strip() == wanted.raw
    try:
        return same_step(parse_action(line), wanted)
    except NotationError:
        return False


OTHER_CONTENT = "the result was computed on other content than the episode's"


def plan_mismatch(episode: Episode, result: VerificationResult) -> str | None:
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
    labels_of(episode)
    if result.status == "error":
        return failed_score(episode, "iterative", f"verification failed: {result.error}")
    mismatch = plan_mismatch(episode, result)
    if mismatch:
        return failed_score(episode, "iterative", mismatch)
    return tally(
        episode,
        "iterative",
        {v.index for v in result.verdicts if v.verdict == "remove"},
        [step.action for step in result.inserted],
        inserted_matches,
        lambda line: f"inserted: {line}",
        [],
    )


def score_labels(episode: Episode, result: VerificationResult, mode: Mode) -> EpisodeScore:
    if mode == "iterative":
        return score_iterative(episode, result)
    labels_of(episode)
    if result.status == "error":
        return failed_score(episode, "static", f"verification failed: {result.error}")
    mismatch = plan_mismatch(episode, result)
    if mismatch:
        return failed_score(episode, "static", mismatch)
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
