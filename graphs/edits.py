"""Applying a critique to the plan: deterministic removals, then validated insertions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from planverify.agents.base import Insertion
from planverify.agents.parsing import canonical
from planverify.records.critique import Dropped, Flag, Missing
from planverify.records.evidence import WEAKEST, Evidence, rank
from planverify.records.history import Edit, Step


def remove_flagged(plan: Sequence[Step], flags: Sequence[Flag]) -> tuple[list[Step], list[Edit]]:
    """Drop the flagged steps (flags index `plan`); return the kept steps and the removals, each
    with its flag's reason and evidence level."""
    chosen = {flag.step: flag for flag in flags if 0 <= flag.step < len(plan)}
    kept = [step for i, step in enumerate(plan) if i not in chosen]
    edits = [
        Edit(
            kind="remove",
            action=plan[i].action,
            origin=plan[i].origin,
            reason=flag.reason,
            evidence=flag.evidence,
            optional=flag.optional,
        )
        for i, flag in sorted(chosen.items())
    ]
    return kept, edits


def reinstated(
    flags: Sequence[Flag], insertions: Sequence[Insertion]
) -> tuple[list[Flag], list[Insertion], list[Dropped]]:
    """Take out each flag whose step an insertion puts back where it stood (positions of
    insertions are in the plan without the flagged steps): the step is kept and neither edit is
    made. Returns the other flags, the other insertions re-expressed in the plan that keeps the
    reinstated steps, and a note for each reinstated step."""
    gone = sorted(flag.step for flag in flags)
    left = list(insertions)
    back: dict[int, int] = {}  # reinstated step -> its position among the kept steps
    for flag in sorted(flags, key=lambda f: f.step):
        at = flag.step - sum(1 for s in gone if s < flag.step)
        wanted = canonical(flag.action) or flag.action
        match = next(
            (i for i in left if i.after == at - 1 and (canonical(i.action) or i.action) == wanted),
            None,
        )
        if match is not None:
            left.remove(match)
            back[flag.step] = at
    if not back:
        return list(flags), list(insertions), []
    shifted = [
        replace(i, after=i.after + sum(1 for at in back.values() if at <= i.after)) for i in left
    ]
    why = "flagged and inserted back where it stands: no edit, the step is kept"
    notes = [Dropped(text=f"{f.step + 1}. {f.action}", why=why) for f in flags if f.step in back]
    return [f for f in flags if f.step not in back], shifted, notes


def grade(insertions: Sequence[Insertion], missing: Sequence[Missing]) -> list[Insertion]:
    """The insertions with their evidence level. The weakest input decides: an insertion is the
    Judge's missing step only when it is the very action the Judge named, where the Judge placed
    it (`missing` positions in the plan the Planner was given), and it then takes that step's
    level (the stronger one when two missing steps name it). Whatever else a Planner inserts is
    its own reading of the critique: `heuristic`."""
    named: dict[tuple[int, str], Evidence] = {}
    for item in missing:
        if item.action is None or item.after is None:
            continue
        key = (item.after, canonical(item.action) or item.action)
        named[key] = min(named.get(key, WEAKEST), item.evidence, key=rank)
    return [
        replace(
            insertion,
            evidence=named.get(
                (insertion.after, canonical(insertion.action) or insertion.action), WEAKEST
            ),
        )
        for insertion in insertions
    ]


def shift_missing(missing: Sequence[Missing], removed: set[int]) -> list[Missing]:
    """Re-express `after` positions (in the Judge's plan) in the plan left after removals."""
    shifted = []
    for item in missing:
        if item.after is None:
            shifted.append(item)
            continue
        kept_before = sum(1 for i in range(item.after + 1) if i not in removed)
        shifted.append(item.model_copy(update={"after": kept_before - 1}))
    return shifted


def _original_anchor(plan: Sequence[Step], position: int) -> int:
    """The input index that a step inserted after `plan[position]` follows (-1 = the start)."""
    for step in reversed(plan[: position + 1]):
        if step.origin is not None:
            return step.origin
        if step.after is not None:
            return step.after
    return -1


def insert_steps(
    plan: Sequence[Step], insertions: Sequence[Insertion], iteration: int
) -> tuple[list[Step], list[Edit]]:
    """Insert new steps; several after the same position keep their given order."""
    by_position: dict[int, list[Insertion]] = {}
    for insertion in insertions:
        by_position.setdefault(insertion.after, []).append(insertion)
    result: list[Step] = []
    edits: list[Edit] = []

    def add(position: int) -> None:
        for insertion in by_position.get(position, []):
            anchor = _original_anchor(result, len(result) - 1) if result else -1
            result.append(
                Step(
                    action=insertion.action,
                    inserted_at=iteration,
                    after=anchor,
                    reason=insertion.reason,
                    evidence=insertion.evidence,
                )
            )
            edits.append(
                Edit(
                    kind="insert",
                    action=insertion.action,
                    after=anchor,
                    reason=insertion.reason,
                    evidence=insertion.evidence,
                )
            )

    add(-1)
    for position, step in enumerate(plan):
        result.append(step)
        add(position)
    return result, edits
