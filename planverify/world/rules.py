"""TEACh's state rules: what each step of a plan does to the household.

Each rule below models one behaviour of TEACh's simulator (AI2-THOR with TEACh's own
`simbot*` states):

- one object in hand at a time; a picked-up object leaves its receptacle, with what it holds;
- closed containers can be neither reached into nor put into; a microwave runs only closed;
- washing: a dirty object in a sink basin under a running faucet becomes clean, when it is put
  there with the water running or when the faucet is turned on;
- filling: a fillable object in a sink basin under a running faucet fills with water;
- coffee: a mug in a running coffee machine fills with coffee (switched on with the mug inside,
  or the mug put into the running machine), unless it is full of water (rinsed, not poured out);
- cooking: bread slices in a running toaster; food in a pan or pot on a lit burner (the stove is
  lit through its knobs); food in a microwave when it is switched on;
- boiling: food in a pot of water on a lit burner, or in water in a running microwave;
- pouring: from a held container that holds a liquid, into the target (watering a house plant
  sets its liquid), emptying the source; pouring from an empty container changes nothing;
- slicing needs a knife in hand; the slices exist from then on, where the whole object was.

A state that is unknown before a step makes its effect unknown, never assumed.

>>> from planverify.records.notation import parse_action
>>> from planverify.world.start import initial_state
>>> state = initial_state(None)
>>> [apply(state, parse_action(s)).changed for s in ("Driver.PickUp('Mug')",
...     "Driver.PutAOnB('Mug', 'SinkBasin')", "Driver.ToggleOn('Faucet')")]
[True, True, None]
>>> state.get("Mug").dirty, state.get("Mug").liquid
(False, 'water')
>>> apply(state, parse_action("Driver.PutAOnB('Mug', 'Sink')")).problem
'nothing is held, so Mug cannot be put down'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from planverify.records.notation import MOTION_VERBS, Action
from planverify.world.state import (
    COFFEE,
    CONTAINERS,
    EMPTY,
    HAND,
    SOME,
    WATER,
    Obj,
    State,
    derived,
)

WATER_TAPS = frozenset({"Faucet", "ShowerHead"})
BASINS = frozenset({"Sink", "SinkBasin", "Bathtub", "BathtubBasin"})
KNIVES = frozenset({"Knife", "ButterKnife"})
COOKERS = frozenset({"Pan", "Pot", "Kettle"})  # stove-top cookware
FILLABLE = frozenset(
    {"Bottle", "Bowl", "Cup", "HousePlant", "Kettle", "Mug", "Pot", "WateringCan", "WineBottle"}
)
DIRTYABLE = frozenset({"Bowl", "Cloth", "Cup", "Mug", "Pan", "Plate", "Pot"})
COOKABLE = frozenset({"Potato", "PotatoSliced", "BreadSliced", "Egg", "EggCracked"})
BOILABLE = frozenset({"Potato", "PotatoSliced", "Egg"})
SLICES = {"Apple": "AppleSliced", "Bread": "BreadSliced", "Lettuce": "LettuceSliced"}
SLICES |= {"Potato": "PotatoSliced", "Tomato": "TomatoSliced", "Egg": "EggCracked"}
DERIVED_TYPES = frozenset(SLICES.values())


_REVERSE = {"TurnLeft": "TurnRight", "TurnRight": "TurnLeft"}


def cancels(a: Action, b: Action) -> bool:
    """Whether motion b undoes motion a (a move and the move back, a turn and the turn back).

    >>> from planverify.records.notation import parse_action as p
    >>> cancels(p("Driver.Move(0.5)"), p("Driver.Move(-0.5)")), cancels(p("Driver.TurnLeft(90.0)"), p("Driver.TurnLeft(90.0)"))
    (True, False)
    """
    if a.value is None or b.value is None:
        return False
    if a.verb == b.verb == "Move":
        return a.value != 0 and a.value == -b.value
    return _REVERSE.get(a.verb) == b.verb and a.value == b.value


class Pose(NamedTuple):
    """Where the Driver stands and faces, seen from where a run of steps starts: metres forward
    (`x`) and to the left (`y`), and degrees turned counter-clockwise (0 to 360). TEACh's
    notation has no camera pitch (its only motion verbs are `MOTION_VERBS`), so a pose is a
    position and a heading."""

    x: float = 0.0
    y: float = 0.0
    heading: float = 0.0


POSE_DECIMALS = 4  # poses reached by different routes compare (and hash) equal at this precision


def _pose(x: float, y: float, heading: float) -> Pose:
    digits = POSE_DECIMALS
    return Pose(
        round(x, digits) + 0.0, round(y, digits) + 0.0, round(heading % 360, digits) % 360 + 0.0
    )


def same_pose(a: Pose, b: Pose) -> bool:
    """Whether two poses are the same, but for rounding (a millimetre, a thousandth of a
    degree)."""
    turn = abs(a.heading - b.heading) % 360
    return abs(a.x - b.x) < 1e-3 and abs(a.y - b.y) < 1e-3 and min(turn, 360 - turn) < 1e-3


def is_motion(action: Action) -> bool:
    """Whether a step moves or turns the Driver by a known amount."""
    return action.verb in MOTION_VERBS and action.value is not None


def step_pose(action: Action) -> Pose:
    """Where one step takes the Driver from the start pose (a step that is not motion, nowhere).

    >>> from planverify.records.notation import parse_action as p
    >>> step_pose(p("Driver.TurnRight(360.0)")), step_pose(p("Driver.Move(0.25)")).x
    (Pose(x=0.0, y=0.0, heading=0.0), 0.25)
    """
    if not is_motion(action):
        return Pose()
    value = action.value or 0.0
    if action.verb == "Move":
        return _pose(value, 0.0, 0.0)
    return _pose(0.0, 0.0, value if action.verb == "TurnLeft" else -value)


def compose(first: Pose, then: Pose) -> Pose:
    """The pose reached by going to `first`, then as far as `then` from there."""
    turn = math.radians(first.heading)
    cos, sin = math.cos(turn), math.sin(turn)
    return _pose(
        first.x + cos * then.x - sin * then.y,
        first.y + sin * then.x + cos * then.y,
        first.heading + then.heading,
    )


def relative(start: Pose, end: Pose) -> Pose:
    """How far `end` is from `start`, seen from `start` (`compose(start, relative(start, end))`
    is `end`)."""
    turn = math.radians(start.heading)
    cos, sin = math.cos(turn), math.sin(turn)
    dx, dy = end.x - start.x, end.y - start.y
    return _pose(cos * dx + sin * dy, -sin * dx + cos * dy, end.heading - start.heading)


def poses(actions: Iterable[Action], start: Pose | None = None) -> list[Pose]:
    """The Driver's pose before each step and after the last (one more than the steps); steps
    other than motion leave it.

    >>> from planverify.records.notation import parse_action as p
    >>> poses([p("Driver.Move(1.0)"), p("Driver.TurnLeft(90.0)"), p("Driver.Move(-1.0)")])[-1]
    Pose(x=1.0, y=-1.0, heading=90.0)
    """
    out = [start or Pose()]
    for action in actions:
        out.append(compose(out[-1], step_pose(action)) if is_motion(action) else out[-1])
    return out


def net_motion(actions: Iterable[Action]) -> tuple[float, int]:
    """How far (metres) and by how many degrees (0-359, counter-clockwise) a run of steps moves
    and turns the Driver in all; steps other than motion are passed over.

    >>> from planverify.records.notation import parse_action as p
    >>> net_motion([p("Driver.Move(1.0)"), p("Driver.TurnLeft(90.0)"), p("Driver.Move(1.0)")])
    (1.41, 90)
    >>> net_motion([p("Driver.TurnRight(90.0)"), p("Driver.PickUp('Mug')"), p("Driver.TurnLeft(90.0)")])
    (0.0, 0)
    """
    end = poses(actions)[-1]
    return round(math.hypot(end.x, end.y), 2), round(end.heading) % 360


@dataclass
class Outcome:
    """What one step did."""

    changed: bool | None  # whether the state changed; None when that is unknown
    problem: str | None = None  # why the step is impossible, when it is (it then does nothing)


IMPOSSIBLE_NOTHING = Outcome(changed=False)


def _impossible(why: str) -> Outcome:
    return Outcome(changed=False, problem=why)


def _maybe(flag: bool | None, value: object, old: object) -> object:
    """The new value of a state an effect sets when its cause holds (`flag` True), may hold
    (None: then the value becomes unknown unless it already is the one set) or not (False)."""
    if flag is True:
        return value
    if flag is None and old != value:
        return None
    return old


def _any(values: Iterable[bool | None]) -> bool | None:
    seen_unknown = False
    for value in values:
        if value is True:
            return True
        seen_unknown |= value is None
    return None if seen_unknown else False


# ----------------------------------------------------------------------------- devices


SINKS = frozenset({"Sink", "SinkBasin"})
TUBS = frozenset({"Bathtub", "BathtubBasin"})


def serves(state: State, tap: str) -> frozenset[str]:
    """The basin kinds a tap pours into: the one it is mounted on when the scene says so, a
    bathtub for a shower head, a sink otherwise."""
    mounted = state.kind_at(state.get(tap).loc)
    if mounted in SINKS or mounted in TUBS:
        return SINKS if mounted in SINKS else TUBS
    return TUBS if state.get(tap).kind == "ShowerHead" else SINKS


def water_running(state: State, basin: str = "SinkBasin") -> bool | None:
    """Whether a tap runs into basins of this kind."""
    kinds = SINKS if basin in SINKS else TUBS
    taps = [
        o.on for k, o in state.objects.items() if o.kind in WATER_TAPS and serves(state, k) & kinds
    ]
    return _any(taps) if taps else (None if not state.index.known else False)


def stove_lit(state: State) -> bool | None:
    """Whether a burner is lit (TEACh lights burners through their knobs)."""
    flames = [
        o.on
        for o in state.objects.values()
        if o.kind in ("StoveKnob", "StoveBurner") and o.can_toggle is not False
    ]
    return _any(flames) if flames else (None if not state.index.known else False)


def within(state: State, container: str) -> list[str]:
    """Keys of everything in or on a container, at any depth (nothing, for what holds
    nothing)."""
    if state.objects[container].can_hold is False:
        return []
    found: list[str] = []
    frontier = [container]
    kind = state.kind_at(container)
    if kind is not None and [o.kind for o in state.objects.values()].count(kind) == 1:
        frontier.append(SOME + kind)  # the scene's only one of its type: what starts in it
    while frontier:
        place = frontier.pop()
        for key in state.inside(place):
            if key not in found and key != container:
                found.append(key)
                frontier.append(key)
    return found


def _wash(state: State, key: str, running: bool | None) -> None:
    obj = state.get(key)
    changes: dict[str, object] = {}
    if obj.kind in DIRTYABLE:
        changes["dirty"] = _maybe(running, False, obj.dirty)
    if obj.kind in FILLABLE and obj.liquid != COFFEE:
        changes["liquid"] = _maybe(running, WATER, obj.liquid)
    if changes:
        state.set(key, **changes)


def _brew(state: State, key: str, running: bool | None) -> None:
    """A mug fills with coffee, unless it is full of water already."""
    mug = state.get(key)
    if mug.kind == "Mug" and mug.liquid != WATER:
        state.set(key, liquid=_maybe(running, COFFEE, mug.liquid))


def _heat(state: State, key: str, hot: bool | None, *, water: bool | None) -> None:
    """Cook what can be cooked; boil what can be boiled when it sits in water."""
    obj = state.get(key)
    if obj.kind in COOKABLE:
        state.set(key, cooked=_maybe(hot, True, obj.cooked))
    if obj.kind in BOILABLE:
        wet = None if water is None or hot is None else (water and hot)
        state.set(key, boiled=_maybe(wet, True, obj.boiled))


def _has_water(state: State, key: str) -> bool | None:
    liquid = state.get(key).liquid
    return None if liquid is None else liquid == WATER


def _on_burner(state: State, cooker: str) -> bool:
    """Whether a pan or pot stands on a burner, directly or in another pan (TEACh places a pot
    in the pan it overlaps)."""
    loc = state.get(cooker).loc
    for _ in range(3):
        kind = state.kind_at(loc)
        if kind not in COOKERS or loc is None or loc not in state.objects:
            return kind == "StoveBurner"
        loc = state.get(loc).loc
    return False


def _cook_on_stove(state: State, cooker: str, lit: bool | None) -> None:
    """A pan or pot on a burner: its contents cook (and boil in water) when the stove is lit."""
    if not _on_burner(state, cooker):
        return
    water = _has_water(state, cooker)
    for key in within(state, cooker):
        _heat(state, key, lit, water=water)


def _nowhere_known(state: State) -> list[str]:
    """In a possible world, the objects that may stand in a device: taken later from a place
    nobody knows, and not moved yet."""
    return [k for k in sorted(state.hopeful) if state.objects[k].loc is None and k != state.held]


def _switched_on(state: State, key: str, on: bool | None) -> None:
    """What switching a device on does to what it holds."""
    kind = state.get(key).kind
    if kind in WATER_TAPS:
        basins = serves(state, key)
        for item in [k for k in state.objects if state.kind_at(state.get(k).loc) in basins]:
            _wash(state, item, on)
        for item in _nowhere_known(state):
            _wash(state, item, on)
    elif kind == "CoffeeMachine":
        for item in within(state, key) + _nowhere_known(state):
            _brew(state, item, on)
    elif kind == "Toaster":
        for item in within(state, key) + _nowhere_known(state):
            if state.get(item).kind == "BreadSliced":
                _heat(state, item, on, water=False)
    elif kind == "Microwave":
        for item in within(state, key):
            parent = state.get(item).loc
            water = _has_water(state, parent) if parent in state.objects else False
            _heat(state, item, on, water=water)
    elif kind in ("StoveKnob", "StoveBurner"):
        lit = stove_lit(state)
        for cooker in state.of_kind(COOKERS):
            _cook_on_stove(state, cooker, lit)


def settle(state: State) -> None:
    """What a basin under a tap that runs at the start holds: maybe washed and filled.

    TEACh records the initial state before its water has acted: in the shared games, of the
    untouched objects standing in such a basin, about a third of the empty ones end filled and
    half of the dirty ones end clean (the stream reaches only part of a basin). So their state
    is unknown, and no verdict rests on it.
    """
    for key, obj in list(state.objects.items()):
        if obj.kind in WATER_TAPS and obj.on:
            _switched_on(state, key, None)


def _put_into_device(state: State, item: str, place: str) -> None:
    """What putting an object into or onto a running device does to it."""
    kind = state.get(place).kind
    if kind in BASINS:
        _wash(state, item, water_running(state, kind))
    elif kind == "CoffeeMachine":
        _brew(state, item, state.get(place).on)
    elif kind == "Toaster" and state.get(item).kind == "BreadSliced":
        _heat(state, item, state.get(place).on, water=False)
    elif kind in COOKERS:
        if _on_burner(state, place):
            _heat(state, item, stove_lit(state), water=_has_water(state, place))
    elif kind == "StoveBurner" and state.get(item).kind in COOKERS:
        _cook_on_stove(state, item, stove_lit(state))


# ----------------------------------------------------------------------------- verbs


def _pick_up(state: State, key: str, name: str) -> Outcome:
    obj = state.get(key)
    if state.held == key:
        return _impossible(f"{name} is already held")
    if state.held is not None:
        return _impossible(f"the Driver already holds {state.held}, so {name} cannot be picked up")
    if obj.present is False:
        return _impossible(f"{name} does not exist yet (nothing was sliced or broken to make it)")
    if obj.can_pick is False:
        return _impossible(f"{name} cannot be picked up")
    if state.closed(obj.loc):
        return _impossible(f"{name} is inside the closed {state.kind_at(state.shut_by(obj.loc))}")
    state.set(key, loc=HAND)
    state.held = key
    return Outcome(changed=True)


def _cooker_on(state: State, place: str, item: str) -> str | None:
    """The pan or pot standing on a burner that food is put on, where THOR drops it: TEACh
    records the burner the Driver clicked, and the final states show the food in the pot."""
    if state.kind_at(place) != "StoveBurner" or state.get(item).kind in COOKERS:
        return None
    here = {place}
    if len(state.of_kind({"StoveBurner"})) == 1:
        here.add(SOME + "StoveBurner")  # the only burner: what the scene puts on "a" burner
    return next((k for k in state.of_kind(COOKERS) if state.get(k).loc in here), None)


def _put(state: State, key: str, place: str, names: tuple[str, ...]) -> Outcome:
    if state.held != key:
        holding = "nothing is held" if state.held is None else f"{names[0]} is not held"
        return _impossible(f"{holding}, so {names[0]} cannot be put down")
    target = state.get(place)
    if place == key:  # recorded so by TEACh now and then: put down, somewhere
        state.set(key, loc=None)
        state.held = None
        return Outcome(changed=True)
    if target.present is False or target.can_hold is False:
        return _impossible(f"{names[1]} cannot hold {names[0]}")
    if state.closed(place):
        return _impossible(f"{names[1]} is closed")
    place = _cooker_on(state, place, key) or place
    state.set(key, loc=place)
    state.held = None
    _put_into_device(state, key, place)
    for item in within(state, key):  # what the object holds meets the device too
        _put_into_device(state, item, place)
    return Outcome(changed=True)


def _pour(state: State, source: str, target: str, names: tuple[str, ...]) -> Outcome:
    if state.held != source:
        return _impossible(f"{names[0]} is not held, so nothing can be poured from it")
    liquid = state.get(source).liquid
    if liquid == EMPTY:
        return Outcome(changed=False)  # nothing to pour: nothing happens
    old = state.get(target)
    if old.kind in FILLABLE:
        new = (
            liquid
            if liquid is not None
            else (old.liquid if old.liquid in (WATER, COFFEE) else None)
        )
        state.set(target, liquid=new)
    state.set(source, liquid=EMPTY if liquid is not None else None)
    if old.kind in COOKERS:
        _cook_on_stove(state, target, stove_lit(state))
    return Outcome(changed=None if liquid is None else True)


def _switch(state: State, key: str, name: str, on: bool) -> Outcome:
    obj = state.get(key)
    if obj.can_toggle is False:
        return _impossible(f"{name} cannot be switched on or off")
    if on and obj.kind == "Microwave" and obj.open is True:
        return _impossible("the microwave is open; it only runs closed")
    if obj.on is on:
        return Outcome(changed=False)
    state.set(key, on=on)
    if on:
        _switched_on(state, key, True)
    return Outcome(changed=None if obj.on is None else True)


def _open(state: State, key: str, name: str, is_open: bool) -> Outcome:
    obj = state.get(key)
    if obj.can_open is False:
        return _impossible(f"{name} cannot be opened or closed")
    if obj.open is is_open:
        return Outcome(changed=False)
    state.set(key, open=is_open)
    if is_open and obj.kind == "Microwave" and obj.on:
        state.set(key, on=False)  # opening a running microwave stops it
    return Outcome(changed=None if obj.open is None else True)


def _slice(state: State, key: str, name: str) -> Outcome:
    held = state.held
    if held is None or state.get(held).kind not in KNIVES:
        return _impossible(f"slicing {name} needs a knife in hand")
    obj = state.get(key)
    if obj.sliced is True:
        return Outcome(changed=False)
    state.set(key, sliced=True)
    made = SLICES.get(obj.kind)
    if made is not None:  # the slices are as cooked as the whole was
        for other, thing in list(state.objects.items()):
            if (
                thing.kind == made
                and thing.present is not True
                and state.index.cut_from(other, key)
            ):
                slice_ = derived(made, present=True, loc=obj.loc)
                state.objects[other] = slice_._replace(cooked=obj.cooked, boiled=obj.boiled)
    return Outcome(changed=None if obj.sliced is None else True)


def _set(attribute: str, value: object) -> Callable[[State, str, str], Outcome]:
    def apply_it(state: State, key: str, name: str) -> Outcome:
        old = getattr(state.get(key), attribute)
        if old == value:
            return Outcome(changed=False)
        state.set(key, **{attribute: value})
        return Outcome(changed=None if old is None else True)

    return apply_it


def _break(state: State, key: str, name: str) -> Outcome:
    if state.get(key).kind == "Egg":
        for other, thing in list(state.objects.items()):
            if (
                thing.kind == "EggCracked"
                and thing.present is not True
                and state.index.cut_from(other, key)
            ):
                state.objects[other] = derived("EggCracked", present=True, loc=state.get(key).loc)
    return Outcome(changed=True)


ONE_OBJECT: dict[str, Callable[[State, str, str], Outcome]] = {
    "ToggleOn": lambda s, k, n: _switch(s, k, n, True),
    "ToggleOff": lambda s, k, n: _switch(s, k, n, False),
    "Open": lambda s, k, n: _open(s, k, n, True),
    "Close": lambda s, k, n: _open(s, k, n, False),
    "Slice": _slice,
    "Clean": _set("dirty", False),
    "Dirty": _set("dirty", True),
    "Fill": _set("liquid", WATER),
    "Empty": _set("liquid", EMPTY),
    "Break": _break,
}


_MOVED, _STILL = Outcome(changed=True), Outcome(changed=False)  # of steps on no object


def apply(state: State, action: Action) -> Outcome:
    """Simulate one step in place; an impossible step changes nothing and says why."""
    if action.verb in MOTION_VERBS:
        return _MOVED if action.value not in (None, 0.0) else _STILL
    if action.is_dialogue or not action.known:
        return _STILL
    keys = [state.key(name) for name in action.objects]
    for name, key in zip(action.objects, keys, strict=True):
        if key is None:
            return _impossible(f"there is no {name} in the scene")
    found = [k for k in keys if k is not None]
    if action.verb == "PickUp":
        return _pick_up(state, found[0], action.objects[0])
    if action.verb == "PutAOnB":
        return _put(state, found[0], found[1], action.objects)
    if action.verb == "PourFromAIntoB":
        return _pour(state, found[0], found[1], action.objects)
    return ONE_OBJECT[action.verb](state, found[0], action.objects[0])


def undone(
    state: State,
    *,
    running: bool = False,
    hopeful: Collection[str] = (),
    wanted: Collection[str] | None = None,
) -> State:
    """The same household where every unknown state is one no goal wants yet: dirty, empty,
    raw, whole, slices not made, and every device of unknown state switched off (or, with
    `running`, on). The `hopeful` objects, which the plan takes from a place nobody knows, may
    stand in the device it switches on; given the kinds the goal names (`wanted`), those of
    other kinds hold water already, as a vessel the Driver picks up and pours at once must.
    Only ever used to see which steps a goal needs in some possible world, never to call a step
    useless."""
    world = state.copy()
    world.hopeful = frozenset(k for k in hopeful if k in world.objects)
    for key, obj in world.objects.items():
        liquid = obj.liquid
        if liquid is None:
            ready = (
                wanted is not None
                and key in world.hopeful
                and obj.kind in FILLABLE
                and obj.kind not in wanted
            )
            liquid = WATER if ready else EMPTY
        world.objects[key] = obj._replace(
            present=(obj.present if obj.present is not None else obj.kind not in DERIVED_TYPES),
            dirty=(obj.kind in DIRTYABLE) if obj.dirty is None else obj.dirty,
            liquid=liquid,
            cooked=False if obj.cooked is None else obj.cooked,
            boiled=False if obj.boiled is None else obj.boiled,
            sliced=False if obj.sliced is None else obj.sliced,
            on=running if obj.on is None else obj.on,
        )
    return world


FIRST_USE = {"ToggleOn": ("on", False), "ToggleOff": ("on", True)}
FIRST_USE |= {"Open": ("open", False), "Close": ("open", True)}


def as_first_used(state: State, plan: Iterable[Action]) -> None:
    """Give each switch and door whose state is unknown the state the plan's first step on it
    needs (changed in place): a device first switched off was running, a door first opened was
    shut, each state on its own (a microwave first opened and later first switched on was off).
    Without a scene this is all that is known of them, and it is what a recorded demonstration
    shows, where every step happened; it never makes a step impossible."""
    seen: set[tuple[str, str]] = set()  # (object, state) pairs a step has used
    for action in plan:
        use = FIRST_USE.get(action.verb)
        if use is None or not action.objects or (action.objects[0], use[0]) in seen:
            continue
        attribute, before = use
        seen.add((action.objects[0], attribute))
        key = state.key(action.objects[0])
        if key is not None and getattr(state.get(key), attribute) is None:
            state.set(key, **{attribute: before})


STILL = 0.5  # metres the Driver may step (and no turn) and still stand where it did
STOVE_REACH = 2  # interactions between food put into a pan and the knob switched on for it


def as_first_placed(state: State, plan: Sequence[Action]) -> dict[str, str]:
    """Give objects whose place is unknown the place the plan shows (changed in place), and
    return the places given, by object key:

    - an object first picked up right after a container was opened, the Driver standing
      where it opened it, was in it (in the shared games, 232 of 253 such objects; of the 25
      picked up elsewhere, 14 were not in it);
    - a vessel first picked up right after a tap was switched off, and poured out next other
      than into a basin, was filled in the basin under it (its water is used);
    - a pan or pot the plan has not moved, that food is put into within `STOVE_REACH`
      interactions of a stove knob switched on, stands on a burner.

    Without a scene this is all that is known of where things were, and it is what a recorded
    demonstration shows: the Driver reached into what it had just opened, and cooked where it
    lit the stove. It never makes a step of the plan impossible."""
    steps: list[Action] = []
    walks: list[list[Action]] = []  # the motion since the step before, for each step
    walked: list[Action] = []
    for action in plan:
        if action.verb in MOTION_VERBS:
            walked.append(action)
        elif action.known and not action.is_dialogue:
            steps.append(action)
            walks.append(walked)
            walked = []
    placed: dict[str, str] = {}
    seen: set[str] = set()  # objects named so far
    moved: set[str] = set()  # objects picked up so far
    for k, action in enumerate(steps):
        name = action.objects[0] if action.objects else None
        if action.verb == "PickUp" and name is not None and name not in seen and k > 0:
            after = steps[k + 1] if k + 1 < len(steps) else None
            distance, heading = net_motion(walks[k])
            still = distance <= STILL and heading == 0  # standing where it did at the step before
            placed |= _place_by(state, name, steps[k - 1], after, still=still)
        if action.verb in ("PutAOnB", "PourFromAIntoB") and action.objects[1] not in moved:
            cooker = state.key(action.objects[1])
            near = steps[max(k - STOVE_REACH, 0) : k + STOVE_REACH + 1]
            if (
                cooker is not None
                and state.get(cooker).kind in COOKERS
                and placeable(state.get(cooker))
                and _lights_stove(state, near)
            ):
                state.set(cooker, loc=SOME + "StoveBurner")
                placed[cooker] = SOME + "StoveBurner"
        seen.update(action.objects)
        if action.verb == "PickUp" and name is not None:
            moved.add(name)
    return placed


def placeable(obj: Obj) -> bool:
    """Whether `as_first_placed` may place an object: a movable one there at the start, its
    place unknown."""
    return obj.loc is None and obj.present is not False and obj.can_pick is not False


def _lights_stove(state: State, steps: Iterable[Action]) -> bool:
    return any(
        a.verb == "ToggleOn" and a.objects and state.kind_at(state.key(a.objects[0])) == "StoveKnob"
        for a in steps
    )


def _place_by(
    state: State, name: str, before: Action, after: Action | None, *, still: bool = True
) -> dict[str, str]:
    """Place an object first picked up between the steps `before` and `after`, as they show
    (see `as_first_placed`; `still`: whether the Driver stands where it did at `before`); the
    place given, by key."""
    key = state.key(name)
    if key is None or not placeable(state.get(key)) or not before.objects:
        return {}
    source = state.key(before.objects[0])
    if source is None:
        return {}
    kind = state.get(source).kind
    if before.verb == "Open" and kind in CONTAINERS and still:
        state.set(key, loc=source)
        return {key: source}
    if (
        before.verb == "ToggleOff"
        and kind in WATER_TAPS
        and state.get(key).kind in FILLABLE
        and after is not None
        and after.verb == "PourFromAIntoB"
        and after.objects[:1] == (name,)
        and state.kind_at(state.key(after.objects[1])) not in BASINS
    ):
        basin = SOME + ("SinkBasin" if serves(state, source) == SINKS else "BathtubBasin")
        state.set(key, loc=basin)
        return {key: basin}
    return {}


def simulate(plan: list[Action], state: State) -> list[Outcome]:
    """Run a plan from a state (changed in place); one outcome per step."""
    return [apply(state, action) for action in plan]


__all__ = [
    "Outcome",
    "Pose",
    "apply",
    "as_first_placed",
    "as_first_used",
    "cancels",
    "compose",
    "is_motion",
    "net_motion",
    "poses",
    "relative",
    "same_pose",
    "simulate",
    "step_pose",
    "stove_lit",
    "water_running",
    "within",
]
