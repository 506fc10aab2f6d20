"""The simulated household: every object of the scene with what is known of its state.

Objects the plan names are keyed by their name in the notation (`Mug`, `Mug2`); the scene's other
objects by their simulator id, so that goals about *all* objects of a type ("clean all the
plates") see them too. A state the scene does not give is `None` (unknown) and stays unknown until
a step sets it; an unknown never decides a verdict.

With a scene, the scene lists every object: a type it does not have does not exist. Without one,
any named object may exist, with every state unknown.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from planverify.records.episode import Scene, SceneObject
from planverify.records.notation import object_type
from planverify.world.classes import base_type
from planverify.world.vocabulary import resolve_name

HAND = "@hand"  # the location of the object the Driver holds
SOME = "*"  # prefix of a place known by type only: "*Cabinet" is in some cabinet
CONTAINERS = frozenset({"Box", "Cabinet", "Drawer", "Fridge", "Microwave", "Safe"})
"""Openable receptacles whose inside cannot be reached when closed (a toilet's lid or a laptop's
screen closes nothing in)."""

WATER, COFFEE, EMPTY = "water", "coffee", ""  # what a container holds


class Obj(NamedTuple):
    """One object and what is known of it (None: unknown)."""

    kind: str  # TEACh object type
    present: bool | None = None  # exists now (a slice only once its source is sliced)
    loc: str | None = None  # key of what it is in/on; SOME + type for a scene's initial place
    open: bool | None = None  # openable objects: open
    on: bool | None = None  # toggleable objects: switched on
    dirty: bool | None = None  # dirty
    liquid: str | None = None  # WATER, COFFEE or EMPTY; None when unknown
    cooked: bool | None = None  # cooked (toasted, fried, microwaved)
    boiled: bool | None = None  # boiled
    sliced: bool | None = None  # cut into slices
    can_pick: bool | None = None  # can be picked up
    can_hold: bool | None = None  # is a receptacle
    can_toggle: bool | None = None  # can be switched
    can_open: bool | None = None  # can be opened


_FIELD = {name: n for n, name in enumerate(Obj._fields)}  # an `Obj` field's position


@dataclass(frozen=True)
class SceneIndex:
    """What never changes while a plan runs: which types exist, and how names map to types."""

    known: bool  # whether a scene lists every object
    types: frozenset[str] = frozenset()  # types present at the start (with a scene)
    names: dict[str, str | None] = field(default_factory=dict)  # plan name -> TEACh type
    made_from: Mapping[str, str] = field(default_factory=dict)  # a slice's name -> its whole's

    def cut_from(self, derived: str, whole: str) -> bool:
        """Whether cutting (or cracking) the whole named `whole` can make the object named
        `derived`: when the scene does not say which whole it comes from, any of its type."""
        return self.made_from.get(derived, whole) == whole

    def type_of(self, name: str) -> str | None:
        """The TEACh type of a name in the plan, or None when it names nothing the scene has."""
        if name not in self.names:
            self.names[name] = resolve_name(name, self.types if self.known else None)
        return self.names[name]

    def exists(self, kind: str) -> bool | None:
        """Whether objects of a type can exist here (derived types once their source does)."""
        if not self.known:
            return None
        return kind in self.types or base_type(kind) in self.types


@dataclass
class State:
    """The household at one moment of a plan; `copy()` is cheap (objects are immutable)."""

    index: SceneIndex
    objects: dict[str, Obj] = field(default_factory=dict)
    held: str | None = None  # key of the held object; None = nothing
    spare: dict[str, list[str]] = field(default_factory=dict)  # type -> unnamed scene keys
    renamed: dict[str, list[str]] = field(default_factory=dict)  # type -> names the plan dropped
    hopeful: frozenset[str] = frozenset()  # possible worlds: keys that may stand in any device
    kept: frozenset[str] = frozenset()  # types some of whose scene names the plan uses

    def copy(self) -> State:
        return State(
            self.index,
            dict(self.objects),
            self.held,
            self.spare,
            self.renamed,
            self.hopeful,
            self.kept,
        )

    def snapshot(self) -> tuple[tuple[tuple[str, Obj], ...], str | None]:
        """A hashable, comparable summary of the state."""
        return tuple(sorted(self.objects.items())), self.held

    # ----------------------------------------------------------------- lookup

    def key(self, name: str) -> str | None:
        """The key of the object a plan name denotes, creating its record on first use; None when
        the scene has no such object."""
        if name in self.objects:
            return name
        kind = self.index.type_of(name)
        if kind is None:
            if self.index.known:
                return None
            kind = object_type(name)
        if self.index.known and not self.index.exists(kind):
            return None
        numbered = object_type(name) == kind  # TEACh's own numbering: Bread3
        renamed = self.renamed.get(kind) if not numbered or kind not in self.kept else None
        if renamed:  # the object the scene names otherwise
            self.renamed = {**self.renamed, kind: renamed[1:]}
            self._rekey(renamed[0], name)
            return name
        spare = self.spare.get(kind, [])
        shut = {k: self.closed(self.objects[k].loc) for k in spare}
        reachable = [k for k in spare if shut[k] is not True]
        if reachable:  # an unnamed scene object of the type, one within reach if there is one
            chosen = next((k for k in reachable if shut[k] is False), reachable[0])
            self.spare = {**self.spare, kind: [k for k in spare if k != chosen]}
            self._rekey(chosen, name)
        elif spare:  # all shut away: the plan's object is one the scene does not list
            self.objects[name] = Obj(kind=kind, present=True)
        elif self.index.known and kind not in self.index.types:
            self.objects[name] = derived(kind, present=False)  # made later by a state change
        else:
            self.objects[name] = Obj(kind=kind, present=None if not self.index.known else True)
        return name

    def _rekey(self, old: str, new: str) -> None:
        """Key a scene object by a plan name from now on, and what starts in or on it too."""
        self.objects[new] = self.objects.pop(old)
        for key, obj in self.objects.items():
            if obj.loc == old:
                self.objects[key] = obj._replace(loc=new)

    def get(self, key: str) -> Obj:
        return self.objects[key]

    def set(self, key: str, **changes: object) -> None:
        # `Obj._replace` by position: half its cost, and the simulator's most frequent call
        values: list[object] = list(self.objects[key])
        for name, value in changes.items():
            values[_FIELD[name]] = value
        self.objects[key] = tuple.__new__(Obj, values)

    def kind_at(self, loc: str | None) -> str | None:
        """The type of a location (an object key, or a type for a scene's initial place)."""
        if loc is None or loc == HAND:
            return None
        if loc.startswith(SOME):
            return loc[1:]
        found = self.objects.get(loc)
        return found.kind if found is not None else object_type(loc)

    def inside(self, loc: str) -> Iterator[str]:
        """Keys of the objects in or on a location, directly."""
        for key, obj in self.objects.items():
            if obj.loc == loc:
                yield key

    def of_kind(self, kinds: Iterable[str]) -> list[str]:
        """Keys of the objects of some types."""
        wanted = set(kinds)
        return [key for key, obj in self.objects.items() if obj.kind in wanted]

    def parents(self, key: str) -> list[str]:
        """Types of everything an object is in or on, innermost first (a slice on a plate on a
        table: Plate, DiningTable)."""
        out: list[str] = []
        loc = self.objects[key].loc
        seen = {key}
        while loc is not None and loc != HAND and loc not in seen:
            seen.add(loc)
            kind = self.kind_at(loc)
            if kind is not None:
                out.append(kind)
            found = self.objects.get(loc)
            loc = found.loc if found is not None else None
        return out

    def closed(self, loc: str | None) -> bool | None:
        """Whether a location is a closed container, or a movable holder inside one (a plate in
        a closed cabinet); for a scene's initial place given by type: closed only when every
        object of that type is known to be closed."""
        return self._closed_here(self.shut_by(loc))

    def shut_by(self, loc: str | None) -> str | None:
        """The location whose door decides whether `loc` is shut away: `loc` itself, or for a
        movable holder (a plate), the first place up from it that may be closed."""
        seen: set[str] = set()
        while loc is not None and loc not in seen:
            seen.add(loc)
            holder = None if loc.startswith(SOME) else self.objects.get(loc)
            if self._closed_here(loc) is not False or holder is None or holder.can_pick is not True:
                return loc
            loc = holder.loc
        return loc

    def _closed_here(self, loc: str | None) -> bool | None:
        if loc is None or loc == HAND:
            return False
        if self.kind_at(loc) not in CONTAINERS:
            return False
        if not loc.startswith(SOME):
            found = self.objects.get(loc)
            if found is None or found.can_open is False:
                return False
            return None if found.open is None else not found.open
        same = [o for o in self.objects.values() if o.kind == loc[1:]]
        if not same or any(o.can_open is False for o in same):
            return False
        if all(o.open is False for o in same):
            return True
        return None if any(o.open is None for o in same) else False


ROOM_LEVEL = frozenset(
    {"Floor", "CounterTop", "Cabinet", "DiningTable", "CoffeeTable", "SideTable", "Desk"}
    | {"Chair", "ArmChair", "Sofa", "Bed", "Dresser", "TVStand", "ShelvingUnit"}
)
"""Types that are in nothing: TEACh lists as their receptacles whatever their boxes overlap (the
cabinets under the floor, the chairs around a dining table, the sink basin cut into a counter),
which would put everything on the floor inside a cabinet, and a newspaper on the dining table
on a chair."""


def from_scene(scene: Scene) -> State:
    """A scene's objects and their initial states, as the scene gives them."""
    objects = scene.objects
    state = State(SceneIndex(known=True, types=frozenset(o.type for o in objects)))
    holders = [o for o in objects if o.pickupable and o.receptacle]
    by_id = {o.id: o for o in objects}
    within = _Within(by_id)
    count = _Count(objects)
    for o in objects:
        key = o.name or o.id
        if o.type in ROOM_LEVEL:
            loc = None
        else:
            loc = _known_place(o, by_id, within, count) or _initial_place(o, holders)
        # by position, in `Obj`'s field order: a batch makes one per object of every scene
        state.objects[key] = tuple.__new__(
            Obj,
            (
                o.type,  # kind
                True,  # present
                loc,
                o.open if o.openable else None,  # open
                o.toggled if o.toggleable else None,  # on
                o.dirty,
                WATER if o.filled else EMPTY,  # liquid
                o.cooked,
                False,  # boiled
                o.sliced,
                o.pickupable,  # can_pick
                o.receptacle,  # can_hold
                o.toggleable,  # can_toggle
                o.openable,  # can_open
            ),
        )
        if o.name is None:
            state.spare.setdefault(o.type, []).append(key)
    return state


class _Within(dict[str, frozenset[str]]):
    """Each id's `within` as a set (as `by_id`: the last object of an id), made when first
    asked for: most objects list none, and no other object asks for theirs."""

    def __init__(self, by_id: Mapping[str, SceneObject]) -> None:
        super().__init__()
        self.by_id = by_id

    def __missing__(self, key: str) -> frozenset[str]:
        found = self[key] = frozenset(self.by_id[key].within)
        return found


def _known_place(
    obj: SceneObject,
    by_id: dict[str, SceneObject],
    within: dict[str, frozenset[str]],
    count: Mapping[str, int],
) -> str | None:
    """The key of the receptacle an object starts in directly, when the scene gives their ids
    (`within`): a movable container among them (the bowl an egg is in, itself in the fridge),
    the innermost if several, else the innermost that is not the floor (the coffee machine a mug
    stands in, not the counter under both), by its key when the plan names it or it is the only
    one of its type (`count`: objects per type), else by type. Two that TEACh lists in each
    other (a pot and the pan it overlaps) both stand on what holds them. `within`: each id's
    `within` as a set."""
    around = [by_id[i] for i in obj.within if i in by_id and i != obj.id]
    if len(around) <= 1:  # nothing to choose between (most objects)
        return _place_key(around[0], count, _movable(obj, around[0], within)) if around else None
    mine = frozenset(obj.within)

    def shared(other: SceneObject) -> int:
        return len(within[other.id] & mine)

    movable = [o for o in around if _movable(obj, o, within)]
    if movable:
        return _place_key(max(movable, key=shared), count, True)
    fixed = [o for o in around if o.type != "Floor"] or around
    # the innermost: a mug in the coffee machine on the counter is in the coffee machine; of
    # those as deep, one that is no furniture (a pan listed on a burner and a counter whose box
    # it overlaps stands on the burner)
    apart = [o for o in fixed if obj.id not in within[o.id]] or fixed  # not listed in each other
    inner = max(apart, key=lambda o: (shared(o), o.type not in ROOM_LEVEL))
    return _place_key(inner, count, False)


def _movable(obj: SceneObject, holder: SceneObject, within: Mapping[str, frozenset[str]]) -> bool:
    """Whether `holder` is a movable container `obj` stands in (what cannot be picked up stands
    in nothing that can: a sink basin is in no cup)."""
    return (
        obj.pickupable
        and holder.pickupable
        and holder.receptacle
        and obj.id not in within[holder.id]
    )


def _place_key(holder: SceneObject, count: Mapping[str, int], movable: bool) -> str:
    """The key of the place `holder` is: its own for a movable container, one the plan names
    or the only one of its type, else its type (which of its kind a plan name binds to is not
    known)."""
    if movable or holder.name is not None or count[holder.type] == 1:
        return holder.name or holder.id
    return SOME + holder.type


class _Count(dict[str, int]):
    """Objects per type (as a `Counter`), counted when first asked for: few scenes need it."""

    def __init__(self, objects: Sequence[SceneObject]) -> None:
        super().__init__()
        self.objects: Sequence[SceneObject] | None = objects

    def __missing__(self, kind: str) -> int:
        if self.objects is None:
            return 0
        self.update(Counter(o.type for o in self.objects))
        self.objects = None
        return self.get(kind, 0)


def _initial_place(obj: SceneObject, holders: list[SceneObject]) -> str | None:
    """Where a scene object starts: the innermost of its receptacles (`holders`: the scene's
    movable containers, in scene order).

    TEACh lists every receptacle an object is in, outermost and innermost alike (an egg in a
    bowl in the fridge: Fridge and Bowl, in any order). A movable container among them (a bowl)
    holds it directly, and that container is found by its own receptacles; otherwise the first
    that is not the floor.
    """
    parents = [p for p in obj.parent if p != "Floor"] or list(obj.parent)
    if not parents:
        return None
    outer = set(obj.parent)
    for other in holders:
        if other.type in parents and other.id != obj.id and set(other.parent) <= outer:
            return other.name or other.id
    return SOME + parents[0]


def derived(kind: str, *, present: bool, loc: str | None = None) -> Obj:
    """An object made by a state change (a slice of bread, a cracked egg): clean, uncooked and
    empty, where its source was."""
    return Obj(
        kind=kind,
        present=present,
        loc=loc,
        dirty=False,
        liquid=EMPTY,
        cooked=False,
        boiled=False,
        sliced=True,
        can_pick=True,
        can_hold=False,
        can_toggle=False,
        can_open=False,
    )


__all__ = [
    "COFFEE",
    "EMPTY",
    "HAND",
    "SOME",
    "WATER",
    "Obj",
    "SceneIndex",
    "State",
    "derived",
    "from_scene",
    "replace",
]
