"""Goal words read tolerantly: plurals, everyday names, typos (issue 21, cause 4)."""

from __future__ import annotations

import doctest
from collections.abc import Sequence

import pytest

from planverify.world import spelling
from planverify.world.goals import GoalSpec
from planverify.world.spelling import Speller
from planverify.world.text_goals import read_goal, signature, spec_of


def spec(goal: str, *lines: str) -> GoalSpec:
    reading = read_goal(goal, list(lines))
    assert reading.spec is not None, reading.note
    return reading.spec


def same(read: GoalSpec, family: str, params: Sequence[str]) -> None:
    assert read.task == family
    assert signature(read) == signature(spec_of(family, params))


def test_module_examples() -> None:
    assert doctest.testmod(spelling).failed == 0


@pytest.mark.parametrize(
    ("goal", "family", "params"),
    [
        ("put all the keys in the box", "Put All X On Y", ["KeyChain", "in", "Box"]),
        ("put the books on the shelves", "Put All X On Y", ["Book", "on", "Shelf"]),
        ("put the loaves in the fridge", "Put All X On Y", ["Bread", "in", "Fridge"]),
    ],
)
def test_plurals(goal: str, family: str, params: list[str]) -> None:
    same(spec(goal), family, params)


@pytest.mark.parametrize(
    ("goal", "family", "params"),
    [
        ("put the apples in the freezer", "Put All X On Y", ["Apple", "in", "Fridge"]),
        ("clean the dish cloths", "Clean All X", ["Cloth"]),
        ("put the coffee cups in the cupboard", "Put All X On Y", ["Mug", "in", "Cabinet"]),
        ("put the smartphone on the couch", "Put All X On Y", ["CellPhone", "on", "Sofa"]),
        ("put the books on the bookshelf", "Put All X On Y", ["Book", "on", "Shelf"]),
        ("throw the apples in the dustbin", "Put All X On Y", ["Apple", "in", "GarbageCan"]),
    ],
)
def test_everyday_names(goal: str, family: str, params: list[str]) -> None:
    same(spec(goal), family, params)


@pytest.mark.parametrize(
    ("goal", "family", "params"),
    [
        # a dropped letter
        (
            "put all the remtes on one cofee table",
            "Put All X In One Y",
            ["RemoteControl", "on", "CoffeeTable"],
        ),
        ("Serve 2 slices of tomto in a bowl", "N Slices Of X In Y", ["2", "Tomato", "in", "Bowl"]),
        ("water the plnt", "Water Plant", []),
        ("Make coffe", "Coffee", []),
        # a letter too many, two letters swapped
        ("boil a potatoe", "Boil X", ["Potato"]),
        (
            "put the newspaper on the armhcair",
            "Put All X On Y",
            ["Newspaper", "on", "ArmChair"],
        ),
        # a misplaced space
        ("Clean all the mu gs", "Clean All X", ["Mug"]),
        ("put thepotatoes in the fridge", "Put All X On Y", ["Potato", "in", "Fridge"]),
        ("rinse themug", "Clean All X", ["Mug"]),
        ("put the spoons in themicrowave", "Put All X On Y", ["Spoon", "in", "Microwave"]),
    ],
)
def test_typos(goal: str, family: str, params: list[str]) -> None:
    same(spec(goal), family, params)


def test_english_words_are_not_read_as_names() -> None:
    """Words a letter away from an object name stay what they are."""
    reading = read_goal("the plan is to read the book soon, it is late", [])
    assert reading.focus == ["Book"]
    speller = Speller(["plant", "spoon", "plate", "bread", "cooker"])
    words = ["plan", "soon", "late", "read", "cooked", "ahead", "looking", "there", "s"]
    assert speller.fix(words) == words


def test_a_word_close_to_two_names_is_left_alone() -> None:
    assert Speller(["plate", "plant"]).fix(["plat"]) == ["plat"]
    assert Speller(["plate"]).fix(["plat"]) == ["plate"]
