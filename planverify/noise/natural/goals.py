"""The goals the generator recognises, and how people phrase them."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

from planverify.noise.natural.knowledge import (
    CLASS_WORDS,
    CLASSES,
    NUMBERS,
    everyday_words,
)
from planverify.world.mentions import mentions_type

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


def goals_of(text: str | None) -> list[_Goal] | None:
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


def phrase_goal(goal: _Goal, rng: random.Random, *, class_words: bool = True) -> str:
    """The goal as a person would ask for it."""
    thing = goal.thing or ""
    if goal.family == "put":
        cls = [c for c, members in CLASSES.items() if thing in members and c in CLASS_WORDS]
        if class_words and cls and rng.random() < 0.5:
            things = rng.choice(CLASS_WORDS[rng.choice(sorted(cls))])
        else:
            things = everyday_words(thing, many=True)
        place = everyday_words(goal.place or "")
        return rng.choice(
            (
                f"put all the {things} {goal.on} one {place}",
                f"can you put the {things} {goal.on} a {place}?",
                f"please gather the {things} {goal.on} the {place}",
                f"I'd like my {things} {goal.on} the {place}",
            )
        )
    if goal.family == "clean":
        things = everyday_words(thing, many=True)
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
        return rng.choice(
            (f"boil me a {everyday_words(thing)}", f"can you boil a {everyday_words(thing)}?")
        )
    count = goal.count or 1
    amount = NUMBERS[count] if count < len(NUMBERS) else str(count)
    slices = "slice" if count == 1 else "slices"
    place = everyday_words(goal.place or "Plate")
    if goal.family == "cook":
        return f"cook {amount} {slices} of {everyday_words(thing)} and serve {goal.on} a {place}"
    return rng.choice(
        (
            f"cut {amount} {slices} of {everyday_words(thing)} and put them {goal.on} a {place}",
            f"I want {amount} {everyday_words(thing)} {slices} {goal.on} a {place}",
        )
    )


def asks_for(line: str, goal: _Goal) -> bool:
    """Whether a Commander line asks for (part of) a goal."""
    if goal.thing:
        kinds = [goal.thing, *sorted(CLASSES.get(goal.thing, ()))]
        if any(mentions_type(line, kind) for kind in kinds):
            return True
    words = _FAMILY_WORDS.get(goal.family, ())
    return any(re.search(rf"\b{w}", line, re.I) for w in words)
