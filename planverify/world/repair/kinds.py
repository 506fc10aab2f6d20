"""What kinds of objects do, as the search reads them: surfaces with room to spare, devices that
act on what they hold and the controls that switch them, types that can be taken for one
another, and the kinds a goal is about."""

from __future__ import annotations

from planverify.world.classes import classes_of, types_of
from planverify.world.goals import GoalSpec
from planverify.world.rules import WATER_TAPS

SURFACES = frozenset(
    {
        "ArmChair",
        "Bed",
        "Chair",
        "CoffeeTable",
        "CounterTop",
        "Desk",
        "DiningTable",
        "Dresser",
        "Floor",
        "Footstool",
        "Ottoman",
        "Shelf",
        "ShelvingUnit",
        "SideTable",
        "Sofa",
        "Stool",
        "TVStand",
    }
)  # receptacles with room to spare
WORKING_DEVICES = WATER_TAPS | {"CoffeeMachine", "Microwave", "StoveBurner", "StoveKnob", "Toaster"}
# switches that act on what they hold; the others (lights, lamps, screens) serve no TEACh goal
CONTROLS = {"SinkBasin": "Faucet", "Sink": "Faucet", "StoveBurner": "StoveKnob"}
CONTROLS |= {"Pan": "StoveKnob", "Pot": "StoveKnob", "Kettle": "StoveKnob"}


BROAD_CLASSES = frozenset({"Food", "KitchenUtensils", "SmallHandheldObjects", "Tableware"})


def look_alike(kind: str | None, other: str) -> bool:
    """Whether two object types could be taken for one another: different types of a class
    narrower than `BROAD_CLASSES` (a cup and a mug, a spoon and a butter knife, pot and pan)."""
    if kind is None or kind == other:
        return False
    shared = set(classes_of(kind)) & set(classes_of(other))
    return bool(shared - BROAD_CLASSES)


def goal_kinds(spec: GoalSpec) -> frozenset[str]:
    """The kinds of objects a goal is about: those it asks states of or places somewhere (not
    the tools and fixtures it only needs to exist, such as a knife or a sink)."""
    placed = {name for r in spec.relations for name, _ in r.heads} | {
        r.tail for r in spec.relations
    }
    return frozenset(
        t
        for c in spec.components
        if c.states.keys() - {"receptacle"} or c.name in placed
        for t in types_of(c.select)
    )


def tail_kinds(spec: GoalSpec) -> frozenset[str]:
    """The kinds of receptacles a goal asks objects to be put in or on (its relations' tails:
    a coffee table, a plate, a sink)."""
    by_name = {c.name: c for c in spec.components}
    return frozenset(
        t for r in spec.relations if r.tail in by_name for t in types_of(by_name[r.tail].select)
    )
