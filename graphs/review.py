"""Human review of a critique: accept it, or edit which flags and missing steps stand."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from planverify.agents.parsing import StepResolver, add_flag, add_missing
from planverify.records.critique import Critique, Dropped
from planverify.records.evidence import WEAKEST

ACCEPT = (None, True, "accept", "yes", "y", "")


def apply_review(critique: Critique, answer: Any, plan: Sequence[str]) -> Critique:
    """The critique after review.

    `answer` is what the reviewer resumed with: `True`/"accept"/None keeps the critique;
    `False`/"reject" drops all of it; a dict `{"flags": [{"step": n (1-based), "reason"}...],
    "missing": ["..."]}` replaces it (each entry validated like a Judge's; omitted keys are kept).
    A step the reviewer flags keeps the evidence level of the Judge's flag on it; a flag or a
    missing step the Judge did not raise is the reviewer's own: `heuristic`.
    """
    if answer in ACCEPT:
        return critique
    if answer in (False, "reject", "no", "n"):
        return Critique(dropped=[Dropped(text="review", why="the reviewer rejected the critique")])
    if not isinstance(answer, dict):
        raise ValueError(f"review answer must be accept, reject or a dict, not {answer!r}")
    edited = Critique()
    if "flags" in answer:
        resolver = StepResolver(plan)
        judged = {flag.step: flag.evidence for flag in critique.flags}  # the Judge's levels
        for item in answer["flags"] or []:
            step = int(item["step"]) if isinstance(item, dict) else int(item)
            reason = (
                str(item.get("reason") or "removed by the reviewer")
                if isinstance(item, dict)
                else "removed by the reviewer"
            )
            index = resolver.resolve(step, None)
            level = judged.get(index, WEAKEST) if isinstance(index, int) else WEAKEST
            add_flag(edited, resolver.plan, index, reason, f"review step {step}", evidence=level)
    else:
        edited.flags = list(critique.flags)
    if "missing" in answer:
        for text in answer["missing"] or []:
            add_missing(edited, str(text))
    else:
        edited.missing = list(critique.missing)
    edited.flags.sort(key=lambda f: f.step)
    return edited
