"""Human-like mistakes with exact labels: a second error generator, independent of `corrupt`.

`planverify.noise.injected` injects the paper's error taxonomy. This module models instead how people
and model-written plans go wrong in TEACh-like episodes, read off real games: a thing put in the
wrong place and corrected, the wrong object fetched and swapped, an action that cannot work yet
followed by the one that does, a look at objects next to the one wanted, steps on objects the
scene does not have, and forgotten steps. It also varies the input the way real requests vary,
without making errors: the goal phrased in everyday words or object classes, the goal left to
the dialogue, and objects named as model-written plans name them.

Errors (the label's `error`; every inserted step is REMOVE-labelled unless said otherwise):

- `wrong_placement`: before the plan puts a held X on R, the Driver puts X on a wrong place W
  (never a basin or a device that could act on X: `planverify.noise.injected.ACTING_PLACES`), says so (`Driver.Say('oops')`, never labelled), and then either picks X up again (the wrong
  put-down and the re-pickup are labelled) or, as a written plan may do, goes straight on to
  put X on R with no new pick-up: then only the wrong put-down is labelled, and the put on R is
  not an error even though a naive simulator would call it impossible.
- `wrong_object`: before the plan picks up R, the Driver fetches a look-alike W the task does
  not need (a Cup for the Mug, a Spoon for the Knife, a PepperShaker for the SaltShaker) and puts
  it back; sometimes after taking it to R's destination, trying to slice with it, or pouring
  from it while it is empty; a remark of either agent may follow, unlabelled.
- `ineffective_action`: a step that cannot have its intended effect, before the one that does:
  slicing before the knife is picked up, switching on the wrong appliance or stove knob (maybe
  switching it off again), running the faucet or an appliance before the thing is in it, or
  pouring from a vessel that is still empty into the plant.
- `detour`: an object next to the one the plan picks up (sharing its receptacle in the scene's
  `parent` lists) picked up and put back, or opened and closed; or another cabinet or drawer of
  the kind the plan opens, opened and closed first.
- `nonexistent_object`: a detour on an object no TEACh scene has (`Paper`, `Dishwasher`,
  `Blender`), as model-written plans invent them.
- `missing_step`: an essential step forgotten (a switch-on, a slice, the pour into the plant,
  opening a closed container): removed, with a MISSING label as `planverify.noise.injected` writes it.

Changes that are not errors (listed in `injected` as `{"change": ...}`, never labelled):

- `colloquial_goal`: the goal in everyday words or object classes ("put all the remotes on one
  coffee table", "put the silverware on the dining table", "make me a coffee");
- `goal_in_dialogue`: the goal becomes a greeting ("hi", "what should I do?"); when no Commander
  line asks for the task, a Commander line asking for it in everyday words is added;
- `renamed`: object types renamed as model-written plans name them (`Table` for `DiningTable`,
  `Counter` for `CounterTop`), everywhere in the plan, in MISSING labels and in `clean`.

The record keeps the format of `planverify.noise.injected`: `labels`, `injected` (one note per error,
`{"error", "lines", "variant"}` or `{"error": "missing_step", "after", "action"}`, then the
changes) and `clean`, the plan without the errors: drop the REMOVE-labelled steps and the
remarks listed in `injected`, put the MISSING actions back, and `clean` comes out exactly.

>>> import random
>>> episode = Episode(id="e1", goal="Put all Mug in any Sink.",
...     actions=["Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'Sink')"])
>>> bad = natural_episode(episode, rng=random.Random(0), errors=1, kinds=["wrong_placement"],
...     changes=False)
>>> for line in bad.actions:
...     print(line)
Driver.PickUp('Mug')
Driver.PutAOnB('Mug', 'CounterTop')
Driver.Say('oops')
Driver.PickUp('Mug')
Driver.PutAOnB('Mug', 'Sink')
>>> [(label.type, label.index, label.error) for label in bad.labels]
[('REMOVE', 1, 'wrong_placement'), ('REMOVE', 3, 'wrong_placement')]
>>> bad.model_extra["clean"] == episode.actions
True
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast, get_args

from planverify.noise.common import ACTING_PLACES, CorruptSummary
from planverify.records.episode import Episode, ErrorType, Label, SceneObject
from planverify.records.notation import Action, escape_text, object_type, parse_action
from planverify.world.mentions import mentions_type
from planverify.world.vocabulary import words_of

__all__ = [
    "ALIASES",
    "CHANGES",
    "CLASSES",
    "INVENTED",
    "LOOK_ALIKES",
    "MISTAKES",
    "MistakeKind",
    "natural_episode",
    "natural_many",
]

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

_CLASS_WORDS = {
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

_DERIVED = ("Sliced", "Cracked")
_INSTANCE = re.compile(r"\d+$")


def _base(kind: str) -> str:
    for suffix in _DERIVED:
        if kind.endswith(suffix) and len(kind) > len(suffix):
            return kind[: -len(suffix)]
    return kind


def _words(kind: str, *, many: bool = False) -> str:
    """Everyday words for a type or class: `RemoteControl` -> "remote", many -> "remotes"."""
    if kind in COLLOQUIAL:
        return COLLOQUIAL[kind][1 if many else 0]
    if kind.endswith("Sliced"):
        return f"{_words(_base(kind))} slice" + ("s" if many else "")
    text = " ".join(words_of(kind)) or kind.lower()
    if many and not text.endswith("s"):
        text += "es" if text.endswith(("sh", "ch", "x")) else "s"
    return text


def _line(verb: str, *objects: str) -> str:
    return f"Driver.{verb}({', '.join(repr(o) for o in objects)})"


def _say(agent: str, text: str) -> str:
    return f"{agent}.Say('{escape_text(text)}')"


# --------------------------------------------------------------------------- goals


@dataclass(frozen=True)
class _Goal:
    family: str  # put, clean, water, coffee, boil, toast, serve, cook, salad, breakfast, sandwich
    thing: str | None = None  # the object type or class
    place: str | None = None  # where it goes
    on: str = "on"  # "on" or "in"
    count: int | None = None  # slices


_GOAL_PATTERNS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], _Goal]], ...] = (
    (
        re.compile(r"put all (\w+) (on|in) (?:any|one) (\w+)", re.I),
        lambda m: _Goal("put", m[1], m[3], m[2].lower()),
    ),
    (re.compile(r"clean all the (\w+?)s?$", re.I), lambda m: _Goal("clean", m[1])),
    (re.compile(r"water the plant", re.I), lambda m: _Goal("water", "HousePlant")),
    (re.compile(r"prepare coffee", re.I), lambda m: _Goal("coffee", "Mug")),
    (re.compile(r"boil (\w+)", re.I), lambda m: _Goal("boil", m[1])),
    (re.compile(r"plate of toast", re.I), lambda m: _Goal("toast", "Bread")),
    (
        re.compile(r"serve (\d+) slice\(s\) of (\w+) (on|in) a (\w+)", re.I),
        lambda m: _Goal("serve", m[2], m[4], m[3].lower(), int(m[1])),
    ),
    (
        re.compile(r"cook (\d+) slice\(s\) of (\w+) and serve (on|in) a (\w+)", re.I),
        lambda m: _Goal("cook", m[2], m[4], m[3].lower(), int(m[1])),
    ),
    (re.compile(r"make a salad", re.I), lambda m: _Goal("salad")),
    (re.compile(r"breakfast", re.I), lambda m: _Goal("breakfast")),
    (re.compile(r"sandwich", re.I), lambda m: _Goal("sandwich", "Bread")),
)
_FAMILY_WORDS = {
    "water": ("plant", "water"),
    "coffee": ("coffee",),
    "boil": ("boil",),
    "toast": ("toast",),
    "salad": ("salad",),
    "breakfast": ("breakfast",),
    "sandwich": ("sandwich",),
    "clean": ("clean", "wash", "rinse"),
    "serve": ("slice", "cut"),
    "cook": ("cook",),
}


def _goals(text: str | None) -> list[_Goal] | None:
    """The TEACh task descriptions in a goal, parsed; None when one of them is unknown."""
    if not text:
        return None
    found: list[_Goal] = []
    for sentence in (s.strip() for s in text.split(".")):
        if not sentence:
            continue
        for pattern, make in _GOAL_PATTERNS:
            match = pattern.search(sentence)
            if match:
                found.append(make(match))
                break
        else:
            return None
    return found or None


def _phrase(goal: _Goal, rng: random.Random, *, class_words: bool = True) -> str:
    """The goal as a person would ask for it."""
    thing = goal.thing or ""
    if goal.family == "put":
        cls = [c for c, members in CLASSES.items() if thing in members and c in _CLASS_WORDS]
        if class_words and cls and rng.random() < 0.5:
            things = rng.choice(_CLASS_WORDS[rng.choice(sorted(cls))])
        else:
            things = _words(thing, many=True)
        place = _words(goal.place or "")
        return rng.choice(
            (
                f"put all the {things} {goal.on} one {place}",
                f"can you put the {things} {goal.on} a {place}?",
                f"please gather the {things} {goal.on} the {place}",
                f"I'd like my {things} {goal.on} the {place}",
            )
        )
    if goal.family == "clean":
        things = _words(thing, many=True)
        return rng.choice(
            (
                f"wash the dirty {things}",
                f"can you clean the {things}?",
                f"the {things} need washing",
            )
        )
    fixed = {
        "water": ("the plant looks thirsty", "please water my plant", "give the plant some water"),
        "coffee": ("make me a coffee", "I'd love a cup of coffee", "can I get a coffee?"),
        "toast": ("I'd like some toast on a plate", "make me a slice of toast"),
        "salad": ("make me a salad", "I'm hungry, a salad please"),
        "breakfast": ("make me breakfast", "I'd like some breakfast"),
        "sandwich": ("make me a sandwich", "I'd like a sandwich"),
    }
    if goal.family in fixed:
        return rng.choice(fixed[goal.family])
    if goal.family == "boil":
        return rng.choice((f"boil me a {_words(thing)}", f"can you boil a {_words(thing)}?"))
    count = goal.count or 1
    amount = NUMBERS[count] if count < len(NUMBERS) else str(count)
    slices = "slice" if count == 1 else "slices"
    place = _words(goal.place or "Plate")
    if goal.family == "cook":
        return f"cook {amount} {slices} of {_words(thing)} and serve {goal.on} a {place}"
    return rng.choice(
        (
            f"cut {amount} {slices} of {_words(thing)} and put them {goal.on} a {place}",
            f"I want {amount} {_words(thing)} {slices} {goal.on} a {place}",
        )
    )


def _asks_for(line: str, goal: _Goal) -> bool:
    """Whether a Commander line asks for (part of) a goal."""
    if goal.thing:
        kinds = [goal.thing, *sorted(CLASSES.get(goal.thing, ()))]
        if any(mentions_type(line, kind) for kind in kinds):
            return True
    words = _FAMILY_WORDS.get(goal.family, ())
    return any(re.search(rf"\b{w}", line, re.I) for w in words)


# --------------------------------------------------------------------------- the scene


@dataclass
class _View:
    """What the generator may assume about the objects (the scene, when the episode has one)."""

    objects: list[SceneObject]
    known: bool  # whether there is a scene at all

    @property
    def types(self) -> set[str]:
        return {o.type for o in self.objects}

    def of(self, kind: str) -> list[SceneObject]:
        return [o for o in self.objects if o.type == kind]

    def named(self, name: str) -> SceneObject | None:
        for o in self.objects:
            if o.name == name:
                return o
        same = self.of(object_type(name))
        return same[0] if len(same) == 1 else None

    @property
    def closed(self) -> set[str]:
        """Types with a closed openable instance (their contents are out of reach)."""
        return {o.type for o in self.objects if o.openable and not o.open}

    def reachable(self, o: SceneObject) -> bool:
        return not (set(o.parent) & self.closed)

    def place(self, kind: str) -> bool:
        """Whether something can be put on an object of this type without opening it."""
        return any(o.receptacle and not (o.openable and not o.open) for o in self.of(kind))


# --------------------------------------------------------------------------- the draft


@dataclass
class _Line:
    text: str
    reason: str | None  # None: dialogue, not labelled


@dataclass
class _Insert:
    gap: int  # the base step it goes before (len(plan): at the end)
    seq: int  # order of injection
    kind: str  # error kind, or change
    lines: list[_Line]
    variant: str = ""
    error: bool = True


@dataclass
class _Draft:
    """An episode being given mistakes: insertions by gap of the base plan, removals by index."""

    episode: Episode
    lines: list[str]
    steps: list[Action]
    view: _View
    needed: set[str]  # types the task might use
    wanted: set[str]  # types the goal names (directly or by class)
    held: list[str | None]  # held[g]: the object in hand before base step g
    inserts: list[_Insert] = field(default_factory=list)
    removals: dict[int, tuple[int, str]] = field(default_factory=dict)
    busy: set[int] = field(default_factory=set)  # gaps an error already uses
    touched: set[int] = field(default_factory=set)  # base steps an error relies on
    used: set[str] = field(default_factory=set)  # object names the errors added
    count: int = 0  # errors and changes so far

    @property
    def n(self) -> int:
        return len(self.steps)

    @property
    def names(self) -> set[str]:
        """Object names the plan and the errors use."""
        return {o for s in self.steps for o in s.objects} | self.used

    def add(
        self,
        gap: int,
        kind: str,
        lines: list[_Line],
        *,
        variant: str = "",
        error: bool = True,
        relies_on: Iterable[int] = (),
    ) -> None:
        self.inserts.append(_Insert(gap, self.count, kind, lines, variant, error))
        self.count += 1
        if error:
            self.busy.add(gap)
            self.touched.update(relies_on)
        for line in lines:
            step = _parse(line.text)
            self.used.update(step.objects)

    def free(self, gap: int) -> bool:
        """Whether an error may go in before base step `gap` (no other error there or next to it)."""
        return gap not in self.busy and gap not in self.removals and gap - 1 not in self.removals

    def kept(self, *steps: int) -> bool:
        """Whether none of these base steps was removed (an error can rely on them)."""
        return not set(steps) & set(self.removals)

    def finish(self) -> tuple[list[str], list[str], list[Label], list[dict[str, Any]]]:
        """The noisy plan, the clean plan, the labels (plan order) and the notes (in order)."""
        out: list[str] = []
        clean: list[str] = []
        labels: list[tuple[tuple[int, int], Label]] = []
        notes: dict[int, dict[str, Any]] = {}
        ordered = sorted(self.inserts, key=lambda i: (i.gap, i.error, i.seq))
        for gap in range(self.n + 1):
            for insert in (i for i in ordered if i.gap == gap):
                note: dict[str, Any]
                if insert.error:
                    note = {"error": insert.kind, "lines": [], "variant": insert.variant}
                else:
                    note = {"change": insert.kind, "lines": []}
                notes.setdefault(insert.seq, note)
                for line in insert.lines:
                    note["lines"].append(len(out))
                    if line.reason is not None:
                        label = Label(
                            type="REMOVE",
                            index=len(out),
                            reason=line.reason,
                            error=cast(ErrorType, insert.kind),
                        )
                        labels.append(((len(out), 0), label))
                    out.append(line.text)
                    if not insert.error:
                        clean.append(line.text)
            if gap == self.n:
                break
            clean.append(self.lines[gap])
            if gap in self.removals:
                seq, reason = self.removals[gap]
                after = len(out) - 1
                action = self.lines[gap]
                notes[seq] = {"error": "missing_step", "after": after, "action": action}
                label = Label(
                    type="MISSING", after=after, action=action, reason=reason, error="missing_step"
                )
                labels.append(((after, 1), label))
            else:
                out.append(self.lines[gap])
        labels.sort(key=lambda item: item[0])
        return out, clean, [label for _, label in labels], [notes[k] for k in sorted(notes)]


def _parse(line: str) -> Action:
    return parse_action(line)


def _held(steps: Sequence[Action]) -> list[str | None]:
    held: str | None = None
    out: list[str | None] = [None]
    for step in steps:
        if step.verb == "PickUp" and step.objects:
            held = step.objects[0]
        elif step.verb == "PutAOnB":
            held = None
        out.append(held)
    return out


def _needed(
    episode: Episode, steps: Sequence[Action], view: _View, also: Sequence[str] = ()
) -> set[str]:
    """Object types the task might use (`also`: other texts asking for it): kept out of wrong
    fetches and detours."""
    needed = {object_type(o) for s in steps for o in s.objects}
    needed |= {_base(t) for t in needed}
    extra = (episode.model_extra or {}).get("task_objects")
    named = [str(t) for t in extra] if isinstance(extra, list) else []
    texts = [episode.goal or "", *also] + [
        s.text or "" for s in steps if s.is_dialogue and s.agent == "Commander"
    ]
    for goal in _goals(episode.goal) or []:
        named += [t for t in (goal.thing, goal.place) if t]
    candidates = view.types | set(LOOK_ALIKES) | {t for v in LOOK_ALIKES.values() for t in v}
    candidates |= set(FALLBACK_LOOSE)
    for kind in sorted(candidates):
        if any(mentions_type(text, kind) for text in texts):
            needed.add(kind)
    for name, members in CLASSES.items():
        words = [name, *_CLASS_WORDS.get(name, ())]
        if name in named or any(re.search(rf"\b{w}", t, re.I) for w in words for t in texts):
            needed |= members
    needed |= set(named)
    family = " ".join(texts).lower() + " " + (episode.task or "").lower()
    if "plant" in family:
        needed |= VESSELS | SINKS | {"Faucet"}
    if "coffee" in family:
        needed |= {"Mug", "CoffeeMachine", "Faucet"} | SINKS
    if "clean" in family or "wash" in family or "rinse" in family:
        needed |= {"Faucet", "DishSponge"} | SINKS
    if any(w in family for w in ("toast", "sandwich", "slice", "salad", "breakfast", "cook")):
        needed |= KNIVES | {"Plate", "Bowl", "Toaster", "Bread", "Lettuce", "Tomato", "Potato"}
    if any(w in family for w in ("boil", "cook", "breakfast", "salad")):
        needed |= {"Pot", "Pan", "Kettle", "StoveBurner", "StoveKnob", "Microwave", "Bowl"}
    return needed


def _wanted(episode: Episode) -> set[str]:
    """Object types the goal itself names: TEACh's task objects and the goal's things."""
    extra = (episode.model_extra or {}).get("task_objects")
    named = {str(t) for t in extra} if isinstance(extra, list) else set()
    named |= {g.thing for g in _goals(episode.goal) or [] if g.thing}
    return named | {t for name in named for t in CLASSES.get(name, ())}


def _fresh(kind: str, taken: set[str]) -> str:
    """A name for another object of a type: the type, else the type numbered 2, 3, ..."""
    if kind not in taken:
        return kind
    k = 2
    while f"{kind}{k}" in taken:
        k += 1
    return f"{kind}{k}"


def _put_back(d: _Draft, thing: SceneObject | None) -> str | None:
    """Where a fetched object goes back: where it lay, else a surface the plan uses."""
    if thing is not None:
        for parent in thing.parent:
            if parent not in ("Floor", *UNFIT_PLACES) and d.view.place(parent):
                return parent
    surfaces = [
        s.objects[1]
        for s in d.steps
        if s.verb == "PutAOnB"
        and len(s.objects) == 2
        and object_type(s.objects[1]) in FALLBACK_SURFACES
    ]
    if surfaces:
        return surfaces[0]
    if not d.view.known:
        return "CounterTop"
    options = [t for t in FALLBACK_SURFACES if d.view.place(t)]
    return options[0] if options else None


def _loose(d: _Draft, kind: str) -> SceneObject | None:
    """A reachable, pickupable object of a type (None: not in the scene)."""
    for o in d.view.of(kind):
        if o.pickupable and d.view.reachable(o):
            return o
    return None


# --------------------------------------------------------------------------- the errors


def _wrong_placement(d: _Draft, rng: random.Random) -> bool:
    puts = [
        j
        for j, s in enumerate(d.steps)
        if s.verb == "PutAOnB"
        and len(s.objects) == 2
        and d.held[j] == s.objects[0]
        and d.free(j)
        and d.kept(j)
        and not any(_opens_for(d, i, j) for i in d.removals)
    ]
    rng.shuffle(puts)
    puts.sort(key=lambda j: _base(object_type(d.steps[j].objects[0])) not in d.wanted)
    for j in puts:
        held, right = d.steps[j].objects
        wrong = _wrong_places(d, held, object_type(right))
        if not wrong:
            continue
        place = rng.choice(wrong)
        oops = _say(
            "Driver",
            rng.choice(
                (
                    "oops",
                    "that was wrong",
                    "oh, wrong place",
                    "wait, not there",
                    "sorry, wrong spot",
                )
            ),
        )
        reason = f"puts {held} on {place}, the wrong place"
        lines = [_Line(_line("PutAOnB", held, place), reason), _Line(oops, None)]
        variant = "put_again"
        if rng.random() < 0.6:
            variant = "picked_up_again"
            lines.append(_Line(_line("PickUp", held), f"picks {held} up again from {place}"))
        d.add(j, "wrong_placement", lines, variant=variant, relies_on=[j])
        return True
    return False


def _wrong_places(d: _Draft, held: str, right: str) -> list[str]:
    """Places a held object could wrongly go instead of `right`, none the task would accept."""
    accepted = {right}
    for same in SAME_PLACE:
        if right in same:
            accepted |= same
    for goal in _goals(d.episode.goal) or []:
        if goal.place in CLASSES and right in CLASSES[goal.place]:
            accepted |= CLASSES[goal.place]
    extra = (d.episode.model_extra or {}).get("task_objects")
    for name in extra if isinstance(extra, list) else []:
        if str(name) in CLASSES and right in CLASSES[str(name)]:
            accepted |= CLASSES[str(name)]
    if right in APPLIANCE_TARGETS:
        group: set[str] = {"CounterTop"}
    else:
        group = set().union(*(g for g in PLACE_GROUPS if right in g))
    small_food = _base(object_type(held)) != object_type(held)
    if not small_food:
        group -= {"Plate", "Bowl"}

    def fits(kind: str) -> bool:
        return (
            kind not in accepted
            and kind not in UNFIT_PLACES
            and kind not in ACTING_PLACES
            and kind != object_type(held)
        )

    if not d.view.known:  # places the plan uses, or the commonest ones
        known = {object_type(o) for s in d.steps for o in s.objects} | set(FALLBACK_SURFACES)
        options = sorted(k for k in group & known if fits(k))
        return options or [k for k in FALLBACK_SURFACES if fits(k)][:2]
    options = sorted(k for k in group if fits(k) and d.view.place(k))
    if options:
        return options
    return [k for k in FALLBACK_SURFACES if fits(k) and d.view.place(k)]


def _next_use(d: _Draft, j: int, name: str) -> int | None:
    """The first base step after j done with `name` in hand (slice, pour, put), if any."""
    for k in range(j + 1, d.n):
        if d.held[k] != name:
            return None
        if d.steps[k].verb in ("Slice", "PourFromAIntoB", "PutAOnB"):
            return k
    return None


def _wrong_object(d: _Draft, rng: random.Random) -> bool:
    picks = [
        j
        for j, s in enumerate(d.steps)
        if s.verb == "PickUp" and s.objects and d.held[j] is None and d.free(j)
    ]
    rng.shuffle(picks)
    picks.sort(key=lambda j: _base(object_type(d.steps[j].objects[0])) not in d.wanted)
    for j in picks:
        right = d.steps[j].objects[0]
        kind = object_type(right)
        use = _next_use(d, j, right)
        if not d.kept(j) or (use is not None and not d.kept(use)):
            continue
        later = d.steps[use] if use is not None else None
        options: list[tuple[str, str]] = []  # (look-alike, variant)
        for other in LOOK_ALIKES.get(kind, ()):
            if other in d.needed or other in d.names:
                continue
            if d.view.known and _loose(d, other) is None:
                continue
            options.append((other, "swapped"))
            if (
                later is not None
                and later.verb == "PutAOnB"
                and kind not in KNIVES
                and (not d.view.known or d.view.place(object_type(later.objects[1])))
            ):
                options.append((other, "carried"))
        if kind in KNIVES and later is not None and later.verb == "Slice":
            sliced = later.objects[0]
            if not any(s.verb == "Slice" and s.objects == (sliced,) for s in d.steps[:j]):
                for other in NOT_KNIVES:
                    if (
                        other not in d.needed
                        and other not in d.names
                        and (not d.view.known or _loose(d, other))
                    ):
                        options.append((other, "tried_to_slice"))
        if (
            later is not None
            and later.verb == "PourFromAIntoB"
            and object_type(later.objects[1]) in PLANTS
            and d.view.known
        ):
            for other in sorted(VESSELS - {kind}):
                objects = [o for o in d.view.of(other) if o.pickupable and d.view.reachable(o)]
                if objects and other not in d.names and not any(o.filled for o in d.view.of(other)):
                    options.append((other, "poured_empty"))
        if not options:
            continue
        other, variant = rng.choice(options)
        back = _put_back(d, _loose(d, other))
        if back is None:
            continue
        lines = [_Line(_line("PickUp", other), f"fetches {other} instead of the {kind}")]
        if variant == "carried":
            assert later is not None
            target = later.objects[1]
            lines += [
                _Line(_line("PutAOnB", other, target), f"puts {other} where the {kind} should go"),
                _remark(rng, other, kind),
                _Line(_line("PickUp", other), f"takes {other} away again"),
            ]
        elif variant == "tried_to_slice":
            assert later is not None
            lines.append(_Line(_line("Slice", later.objects[0]), f"{other} cannot slice"))
        elif variant == "poured_empty":
            assert later is not None
            lines.append(
                _Line(_line("PourFromAIntoB", other, later.objects[1]), f"{other} holds no water")
            )
        if variant != "carried" and rng.random() < 0.6:
            lines.append(_remark(rng, other, kind))
        lines.append(_Line(_line("PutAOnB", other, back), f"puts {other} back"))
        d.add(j, "wrong_object", lines, variant=variant, relies_on=[j] if use is None else [j, use])
        return True
    return False


def _remark(rng: random.Random, wrong: str, right: str) -> _Line:
    w, r = _words(object_type(wrong)), _words(right)
    if rng.random() < 0.5:
        text = rng.choice(
            (f"that's a {w}, I need the {r}", f"no, the {r} please", f"wrong one, get the {r}")
        )
        return _Line(_say("Commander", text), None)
    text = rng.choice((f"oops, that's a {w}", "wrong one", f"oh, that's not the {r}"))
    return _Line(_say("Driver", text), None)


def _ineffective(d: _Draft, rng: random.Random) -> bool:
    ways = [_slice_without_knife, _wrong_switch, _run_before_loading, _pour_before_filling]
    rng.shuffle(ways)
    return any(way(d, rng) for way in ways)


def _slice_without_knife(d: _Draft, rng: random.Random) -> bool:
    options = []
    for s, step in enumerate(d.steps):
        knife = d.held[s]
        if step.verb != "Slice" or knife is None or object_type(knife) not in KNIVES:
            continue
        k = max(
            i for i in range(s) if d.steps[i].verb == "PickUp" and d.steps[i].objects == (knife,)
        )
        before = d.steps[:k]
        if (
            d.free(k)
            and d.kept(k, s)
            and not any(b.verb == "Slice" and b.objects == step.objects for b in before)
        ):
            options.append((k, s))
    if not options:
        return False
    k, s = rng.choice(options)
    thing = d.steps[s].objects[0]
    lines = [_Line(_line("Slice", thing), f"slices {thing} without a knife in hand")]
    if rng.random() < 0.5:
        lines.append(
            _Line(_say("Driver", rng.choice(("I need a knife first", "hm, need a knife"))), None)
        )
    d.add(k, "ineffective_action", lines, variant="slice_without_knife", relies_on=[k, s])
    return True


def _wrong_switch(d: _Draft, rng: random.Random) -> bool:
    options: list[tuple[int, str]] = []
    for t, step in enumerate(d.steps):
        if step.verb != "ToggleOn" or not step.objects or not d.free(t) or not d.kept(t):
            continue
        kind = object_type(step.objects[0])
        if kind == "StoveKnob":
            knobs = {o for s in d.steps for o in s.objects if object_type(o) == "StoveKnob"}
            spare = not d.view.known or any(
                o.name is None and not o.toggled for o in d.view.of("StoveKnob")
            )
            if spare and (not d.view.known or len(d.view.of("StoveKnob")) > len(knobs)):
                options.append((t, _fresh("StoveKnob", d.names)))
        for other in CONFUSED_APPLIANCES.get(kind, ()):
            if other in d.names:
                continue
            if d.view.known and (not d.view.of(other) or any(o.toggled for o in d.view.of(other))):
                continue
            options.append((t, other))
    if not options:
        return False
    t, other = rng.choice(options)
    right = d.steps[t].objects[0]
    lines = [_Line(_line("ToggleOn", other), f"switches on {other}, not {right}")]
    if rng.random() < 0.5:
        lines.append(_Line(_line("ToggleOff", other), f"switches {other} off again"))
    if rng.random() < 0.5:
        lines.append(_Line(_say("Driver", rng.choice(("oops, wrong one", "not that one"))), None))
    d.add(t, "ineffective_action", lines, variant="wrong_switch", relies_on=[t])
    return True


def _run_before_loading(d: _Draft, rng: random.Random) -> bool:
    options = []
    for t, step in enumerate(d.steps):
        if step.verb != "ToggleOn" or not step.objects:
            continue
        name = step.objects[0]
        loaded_by = LOADED_BY.get(object_type(name))
        if loaded_by is None:
            continue
        puts = [
            p
            for p in range(t)
            if d.steps[p].verb == "PutAOnB"
            and len(d.steps[p].objects) == 2
            and object_type(d.steps[p].objects[1]) in loaded_by
        ]
        if not puts:
            continue
        p = puts[-1]
        between = d.steps[p:t]
        if any(b.verb in ("ToggleOn", "ToggleOff") and name in b.objects for b in between):
            continue
        if d.free(p) and d.kept(p, t):
            options.append((p, t))
    if not options:
        return False
    p, t = rng.choice(options)
    name = d.steps[t].objects[0]
    thing = d.steps[p].objects[0]
    lines = [
        _Line(_line("ToggleOn", name), f"runs {name} before {thing} is in place"),
        _Line(_line("ToggleOff", name), f"switches {name} off with nothing done"),
    ]
    d.add(p, "ineffective_action", lines, variant="run_before_loading", relies_on=[p, t])
    return True


def _pour_before_filling(d: _Draft, rng: random.Random) -> bool:
    if not d.view.known:
        return False
    options = []
    for q, step in enumerate(d.steps):
        if step.verb != "PourFromAIntoB" or object_type(step.objects[1]) not in PLANTS:
            continue
        vessel = step.objects[0]
        picks = [
            k for k in range(q) if d.steps[k].verb == "PickUp" and d.steps[k].objects == (vessel,)
        ]
        if not picks:
            continue
        first = picks[0]
        thing = d.view.named(vessel)
        if thing is None or thing.filled:
            continue
        # the plan fills it later: put in the sink, then the faucet run
        sink = next(
            (
                k
                for k in range(first, q)
                if d.steps[k].verb == "PutAOnB"
                and d.steps[k].objects[0] == vessel
                and object_type(d.steps[k].objects[1]) in SINKS
            ),
            None,
        )
        run = next(
            (
                k
                for k in range(sink or q, q)
                if d.steps[k].verb == "ToggleOn" and object_type(d.steps[k].objects[0]) == "Faucet"
            ),
            None,
        )
        if sink is None or run is None:
            continue
        if d.free(first + 1) and d.held[first + 1] == vessel and d.kept(first, sink, run, q):
            options.append((first + 1, [first, sink, run, q]))
    if not options:
        return False
    g, relied = rng.choice(options)
    q = relied[-1]
    vessel, plant = d.steps[q].objects
    lines = [_Line(_line("PourFromAIntoB", vessel, plant), f"{vessel} is still empty")]
    d.add(g, "ineffective_action", lines, variant="pour_before_filling", relies_on=relied)
    return True


def _detour(d: _Draft, rng: random.Random) -> bool:
    options: list[tuple[int, list[_Line], str]] = []
    for j, step in enumerate(d.steps):
        if not d.free(j) or not d.kept(j):
            continue
        if step.verb == "PickUp" and step.objects and d.held[j] is None:
            options += _neighbours(d, j, step.objects[0])
        if step.verb == "Open" and step.objects and object_type(step.objects[0]) in SEARCHED:
            kind = object_type(step.objects[0])
            taken = {o for s in d.steps for o in s.objects if object_type(o) == kind}
            if d.view.known and len([o for o in d.view.of(kind) if not o.open]) <= len(taken):
                continue
            other = _fresh(kind, d.names)
            options.append(
                (
                    j,
                    [
                        _Line(_line("Open", other), f"looks in {other}, the wrong {_words(kind)}"),
                        _Line(_line("Close", other), f"closes {other}, nothing taken"),
                    ],
                    "wrong_container",
                )
            )
    if not options:
        return False
    near_goal = [o for o in options if _wanted_at(d, o[0])]
    j, lines, variant = rng.choice(near_goal if near_goal and rng.random() < 0.75 else options)
    d.add(j, "detour", lines, variant=variant, relies_on=[j])
    return True


def _wanted_at(d: _Draft, j: int) -> bool:
    """Whether base step j handles an object the goal names (or opens where one is)."""
    step = d.steps[j]
    if step.verb == "PickUp":
        return _base(object_type(step.objects[0])) in d.wanted
    nxt = next((s for s in d.steps[j + 1 :] if s.verb == "PickUp"), None)
    return nxt is not None and _base(object_type(nxt.objects[0])) in d.wanted


def _neighbours(d: _Draft, j: int, target: str) -> list[tuple[int, list[_Line], str]]:
    """Detours to objects sharing the target's receptacle, before it is picked up."""
    out: list[tuple[int, list[_Line], str]] = []
    if not d.view.known:
        surfaces = {
            object_type(s.objects[1])
            for s in d.steps
            if s.verb == "PutAOnB" and len(s.objects) == 2
        }
        if "CounterTop" in surfaces:
            for kind in FALLBACK_LOOSE:
                if kind not in d.needed and kind not in d.names:
                    out.append((j, _pick_and_put_back(kind, "CounterTop", target), "picked_up"))
        return out
    thing = d.view.named(target)
    if thing is None:
        return out
    shared = set(thing.parent) - {"Floor"}
    for step in d.steps[:j]:  # where the plan left it, if it moved it
        if step.verb == "PutAOnB" and step.objects[0] == target:
            shared = {object_type(step.objects[1])}
    for o in d.view.objects:
        if o is thing or not (set(o.parent) & shared) or o.type in d.needed or o.type in d.names:
            continue
        where = sorted(set(o.parent) & shared)[0]
        if o.pickupable and d.view.reachable(o) and d.view.place(where):
            out.append((j, _pick_and_put_back(o.type, where, target), "picked_up"))
        elif o.openable and not o.open and (o.pickupable or o.receptacle):
            out.append(
                (
                    j,
                    [
                        _Line(
                            _line("Open", o.type), f"opens {o.type}, next to {target}, not needed"
                        ),
                        _Line(_line("Close", o.type), f"closes {o.type} again"),
                    ],
                    "opened",
                )
            )
    return out


