"""Words for objects: TEACh's type names, their plurals, and the everyday names people and models
use for them ("remote", "fridge", "counter", "silverware").

Two uses: reading goals written in words (`lookup("remotes")`), and mapping object names in
plans that are not TEACh types (`Counter`, `Table`, as model-written plans say) onto the scene's
types where that is unambiguous (`resolve_name`).

>>> sorted(lookup("remote controls"))
['RemoteControl']
>>> sorted(lookup("silverware"))
['Silverware']
>>> resolve_name("Counter2", None), resolve_name("Table", {"DiningTable", "Mug"})
('CounterTop', 'DiningTable')
>>> resolve_name("Table", {"DiningTable", "CoffeeTable"}) is None  # ambiguous: absent
True
>>> resolve_name("TomatoSlice", {"Tomato"}), resolve_name("SlicedBread", None)
('TomatoSliced', 'BreadSliced')
>>> resolve_name("StoveDial2", {"StoveKnob", "StoveBurner"})
'StoveKnob'
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from planverify.records.notation import object_type
from planverify.world.classes import CLASSES_OF_TYPE, TYPES, types_of

# Everyday names, lower case and singular, mapped to the type or class names they stand for.
# A name standing for several types at once (`table`) is ambiguous in a plan unless the scene
# has only one of them.
COMMON_NAMES: dict[str, tuple[str, ...]] = {
    "alarm": ("AlarmClock",),
    "armchair": ("ArmChair",),
    "ball": ("BasketBall",),
    "baseball": ("BaseballBat",),
    "basin": ("SinkBasin",),
    "bat": ("BaseballBat",),
    "bath": ("Bathtub",),
    "bin": ("GarbageCan",),
    "bookshelf": ("Shelf",),
    "burner": ("StoveBurner",),
    "butter knife": ("ButterKnife",),
    "can": ("GarbageCan",),
    "card": ("CreditCard",),
    "cell": ("CellPhone",),
    "cellular phone": ("CellPhone",),
    "chair": ("Chair", "ArmChair"),
    "clock": ("AlarmClock",),
    "clothe": ("Cloth",),  # "clothes", singular() of it
    "clothes": ("Cloth",),
    "coffee cup": ("Mug",),
    "coffee maker": ("CoffeeMachine",),
    "coffee mug": ("Mug",),
    "computer": ("Laptop",),
    "cooker": ("StoveBurner",),
    "cooktop": ("StoveBurner",),
    "couch": ("Sofa",),
    "counter": ("CounterTop",),
    "cupboard": ("Cabinet",),
    "cutlery": ("Silverware",),
    "dial": ("StoveKnob",),
    "dining room table": ("DiningTable",),
    "dish": ("Plate", "Bowl"),
    "dish cloth": ("Cloth",),
    "dish rag": ("Cloth",),
    "dish soap": ("SoapBottle",),
    "dishes": ("Dishware",),
    "dresser drawer": ("Drawer",),
    "dustbin": ("GarbageCan",),
    "end table": ("SideTable",),
    "freezer": ("Fridge",),
    "fridge": ("Fridge",),
    "frying pan": ("Pan",),
    "garbage": ("GarbageCan",),
    "glass": ("Cup",),
    "hob": ("StoveBurner",),
    "houseplant": ("HousePlant",),
    "key": ("KeyChain",),
    "keychain": ("KeyChain",),
    "keys": ("KeyChain",),
    "kitchen table": ("DiningTable",),
    "knob": ("StoveKnob",),
    "loaf": ("Bread",),
    "mobile": ("CellPhone",),
    "nightstand": ("SideTable",),
    "oven": ("Microwave",),
    "pepper": ("PepperShaker",),
    "phone": ("CellPhone",),
    "plant": ("HousePlant",),
    "racket": ("TennisRacket",),
    "rag": ("Cloth",),
    "refrigerator": ("Fridge",),
    "remote": ("RemoteControl",),
    "rubbish": ("GarbageCan",),
    "salt": ("SaltShaker",),
    "saucepan": ("Pot",),
    "seat": ("Chairs",),
    "skillet": ("Pan",),
    "smartphone": ("CellPhone",),
    "sponge": ("DishSponge",),
    "sport equipment": ("SportsEquipment",),
    "sports equipment": ("SportsEquipment",),
    "sports gear": ("SportsEquipment",),
    "spud": ("Potato",),
    "stove": ("StoveBurner",),
    "stove dial": ("StoveKnob",),
    "stove top": ("StoveBurner",),
    "table": ("DiningTable", "CoffeeTable", "SideTable", "Desk"),
    "tap": ("Faucet",),
    "tea cup": ("Cup",),
    "tea towel": ("Cloth",),
    "teddy": ("TeddyBear",),
    "tissue": ("TissueBox",),
    "tissues": ("TissueBox",),
    "trash": ("GarbageCan",),
    "trash can": ("GarbageCan",),
    "tub": ("Bathtub",),
    "tumbler": ("Cup",),
    "tv": ("Television",),
    "tv remote": ("RemoteControl",),
    "utensil": ("Silverware",),
    "veggie": ("Vegetables",),
    "wash cloth": ("Cloth",),
    "water can": ("WateringCan",),
    "wine": ("WineBottle",),
    "work top": ("CounterTop",),
    "worktop": ("CounterTop",),
}

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_CLASS_NAMES = frozenset(c for classes in CLASSES_OF_TYPE.values() for c in classes)


def singular(word: str) -> str:
    """A plural English word's singular form, as far as object names need it.

    >>> singular("knives"), singular("dishes"), singular("tomatoes"), singular("glass")
    ('knife', 'dish', 'tomato', 'glass')
    >>> singular("shelves"), singular("loaves"), singular("puppies")
    ('shelf', 'loaf', 'puppy')
    """
    if word.endswith("ives") and len(word) > 5:
        return word[:-3] + "fe"
    if word.endswith(("lves", "aves")) and len(word) > 5:  # shelves, loaves
        return word[:-3] + "f"
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "sses", "toes", "oes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us")) and len(word) > 3:
        return word[:-1]
    return word


def words_of(name: str) -> tuple[str, ...]:
    """The lower-case words of a CamelCase name: `CoffeeMachine` -> ('coffee', 'machine')."""
    return tuple(w.lower() for w in _CAMEL.findall(name))


@cache
def _phrases() -> dict[str, frozenset[str]]:
    """Every known phrase (singular, lower case) and the type or class names it stands for."""
    table: dict[str, set[str]] = {}
    for name in TYPES | _CLASS_NAMES:
        for phrase in {" ".join(words_of(name)), name.lower()}:
            table.setdefault(phrase, set()).add(name)
            table.setdefault(" ".join(singular(w) for w in phrase.split()), set()).add(name)
    for phrase, names in COMMON_NAMES.items():
        table.setdefault(phrase, set()).update(names)
    for phrase, found in list(table.items()):  # run together: "trashcan", "teacup"
        table.setdefault(phrase.replace(" ", ""), set()).update(found)
    return {phrase: frozenset(names) for phrase, names in table.items()}


def lookup(phrase: str) -> frozenset[str]:
    """The type or class names a phrase stands for ("remote controls" -> RemoteControl)."""
    words = [singular(w) for w in re.findall(r"[a-z]+", phrase.lower())]
    table = _phrases()
    return table.get(" ".join(words), frozenset()) or table.get("".join(words), frozenset())


def phrases() -> dict[str, frozenset[str]]:
    """The whole vocabulary: phrase -> type or class names (for scanning texts)."""
    return _phrases()


def _slices_named(words: tuple[str, ...]) -> set[str]:
    """The slice types a name cut from its whole names: ("tomato", "slice") -> TomatoSliced."""
    if words[-1:] == ("slice",):
        whole = words[:-1]
    elif words[:1] == ("sliced",):
        whole = words[1:]
    else:
        return set()
    return {f"{t}Sliced" for n in lookup(" ".join(whole)) for t in types_of(n)} & TYPES


def resolve_name(name: str, scene_types: Iterable[str] | None) -> str | None:
    """The TEACh type of an object name in a plan, or None when it names no object the scene
    can have: a TEACh type stays itself; another name is looked up and kept when it points at
    exactly one type (of the scene's types, when the scene is known)."""
    kind = object_type(name)
    if kind in TYPES:
        return kind
    words = words_of(kind)
    candidates = {t for n in lookup(" ".join(words)) for t in types_of(n)}
    if not candidates:
        candidates = _slices_named(words)
    if scene_types is not None:
        present = set(scene_types)
        candidates &= present | {f"{whole}Sliced" for whole in present}  # slices are cut later
    for pair in (("Sink", "SinkBasin"), ("Bathtub", "BathtubBasin")):
        if len(candidates) == 2 and candidates == set(pair):  # one and the same to TEACh
            return pair[1]
    return next(iter(candidates)) if len(candidates) == 1 else None
