"""Goal words read tolerantly: plurals, everyday names, typos (issue 21, cause 4)."""

from __future__ import annotations

import doctest
from collections.abc import Sequence
from typing import Any

import pytest

from planverify.agents.rules import judge_plan
from planverify.world import Grounding, ground, near_types, spelling
from planverify.world.goal_families import build_task, signature, spec_of
from planverify.world.goals import GoalSpec, parse_teach_task
from planverify.world.spelling import Speller
from planverify.world.text_goals import NO_GOAL, read_goal

TASK = build_task("Clean All X", ["Cup"])  # a task definition, as a game file has it


def spec(goal: str, *lines: str) -> GoalSpec:
    reading = read_goal(goal, list(lines))
    assert reading.spec is not None, reading.note
    return reading.spec


def same(read: GoalSpec, family: str, params: Sequence[str]) -> None:
    assert read.task == family
    assert signature(read) == signature(spec_of(family, params))


def test_module_examples() -> None:
    assert doctest.testmod(spelling).failed == 0
    assert doctest.testmod(near_types).failed == 0


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


# ----------------------------------------------------------------------------- near types

CLEANS_A_MUG = [
    "Driver.PickUp('Mug')",
    "Driver.PutAOnB('Mug', 'Sink')",
    "Driver.ToggleOn('Faucet')",
    "Driver.ToggleOff('Faucet')",
    "Driver.PickUp('Mug')",
    "Driver.PutAOnB('Mug', 'CounterTop')",
]
MUG_PUT_BACK = [
    "Driver.PickUp('Mug')",
    "Driver.PutAOnB('Mug', 'CounterTop')",
    "Driver.PickUp('Cup')",
    "Driver.PutAOnB('Cup', 'Sink')",
    "Driver.ToggleOn('Faucet')",
    "Driver.ToggleOff('Faucet')",
]
CLEAN_CUPS = parse_teach_task(TASK)


def grounded(goal: str, plan: list[str], teach_task: dict[str, Any] | None = None) -> Grounding:
    return ground(goal, [], None, task=None, teach_task=teach_task, plan=plan)


def test_a_cup_in_the_goal_is_the_mug_the_plan_cleans() -> None:
    """'cups' and a Mug cleaned: both are Drinkware, and the plan's steps serve the goal."""
    grounding = grounded("Clean all the cups.", CLEANS_A_MUG)
    assert grounding.spec is not None and grounding.spec.text == "Clean all Drinkware."
    assert judge_plan("Clean all the cups.", CLEANS_A_MUG, grounding).flags == []


def test_a_mug_fetched_and_put_back_for_cups_is_a_mistake() -> None:
    """What the plan does with the Mug decides: fetched and put back, it is the wrong object."""
    grounding = grounded("Clean all the cups.", MUG_PUT_BACK)
    assert grounding.spec is not None and grounding.spec.text == "Clean all Cup."
    flags = judge_plan("Clean all the cups.", MUG_PUT_BACK, grounding).flags
    assert [f.step for f in flags] == [0, 1]


def test_near_types_for_the_objects_and_the_place() -> None:
    def put(goal: str, *lines: str) -> str:
        reading = read_goal(goal, [], plan=list(lines))
        assert reading.spec is not None
        return reading.spec.text

    on_sofa = ["Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'Sofa')"]
    assert put("put all the cups on the sofa", *on_sofa) == "Put all Drinkware on any Sofa."
    remote = ["Driver.PickUp('RemoteControl')", "Driver.PutAOnB('RemoteControl', 'ArmChair')"]
    assert put("put the remotes on the sofa", *remote) == "Put all RemoteControl on any Chairs."
    # carried to the sofa, then taken away again: the Mug does not end there
    carried = [*on_sofa, "Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'CounterTop')"]
    assert put("put all the cups on the sofa", *carried) == "Put all Cup on any Sofa."
    # a Mug left on the sofa beside the cups is one too many
    both = [*on_sofa, "Driver.PickUp('Cup')", "Driver.PutAOnB('Cup', 'Sofa')"]
    assert put("put all the cups on the sofa", *both) == "Put all Cup on any Sofa."
    # food is never near: an apple is no tomato
    apple = ["Driver.PickUp('Apple')", "Driver.PutAOnB('Apple', 'Fridge')"]
    assert put("put the tomatoes in the fridge", *apple) == "Put all Tomato in any Fridge."


