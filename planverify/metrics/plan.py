"""Plan-level counts: errors as the steps outside a longest common subsequence with the clean
plan, with and without motion steps.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence

from planverify.metrics.counts import (
    Counts,
    Mode,
    failed_score,
    inserted_matches,
    labels_of,
    plan_mismatch,
    tally,
)
from planverify.metrics.matching import (
    max_matching,
    missing_matches,
)
from planverify.records.critique import Missing
from planverify.records.episode import Episode, Label
from planverify.records.notation import MOTION_VERBS, Action, NotationError, parse_action
from planverify.records.result import VerificationResult

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
            episode.step_of(line)
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


def plan_steps(
    lines: Sequence[str], motion: bool, read: Callable[[str], Action]
) -> list[tuple[int, str]]:
    """(index, canonical line) of the scored steps: no dialogue, no motion unless `motion`."""
    out = []
    for i, line in enumerate(lines):
        step = read(line)
        if step.is_dialogue or (not motion and motion_step(step)):
            continue
        out.append((i, str(step)))
    return out


def plan_counts(
    noisy: Sequence[str],
    clean: Sequence[str],
    removed: Iterable[int],
    *,
    motion: bool = True,
    read: Callable[[str], Action] = parse_action,
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
    steps = plan_steps(noisy, motion, read)
    gold = [line for _, line in plan_steps(clean, motion, read)]
    drop = set(removed)
    everything = [line for _, line in steps]
    kept = [line for i, line in steps if i not in drop]
    common = common_subsequence_length(everything, gold)
    left = common_subsequence_length(kept, gold)
    fp = common - left
    tp = len(everything) - len(kept) - fp
    return Counts(tp=tp, fp=fp, fn=len(everything) - common - tp, tn=left)


def never(_proposal: object, _wanted: Action) -> bool:
    return False


def outcome_of(
    episode: Episode, result: VerificationResult, mode: Mode, *, checked: bool = True
) -> tuple[set[int], list[object], Callable[[object], Action | None], Callable[..., bool]]:
    """What a result did to the input plan, in a scoring mode.

    (removed step indices, proposals of missing steps, the concrete action of a proposal when
    it has one, the function that matches a proposal with a MISSING label's action). An
    unusable result (status "error", another plan; not looked at unless `checked`) removed and
    proposed nothing.
    """
    if checked and (result.status == "error" or plan_mismatch(episode, result)):
        return set(), [], lambda _p: None, never
    if mode == "iterative":
        removed = {v.index for v in result.verdicts if v.verdict == "remove"}
        lines: list[object] = [step.action for step in result.inserted]
        return removed, lines, _action_of_line, inserted_matches
    if not result.history:
        return {v.index for v in result.verdicts if v.verdict == "remove"}, [], _no_action, never
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
    removed = outcome_of(episode, result, mode)[0]
    counts = plan_counts(episode.actions, clean, removed, motion=motion, read=episode.step_of)
    false, missed, paired = proposal_errors(episode, result, mode=mode, motion=motion)
    return counts + Counts(tp=paired, fp=len(false), fn=len(missed))


def proposal_errors(
    episode: Episode, result: VerificationResult, *, mode: Mode, motion: bool = True
) -> tuple[list[object], list[Action], int]:
    """The proposed steps of a result (static: `#MISSING` critiques; iterative: insertions)
    that no MISSING label accounts for, the MISSING labels' actions that no proposal accounts
    for, and how many were paired (a largest one-to-one pairing). With `motion` False, motion
    steps are left out of both."""
    _, proposals, action_of, matches = outcome_of(episode, result, mode)
    wanted = [
        episode.step_of(label.action)
        for label in labels_of(episode)
        if label.type == "MISSING" and label.action is not None
    ]
    if not motion:
        wanted = [w for w in wanted if not motion_step(w)]
        proposals = [
            p for p in proposals if (found := action_of(p)) is None or not motion_step(found)
        ]
    edges = [[k for k, w in enumerate(wanted) if matches(p, w)] for p in proposals]
    pairing = max_matching(edges)
    false = [p for n, p in enumerate(proposals) if n not in pairing]
    answered = set(pairing.values())
    missed = [w for k, w in enumerate(wanted) if k not in answered]
    return false, missed, len(pairing)


def motionless_counts(episode: Episode, result: VerificationResult, mode: Mode) -> Counts:
    """Label-level counts without motion (`motionless`); the result is checked on the input."""
    plain, outcome = motionless(episode, result)
    if result.status == "error" or plan_mismatch(episode, result):
        return failed_score(plain, mode, "unusable result").counts
    removed, proposals, _, matches = outcome_of(plain, outcome, mode, checked=False)
    return tally(plain, mode, removed, proposals, matches, str, []).counts


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
        elif label.action is None or not motion_step(episode.step_of(label.action)):
            after = -1 if label.after is None else _after(kept, label.after)
            labels.append(label.model_copy(update={"after": after}))
    plain = episode.model_copy(
        update={
            "actions": [episode.actions[i] for i in kept],
            "labels": labels if episode.labels is not None else None,
        }
    )
    if result.status == "error" or plan_mismatch(episode, result):
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