def _pick_and_put_back(kind: str, where: str, target: str) -> list[_Line]:
    return [
        _Line(_line("PickUp", kind), f"picks up {kind} next to {target}, not needed"),
        _Line(_line("PutAOnB", kind, where), f"puts {kind} back"),
    ]


def _nonexistent(d: _Draft, rng: random.Random) -> bool:
    scene = d.view.types
    verb = rng.choice(sorted(INVENTED))
    names = [n for n in INVENTED[verb] if n not in scene and n not in d.names]
    if not names:
        return False
    name = rng.choice(names)
    if verb == "PickUp":
        gaps = [g for g in range(d.n + 1) if d.held[g] is None and d.free(g)]
        where = _put_back(d, None)
        if not gaps or where is None:
            return False
        gap = rng.choice(gaps)
        lines = [
            _Line(_line("PickUp", name), f"there is no {name} in the scene"),
            _Line(_line("PutAOnB", name, where), f"puts down a {name} that does not exist"),
        ]
    else:
        gaps = [g for g in range(d.n + 1) if d.free(g)]
        if not gaps:
            return False
        gap = rng.choice(gaps)
        off = "Close" if verb == "Open" else "ToggleOff"
        lines = [_Line(_line(verb, name), f"there is no {name} in the scene")]
        if verb == "Open" or rng.random() < 0.5:
            lines.append(_Line(_line(off, name), f"there is no {name} in the scene"))
    d.add(gap, "nonexistent_object", lines, variant=verb)
    return True


