"""TEACh as a domain: a thin adapter over the world model (`planverify.world`), the rules
Judge's critique (`planverify.agents.rules.judge_plan`), certify (`planverify.world.certify`),
the game-file reader and the `injected` error generator.

The verification loop still runs TEACh's own path (its verdicts, figures and checkpoints stay as
they were); this adapter gives the same work to code that reaches TEACh through the registry.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from planverify.agents.rules import judge_plan
from planverify.domains import Case
from planverify.noise import corrupt_many
from planverify.records.critique import Critique, Veto
from planverify.records.episode import Episode, EpisodeError
from planverify.records.notation import parse_action
from planverify.records.trim import TrimPolicy
from planverify.world import Grounding, ground, simulate
from planverify.world.certify import certify_flags
from planverify.world.facts import facts


def grounding_of(case: Case) -> Grounding:
    """What the case says about its goal: TEACh's task definition, or the goal text."""
    return ground(
        case.goal,
        case.dialogue,
        case.scene,
        task=case.task,
        teach_task=case.teach_task,
        plan=case.lines,
    )


class Teach:
    """TEACh, through the world model the loop uses."""

    name = "teach"
    judge_prompt = "judge_system"
    planner_prompt = "planner_system"

    def version(self) -> str | None:
        return None  # the world's version is a field of the run settings already

    def grounded(self, case: Case) -> bool:
        return grounding_of(case).grounded

    def critique(self, case: Case, trim: TrimPolicy) -> Critique:
        return judge_plan(case.goal, case.lines, grounding_of(case), trim=trim)

    def certify(
        self, case: Case, critique: Critique, trim: TrimPolicy
    ) -> tuple[Critique, list[Veto]]:
        certified = certify_flags(case.lines, critique, grounding_of(case), trim=trim)
        return certified.critique, certified.vetoes

    def first_problem(self, case: Case) -> str | None:
        _, outcomes = simulate(list(case.lines), case.scene)
        for i, outcome in enumerate(outcomes):
            if outcome.problem is not None:
                return f"step {i + 1} ({case.lines[i]}): {outcome.problem}"
        return None

    def prompt_facts(self, case: Case) -> str:
        return "\n".join(facts(list(case.lines), grounding_of(case)))

    def object_names(self, case: Case) -> dict[str, str]:
        if case.scene is None:
            return {}
        named = {name for line in case.lines for name in parse_action(line).objects}
        return {
            o.id: o.name or o.type
            for o in case.scene.objects
            if not case.lines or (o.name or o.type) in named
        }

    def records(self, source: Path | None) -> Iterator[Episode | EpisodeError]:
        from planverify.inputs.teach import iter_games

        if source is None:
            raise ValueError("TEACh has no default data: give game files")
        yield from iter_games([str(source)])

    def corrupt(
        self,
        episodes: Iterable[Episode],
        *,
        seed: int = 0,
        errors_per_episode: tuple[int, int] = (1, 3),
        clean_fraction: float = 0.2,
        max_steps: int | None = 25,
        summary: Any = None,
    ) -> Iterator[Episode]:
        return corrupt_many(
            episodes,
            seed=seed,
            errors_per_episode=errors_per_episode,
            clean_fraction=clean_fraction,
            max_steps=max_steps,
            summary=summary,
        )


DOMAIN = Teach()
