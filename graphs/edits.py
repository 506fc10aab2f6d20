"""Applying a critique to the plan: deterministic removals, then validated insertions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from planverify.agents.base import Insertion
from planverify.agents.parsing import canonical
from planverify.records.critique import Flag, Missing
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
        )
        for i, flag in sorted(chosen.items())
    ]
    return kept, edits


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
