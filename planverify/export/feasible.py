"""Plans that human decisions made impossible: the final plan of an episode replayed in the
simulator of its domain beside the plan as the Judge left it (TEACh's:
`planverify.world.simulate`; another domain's through the registry, `domain_problems`).

A person who keeps a step the Judge removed, or removes one it kept, can leave a plan the
simulator cannot run (a tomato picked up while the plate is still held). The person may be right
and the simulator wrong, so such an episode is exported all the same, marked with the steps
(`Impossible`) and named in a warning.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from planverify.domains import Case, DomainUnavailable, domain_of, is_default
from planverify.records.episode import Episode, Scene
from planverify.records.result import PlanStep, VerificationResult, arranged
from planverify.world import simulate

Problems = Callable[[list[str]], Sequence[str | None]]
"""A plan -> why each step cannot happen in the domain's simulator (empty or None when it can; a
step that cannot changes nothing, and the run goes on)."""


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


def teach_problems(scene: Scene | None) -> Problems:
    """TEACh's simulator on an episode's scene."""

    def problems(lines: list[str]) -> list[str | None]:
        _, outcomes = simulate(lines, scene)
        return [outcome.problem for outcome in outcomes]

    return problems


def episode_problems(episode: Episode) -> Problems | None:
    """The simulator that checks an episode's plans: TEACh's, or its domain's (`step_problems`
    through the registry); None when the domain has none, its package is not installed, or the
    episode does not say what to run the plan in (a VirtualHome record without `program`)."""
    if is_default(episode.domain):
        return teach_problems(episode.scene)
    try:
        domain = domain_of(episode.domain)
    except DomainUnavailable:
        return None
    check = getattr(domain, "step_problems", None)
    case = Case(lines=[], goal=episode.goal or "", program=episode.program, task=episode.task)
    if check is None or not domain.grounded(case):
        return None

    def problems(lines: list[str]) -> Sequence[str | None]:
        return list(check(Case(lines, case.goal, case.program, task=case.task)))

    return problems


def impossible_steps(
    result: VerificationResult,
    problems: Problems,
    kept: Sequence[bool],
    dropped: Collection[int],
) -> dict[PlanStep, tuple[int, str]]:
    """The steps of the plan of these kept input steps and insertions that the simulator
    (`problems`) finds impossible: where each comes from, with its position in the plan and the
    problem."""
    plan = arranged(result.original, kept, result.inserted, dropped)
    lines = [
        result.original[k] if source == "input" else result.inserted[k].action for source, k in plan
    ]
    found = problems(lines)
    return {
        step: (position, problem)
        for position, (step, problem) in enumerate(zip(plan, found, strict=True))
        if problem
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