def _essential(d: _Draft, i: int) -> bool:
    """Whether base step i does something the plan cannot do without (so forgetting it is an
    error): a switch-on with its load in place and no other run of it for that load, the first
    slice of an object whose slices are used, the only pour into a plant from a vessel known to
    hold water, or the first opening of a closed container something is then taken from or put
    in."""
    step = d.steps[i]
    if not step.objects:
        return False
    name = step.objects[0]
    kind = object_type(name)
    if step.verb == "ToggleOn" and kind in LOADED_BY:
        return _loaded_run(d, i)
    if step.verb == "Slice":
        earlier = any(s.verb == "Slice" and s.objects == step.objects for s in d.steps[:i])
        used = any(
            object_type(o) == f"{_base(kind)}Sliced" for s in d.steps[i + 1 :] for o in s.objects
        )
        return used and not earlier
    if step.verb == "PourFromAIntoB" and object_type(step.objects[1]) in PLANTS:
        pours = [
            s for s in d.steps if s.verb == "PourFromAIntoB" and object_type(s.objects[1]) in PLANTS
        ]
        return len(pours) == 1 and _holds_water(d, name, i)
    if step.verb == "Open" and kind in CONTAINERS:
        if d.view.known and all(o.open for o in d.view.of(kind)):
            return False
        if any(s.verb == "Open" and s.objects == (name,) for s in d.steps[:i]):
            return False
        opened = [s.verb for s in d.steps[:i] if s.objects and object_type(s.objects[0]) == kind]
        if opened.count("Open") > opened.count("Close"):  # another one is still open
            return False
        for later in d.steps[i + 1 :]:
            if (
                later.verb in ("Open", "Close")
                and later.objects
                and object_type(later.objects[0]) == kind
            ):
                return False
            if later.verb == "PutAOnB" and later.objects[1] == name:
                return True
            if later.verb == "PickUp":
                thing = d.view.named(later.objects[0])
                return thing is not None and kind in thing.parent
    return False


