"""A small simulation of what a plan does to the household, for the offline `rules` Judge.

It tracks what the Driver holds, where objects are, and which are open, on, filled, sliced,
cooked or dirty. Initial states come from the episode's scene when it has one; otherwise a
state is unknown (`None`) until a step sets it, and unknown states never produce a verdict.

>>> world = World.from_scene(None)
>>> world.apply(parse_action("Driver.ToggleOn('Faucet')")).changed
True
>>> world.apply(parse_action("Driver.ToggleOn('Faucet')")).changed
False
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planverify.episode import Scene
from planverify.notation import Action, object_type, parse_action

HEATERS = frozenset({"Toaster", "Microwave", "StoveKnob", "StoveBurner"})
KNIVES = frozenset({"Knife", "ButterKnife"})


@dataclass
class Thing:
    """What the simulation knows about one named object (None = unknown)."""

    type: str  # object type
    location: str | None = None  # name or type of the receptacle it is in or on
    also_in: tuple[str, ...] = ()  # further receptacle types the scene says it starts in
    toggled: bool | None = None  # switched on
    open: bool | None = None  # open
    filled: bool | None = None  # holds liquid
    sliced: bool | None = None  # cut into slices
    dirty: bool | None = None  # dirty
    uses: int = 0  # steps that put something in/on it or poured into it


@dataclass
class Outcome:
    """What one step did."""

    changed: bool  # whether the step changed the simulated state
    known: bool  # whether the state it acts on was known beforehand
    problem: str | None = None  # why the step is impossible, when it is


@dataclass
class World:
    """The simulated household."""

    things: dict[str, Thing] = field(default_factory=dict)  # by name in the plan's notation
    held: str | None = None  # what the Driver holds; None = nothing (when `held_known`)
    held_known: bool = True  # plans start empty-handed
    scene_types: dict[str, dict[str, bool]] = field(default_factory=dict)  # initial states by type

    @classmethod
    def from_scene(cls, scene: Scene | None) -> World:
        """A world with the scene's initial states (objects named in the plan by their name)."""
        world = cls()
        if scene is None:
            return world
        for obj in scene.objects:
            states = {
                "toggled": obj.toggled if obj.toggleable else False,
                "open": obj.open if obj.openable else False,
                "filled": obj.filled,
                "sliced": obj.sliced,
                "dirty": obj.dirty,
            }
            world.scene_types.setdefault(obj.type, {}).update(
                {
                    k: v or world.scene_types.get(obj.type, {}).get(k, False)
                    for k, v in states.items()
                }
            )
            if obj.name:
                world.things[obj.name] = Thing(
                    type=obj.type,
                    location=obj.parent[0] if obj.parent else None,
                    also_in=tuple(obj.parent[1:]),
                    **states,
                )
        return world

    def thing(self, name: str) -> Thing:
        """The record of a named object; a new one is off and closed when the scene says every
        object of its type starts that way, else unknown."""
        if name not in self.things:
            thing = Thing(type=object_type(name))
            states = self.scene_types.get(thing.type, {})
            thing.toggled = False if states.get("toggled") is False else None
            thing.open = False if states.get("open") is False else None
            self.things[name] = thing
        return self.things[name]

    def contents(self, receptacle: str) -> list[str]:
        """Names of the objects in or on a receptacle (by name or type)."""
        kind = object_type(receptacle)
        return [
            name
            for name, t in self.things.items()
            if t.location is not None and object_type(t.location) == kind
        ]

    def apply(self, action: Action) -> Outcome:
        """Simulate one step."""
        if (
            action.is_dialogue
            or not action.known
            or action.verb in ("Move", "TurnLeft", "TurnRight")
        ):
            return Outcome(changed=action.value not in (None, 0.0), known=True)
        verb, objs = action.verb, action.objects
        target = self.thing(objs[-1])
        if verb == "PickUp":
            return self._pick_up(objs[0])
        if verb == "PutAOnB":
            return self._put(objs[0], objs[1])
        if verb == "PourFromAIntoB":
            if self.held_known and self.held != objs[0]:
                why = f"{objs[0]} is not held, so nothing can be poured from it"
                return Outcome(changed=False, known=True, problem=why)
            source = self.thing(objs[0])
            target.uses += 1
            was = target.filled
            target.filled = True
            source.filled = False
            return Outcome(changed=was is not True, known=was is not None)
        flag = {
            "ToggleOn": ("toggled", True),
            "ToggleOff": ("toggled", False),
            "Open": ("open", True),
            "Close": ("open", False),
            "Slice": ("sliced", True),
            "Fill": ("filled", True),
            "Empty": ("filled", False),
            "Clean": ("dirty", False),
            "Dirty": ("dirty", True),
        }.get(verb)
        if flag is None:  # Break
            return Outcome(changed=True, known=False)
        attr, value = flag
        before = getattr(target, attr)
        setattr(target, attr, value)
        if verb == "ToggleOn" and target.type == "Faucet":
            for name in self.contents("SinkBasin") + self.contents("Sink"):
                self.things[name].filled = True
                self.things[name].dirty = False
        return Outcome(changed=before is not value, known=before is not None)

    def _pick_up(self, name: str) -> Outcome:
        thing = self.thing(name)
        if self.held_known and self.held == name:
            return Outcome(changed=False, known=True, problem=f"{name} is already held")
        if self.held_known and self.held is not None:
            # an impossible step changes nothing, so later steps are judged without it
            return Outcome(
                changed=False, known=True, problem=f"the Driver is already holding {self.held}"
            )
        self.held, self.held_known = name, True
        thing.location, thing.also_in = None, ()
        return Outcome(changed=True, known=True)

    def _put(self, name: str, receptacle: str) -> Outcome:
        thing = self.thing(name)
        place = self.thing(receptacle)
        if self.held_known and self.held != name:
            return Outcome(changed=False, known=True, problem=f"{name} is not held")
        place.uses += 1
        thing.location, thing.also_in = receptacle, ()
        self.held, self.held_known = None, True
        return Outcome(changed=True, known=True)


