"""Goal specs read from a goal text and the Commander's words (interim: a few families)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from planverify.world.goals import Component, GoalSpec
from planverify.world.vocabulary import lookup


@dataclass
class Reading:
    """What a goal text says."""

    spec: GoalSpec | None  # the goal spec read, None when none can be made
    focus: list[str] = field(default_factory=list)  # object types the text names
    request: str = ""  # the text the spec was read from
    note: str | None = None  # why there is no spec


def read_goal(
    goal: str | None,
    dialogue: Sequence[str],
    *,
    task: str | None = None,
    scene_types: Collection[str] | None = None,
) -> Reading:
    """The goal spec a goal text (or, for a greeting, the Commander's words) asks for."""
    said = " ".join(line.split(":", 1)[1] for line in dialogue if line.startswith("Commander:"))
    text = f"{goal or ''} {said}".lower()
    words = text.replace(".", " ").replace(",", " ").split()
    focus = sorted({t for w in words for t in lookup(w)})
    if "coffee" in text:
        spec = GoalSpec(
            task="Coffee",
            text=text,
            source="text",
            components=[
                Component(
                    name="coffee",
                    select="Mug",
                    states={"isDirty": 0, "simbotIsFilledWithCoffee": 1},
                )
            ],
        )
        return Reading(spec, focus, text)
    if "plant" in text:
        spec = GoalSpec(
            task="Water Plant",
            text=text,
            source="text",
            components=[
                Component(name="water_plant", select="HousePlant", states={"isFilledWithLiquid": 1})
            ],
        )
        return Reading(spec, focus, text)
    return Reading(None, focus, text, "no goal spec could be read from the goal text")