def _loaded_run(d: _Draft, t: int) -> bool:
    """Whether switching on appliance t acts on something put in it and is the only such run."""
    name = d.steps[t].objects[0]
    loaded_by = LOADED_BY[object_type(name)]
    loads = [
        p
        for p in range(t)
        if d.steps[p].verb == "PutAOnB" and object_type(d.steps[p].objects[1]) in loaded_by
    ]
    if not loads:
        return False
    p = loads[-1]
    thing = d.steps[p].objects[0]
    end = next(
        (
            k
            for k in range(p + 1, d.n)
            if d.steps[k].verb == "PickUp" and d.steps[k].objects == (thing,)
        ),
        d.n,
    )
    if any(d.steps[k].verb == "PickUp" and d.steps[k].objects == (thing,) for k in range(p + 1, t)):
        return False
    runs = [
        k
        for k in range(p + 1, end)
        if d.steps[k].verb == "ToggleOn" and d.steps[k].objects == (name,)
    ]
    if runs != [t]:
        return False
    if object_type(name) != "Faucet":
        return True
    # rinsing only matters for something dirty, filling for water that is then poured out
    poured = any(
        s.verb == "PourFromAIntoB" and s.objects[0] == thing and object_type(s.objects[1]) in PLANTS
        for s in d.steps[t:]
    )
    found = d.view.named(thing)
    if found is not None:
        return found.dirty or poured
    return poured or re.search(r"\b(clean|wash|rinse)", d.episode.goal or "", re.I) is not None


