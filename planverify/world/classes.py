"""TEACh's object classes: which object types a class name in a task definition stands for.

Task definitions name objects by type (`objectType: "Mug"`) or by class (`simbotObjectClass:
"Tableware"`); a class condition is met by any object of a type in that class. The table below
records, for every AI2-THOR type that belongs to some class, the classes TEACh puts it in (the
facts come from TEACh's published object-class table). A class name that is also a type stands
for that type as well (`Plate`, `Mug`, `RemoteControl`, `Sink`, ...), and `Sink`/`SinkBasin`,
`Bathtub`/`BathtubBasin` count as one another, as TEACh's own goal checks do.

>>> sorted(types_of("Silverware"))
['ButterKnife', 'Fork', 'Spoon']
>>> sorted(types_of("Sink"))
['Sink', 'SinkBasin']
>>> "Furniture" in classes_of("Sofa")
True
"""

from __future__ import annotations

from functools import cache

# type -> the classes it belongs to
CLASSES_OF_TYPE: dict[str, tuple[str, ...]] = {
    "AlarmClock": ("Electronics", "RoomDecor"),
    "Apple": ("Food", "Fruit"),
    "AppleSliced": ("Food", "Fruit"),
    "ArmChair": ("Furniture", "Chairs"),
    "BaseballBat": ("SportsEquipment",),
    "BasketBall": ("SportsEquipment",),
    "Bed": ("Furniture",),
    "Blinds": ("WallDecor",),
    "Book": ("MediaEntertainment", "SmallHandheldObjects"),
    "Bottle": ("Tableware", "Drinkware"),
    "Bowl": ("Tableware", "Dishware"),
    "Bread": ("Food",),
    "BreadSliced": ("Food",),
    "ButterKnife": ("Silverware", "Knives", "KitchenUtensils"),
    "CD": ("MediaEntertainment", "SmallHandheldObjects"),
    "Candle": ("RoomDecor",),
    "CellPhone": ("Electronics", "SmallHandheldObjects", "MediaEntertainment"),
    "Chair": ("Furniture", "Chairs"),
    "Cloth": ("CleaningProducts",),
    "CoffeeMachine": ("Appliances",),
    "CoffeeTable": ("Furniture", "Tables"),
    "CreditCard": ("SmallHandheldObjects",),
    "Cup": ("Tableware", "Drinkware"),
    "Curtains": ("WallDecor",),
    "Desk": ("Furniture", "Tables"),
    "DeskLamp": ("Lights", "Lamps"),
    "Desktop": ("Electronics", "MediaEntertainment", "Computers"),
    "DiningTable": ("Furniture", "Tables"),
    "DishSponge": ("CleaningProducts",),
    "Dresser": ("Furniture",),
    "Dumbbell": ("SportsEquipment",),
    "Egg": ("Food",),
    "EggCracked": ("Food",),
    "Faucet": ("WaterSources",),
    "FloorLamp": ("Lights", "Lamps"),
    "Footstool": ("Furniture",),
    "Fork": ("Silverware", "KitchenUtensils"),
    "Fridge": ("Appliances",),
    "GarbageBag": ("CleaningProducts",),
    "HandTowel": ("HygieneProducts",),
    "HousePlant": ("RoomDecor",),
    "Kettle": ("Cookware",),
    "KeyChain": ("SmallHandheldObjects",),
    "Knife": ("Cookware", "Knives", "KitchenUtensils"),
    "Ladle": ("Cookware", "KitchenUtensils"),
    "Laptop": ("Electronics", "MediaEntertainment", "Computers"),
    "Lettuce": ("Food", "Vegetables"),
    "LettuceSliced": ("Food", "Vegetables"),
    "LightSwitch": ("Lights",),
    "Microwave": ("Appliances",),
    "Mug": ("Tableware", "Drinkware"),
    "Newspaper": ("MediaEntertainment",),
    "Ottoman": ("Furniture",),
    "Painting": ("WallDecor",),
    "Pan": ("Cookware",),
    "PaperTowel": ("CleaningProducts",),
    "Pen": ("SmallHandheldObjects", "WritingUtensils"),
    "Pencil": ("SmallHandheldObjects", "WritingUtensils"),
    "PepperShaker": ("Tableware", "Condiments"),
    "Plate": ("Tableware", "Dishware"),
    "Plunger": ("CleaningProducts",),
    "Poster": ("WallDecor",),
    "Pot": ("Cookware",),
    "Potato": ("Food", "Vegetables"),
    "PotatoSliced": ("Food", "Vegetables"),
    "RemoteControl": ("Electronics", "SmallHandheldObjects", "MediaEntertainment"),
    "RoomDecor": (),
    "SaltShaker": ("Tableware", "Condiments"),
    "ScrubBrush": ("CleaningProducts",),
    "Shelf": ("Furniture", "Tables"),
    "ShowerCurtain": ("WallDecor",),
    "ShowerHead": ("WaterSources",),
    "SideTable": ("Furniture", "Tables"),
    "SoapBar": ("CleaningProducts", "HygieneProducts", "Soap"),
    "SoapBottle": ("CleaningProducts", "HygieneProducts", "Soap"),
    "Sofa": ("Furniture", "Chairs"),
    "Spatula": ("Cookware", "KitchenUtensils"),
    "Spoon": ("Silverware", "KitchenUtensils"),
    "SprayBottle": ("CleaningProducts",),
    "Statue": ("RoomDecor",),
    "Stool": ("Furniture", "Chairs"),
    "StoveBurner": ("Appliances",),
    "StoveKnob": ("Appliances",),
    "TVStand": ("Furniture",),
    "TableTopDecor": ("RoomDecor",),
    "TeddyBear": ("RoomDecor",),
    "Television": ("Electronics", "MediaEntertainment"),
    "TennisRacket": ("SportsEquipment",),
    "TissueBox": ("CleaningProducts", "HygieneProducts"),
    "Toaster": ("Appliances",),
    "Toilet": ("WaterSources",),
    "ToiletPaper": ("CleaningProducts",),
    "Tomato": ("Food", "Fruit"),
    "TomatoSliced": ("Food", "Fruit"),
    "Towel": ("HygieneProducts",),
    "VacuumCleaner": ("Appliances", "CleaningProducts"),
    "Vase": ("RoomDecor",),
    "Watch": ("SmallHandheldObjects",),
    "Window": ("WallDecor",),
    "WineBottle": ("Tableware", "RoomDecor"),
}

