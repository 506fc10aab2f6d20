"""Goal specs: what a task asks for, as conditions on objects that a state meets or not.

TEACh states each task exactly in its task definition (`teach_task`): components select objects
by type (`objectType`) or class (`simbotObjectClass`) and ask for states (`isDirty: 0`,
`simbotIsFilledWithCoffee: 1`, `isCooked`/`simbotIsCooked`, `simbotIsBoiled`,
`isFilledWithLiquid`, `receptacle`), with a determiner: `a`, a number, or `all`; `"0"` disables a
component. Components can be whole tasks (a Breakfast holds a Coffee, a Salad holds Sliced X
tasks); relations ask for head objects in or on a tail object (`parentReceptacles`), "the" tail
being one single object. `parse_teach_task` flattens that into a `GoalSpec`; `evaluate` says,
per condition, whether a state meets it: True, False, or None when what is known cannot tell.

>>> spec = parse_teach_task({"task_name": "Coffee", "desc": "Prepare coffee in a clean mug.",
...     "components": {"coffee": {"determiner": "a", "primary_condition": "objectType",
...         "instance_shareable": False, "conditions": {"objectType": "Mug", "isDirty": 0,
...         "simbotIsFilledWithCoffee": 1}}}, "relations": []})
>>> [c.describe() for c in spec.components]
['a Mug that is clean and filled with coffee']
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from planverify.world.classes import types_of
from planverify.world.state import COFFEE, EMPTY, HAND, SOME, WATER, Obj, State

STATES: dict[str, str] = {
    "isDirty": "clean",  # with value 0
    "isCooked": "cooked",
    "simbotIsCooked": "cooked",
    "simbotIsFilledWithCoffee": "filled with coffee",
    "isFilledWithLiquid": "filled with liquid",
    "simbotIsBoiled": "boiled",
    "receptacle": "a receptacle",
}
"""The state conditions TEACh's task definitions use, as words."""


class Component(BaseModel):
    """Objects of one kind in given states: at least `count` of them, or all of them."""

    name: str  # where it sits in the task definition: "coffee", "toast.toast", ...
    select: str  # the object type or class the objects are of
    count: int = 1  # how many are needed (ignored when `every`)
    every: bool = False  # every object of the kind must be in the states ("all")
    states: dict[str, int] = Field(default_factory=dict)  # TEACh condition -> 0/1

    def describe(self) -> str:
        """The component in words: "a Mug that is clean and filled with coffee", "every Plate
        is clean", "3 PotatoSliced objects that are cooked"."""
        words = [
            ("not " if value == 0 and key != "isDirty" else "") + STATES.get(key, key)
            for key, value in self.states.items()
            if key != "receptacle"
        ]
        said = " and ".join(dict.fromkeys(words))
        if self.every:
            return f"every {self.select} is {said}" if said else f"every {self.select}"
        if self.count == 1:
            return f"a {self.select} that is {said}" if said else f"a {self.select}"
        head = f"{self.count} {self.select} objects"
        return f"{head} that are {said}" if said else head


class Relation(BaseModel):
    """Head objects in or on a tail object (TEACh's `parentReceptacles` relation)."""

    heads: list[tuple[str, str]]  # (component name, determiner: "a", a number or "all")
    tail: str  # component name of the receptacle
    single: bool = True  # "the": one and the same tail object holds every head
    text: str = ""  # TEACh's own wording of the relation

    def describe(self) -> str:
        return self.text or f"{', '.join(h for h, _ in self.heads)} in/on {self.tail}"


class GoalSpec(BaseModel):
    """What a task asks for, flattened into components and relations."""

    task: str  # TEACh task name ("Coffee", "Breakfast", ...) or the family read from text
    text: str = ""  # the task's description
    source: Literal["teach_task", "text"] = "teach_task"  # where the spec was read from
    components: list[Component] = Field(default_factory=list)
    relations: list[Relation] = Field(default_factory=list)

    def types(self) -> frozenset[str]:
        """Every object type the spec names (through its types and classes)."""
        return frozenset(t for c in self.components for t in types_of(c.select))

    def unit_types(self) -> list[frozenset[str]]:
        """The object types each condition is about, in `evaluate`'s order (the components,
        then the relations with their heads and tail)."""
        by_name = {c.name: frozenset(types_of(c.select)) for c in self.components}
        about = [by_name[c.name] for c in self.components]
        for relation in self.relations:
            names = [name for name, _ in relation.heads] + [relation.tail]
            about.append(frozenset().union(*(by_name.get(name, frozenset()) for name in names)))
        return about


def _count(determiner: str) -> int:
    return int(determiner) if determiner.isdigit() else 1