def simulate(plan: list[str], scene: Scene | None) -> tuple[World, list[Outcome]]:
    """Run a whole plan; one outcome per step."""
    world = World.from_scene(scene)
    return world, [world.apply(parse_action(line)) for line in plan]


def facts(plan: list[str], scene: Scene | None) -> list[str]:
    """What the simulation knows that a model Judge may not: how the objects the plan touches
    start, and the steps that change nothing or cannot happen.

    >>> facts(["Driver.ToggleOn('Faucet')", "Driver.ToggleOn('Faucet')"], None)
    ["step 2 (Driver.ToggleOn('Faucet')) changes nothing: Faucet is already in that state"]
    """
    lines: list[str] = []
    if scene is not None:
        for obj in scene.objects:
            if obj.name is None:
                continue
            states = [
                label
                for label, value in (
                    ("switched on", obj.toggleable and obj.toggled),
                    ("switched off", obj.toggleable and not obj.toggled),
                    ("open", obj.openable and obj.open),
                    ("closed", obj.openable and not obj.open),
                    ("dirty", obj.dirty),
                    ("filled", obj.filled),
                    ("sliced", obj.sliced),
                    ("cooked", obj.cooked),
                )
                if value
            ]
            where = f" in/on {', '.join(obj.parent)}" if obj.parent else ""
            if states or where:
                lines.append(f"{obj.name} starts {' and '.join(states) or 'as is'}{where}")
    world = World.from_scene(scene)
    for number, line in enumerate(plan, start=1):
        action = parse_action(line)
        outcome = world.apply(action)
        if outcome.problem:
            lines.append(f"step {number} ({line}) cannot happen: {outcome.problem}")
        elif not outcome.changed and outcome.known and action.objects:
            lines.append(
                f"step {number} ({line}) changes nothing: {action.objects[-1]} is already in that state"
            )
    return lines