# Types TEACh's scenes have that belong to no class (receptacles, structure, ...).
OTHER_TYPES = frozenset(
    {
        "AluminumFoil",
        "Bathtub",
        "BathtubBasin",
        "Boots",
        "Box",
        "Cabinet",
        "CounterTop",
        "DogBed",
        "Drawer",
        "Floor",
        "GarbageCan",
        "HandTowelHolder",
        "LaundryHamper",
        "Mirror",
        "PaperTowelRoll",
        "Pillow",
        "Safe",
        "ShelvingUnit",
        "ShowerDoor",
        "ShowerGlass",
        "Sink",
        "SinkBasin",
        "ToiletPaperHanger",
        "TowelHolder",
        "WateringCan",
    }
)

DERIVED = {"Sliced": ("Apple", "Bread", "Lettuce", "Potato", "Tomato"), "Cracked": ("Egg",)}
"""Types that exist only after a state change: `BreadSliced` after slicing bread, `EggCracked`."""

TYPES = (
    frozenset(CLASSES_OF_TYPE)
    | OTHER_TYPES
    | frozenset(base + suffix for suffix, bases in DERIVED.items() for base in bases)
)
"""Every object type of TEACh's scenes, derived types included."""

_EQUIVALENT = {
    "Sink": "SinkBasin",
    "SinkBasin": "Sink",
    "Bathtub": "BathtubBasin",
    "BathtubBasin": "Bathtub",
}


def classes_of(object_type: str) -> tuple[str, ...]:
    """The classes of a type (a derived type, `AppleSliced`, has those of its own entry)."""
    return CLASSES_OF_TYPE.get(object_type, ())


@cache
def types_of(name: str) -> frozenset[str]:
    """The object types a type-or-class name in a task definition stands for."""
    found = {t for t, classes in CLASSES_OF_TYPE.items() if name in classes}
    if name in TYPES:
        found.add(name)
    if name in _EQUIVALENT:
        found.add(_EQUIVALENT[name])
    return frozenset(found)


def is_class(name: str) -> bool:
    """Whether a name is a class that stands for more than itself (`Tableware`, `Chairs`)."""
    return bool(types_of(name) - {name, _EQUIVALENT.get(name, name)})


def base_type(object_type: str) -> str:
    """The whole object a derived type comes from: `BreadSliced` -> `Bread`."""
    for suffix, bases in DERIVED.items():
        if object_type.endswith(suffix) and object_type[: -len(suffix)] in bases:
            return object_type[: -len(suffix)]
    return object_type
