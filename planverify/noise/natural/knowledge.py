"""What the natural generator knows of TEACh: the kinds of mistakes and how often each is
tried, look-alikes, aliases, everyday words, and the places and appliances of each use.
"""

from __future__ import annotations

import re
from typing import Literal, get_args

from planverify.records.notation import escape_text
from planverify.world.classes import base_type
from planverify.world.vocabulary import words_of

MistakeKind = Literal[
    "wrong_placement",
    "wrong_object",
    "ineffective_action",
    "detour",
    "nonexistent_object",
    "missing_step",
]
MISTAKES: tuple[MistakeKind, ...] = get_args(MistakeKind)
WEIGHTS: dict[MistakeKind, float] = {
    "wrong_placement": 3,
    "wrong_object": 3,
    "ineffective_action": 4,  # fits fewer plans, so tried first more often
    "detour": 3,
    "missing_step": 2,
    "nonexistent_object": 0.5,  # model-written plans only
}
"""How often each kind is tried first: what people do often, more often."""
CHANGES = ("colloquial_goal", "goal_in_dialogue", "renamed")
COLLOQUIAL_GOAL = 0.3  # probability of an everyday goal
GOAL_IN_DIALOGUE = 0.25  # probability of a greeting as the goal (else the goal as given)
RENAMED = 0.3  # probability of renamed object types

# --------------------------------------------------------------------------- world knowledge

CLASSES: dict[str, frozenset[str]] = {
    "Drinkware": frozenset({"Cup", "Mug", "WineGlass"}),
    "Dishware": frozenset({"Plate", "Bowl", "Cup", "Mug"}),
    "Silverware": frozenset({"Fork", "Spoon", "Knife", "ButterKnife"}),
    "Tableware": frozenset(
        {"Plate", "Bowl", "Cup", "Mug", "Fork", "Spoon", "Knife", "ButterKnife", "WineGlass"}
    ),
    "Cookware": frozenset({"Pot", "Pan", "Kettle"}),
    "Fruit": frozenset({"Apple", "Tomato"}),
    "SportsEquipment": frozenset({"BaseballBat", "TennisRacket", "BasketBall"}),
    "Chairs": frozenset({"Chair", "ArmChair", "Sofa", "Stool"}),
    "Tables": frozenset({"DiningTable", "CoffeeTable", "SideTable", "Desk"}),
    "Furniture": frozenset(
        {
            "Chair",
            "ArmChair",
            "Sofa",
            "Stool",
            "Ottoman",
            "DiningTable",
            "CoffeeTable",
            "SideTable",
            "Desk",
            "Dresser",
            "Bed",
            "TVStand",
            "Shelf",
            "CounterTop",
        }
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
            "AlarmClock",
            "Statue",
            "Vase",
        }
    ),
}
"""TEACh's object classes as goals name them ("Put all Drinkware ..."), with their types."""

CLASS_WORDS = {
    "Drinkware": ("drinkware", "cups"),
    "Dishware": ("dishes",),
    "Silverware": ("silverware", "cutlery"),
    "Cookware": ("pots and pans", "cookware"),
    "Fruit": ("fruit",),
    "SportsEquipment": ("sports equipment", "sports gear"),
}  # how people name a class of things they want moved

