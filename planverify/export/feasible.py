"""Plans that human decisions made impossible: the final plan of an episode replayed in the
simulator (`planverify.world.simulate`) beside the plan as the Judge left it.

A person who keeps a step the Judge removed, or removes one it kept, can leave a plan the
simulator cannot run (a tomato picked up while the plate is still held). The person may be right
and the simulator wrong, so such an episode is exported all the same, marked with the steps
(`Impossible`) and named in a warning.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from planverify.records.episode import Scene
from planverify.records.result import PlanStep, VerificationResult, arranged
from planverify.world import simulate


@dataclass(frozen=True)
class Impossible:
    """A step of an exported plan that the simulator finds impossible after the decisions."""

    index: int  # 0-based position in the final plan (the exported `actions`)
    action: str  # the step
    problem: str  # why it cannot happen, in the simulator's words

    def describe(self) -> str:
        """The step as people count it, and why: "step 12 Driver.PickUp(...): ..."."""
        return f"step {self.index + 1} {self.action}: {self.problem}"

    def as_record(self) -> dict[str, int | str]:
        """The mark in an exported row."""
        return {"index": self.index, "action": self.action, "problem": self.problem}


def impossible_steps(
    result: VerificationResult,
    scene: Scene | None,
    kept: Sequence[bool],
    dropped: Collection[int],
) -> dict[PlanStep, tuple[int, str]]:
    """The steps of the plan of these kept input steps and insertions that the simulator finds
    impossible: where each comes from, with its position in the plan and the problem."""
    plan = arranged(result.original, kept, result.inserted, dropped)
    lines = [
        result.original[k] if source == "input" else result.inserted[k].action for source, k in plan
    ]
    _, outcomes = simulate(lines, scene)
    return {
        step: (position, outcome.problem)
        for position, (step, outcome) in enumerate(zip(plan, outcomes, strict=True))
        if outcome.problem
    }


def made_impossible(
    before: dict[PlanStep, tuple[int, str]], after: dict[PlanStep, tuple[int, str]], plan: list[str]
) -> list[Impossible]:
    """The steps impossible `after` the decisions that were not `before` them (a step already
    impossible in the Judge's plan is not the decisions' doing), in the order of the plan."""
    return sorted(
        (
            Impossible(index=position, action=plan[position], problem=problem)
            for step, (position, problem) in after.items()
            if step not in before
        ),
        key=lambda item: item.index,
    )