def _holds_water(d: _Draft, vessel: str, q: int) -> bool:
    """Whether a vessel has water before step q: filled in the scene, or run under the faucet."""
    thing = d.view.named(vessel)
    if thing is not None and thing.filled:
        return True
    in_sink = False
    for step in d.steps[:q]:
        if step.verb == "PutAOnB" and step.objects[0] == vessel:
            in_sink = object_type(step.objects[1]) in SINKS
        elif step.verb == "PickUp" and step.objects == (vessel,):
            pass
        elif (
            step.verb == "ToggleOn"
            and step.objects
            and object_type(step.objects[0]) == "Faucet"
            and in_sink
        ):
            return True
    return False


def _opens_for(d: _Draft, i: int, j: int) -> bool:
    """Whether base step i opens the container base step j puts something into. An error that
    relies on j needs it to work: forgetting the opening would make the wrong put-down before j
    the only place the object can go, and its REMOVE label right only with the MISSING one."""
    opened, put = d.steps[i], d.steps[j]
    return (
        i < j
        and opened.verb == "Open"
        and put.verb == "PutAOnB"
        and len(put.objects) == 2
        and opened.objects[:1] == put.objects[1:]
    )


def _missing_step(d: _Draft, rng: random.Random) -> bool:
    options = [
        i
        for i in range(d.n)
        if _essential(d, i)
        and i not in d.touched
        and i not in d.removals
        and i - 1 not in d.removals
        and i + 1 not in d.removals
        and i not in d.busy
        and i + 1 not in d.busy
        and not any(_opens_for(d, i, j) for j in d.touched)
    ]
    if not options:
        return False
    i = rng.choice(options)
    d.removals[i] = (d.count, f"the plan needs {d.lines[i]}")
    d.count += 1
    return True


