"""Human review of a critique: accept it, or edit which flags and missing steps stand."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from planverify.agents.parsing import StepResolver, add_flag, add_missing
from planverify.records.critique import Critique, Dropped
from planverify.records.evidence import WEAKEST

ACCEPT = (None, True, "accept", "yes", "y", "")
REJECT = (False, "reject", "no", "n")
SHAPE = (
    'answer accept, reject, or {"flags": [{"step": N, "reason": "..."}, ...], '
    '"missing": ["...", ...]}'
)


class ReviewAnswerError(ValueError):
    """A review answer of another shape than `apply_review` takes (one line, with the shape)."""

    def __init__(self, problem: str) -> None:
        super().__init__(f"review answer: {problem}; {SHAPE}")


def apply_review(critique: Critique, answer: Any, plan: Sequence[str]) -> Critique:
    """The critique after review.

    `answer` is what the reviewer resumed with: `True`/"accept"/None keeps the critique;
    `False`/"reject" drops all of it; a dict `{"flags": [{"step": n (1-based), "reason"}...],
    "missing": ["..."]}` replaces it (each entry validated like a Judge's; omitted keys are kept).
    A step the reviewer flags keeps the evidence level of the Judge's flag on it; a flag or a
    missing step the Judge did not raise is the reviewer's own: `heuristic`.
    """
    if isinstance(answer, str | bool | None) and answer in ACCEPT:
        return critique
    if isinstance(answer, str | bool) and answer in REJECT:
        return Critique(dropped=[Dropped(text="review", why="the reviewer rejected the critique")])
    if not isinstance(answer, dict):
        raise ReviewAnswerError(f"{_shown(answer)} is not an answer")
    if unknown := sorted(map(str, answer.keys() - {"flags", "missing"})):
        raise ReviewAnswerError(f"unknown key {', '.join(map(repr, unknown))}")
    edited = Critique()
    if "flags" in answer:
        resolver = StepResolver(plan)
        judged = {flag.step: flag.evidence for flag in critique.flags}  # the Judge's levels
        for step, reason in _flags(answer["flags"]):
            index = resolver.resolve(step, None)
            level = judged.get(index, WEAKEST) if isinstance(index, int) else WEAKEST
            add_flag(edited, resolver.plan, index, reason, f"review step {step}", evidence=level)
    else:
        edited.flags = list(critique.flags)
    if "missing" in answer:
        for text in _listed(answer["missing"], "missing"):
            if not isinstance(text, str):
                raise ReviewAnswerError(f"a missing step is text, not {_shown(text)}")
            add_missing(edited, text)
    else:
        edited.missing = list(critique.missing)
    edited.flags.sort(key=lambda f: f.step)
    return edited


def _shown(value: Any) -> str:
    """A value of an answer, short enough for a one-line message."""
    text = json.dumps(value, default=repr)
    return text if len(text) <= 40 else text[:37] + "..."


def _listed(value: Any, key: str) -> list[Any]:
    """The list an answer gives under `key` (null: none)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ReviewAnswerError(f"{key} must be a list, not {_shown(value)}")
    return value


def _flags(value: Any) -> list[tuple[int, str]]:
    """The reviewer's flags: (1-based step, reason) from steps or `{"step", "reason"}`."""
    flags = []
    for item in _listed(value, "flags"):
        step, reason = (
            (item.get("step"), item.get("reason")) if isinstance(item, dict) else (item, None)
        )
        if isinstance(step, str) and step.strip().isdigit():
            step = int(step)
        if isinstance(step, bool) or not isinstance(step, int):
            raise ReviewAnswerError(f"a flag's step is a step number, not {_shown(step)}")
        if reason is not None and not isinstance(reason, str):
            raise ReviewAnswerError(f"a flag's reason is text, not {_shown(reason)}")
        flags.append((step, reason or "removed by the reviewer"))
    return flags