LOOK_ALIKES: dict[str, tuple[str, ...]] = {
    "Mug": ("Cup",),
    "Cup": ("Mug", "WineGlass"),
    "Knife": ("Spoon", "Fork", "Spatula"),
    "ButterKnife": ("Spoon", "Fork"),
    "Plate": ("Bowl",),
    "Bowl": ("Plate", "Cup"),
    "Pot": ("Pan", "Kettle"),
    "Pan": ("Pot",),
    "Kettle": ("Pot",),
    "SaltShaker": ("PepperShaker",),
    "PepperShaker": ("SaltShaker",),
    "Pen": ("Pencil",),
    "Pencil": ("Pen",),
    "Cloth": ("HandTowel", "DishSponge"),
    "DishSponge": ("Cloth",),
    "Newspaper": ("Book",),
    "Book": ("Newspaper",),
    "RemoteControl": ("CellPhone", "KeyChain"),
    "CellPhone": ("RemoteControl",),
    "KeyChain": ("CreditCard",),
    "CreditCard": ("KeyChain",),
    "AlarmClock": ("Watch", "Box"),
    "Watch": ("AlarmClock",),
    "TissueBox": ("Box",),
    "Apple": ("Tomato", "Potato"),
    "Tomato": ("Apple",),
    "Potato": ("Apple", "Egg"),
    "Egg": ("Potato",),
    "Spatula": ("Ladle",),
    "Ladle": ("Spatula",),
    "Fork": ("Spoon",),
    "Spoon": ("Fork",),
    "Vase": ("Statue",),
    "Statue": ("Vase",),
    "TennisRacket": ("BaseballBat",),
    "BaseballBat": ("TennisRacket",),
    "Laptop": ("Book",),
    "Pillow": ("Cloth",),
}
"""Objects people take for one another: the type wanted -> look-alikes fetched instead."""

KNIVES = frozenset({"Knife", "ButterKnife"})
NOT_KNIVES = ("Spoon", "Fork", "Spatula")  # what gets tried for slicing by mistake
VESSELS = frozenset({"Cup", "Mug", "Bowl", "Pot", "Kettle", "WineGlass", "Bottle"})
PLANTS = frozenset({"HousePlant"})
SINKS = frozenset({"Sink", "SinkBasin"})
LOADED_BY = {  # appliance switched on -> receptacles a thing goes in first
    "Faucet": SINKS,
    "CoffeeMachine": frozenset({"CoffeeMachine"}),
    "Toaster": frozenset({"Toaster"}),
    "Microwave": frozenset({"Microwave"}),
}
CONFUSED_APPLIANCES = {
    "Toaster": ("Microwave", "CoffeeMachine"),
    "CoffeeMachine": ("Microwave", "Toaster"),
    "Microwave": ("Toaster", "CoffeeMachine"),
}
ESSENTIAL_SWITCHES = frozenset(
    {"Toaster", "CoffeeMachine", "Faucet", "StoveKnob", "StoveBurner", "Microwave"}
)
CONTAINERS = frozenset({"Fridge", "Cabinet", "Drawer", "Microwave", "Safe", "Box"})
SEARCHED = frozenset({"Cabinet", "Drawer"})  # kinds a room has many of, searched one by one
PLACE_GROUPS: tuple[frozenset[str], ...] = (
    frozenset(
        {"DiningTable", "CoffeeTable", "SideTable", "Desk", "CounterTop", "Dresser", "TVStand"}
    ),
    frozenset({"Sofa", "ArmChair", "Chair", "Stool", "Bed", "Ottoman"}),
    frozenset({"Plate", "Bowl"}),
    frozenset({"Sink", "SinkBasin", "CounterTop"}),
    frozenset({"BathtubBasin", "SinkBasin", "CounterTop"}),
    frozenset({"Shelf", "Dresser", "SideTable", "Desk"}),
)
SAME_PLACE = (frozenset({"Sink", "SinkBasin"}), frozenset({"Bathtub", "BathtubBasin"}))
APPLIANCE_TARGETS = frozenset(
    {"CoffeeMachine", "Toaster", "Microwave", "StoveBurner", "Pot", "Pan"}
)
UNFIT_PLACES = frozenset(
    {"Floor", "GarbageCan", "Toaster", "CoffeeMachine", "Microwave", "StoveBurner", "Fridge"}
)
FALLBACK_SURFACES = ("CounterTop", "DiningTable", "SideTable", "Shelf")
FALLBACK_LOOSE = ("SaltShaker", "PepperShaker", "Spatula", "DishSponge", "Book", "Pen")

