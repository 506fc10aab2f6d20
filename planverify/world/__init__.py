"""The world model: TEACh's household as a simulator, goals as conditions on it, and verdicts on
plans proved by simulation.

- `state`: objects and what is known of them (unknown states stay unknown);
- `rules`: TEACh's state rules, one step at a time;
- `goals`: goal specs (parsed from TEACh task definitions) and whether a state meets them;
- `text_goals`: goal specs read from a goal text and the Commander's words;
- `classes`, `vocabulary`: TEACh's object classes, and the words people use for objects;
- `trace`, `repair`: simulating variants of a plan, and the minimal-repair verdicts;
- `certify`: checking another Judge's flags and a Planner's insertions by simulation;
- `deadline`: a cooperative deadline at which a review or a certification stops;
- `start`, `mentions`, `facts`: the state at a plan's start, words that name types and verbs,
  and facts for a model Judge's prompt.

May import `records` only.

`ground` gathers what an episode says about its goal; the Judges take it from there.

>>> grounding = ground("Water the plant.", [], None, task=None, teach_task=None)
>>> grounding.spec.task if grounding.spec else grounding.note
'Water Plant'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from planverify.records.episode import Scene
from planverify.records.evidence import Evidence, simulated
from planverify.records.notation import parse_action
from planverify.world.goals import GoalSpec, Unit, parse_teach_task
from planverify.world.rules import Outcome, apply
from planverify.world.start import initial_state
from planverify.world.state import State
from planverify.world.text_goals import read_goal

WORLD_VERSION = "30"  # changes whenever the world model can give another verdict


@dataclass(frozen=True)
class Grounding:
    """What is known of an episode's goal and world."""

    scene: Scene | None  # the initial state of every object, when known
    spec: GoalSpec | None  # the goal's conditions, when they could be read
    focus: tuple[str, ...] = ()  # object types the goal text names (used when spec is None)
    note: str | None = None  # why there is no spec, when there is none
    units: list[Unit] = field(default_factory=list)  # filled in by a review: conditions met

    @property
    def goal_read(self) -> bool:
        """Whether any goal condition is known (from `teach_task`, or read from text). When not,
        `note` says why (it begins with `text_goals.NO_GOAL`), and a Judge can remove only what
        is useless whatever the goal."""
        return self.spec is not None

    @property
    def grounded(self) -> bool:
        """Whether there is anything to verify against (a scene or a goal spec)."""
        return self.scene is not None or self.spec is not None

    def evidence(self, *, uses_goal: bool = True) -> Evidence:
        """The level of a verdict checked against this grounding by simulation (`uses_goal`:
        whether the verdict depends on the goal)."""
        source = self.spec.source if self.spec is not None else None
        return simulated(
            scene_known=self.scene is not None, goal_source=source, uses_goal=uses_goal
        )


def simulate(plan: Sequence[str], scene: Scene | None) -> tuple[State, list[Outcome]]:
    """Run a whole plan from the scene's initial state; the final state and one outcome a step.

    >>> _, outcomes = simulate(["Driver.PutAOnB('Mug', 'Sink')"], None)
    >>> outcomes[0].problem
    'nothing is held, so Mug cannot be put down'
    """
    actions = [parse_action(line) for line in plan]
    state = initial_state(scene, names=[o for a in actions for o in a.objects])
    return state, [apply(state, action) for action in actions]


def task_grounding(scene: Scene | None, teach_task: Mapping[str, Any]) -> Grounding | None:
    """The grounding a TEACh task definition gives (its conditions; the plan and the goal text
    play no part), or None when it names no condition and the goal must be read from text."""
    spec = parse_teach_task(teach_task)
    if not spec.components:
        return None
    return Grounding(scene, spec, tuple(sorted(spec.types())))


def ground(
    goal: str | None,
    dialogue: Sequence[str],
    scene: Scene | None,
    *,
    task: str | None,
    teach_task: Mapping[str, Any] | None,
    plan: Sequence[str] = (),
) -> Grounding:
    """The goal spec of an episode: TEACh's task definition when the record has one, else what
    the goal text and the Commander's words say (`dialogue`: "Commander: ..." lines), a near
    type settled by what the `plan` does (`text_goals.read_goal`). A reading from text never
    overrides the task definition."""
    if teach_task and (by_task := task_grounding(scene, teach_task)) is not None:
        return by_task
    types = {o.type for o in scene.objects} if scene is not None else None
    reading = read_goal(goal, dialogue, task=task, scene_types=types, plan=plan)
    return Grounding(scene, reading.spec, tuple(reading.focus), reading.note)


__all__ = ["WORLD_VERSION", "GoalSpec", "Grounding", "ground", "simulate", "task_grounding"]