MAKERS: dict[MistakeKind, Callable[[_Draft, random.Random], bool]] = {
    "wrong_placement": _wrong_placement,
    "wrong_object": _wrong_object,
    "ineffective_action": _ineffective,
    "detour": _detour,
    "nonexistent_object": _nonexistent,
    "missing_step": _missing_step,
}


# --------------------------------------------------------------------------- the changes


@dataclass(frozen=True)
class _GoalChange:
    goal: str | None  # the goal the record gets
    note: dict[str, Any] | None = None  # the change's note, when no line is added
    line: str | None = None  # a Commander line asking for the task, to add


def _change_goal(episode: Episode, steps: Sequence[Action], rng: random.Random) -> _GoalChange:
    """Maybe the goal in everyday words, or a greeting with the request left to the dialogue."""
    goals = _goals(episode.goal)
    draw = rng.random()
    if goals is None or draw >= COLLOQUIAL_GOAL + GOAL_IN_DIALOGUE:
        return _GoalChange(episode.goal)
    if draw < COLLOQUIAL_GOAL:
        asked = " and ".join(_phrase(goal, rng) for goal in goals)
        return _GoalChange(asked, {"change": "colloquial_goal", "goal": episode.goal})
    commander = [s.text or "" for s in steps if s.is_dialogue and s.agent == "Commander"]
    missing = [g for g in goals if not any(_asks_for(line, g) for line in commander)]
    greeting = rng.choice(GREETINGS)
    if missing:
        text = " and ".join(_phrase(goal, rng) for goal in missing)
        return _GoalChange(greeting, line=_say("Commander", text))
    return _GoalChange(greeting, {"change": "goal_in_dialogue", "goal": episode.goal, "lines": []})


