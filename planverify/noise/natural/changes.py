"""Changes that are not errors: the goal in everyday words or left to the dialogue, and object
types renamed as model-written plans name them.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from planverify.noise.natural.draft import (
    parse_step,
)
from planverify.noise.natural.goals import (
    asks_for,
    goals_of,
    phrase_goal,
)
from planverify.noise.natural.knowledge import (
    ALIASES,
    COLLOQUIAL_GOAL,
    GOAL_IN_DIALOGUE,
    GREETINGS,
    driver_line,
    say_line,
)
from planverify.records.episode import Episode
from planverify.records.notation import Action, object_type

# --------------------------------------------------------------------------- the changes


@dataclass(frozen=True)
class GoalChange:
    goal: str | None  # the goal the record gets
    note: dict[str, Any] | None = None  # the change's note, when no line is added
    line: str | None = None  # a Commander line asking for the task, to add


def change_goal(episode: Episode, steps: Sequence[Action], rng: random.Random) -> GoalChange:
    """Maybe the goal in everyday words, or a greeting with the request left to the dialogue."""
    goals = goals_of(episode.goal)
    draw = rng.random()
    if goals is None or draw >= COLLOQUIAL_GOAL + GOAL_IN_DIALOGUE:
        return GoalChange(episode.goal)
    if draw < COLLOQUIAL_GOAL:
        asked = " and ".join(phrase_goal(goal, rng) for goal in goals)
        return GoalChange(asked, {"change": "colloquial_goal", "goal": episode.goal})
    commander = [s.text or "" for s in steps if s.is_dialogue and s.agent == "Commander"]
    missing = [g for g in goals if not any(asks_for(line, g) for line in commander)]
    greeting = rng.choice(GREETINGS)
    if missing:
        text = " and ".join(phrase_goal(goal, rng) for goal in missing)
        return GoalChange(greeting, line=say_line("Commander", text))
    return GoalChange(greeting, {"change": "goal_in_dialogue", "goal": episode.goal, "lines": []})


def renames_for(lines: Iterable[str], scene: set[str], rng: random.Random) -> dict[str, str]:
    """Types to rename (type -> alias), none colliding with a name or type already there."""
    names = {o for line in lines for o in parse_step(line).objects}
    kinds = sorted({object_type(n) for n in names} & set(ALIASES))
    if not kinds:
        return {}
    rng.shuffle(kinds)
    taken = {object_type(n) for n in names} | scene
    chosen: dict[str, str] = {}
    for kind in kinds[: rng.choice((1, 1, 2))]:
        free = [a for a in ALIASES[kind] if a not in taken and a not in chosen.values()]
        if free:
            chosen[kind] = rng.choice(free)
    return chosen


def rename_line(line: str, names: dict[str, str]) -> str:
    step = parse_step(line)
    if not step.objects or not any(object_type(o) in names for o in step.objects):
        return line
    renamed = [
        names[object_type(o)] + o[len(object_type(o)) :] if object_type(o) in names else o
        for o in step.objects
    ]
    return driver_line(step.verb, *renamed)
