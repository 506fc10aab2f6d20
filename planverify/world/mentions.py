"""Whether a text names an object type or a verb: the everyday words for TEACh's types and verbs,
in any inflection. Scoring matches `#MISSING` critiques with them, and the error generators tell
whether a goal already names an object.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from planverify.records.notation import object_type
from planverify.world.classes import base_type
from planverify.world.vocabulary import words_of

VERB_SYNONYMS: dict[str, tuple[str, ...]] = {
    "PickUp": ("pick up", "pick", "grab", "take", "get", "lift", "hold", "retrieve", "collect"),
    "PutAOnB": ("put", "place", "set", "drop", "insert", "lay", "store", "move"),
    "Open": ("open",),
    "Close": ("close", "shut"),
    "ToggleOn": (
        "turn on",
        "switch on",
        "toggle on",
        "power on",
        "start",
        "activate",
        "run",
    ),
    "ToggleOff": (
        "turn off",
        "switch off",
        "toggle off",
        "power off",
        "shut off",
        "stop",
        "deactivate",
    ),
    "Slice": ("slice", "cut", "chop", "dice"),
    "PourFromAIntoB": ("pour", "water"),
    "Clean": ("clean", "wash", "rinse", "scrub"),
    "Dirty": ("dirty", "soil"),
    "Fill": ("fill",),
    "Empty": ("empty", "drain"),
    "Break": ("break", "crack", "smash"),
}
"""Phrases that name a verb in a `#MISSING` critique (any inflection: "slices", "sliced").

The words of a phrase may be split by up to four other words ("turn the coffee machine on").
Motion verbs have no entry: a missing motion step is only found through a concrete action.
"""

TYPE_ALIASES: dict[str, tuple[str, ...]] = {
    "CoffeeMachine": ("coffee maker",),
    "CounterTop": ("counter",),
    "DiningTable": ("table",),
    "SideTable": ("table",),
    "CoffeeTable": ("table",),
    "SinkBasin": ("sink",),
    "Faucet": ("tap", "water", "sink"),
    "StoveKnob": ("stove", "burner"),
    "StoveBurner": ("stove",),
    "GarbageCan": ("trash", "bin"),
    "HousePlant": ("plant",),
    "RemoteControl": ("remote",),
    "DishSponge": ("sponge",),
    "LightSwitch": ("light",),
}
"""Everyday names of object types, besides the type's own words ("coffee machine")."""

_IRREGULAR: dict[str, tuple[str, ...]] = {
    "take": ("took", "taken"),
    "get": ("got", "gotten"),
    "hold": ("held",),
    "break": ("broke", "broken"),
    "lay": ("laid",),
    "run": ("ran",),
}
_GAP = r"\W+(?:\w+\W+){0,4}?"  # between the words of a phrase: up to four other words


def _camel_words(name: str) -> list[str]:
    return list(words_of(name)) or [name.lower()]


def _inflected(word: str) -> str:
    forms = [re.escape(word) + r"(?:s|es|ed|d|ing)?", *map(re.escape, _IRREGULAR.get(word, ()))]
    if word.endswith("e"):
        forms.append(re.escape(word[:-1]) + "ing")
    if re.search(r"[^aeiou][aeiou][bdgmnpt]$", word):
        forms.append(re.escape(word + word[-1]) + "(?:ed|ing)")
    return "(?:" + "|".join(forms) + ")"


def _phrase(words: Sequence[str], *, gap: str) -> str:
    return r"\b" + gap.join(_inflected(w) for w in words) + r"\b"


def _type_names(kind: str) -> list[str]:
    names = [" ".join(_camel_words(kind)), *TYPE_ALIASES.get(kind, ())]
    whole = base_type(kind)
    if whole != kind:  # BreadSliced is also named by "bread"
        names += _type_names(whole)
    return names


def mentions_type(text: str, kind: str) -> bool:
    """Whether `text` names an object type, in its own words or an alias (case ignored).

    >>> mentions_type("switch on the coffee machine", "CoffeeMachine")
    True
    >>> mentions_type("put the slices of bread in the toaster", "BreadSliced")
    True
    >>> mentions_type("pour the potato", "Pot")
    False
    """
    kind = object_type(kind)
    for name in _type_names(kind):
        pattern = _phrase(name.split(), gap=r"[\s_-]*")
        if re.search(pattern, text, re.I):
            return True
    return re.search(r"\b" + re.escape(kind) + r"s?\b", text, re.I) is not None


def mentions_verb(text: str, verb: str) -> bool:
    """Whether `text` names a verb through one of its `VERB_SYNONYMS` (case ignored).

    >>> mentions_verb("Switch the toaster on", "ToggleOn")
    True
    >>> mentions_verb("the bread was never sliced", "Slice")
    True
    """
    return any(
        re.search(_phrase(phrase.split(), gap=_GAP), text, re.I)
        for phrase in VERB_SYNONYMS.get(verb, ())
    )


__all__ = ["TYPE_ALIASES", "VERB_SYNONYMS", "mentions_type", "mentions_verb"]