def _renames(lines: Iterable[str], scene: set[str], rng: random.Random) -> dict[str, str]:
    """Types to rename (type -> alias), none colliding with a name or type already there."""
    names = {o for line in lines for o in _parse(line).objects}
    kinds = sorted({object_type(n) for n in names} & set(ALIASES))
    if not kinds:
        return {}
    rng.shuffle(kinds)
    taken = {object_type(n) for n in names} | scene
    chosen: dict[str, str] = {}
    for kind in kinds[: rng.choice((1, 1, 2))]:
        free = [a for a in ALIASES[kind] if a not in taken and a not in chosen.values()]
        if free:
            chosen[kind] = rng.choice(free)
    return chosen


def _rename_line(line: str, names: dict[str, str]) -> str:
    step = _parse(line)
    if not step.objects or not any(object_type(o) in names for o in step.objects):
        return line
    renamed = [
        names[object_type(o)] + o[len(object_type(o)) :] if object_type(o) in names else o
        for o in step.objects
    ]
    return _line(step.verb, *renamed)


# --------------------------------------------------------------------------- public


def natural_episode(
    episode: Episode,
    *,
    rng: random.Random,
    errors: int,
    kinds: Sequence[MistakeKind] = MISTAKES,
    changes: bool = True,
) -> Episode:
    """A copy of `episode` with `errors` human-like mistakes, exact labels and the clean plan.

    Each error's kind is drawn from `kinds`, tried in a random order until one fits; fewer
    errors are made only when none fits any more. With `changes`, the goal may also be put in
    everyday words or left to the dialogue, and object types renamed (not errors). The copy
    keeps every other field; `labels` holds the ground truth, `injected` the notes, `clean` the
    plan without the errors (renames and dialogue changes applied).

    Raises ValueError when the episode already has labels or a kind is unknown.
    """
    if episode.labels:
        raise ValueError(f"episode {episode.id} is already annotated")
    unknown = set(kinds) - set(MAKERS)
    if unknown:
        raise ValueError(f"unknown mistake kind(s): {', '.join(sorted(unknown))}")
    steps = episode.parsed()
    view = _View(list(episode.scene.objects) if episode.scene else [], episode.scene is not None)
    change = _change_goal(episode, steps, rng) if changes else _GoalChange(episode.goal)
    draft = _Draft(
        episode,
        list(episode.actions),
        steps,
        view,
        _needed(episode, steps, view, [change.goal or "", change.line or ""]),
        _wanted(episode),
        _held(steps),
    )
    for _ in range(errors):
        # a random order, likelier kinds first (weighted sampling without replacement)
        keys = {kind: rng.random() ** (1 / WEIGHTS[kind]) for kind in kinds}
        order = sorted(kinds, key=lambda kind: -keys[kind])
        if not any(MAKERS[kind](draft, rng) for kind in order):
            break
    if change.line is not None:
        gap = 1 if steps and steps[0].is_dialogue else 0
        draft.add(gap, "goal_in_dialogue", [_Line(change.line, None)], error=False)
    actions, clean, labels, notes = draft.finish()
    for note in notes:
        if note.get("change") == "goal_in_dialogue":
            note["goal"] = episode.goal
    if change.note is not None:
        notes.append(change.note)
    if changes and rng.random() < RENAMED:
        names = _renames([*actions, *clean], view.types, rng)
        if names:
            actions = [_rename_line(line, names) for line in actions]
            clean = [_rename_line(line, names) for line in clean]
            for label in labels:
                if label.action is not None:
                    label.action = _rename_line(label.action, names)
            for note in notes:
                if "action" in note:
                    note["action"] = _rename_line(note["action"], names)
            notes.append({"change": "renamed", "names": names})
    data = episode.model_dump(mode="json", exclude_none=True)
    data["actions"] = actions
    if change.goal is not None:
        data["goal"] = change.goal
    data["labels"] = [label.model_dump(mode="json", exclude_none=True) for label in labels]
    data["injected"] = notes
    data["clean"] = clean
    mistaken = Episode.model_validate(data)
    mistaken.validate_labels()
    return mistaken


