"""Household task knowledge: which object types a goal needs.

The offline `rules` Judge uses this to tell a detour (handling an object the task never needs)
from preparation. Goals are read as plain text: TEACh's task descriptions ("Make a plate of
toast.", "Put all Book on any Desk.") and the Commander's words.

>>> sorted(relevant_types("Make a plate of toast.") & {"Bread", "Toaster", "Plate", "Apple"})
['Bread', 'Plate', 'Toaster']
>>> sorted(mentioned_types("put all the remote controls on the sofa", {"RemoteControl", "Sofa", "Mug"}))
['RemoteControl', 'Sofa']
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

KNIVES = frozenset({"Knife", "ButterKnife"})
SINK = frozenset({"Sink", "SinkBasin", "Faucet"})
STOVE = frozenset({"StoveBurner", "StoveKnob", "Pot", "Pan", "Kettle"})
WATER_VESSELS = frozenset(
    {"Cup", "Mug", "Bowl", "Pot", "Kettle", "Bottle", "WateringCan", "Glassbottle"}
)
DISHES = frozenset({"Plate", "Bowl", "Cup", "Mug", "Pot", "Pan"})

# TEACh task families: words that identify them in a goal, and the object types they need.
FAMILIES: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {
    "Coffee": (("coffee",), frozenset({"Mug", "CoffeeMachine"}) | SINK),
    "Water Plant": (("water the plant", "plant"), frozenset({"HousePlant"}) | WATER_VESSELS | SINK),
    "Clean All X": (("clean", "rinse", "wash"), SINK | frozenset({"DishSponge"})),
    "Boil X": (("boil",), STOVE | WATER_VESSELS | SINK | frozenset({"Microwave"})),
    "Plate Of Toast": (("toast",), KNIVES | frozenset({"Bread", "Toaster", "Plate"}) | SINK),
    "Sandwich": (
        ("sandwich",),
        KNIVES | frozenset({"Bread", "Toaster", "Plate", "Lettuce", "Tomato"}) | SINK,
    ),
    "Salad": (
        ("salad",),
        KNIVES
        | frozenset({"Lettuce", "Tomato", "Potato", "Plate", "Bowl", "Microwave"})
        | STOVE
        | SINK,
    ),
    "N Slices Of X In Y": (("slice",), KNIVES),
    "N Cooked Slices Of X In Y": (
        ("cook",),
        KNIVES | STOVE | frozenset({"Microwave", "Plate", "Bowl"}) | SINK,
    ),
    "Breakfast": (
        ("breakfast",),
        KNIVES
        | STOVE
        | SINK
        | frozenset(
            {
                "Mug",
                "CoffeeMachine",
                "Bread",
                "Toaster",
                "Plate",
                "Bowl",
                "Lettuce",
                "Tomato",
                "Potato",
                "Egg",
                "Apple",
                "Microwave",
            }
        ),
    ),
}

# TEACh's semantic classes, as they appear in "Put all X on any Y" goals.
CLASSES: dict[str, frozenset[str]] = {
    "Dishwares": frozenset({"Plate", "Bowl", "Cup", "Mug"}),
    "Dishware": frozenset({"Plate", "Bowl", "Cup", "Mug"}),
    "Drinkwares": frozenset({"Cup", "Mug", "WineGlass"}),
    "Tableware": frozenset(
        {"Plate", "Bowl", "Cup", "Mug", "Fork", "Spoon", "Knife", "ButterKnife"}
    ),
    "Silverware": frozenset({"Fork", "Spoon", "Knife", "ButterKnife"}),
    "Cookwares": frozenset({"Pot", "Pan", "Kettle"}),
    "Chairs": frozenset({"Chair", "ArmChair", "Sofa", "Stool"}),
    "Tables": frozenset({"DiningTable", "CoffeeTable", "SideTable", "Desk", "CounterTop"}),
    "Furniture": frozenset(
        {
            "Chair",
            "ArmChair",
            "Sofa",
            "Stool",
            "DiningTable",
            "CoffeeTable",
            "SideTable",
            "Desk",
            "Dresser",
            "Shelf",
            "Bed",
            "TVStand",
            "Ottoman",
            "CounterTop",
        }
    ),
    "Drinkware": frozenset({"Cup", "Mug", "WineGlass"}),
    "Fruit": frozenset({"Apple", "Tomato", "Potato", "Lettuce"}),
    "SportsEquipment": frozenset(
        {"TennisRacket", "BaseballBat", "BasketBall", "Dumbbell", "SoccerBall"}
    ),
    "SmallHandheldObjects": frozenset(
        {
            "RemoteControl",
            "KeyChain",
            "CellPhone",
            "CreditCard",
            "Pen",
            "Pencil",
            "Watch",
            "Book",
            "Newspaper",
            "TissueBox",
            "Box",
            "Statue",
            "Vase",
            "CD",
            "AlarmClock",
        }
    ),
}

_WORD = re.compile(r"[a-z]+")
_CAMEL = re.compile(r"[A-Z][a-z]*|[a-z]+|\d+")


def words(text: str) -> list[str]:
    """Lower-case words of a text, plurals folded to their singular."""
    return [_singular(w) for w in _WORD.findall(text.lower())]


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


@lru_cache(maxsize=4096)
def type_words(object_type: str) -> tuple[str, ...]:
    """The words of a CamelCase type: `CoffeeMachine` -> ('coffee', 'machine')."""
    return tuple(_singular(p.lower()) for p in _CAMEL.findall(object_type))


def mentioned_types(text: str, types: Iterable[str]) -> set[str]:
    """The types among `types` that `text` names, as one word run or as the exact type name."""
    said = words(text)
    joined = f" {' '.join(said)} "
    squashed = "".join(said)
    found: set[str] = set()
    for object_type in types:
        parts = type_words(object_type)
        if f" {' '.join(parts)} " in joined or (len(parts) > 1 and "".join(parts) in squashed):
            found.add(object_type)
    return found


def families(text: str) -> list[str]:
    """The task families a goal text points at."""
    lowered = " ".join(words(text))
    return [name for name, (keys, _) in FAMILIES.items() if any(k in lowered for k in keys)]


def relevant_types(text: str, known: Iterable[str] = ()) -> set[str]:
    """Object types a goal text needs: its families' types, classes it names, types it names."""
    needed: set[str] = set()
    for family in families(text):
        needed |= FAMILIES[family][1]
    said = {w.lower() for w in re.findall(r"[A-Za-z]+", text)}
    for name, members in CLASSES.items():
        if name.lower() in said:
            needed |= members
    needed |= mentioned_types(text, set(known) | _TABLE_TYPES)
    return needed


_TABLE_TYPES = frozenset(
    {t for types in CLASSES.values() for t in types}
    | {t for _, types in FAMILIES.values() for t in types}
)
