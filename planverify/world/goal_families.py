"""TEACh's task families: the task definition of a family with its parameters, written in the
shape TEACh's game files use, its goal spec, a one-line description, and a signature for comparing
specs. `text_goals.read_goal` reads a family and its parameters from words and builds the spec
here.

>>> [c.describe() for c in spec_of("Coffee", []).components]
['a Mug that is clean and filled with coffee']
>>> describe("N Slices Of X In Y", ["2", "Tomato", "in", "Bowl"])
'Serve 2 slice(s) of Tomato in a Bowl.'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from planverify.world.classes import types_of
from planverify.world.goals import GoalSpec, parse_teach_task

__all__ = [
    "FAMILIES",
    "Signature",
    "Task",
    "build_task",
    "count_of",
    "describe",
    "signature",
    "spec_of",
]

FAMILIES: tuple[str, ...] = (
    "Coffee",
    "Water Plant",
    "Boil X",
    "Toast",
    "Plate Of Toast",
    "Clean X",
    "Clean All X",
    "Sliced X",
    "Cooked Slice Of X",
    "N Slices Of X In Y",
    "N Cooked Slices Of X In Y",
    "Put All X On Y",
    "Put All X In One Y",
    "Sandwich",
    "Salad",
    "Breakfast",
)
"""TEACh's task families, by TEACh's names: those built here and read by `read_goal`."""


# ----------------------------------------------------------------------------- task builders
#
# Each builder writes a task definition of the shape TEACh's game files use, so that the
# spec comes out of `parse_teach_task` exactly as for a real game.

Task = dict[str, Any]


def _leaf(
    determiner: str,
    select: str,
    states: dict[str, int] | None = None,
    *,
    by: str = "objectType",
    shareable: bool = False,
) -> dict[str, Any]:
    return {
        "determiner": determiner,
        "primary_condition": by,
        "instance_shareable": shareable,
        "conditions": {by: select, **(states or {})},
    }


def _sub(determiner: str | int, task: Task) -> dict[str, Any]:
    return {"determiner": str(determiner), "task": task}


def _task(
    name: str,
    components: dict[str, Any],
    anchor: str | None,
    relations: Iterable[tuple[list[tuple[str, str | int]], str, bool]] = (),
) -> Task:
    return {
        "task_name": name,
        "task_anchor_object": anchor,
        "components": components,
        "relations": [
            {
                "property": "parentReceptacles",
                "head_entity_list": [h for h, _ in heads],
                "head_determiner_list": [str(d) for _, d in heads],
                "tail_entity_list": [tail],
                "tail_determiner_list": ["the" if single else "a"],
            }
            for heads, tail, single in relations
        ],
    }


def _knife() -> dict[str, Any]:
    return _leaf("a", "Knife", shareable=True)


def _coffee() -> Task:
    mug = _leaf("a", "Mug", {"isDirty": 0, "simbotIsFilledWithCoffee": 1})
    return _task("Coffee", {"coffee": mug}, "coffee")


def _toast() -> Task:
    return _task("Toast", {"toast": _leaf("a", "BreadSliced", {"isCooked": 1})}, "toast")


def _clean(what: str, every: bool = False) -> Task:
    sink = _leaf("a", "Sink", {"receptacle": 1}, shareable=True)
    dish = _leaf("all" if every else "a", what, {"isDirty": 0}, by="simbotObjectClass")
    return _task("Clean All X" if every else "Clean X", {"sink": sink, what: dish}, what)


def _sliced(food: str, cooked: bool = False) -> Task:
    states = {"simbotIsCooked": 1} if cooked else {}
    components = {"knife": _knife(), food: _leaf("a", food + "Sliced", states)}
    return _task("Cooked Slice Of X" if cooked else "Sliced X", components, food)


def _plate_of_toast() -> Task:
    components = {"toast": _sub("a", _toast()), "plate": _sub("a", _clean("Plate"))}
    return _task("Plate Of Toast", components, "plate", [([("toast", "a")], "plate", True)])


def _n_slices(count: int, food: str, dish: str, cooked: bool) -> Task:
    name = "N Cooked Slices Of X In Y" if cooked else "N Slices Of X In Y"
    components = {food: _sub(count, _sliced(food, cooked)), dish: _sub("a", _clean(dish))}
    return _task(name, components, dish, [([(food, count)], dish, True)])


def _put_all(what: str, where: str, one: bool) -> Task:
    components = {
        "objects": _leaf("all", what, by="simbotObjectClass"),
        "receptacle": _leaf("a", where, {"receptacle": 1}, by="simbotObjectClass", shareable=True),
    }
    name = "Put All X In One Y" if one else "Put All X On Y"
    return _task(name, components, None, [([("objects", "all")], "receptacle", one)])


def _sandwich(lettuce: int, tomato: int) -> Task:
    components = {
        "toast": _sub(2, _toast()),
        "lettuce": _sub(lettuce, _sliced("Lettuce")),
        "tomato": _sub(tomato, _sliced("Tomato")),
        "plate": _sub("a", _clean("Plate")),
    }
    heads: list[tuple[str, str | int]] = [("toast", 2), ("lettuce", lettuce), ("tomato", tomato)]
    return _task("Sandwich", components, "plate", [(heads, "plate", True)])


def _salad(lettuce: int, tomato: int, potato: int) -> Task:
    components = {
        "lettuce": _sub(lettuce, _sliced("Lettuce")),
        "tomato": _sub(tomato, _sliced("Tomato")),
        "potato": _sub(potato, _sliced("Potato", cooked=True)),
        "plate": _sub("a", _clean("Plate")),
    }
    heads: list[tuple[str, str | int]] = [
        ("lettuce", lettuce),
        ("tomato", tomato),
        ("potato", potato),
    ]
    return _task("Salad", components, "plate", [(heads, "plate", True)])


def count_of(text: str) -> int:
    """A count written in digits, else 1."""
    return int(text) if text.isdigit() else 1


def build_task(family: str, params: Sequence[str]) -> Task:
    """A task definition of `family` with TEACh's parameters (its `task_params`, as strings).

    >>> spec = parse_teach_task(build_task("N Slices Of X In Y", ["2", "Tomato", "in", "Bowl"]))
    >>> [(c.select, c.count) for c in spec.components]
    [('Knife', 1), ('TomatoSliced', 2), ('Sink', 1), ('Bowl', 1)]

    Breakfast takes 14: how many coffees, plates of toast, servings of two cooked potato
    slices and their dish, servings of an apple slice and their dish, sandwiches with their
    lettuce and tomato slices, salads with their lettuce, tomato and potato slices, and the
    serving spot. Raises ValueError for an unknown family or a wrong number of parameters.
    """
    p = list(params)
    need = {
        "Boil X": 1,
        "Clean X": 1,
        "Clean All X": 1,
        "Sliced X": 1,
        "Cooked Slice Of X": 1,
        "N Slices Of X In Y": 4,
        "N Cooked Slices Of X In Y": 4,
        "Put All X On Y": 3,
        "Put All X In One Y": 3,
        "Sandwich": 2,
        "Salad": 3,
        "Breakfast": 14,
    }.get(family, 0)
    if family not in FAMILIES or len(p) != need:
        raise ValueError(f"not a family with {len(p)} parameter(s): {family}")
    if family == "Coffee":
        return _coffee()
    if family == "Water Plant":
        plant = _leaf("a", "HousePlant", {"isFilledWithLiquid": 1})
        return _task(family, {"plant": plant}, None)
    if family == "Boil X":
        return _task(family, {"boiled": _leaf("a", p[0], {"simbotIsBoiled": 1})}, "boiled")
    if family == "Toast":
        return _toast()
    if family == "Plate Of Toast":
        return _plate_of_toast()
    if family in ("Clean X", "Clean All X"):
        return _clean(p[0], family == "Clean All X")
    if family in ("Sliced X", "Cooked Slice Of X"):
        return _sliced(p[0], family == "Cooked Slice Of X")
    if family in ("N Slices Of X In Y", "N Cooked Slices Of X In Y"):
        return _n_slices(count_of(p[0]), p[1], p[3], family == "N Cooked Slices Of X In Y")
    if family in ("Put All X On Y", "Put All X In One Y"):
        return _put_all(p[0], p[2], family == "Put All X In One Y")
    if family == "Sandwich":
        return _sandwich(count_of(p[0]), count_of(p[1]))
    if family == "Salad":
        return _salad(count_of(p[0]), count_of(p[1]), count_of(p[2]))
    parts = {
        "coffee": _sub(p[0], _coffee()),
        "toast": _sub(p[1], _plate_of_toast()),
        "potatoes": _sub(p[2], _n_slices(2, "Potato", p[3], cooked=True)),
        "apple": _sub(p[4], _n_slices(1, "Apple", p[5], cooked=False)),
        "sandwich": _sub(p[6], _sandwich(count_of(p[7]), count_of(p[8]))),
        "salad": _sub(p[9], _salad(count_of(p[10]), count_of(p[11]), count_of(p[12]))),
    }
    spot = _leaf("a", p[13], {"receptacle": 1}, shareable=True)
    heads: list[tuple[str, str | int]] = [(k, v["determiner"]) for k, v in parts.items()]
    return _task(family, {**parts, "serving_spot": spot}, None, [(heads, "serving_spot", False)])


def spec_of(family: str, params: Sequence[str], text: str = "") -> GoalSpec:
    """The goal spec of a family with parameters, marked as read from text.

    >>> [c.describe() for c in spec_of("Coffee", []).components]
    ['a Mug that is clean and filled with coffee']
    """
    spec = parse_teach_task(build_task(family, params))
    spec.source = "text"
    spec.text = text or describe(family, params)
    by_name = {c.name: c for c in spec.components}
    for relation in spec.relations:
        heads = ", ".join(f"{d} {by_name[h].select}" for h, d in relation.heads)
        where = by_name[relation.tail].select
        relation.text = f"{heads} {'on one' if relation.single else 'on a'} {where}"
    return spec


Signature = tuple[tuple[Any, ...], tuple[Any, ...]]


def signature(spec: GoalSpec) -> Signature:
    """A spec with its component names left out, for comparing specs: the sorted components
    as (object types selected, count or "all", states) and the sorted relations as (heads'
    types and determiners, tail's types, single tail).

    >>> signature(spec_of("Coffee", [])) == signature(parse_teach_task(build_task("Coffee", [])))
    True
    """

    def kinds(select: str) -> tuple[str, ...]:
        return tuple(sorted(types_of(select) or {select}))

    by_name = {c.name: c for c in spec.components}
    components = sorted(
        (kinds(c.select), "all" if c.every else c.count, tuple(sorted(c.states.items())))
        for c in spec.components
    )
    relations = sorted(
        (
            tuple(sorted((kinds(by_name[h].select), d) for h, d in r.heads if h in by_name)),
            kinds(by_name[r.tail].select) if r.tail in by_name else (r.tail,),
            r.single,
        )
        for r in spec.relations
    )
    return tuple(components), tuple(relations)


def describe(family: str, params: Sequence[str]) -> str:
    """A family with its parameters as a one-line task description."""
    p = list(params)
    if family == "Coffee":
        return "Make coffee in a clean mug."
    if family == "Water Plant":
        return "Water the plant."
    if family in ("Boil X", "Clean X", "Sliced X", "Cooked Slice Of X"):
        verb = {"Boil X": "Boil", "Clean X": "Clean a", "Sliced X": "Slice a"}.get(family)
        return f"{verb or 'Cook a slice of'} {p[0]}."
    if family == "Clean All X":
        return f"Clean all {p[0]}."
    if family == "Toast":
        return "Make a slice of toast."
    if family == "Plate Of Toast":
        return "Make a plate of toast."
    if family.startswith("N "):
        cooked = "cooked " if "Cooked" in family else ""
        return f"Serve {p[0]} {cooked}slice(s) of {p[1]} {p[2]} a {p[3]}."
    if family.startswith("Put All"):
        return f"Put all {p[0]} {p[1]} {'one' if 'One' in family else 'any'} {p[2]}."
    if family == "Sandwich":
        return f"Make a sandwich: 2 toast, {p[0]} lettuce, {p[1]} tomato slice(s)."
    if family == "Salad":
        return f"Make a salad: {p[0]} lettuce, {p[1]} tomato, {p[2]} cooked potato slice(s)."
    return "Prepare breakfast."
