"""How sure a verdict is: the evidence level of a removal or an insertion.

Three levels, strongest first (`LEVELS`):

- `proven`: the simulator shows the step impossible, or useless for a goal taken from a task
  definition (TEACh's `teach_task`, VirtualHome's `vh_goal`), and every state it used was known
  (the episode has a scene);
- `goal-text`: the same, but the goal was read from text;
- `heuristic`: a pattern, a model Judge's flag the simulator did not certify, or a verdict that
  rests on states the simulator did not know.

A verdict is as strong as the weakest input it rests on (`weakest`): a removal proved by
simulation from a known scene against a goal read from text is `goal-text`, but a step that is
impossible whatever the goal rests on the scene alone, and is `proven`. Keep verdicts have no
level (`None`). Records written before levels existed read as `heuristic` where they have none.

>>> weakest(["proven", "goal-text"])
'goal-text'
>>> simulated(scene_known=True, goal_source="text", uses_goal=False)
'proven'
>>> at_least("goal-text", "proven"), at_least("proven", "goal-text")
(False, True)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, get_args

Evidence = Literal["proven", "goal-text", "heuristic"]
LEVELS: tuple[Evidence, ...] = get_args(Evidence)  # strongest first: the order, defined once
WEAKEST: Evidence = LEVELS[-1]  # the level of anything nothing better is known of
GoalOrigin = Literal["teach_task", "vh_goal", "text"]  # where a goal spec was read from
TASK_DEFINITIONS: frozenset[GoalOrigin] = frozenset(
    {"teach_task", "vh_goal"}
)  # task-definition grade
MEANINGS: dict[Evidence, str] = {
    "proven": "the simulator shows the step impossible, or useless (needed, for an insertion) "
    "for a goal taken from a task definition (TEACh's or VirtualHome's), and every state it used "
    "was known",
    "goal-text": "the same, but the goal was read from text",
    "heuristic": "a pattern, a model Judge's flag the simulator did not certify, or a verdict "
    "that rests on states the simulator did not know",
}  # what each level means, as cards and pages say it


def rank(level: Evidence) -> int:
    """0 for the strongest level, larger for weaker ones."""
    return LEVELS.index(level)


def at_least(level: Evidence, floor: Evidence) -> bool:
    """Whether `level` is `floor` or stronger."""
    return rank(level) <= rank(floor)


def levels_from(floor: Evidence) -> frozenset[Evidence]:
    """The levels at or above `floor`."""
    return frozenset(level for level in LEVELS if at_least(level, floor))


def weakest(inputs: Iterable[Evidence]) -> Evidence:
    """The precedence rule: a verdict is as strong as the weakest input it rests on; a verdict
    that rests on nothing known is `heuristic`."""
    return max(inputs, key=rank, default=WEAKEST)


def goal_evidence(source: GoalOrigin | None) -> Evidence:
    """What a goal spec is worth as an input: `proven` from a task definition (`TASK_DEFINITIONS`),
    `goal-text` read from text, `heuristic` when there is no spec (only the object types the text
    names)."""
    if source is None:
        return WEAKEST
    return "proven" if source in TASK_DEFINITIONS else "goal-text"


def state_evidence(*, known: bool) -> Evidence:
    """What the simulated states are worth as an input: `proven` from a known scene, else
    `heuristic` (every state the simulator did not know stays unknown)."""
    return "proven" if known else WEAKEST


def simulated(*, scene_known: bool, goal_source: GoalOrigin | None, uses_goal: bool) -> Evidence:
    """The level of a verdict proved by simulation: the scene's states are always an input, the
    goal only when the verdict depends on it (`uses_goal`: a step impossible whatever the goal
    does not)."""
    inputs = [state_evidence(known=scene_known)]
    if uses_goal:
        inputs.append(goal_evidence(goal_source))
    return weakest(inputs)


__all__ = [
    "LEVELS",
    "MEANINGS",
    "TASK_DEFINITIONS",
    "WEAKEST",
    "Evidence",
    "GoalOrigin",
    "at_least",
    "goal_evidence",
    "levels_from",
    "rank",
    "simulated",
    "state_evidence",
    "weakest",
]