def _flatten(task: Mapping[str, Any], prefix: str, times: int, spec: GoalSpec) -> dict[str, str]:
    """Add a task's components (times `times`) and relations to `spec`; returns the full name of
    the component that stands for each of its component keys (a subtask: its anchor)."""
    stands_for: dict[str, str] = {}
    components = task.get("components")
    for key, comp in components.items() if isinstance(components, Mapping) else []:
        if not isinstance(comp, Mapping):
            continue
        determiner = str(comp.get("determiner", "a"))
        if determiner == "0":
            continue
        name = f"{prefix}{key}"
        sub = comp.get("task")
        if isinstance(sub, Mapping):
            inner = _flatten(sub, f"{name}.", times * _count(determiner), spec)
            anchor = sub.get("task_anchor_object")
            if isinstance(anchor, str) and anchor in inner:
                stands_for[key] = inner[anchor]
            continue
        conditions = comp.get("conditions")
        conditions = conditions if isinstance(conditions, Mapping) else {}
        primary = str(comp.get("primary_condition") or "objectType")
        select = conditions.get(primary)
        if not isinstance(select, str):
            continue
        shareable = bool(comp.get("instance_shareable"))
        states = {
            str(k): int(v)
            for k, v in conditions.items()
            if k not in ("objectType", "simbotObjectClass") and isinstance(v, int | bool)
        }
        spec.components.append(
            Component(
                name=name,
                select=select,
                count=1 if shareable else times * _count(determiner),
                every=determiner == "all",
                states=states,
            )
        )
        stands_for[key] = name
    relations = task.get("relations")
    for relation in relations if isinstance(relations, list) else []:
        if not isinstance(relation, Mapping) or relation.get("property") != "parentReceptacles":
            continue
        tails = relation.get("tail_entity_list") or []
        heads = relation.get("head_entity_list") or []
        head_dets = relation.get("head_determiner_list") or []
        tail_dets = relation.get("tail_determiner_list") or ["a"]
        if not tails or tails[0] not in stands_for:
            continue
        pairs = [
            (stands_for[h], "all" if str(d) == "all" else str(times * _count(str(d))))
            for h, d in zip(heads, head_dets, strict=False)
            if h in stands_for and str(d) != "0"
        ]
        if pairs:
            spec.relations.append(
                Relation(
                    heads=pairs,
                    tail=stands_for[tails[0]],
                    single=str(tail_dets[0]) == "the" and times == 1,
                    text=str(relation.get("failure_desc") or ""),
                )
            )
    return stands_for


def parse_teach_task(task: Mapping[str, Any]) -> GoalSpec:
    """The goal spec of a TEACh task definition (`tasks[0]` of a game file)."""
    spec = GoalSpec(task=str(task.get("task_name") or "task"), text=str(task.get("desc") or ""))
    _flatten(task, "", 1, spec)
    return spec


# ----------------------------------------------------------------------------- evaluation


def _state_holds(obj: Obj, key: str, value: int) -> bool | None:
    """Whether an object meets one state condition (None: unknown)."""
    want = bool(value)
    if key == "isDirty":
        return None if obj.dirty is None else obj.dirty == want
    if key in ("isCooked", "simbotIsCooked"):
        return None if obj.cooked is None else obj.cooked == want
    if key == "simbotIsBoiled":
        return None if obj.boiled is None else obj.boiled == want
    if key == "simbotIsFilledWithCoffee":
        return None if obj.liquid is None else (obj.liquid == COFFEE) == want
    if key == "isFilledWithLiquid":
        return None if obj.liquid is None else (obj.liquid in (WATER, COFFEE)) == want
    if key == "receptacle":
        return None if obj.can_hold is None else obj.can_hold == want
    return None


def _and(values: list[bool | None]) -> bool | None:
    if any(v is False for v in values):
        return False
    return None if any(v is None for v in values) else True


ByKind = dict[str, list[tuple[str, Obj]]]


def by_kind(state: State, kinds: Collection[str] | None = None) -> ByKind:
    """The objects of a state that may exist, by kind (what one evaluation looks up); only
    those of `kinds`, when given."""
    index: ByKind = {}
    for key, obj in state.objects.items():
        if (kinds is None or obj.kind in kinds) and obj.present is not False:
            index.setdefault(obj.kind, []).append((key, obj))
    return index


def _of(component: Component, index: ByKind) -> Iterator[tuple[str, Obj]]:
    for kind in types_of(component.select):
        yield from index.get(kind, ())


def matches(
    component: Component, state: State, index: ByKind | None = None
) -> dict[str, bool | None]:
    """Every object of the component's kind, and whether it meets the component's states."""
    return {
        key: _and([_state_holds(obj, k, v) for k, v in component.states.items()])
        for key, obj in _of(component, index if index is not None else by_kind(state))
    }


@dataclass(frozen=True)
class Unit:
    """One condition of a goal spec and whether a state meets it."""

    name: str  # the component or relation it checks
    text: str  # what it asks for, in words
    met: bool | None  # True, False, or None when what is known cannot tell
    progress: int = 0  # how many of its parts hold (object states, heads in place)