ALIASES: dict[str, tuple[str, ...]] = {
    "DiningTable": ("Table",),
    "CounterTop": ("Counter", "Countertop"),
    "StoveBurner": ("Stove", "Burner"),
    "StoveKnob": ("Knob", "StoveDial"),
    "HousePlant": ("Plant",),
    "RemoteControl": ("Remote", "TVRemote"),
    "GarbageCan": ("TrashCan", "Bin"),
    "Sofa": ("Couch",),
    "Faucet": ("Tap",),
    "DishSponge": ("Sponge",),
    "CoffeeMachine": ("CoffeeMaker",),
    "Television": ("TV",),
    "CellPhone": ("Phone",),
    "Cabinet": ("Cupboard",),
    "Fridge": ("Refrigerator",),
    "SinkBasin": ("Basin",),
    "TissueBox": ("Tissues",),
    "SaltShaker": ("Salt",),
    "PepperShaker": ("Pepper",),
    "BreadSliced": ("BreadSlice", "SlicedBread"),
    "TomatoSliced": ("TomatoSlice",),
    "PotatoSliced": ("PotatoSlice",),
    "LettuceSliced": ("LettuceSlice",),
    "AppleSliced": ("AppleSlice",),
    "ArmChair": ("Armchair",),
}
"""How model-written plans name TEACh types: names no TEACh scene has."""

INVENTED: dict[str, tuple[str, ...]] = {
    "PickUp": ("Paper", "Napkin", "Coaster", "Tray", "Magazine", "Scissors", "Charger"),
    "Open": ("Dishwasher", "Oven", "Pantry"),
    "ToggleOn": ("Blender", "Radio", "Oven"),
}
"""Objects no TEACh scene has, which model-written plans invent, by what they do with them."""

COLLOQUIAL: dict[str, tuple[str, str]] = {  # type -> (one, many)
    "RemoteControl": ("remote", "remotes"),
    "HousePlant": ("plant", "plants"),
    "CounterTop": ("counter", "counters"),
    "DiningTable": ("dining table", "dining tables"),
    "SinkBasin": ("sink", "sinks"),
    "BathtubBasin": ("bathtub", "bathtubs"),
    "GarbageCan": ("bin", "bins"),
    "DishSponge": ("sponge", "sponges"),
    "TissueBox": ("tissue box", "tissue boxes"),
    "CellPhone": ("phone", "phones"),
    "KeyChain": ("keys", "keys"),
    "Cloth": ("cloth", "cloths"),
    "Knife": ("knife", "knives"),
    "ButterKnife": ("butter knife", "butter knives"),
    "Potato": ("potato", "potatoes"),
    "Tomato": ("tomato", "tomatoes"),
    "Glassbottle": ("glass bottle", "glass bottles"),
    "Chairs": ("chair", "chairs"),
    "Tables": ("table", "tables"),
    "Drinkware": ("cup", "cups"),
    "Dishware": ("dish", "dishes"),
    "Cookware": ("pot", "pots and pans"),
    "Fruit": ("piece of fruit", "fruit"),
    "SportsEquipment": ("piece of sports equipment", "sports equipment"),
    "SmallHandheldObjects": ("small thing", "small things"),
    "Furniture": ("piece of furniture", "furniture"),
    "Silverware": ("piece of silverware", "silverware"),
    "Tableware": ("piece of tableware", "tableware"),
}
NUMBERS = ("no", "one", "two", "three", "four", "five")
GREETINGS = ("hi", "hello", "what should I do?", "Hi! What should I do today?", "hey there")

_INSTANCE = re.compile(r"\d+$")


def everyday_words(kind: str, *, many: bool = False) -> str:
    """Everyday words for a type or class: `RemoteControl` -> "remote", many -> "remotes"."""
    if kind in COLLOQUIAL:
        return COLLOQUIAL[kind][1 if many else 0]
    if kind.endswith("Sliced"):
        return f"{everyday_words(base_type(kind))} slice" + ("s" if many else "")
    text = " ".join(words_of(kind)) or kind.lower()
    if many and not text.endswith("s"):
        text += "es" if text.endswith(("sh", "ch", "x")) else "s"
    return text


def driver_line(verb: str, *objects: str) -> str:
    return f"Driver.{verb}({', '.join(repr(o) for o in objects)})"


def say_line(agent: str, text: str) -> str:
    return f"{agent}.Say('{escape_text(text)}')"