def test_teach_task_wins_over_the_text() -> None:
    """A reading from text, near types and the Commander's class included, never overrides the
    task definition."""
    goal, said = "Clean all the cups.", ["Commander: all the drinkware, please"]
    from_text = [read_goal(goal, said).spec, grounded(goal, CLEANS_A_MUG).spec]
    assert [s.text if s else None for s in from_text] == ["Clean all Drinkware."] * 2
    grounding = ground(goal, said, None, task=None, teach_task=TASK, plan=CLEANS_A_MUG)
    assert grounding.spec is not None and grounding.spec.source == "teach_task"
    assert signature(grounding.spec) == signature(CLEAN_CUPS)
    # a Mug and then a Cup washed: under the task definition the Mug is not one of the Cups, and
    # its steps go; read from text ("all the drinkware") both are, and they stay
    both = [*CLEANS_A_MUG, *(line.replace("Mug", "Cup") for line in CLEANS_A_MUG)]
    by_task = ground(goal, said, None, task=None, teach_task=TASK, plan=both)
    assert [f.step for f in judge_plan(goal, both, by_task).flags] == [0, 1, 2, 3, 4, 5]
    by_text = ground(goal, said, None, task=None, teach_task=None, plan=both)
    assert not {0, 1, 4, 5} & {f.step for f in judge_plan(goal, both, by_text).flags}


# ----------------------------------------------------------------------------- the Commander


@pytest.mark.parametrize(
    ("goal", "lines", "family", "params"),
    [
        (
            "Clean all the cups.",
            ["I mean the drinkware, cups and mugs"],
            "Clean All X",
            ["Drinkware"],
        ),
        ("hi", ["wash all the cups", "I mean all the drinkware"], "Clean All X", ["Drinkware"]),
        ("Rinse them.", ["the cups are dirty"], "Clean All X", ["Cup"]),
        ("Clean everything.", ["all the drinkware is dirty"], "Clean All X", ["Drinkware"]),
        (
            "Put all the stuff in one cabinet.",
            ["grab the salt shakers"],
            "Put All X In One Y",
            ["SaltShaker", "in", "Cabinet"],
        ),
        (
            "put all of them on any chair",
            ["the watches"],
            "Put All X On Y",
            ["Watch", "on", "Chairs"],
        ),
    ],
)
def test_the_commander_names_the_class(
    goal: str, lines: list[str], family: str, params: list[str]
) -> None:
    same(spec(goal, *(f"Commander: {line}" for line in lines)), family, params)


def test_the_commanders_loose_words_do_not_widen_the_goal() -> None:
    """Only a class named word for word replaces the goal line's type ("dishes" is loose)."""
    same(spec("Clean all the Mugs.", "Commander: wash the dishes"), "Clean All X", ["Mug"])


# ----------------------------------------------------------------------------- no goal read


def test_no_goal_condition_read_is_signalled() -> None:
    for goal, lines in (("hi", []), ("hello, what is my task?", ["Commander: the teddy bear"])):
        reading = read_goal(goal, lines)
        assert reading.goal_read is False and reading.spec is None
        assert reading.note is not None and reading.note.startswith(f"{NO_GOAL}: ")
        grounding = ground(goal, lines, None, task=None, teach_task=None)
        assert grounding.goal_read is False and grounding.note == reading.note
    assert read_goal("Clean all the cups.", []).goal_read is True
    assert ground("hi", [], None, task=None, teach_task=TASK).goal_read is True