def _component_unit(component: Component, state: State, index: ByKind) -> Unit:
    found: dict[str, bool | None] = {}
    parts: list[int] = []  # per object: how many of the states it is in
    for _, obj in _of(component, index):
        holds = [_state_holds(obj, k, v) for k, v in component.states.items()]
        found[obj.kind + str(len(found))] = _and(holds)
        parts.append(1 + sum(h is True for h in holds))  # its kind, and the states it is in
    yes = sum(v is True for v in found.values())
    maybe = sum(v is None for v in found.values())
    if component.every:
        met: bool | None = (
            False if any(v is False for v in found.values()) else (None if maybe else True)
        )
        if not found and not state.index.known:
            met = None
        return Unit(component.name, component.describe(), met, sum(parts))
    need = component.count
    met = True if yes >= need else (None if yes + maybe >= need or not state.index.known else False)
    return Unit(component.name, component.describe(), met, sum(sorted(parts)[-need:]))


def _holders(state: State, key: str) -> list[str]:
    """Keys (or, for a scene's initial place, types) of everything an object is in or on."""
    out: list[str] = []
    loc = state.objects[key].loc
    while loc is not None and loc != HAND and loc not in out:
        out.append(loc)
        parent = state.objects.get(loc)
        loc = parent.loc if parent is not None else None
    return out


def _relation_unit(relation: Relation, spec: GoalSpec, state: State, index: ByKind) -> Unit:
    by_name = {c.name: c for c in spec.components}
    tail = by_name.get(relation.tail)
    if tail is None:
        return Unit(relation.tail, relation.describe(), None)
    # a head counts whatever its states (its own component asks for those: a slice on the plate
    # is on the plate, cooked or not), but the tail must be the object its component describes:
    # a sandwich on a dirty plate is not on "the clean plate" the task asks for
    tails = [k for k, v in matches(tail, state, index).items() if v is not False]

    def placed(head: str) -> dict[str, bool | None]:
        """Per tail candidate (or "*" for any), whether the head object is in/on it."""
        obj = state.objects[head]
        if obj.loc is None:
            return {t: None for t in tails} or {"*": None}
        holders = _holders(state, head)
        return {t: bool(t in holders or SOME + state.objects[t].kind in holders) for t in tails}

    per_head: list[tuple[str, int | None, dict[str, dict[str, bool | None]]]] = []
    for name, determiner in relation.heads:
        component = by_name.get(name)
        if component is None:
            continue
        candidates = list(matches(component, state, index))
        need = None if determiner == "all" else _count(determiner)
        per_head.append((name, need, {k: placed(k) for k in candidates}))

    def verdict(choice: list[str]) -> tuple[bool | None, int]:
        verdicts: list[bool | None] = []
        progress = 0
        for _, need, heads in per_head:
            states = [_any_of(heads[h], choice) for h in heads]
            yes = sum(s is True for s in states)
            maybe = sum(s is None for s in states)
            wanted = len(states) if need is None else need
            progress += min(yes, wanted)
            if need is None:
                verdicts.append(
                    False if any(s is False for s in states) else (None if maybe else True)
                )
            else:
                verdicts.append(True if yes >= need else (None if yes + maybe >= need else False))
        return _and(verdicts), progress

    if not tails:
        return Unit(relation.tail, relation.describe(), None if not state.index.known else False)
    if relation.single:
        results = [verdict([t]) for t in tails]
        met = (
            True
            if any(r[0] is True for r in results)
            else (None if any(r[0] is None for r in results) else False)
        )
        return Unit(relation.tail, relation.describe(), met, max(r[1] for r in results))
    met, progress = verdict(tails)
    return Unit(relation.tail, relation.describe(), met, progress)


def _any_of(where: dict[str, bool | None], choice: list[str]) -> bool | None:
    values = [where.get(t, False) for t in choice] + ([where["*"]] if "*" in where else [])
    return (
        True
        if any(v is True for v in values)
        else (None if any(v is None for v in values) else False)
    )


def evaluate(spec: GoalSpec, state: State, only: Collection[str] | None = None) -> list[Unit]:
    """Each condition of the spec, and whether the state meets it; with `only`, just the
    conditions whose text (`Unit.text`) is one of those, in the same order."""
    index = by_kind(state, spec.types())  # the only kinds its components look up
    units = [
        _component_unit(c, state, index)
        for c in spec.components
        if only is None or c.describe() in only
    ]
    units += [
        _relation_unit(r, spec, state, index)
        for r in spec.relations
        if only is None or r.describe() in only
    ]
    return units


__all__ = [
    "EMPTY",
    "Component",
    "GoalSpec",
    "Relation",
    "Unit",
    "evaluate",
    "matches",
    "parse_teach_task",
]
