"""Near types: "cup" in a goal, a Mug in the plan. Read from words, a goal may name one type where
it means another of the same small class (TEACh's Drinkware holds Cup, Mug and Bottle).

TEACh's own task definitions are exact: a Mug cleaned for "Clean all the Cups" is a mistake there,
and so it can be in a plan written for words. `fit_to_plan` decides by what the plan does with
the object: a spec read from text for cleaning or putting objects somewhere widens a type to
its near class when the plan handles no object of the type the words name and does to one of a
near type what the goal asks: cleans it (it is in a sink when the water runs), or leaves it on
the place named (its last put-down). A Mug fetched and put back for "clean all the cups" leaves
the spec as it is, and so does a Mug cleaned beside the cups (it is one too many).

>>> from planverify.world.text_goals import read_goal
>>> spec = read_goal("clean all the cups", []).spec
>>> cleans_a_mug = ["Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'Sink')",
...     "Driver.ToggleOn('Faucet')"]
>>> put_back = ["Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'CounterTop')"]
>>> fit_to_plan(spec, cleans_a_mug).text, fit_to_plan(spec, put_back).text
('Clean all Drinkware.', 'Clean all Cup.')
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from planverify.records.notation import parse_action
from planverify.world.classes import types_of
from planverify.world.goals import GoalSpec
from planverify.world.vocabulary import resolve_name

NEAR_CLASSES = (
    "Drinkware",
    "Dishware",
    "Knives",
    "Chairs",
    "Tables",
    "Lamps",
    "Soap",
    "WritingUtensils",
)
"""Classes whose types words may name for one another ("cup" for a Mug, "table" for a desk),
smallest first; not food (an apple is no tomato) nor wide classes such as Tableware."""

_SINKS = frozenset(types_of("Sink"))
_CLEAN = ("Clean X", "Clean All X")
_PUT = ("Put All X On Y", "Put All X In One Y")


def near_class(kinds: Collection[str], other: str) -> str | None:
    """The smallest near class holding `other` and one of `kinds`, or None."""
    return next(
        (c for c in NEAR_CLASSES if other in types_of(c) and types_of(c) & set(kinds)), None
    )


def fit_to_plan(spec: GoalSpec, plan: Sequence[str]) -> GoalSpec:
    """A spec read from text, its types widened to a near class where the plan does the goal's
    work on a near type (see the module); any other spec is returned as it is."""
    if spec.source != "text" or spec.task not in _CLEAN + _PUT:
        return spec
    named, cleaned, ends = _what_the_plan_does(plan)
    wider: dict[str, str] = {}  # component name -> its near class
    if spec.task in _CLEAN:
        dish = next(c for c in spec.components if "isDirty" in c.states)
        _widen(wider, dish.name, dish.select, cleaned, named)
    else:
        heads = spec.relations[0].heads[0][0]
        tail = spec.relations[0].tail
        by_name = {c.name: c for c in spec.components}
        places = types_of(by_name[tail].select)
        done = {t for t, w in ends if w in places}
        _widen(wider, heads, by_name[heads].select, done, named)
        moved = types_of(wider.get(heads, by_name[heads].select))
        _widen(wider, tail, by_name[tail].select, {w for t, w in ends if t in moved}, named)
    return _widened(spec, wider) if wider else spec


def _what_the_plan_does(
    plan: Sequence[str],
) -> tuple[set[str], set[str], set[tuple[str, str]]]:
    """The types of the objects the plan names, of those it cleans (in a sink when the water
    runs), and each object's type with the type of the place it is last put on."""
    named: set[str] = set()
    placed: dict[str, tuple[str, str]] = {}  # object name -> (its type, type of its place)
    cleaned: set[str] = set()
    for line in plan:
        action = parse_action(line)
        kinds = [resolve_name(o, None) or o for o in action.objects]
        named.update(kinds)
        if action.verb == "PutAOnB" and len(kinds) == 2:
            placed[action.objects[0]] = (kinds[0], kinds[1])
        elif action.verb == "PickUp" and action.objects:
            placed.pop(action.objects[0], None)
        elif action.verb == "ToggleOn" and kinds[:1] == ["Faucet"]:
            cleaned |= {t for t, where in placed.values() if where in _SINKS}
    return named, cleaned, set(placed.values())


def _widen(wider: dict[str, str], name: str, select: str, done: set[str], named: set[str]) -> None:
    """Record a component's near class when the plan names no object of its types and does the
    goal's work on a near type."""
    kinds = types_of(select)
    if kinds & named:
        return
    classes = {near_class(kinds, t) for t in done} - {None}
    if len(classes) == 1:
        wider[name] = str(classes.pop())


def _widened(spec: GoalSpec, wider: dict[str, str]) -> GoalSpec:
    out = spec.model_copy(deep=True)
    for component in out.components:
        if component.name in wider:
            old, component.select = component.select, wider[component.name]
            out.text = out.text.replace(old, component.select)
            for relation in out.relations:
                relation.text = relation.text.replace(old, component.select)
    return out


__all__ = ["NEAR_CLASSES", "fit_to_plan", "near_class"]