def natural_many(
    episodes: Iterable[Episode],
    *,
    seed: int = 0,
    errors_per_episode: tuple[int, int] = (1, 3),
    clean_fraction: float = 0.2,
    max_steps: int | None = 25,
    kinds: Sequence[MistakeKind] = MISTAKES,
    summary: CorruptSummary | None = None,
) -> Iterator[Episode]:
    """Annotated copies of episodes with human-like mistakes, or none for a clean share.

    The same contract as `planverify.noise.injected.corrupt_many`: episodes with more than `max_steps`
    non-dialogue steps are skipped, and each episode draws from its own generator
    `random.Random(f"natural:{seed}:{episode.id}")`, so its output depends only on the seed and
    the episode. Clean episodes (labels `[]`) may still get the changes that are not errors.
    """
    low, high = errors_per_episode
    if not 0 <= low <= high:
        raise ValueError(
            f"errors_per_episode must be (low, high) with 0 <= low <= high: {low, high}"
        )
    tally = summary if summary is not None else CorruptSummary()
    for episode in episodes:
        tally.read += 1
        if max_steps is not None and sum(not a.is_dialogue for a in episode.parsed()) > max_steps:
            tally.too_long += 1
            continue
        rng = random.Random(f"natural:{seed}:{episode.id}")
        errors = 0 if rng.random() < clean_fraction else rng.randint(low, high)
        mistaken = natural_episode(episode, rng=rng, errors=errors, kinds=kinds)
        notes = (mistaken.model_extra or {}).get("injected", [])
        if mistaken.labels:
            tally.corrupted += 1
        else:
            tally.clean += 1
        tally.kinds.update(str(note["error"]) for note in notes if "error" in note)
        tally.changes.update(str(note["change"]) for note in notes if "change" in note)
        yield mistaken
