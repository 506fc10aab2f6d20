"""Goal specs read from words: TEACh descriptions, everyday requests, the Commander's lines."""

from __future__ import annotations

import doctest
from collections.abc import Collection, Sequence
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from planverify.cli import app
from planverify.world import text_goals
from planverify.world.goal_families import FAMILIES, signature, spec_of
from planverify.world.goals import GoalSpec, parse_teach_task
from planverify.world.text_goals import read_goal

runner = CliRunner()


def spec(
    goal: str | None,
    *lines: str,
    task: str | None = None,
    scene_types: Collection[str] | None = None,
) -> GoalSpec:
    reading = read_goal(goal, list(lines), task=task, scene_types=scene_types)
    assert reading.spec is not None, reading.note
    assert reading.spec.source == "text"
    return reading.spec


def same(read: GoalSpec, family: str, params: Sequence[str]) -> None:
    assert read.task == family
    assert signature(read) == signature(spec_of(family, params))


def test_module_examples() -> None:
    assert doctest.testmod(text_goals).failed == 0


# ----------------------------------------------------------------------------- the builders


def test_builders_match_a_hand_written_task_definition() -> None:
    # The shape of TEACh's "N Slices Of X In Y", written out by hand.
    definition = {
        "task_name": "N Slices Of X In Y",
        "components": {
            "Tomato": {
                "determiner": "2",
                "task": {
                    "task_name": "Sliced X",
                    "task_anchor_object": "Tomato",
                    "components": {
                        "knife": {
                            "determiner": "a",
                            "primary_condition": "objectType",
                            "instance_shareable": True,
                            "conditions": {"objectType": "Knife"},
                        },
                        "Tomato": {
                            "determiner": "a",
                            "primary_condition": "objectType",
                            "instance_shareable": False,
                            "conditions": {"objectType": "TomatoSliced"},
                        },
                    },
                    "relations": [],
                },
            },
            "Bowl": {
                "determiner": "a",
                "task": {
                    "task_name": "Clean X",
                    "task_anchor_object": "Bowl",
                    "components": {
                        "sink": {
                            "determiner": "a",
                            "primary_condition": "objectType",
                            "instance_shareable": True,
                            "conditions": {"objectType": "Sink", "receptacle": 1},
                        },
                        "Bowl": {
                            "determiner": "a",
                            "primary_condition": "simbotObjectClass",
                            "instance_shareable": False,
                            "conditions": {"simbotObjectClass": "Bowl", "isDirty": 0},
                        },
                    },
                    "relations": [],
                },
            },
        },
        "relations": [
            {
                "property": "parentReceptacles",
                "tail_entity_list": ["Bowl"],
                "tail_determiner_list": ["the"],
                "head_entity_list": ["Tomato"],
                "head_determiner_list": ["2"],
            }
        ],
    }
    assert signature(spec_of("N Slices Of X In Y", ["2", "Tomato", "in", "Bowl"])) == signature(
        parse_teach_task(definition)
    )


def test_every_family_builds_and_bad_parameters_are_refused() -> None:
    params = {
        "Boil X": ["Potato"],
        "Clean X": ["Mug"],
        "Clean All X": ["Plate"],
        "Sliced X": ["Apple"],
        "Cooked Slice Of X": ["Potato"],
        "N Slices Of X In Y": ["3", "Lettuce", "on", "Plate"],
        "N Cooked Slices Of X In Y": ["2", "Potato", "in", "Bowl"],
        "Put All X On Y": ["Book", "on", "Desk"],
        "Put All X In One Y": ["Mug", "in", "Cabinet"],
        "Sandwich": ["1", "0"],
        "Salad": ["1", "2", "0"],
        "Breakfast": [*"100", "Plate", "0", "Plate", *"1100000", "DiningTable"],
    }
    for family in FAMILIES:
        built = spec_of(family, params.get(family, []))
        assert built.task == family and built.components and built.text
    with pytest.raises(ValueError):
        spec_of("Salad", ["1"])
    with pytest.raises(ValueError):
        spec_of("Make Pancakes", [])


def test_breakfast_serves_every_part_on_the_spot() -> None:
    params = ["2", "0", "0", "Plate", "2", "Plate", "0", "0", "0", "0", "0", "0", "0"]
    built = spec_of("Breakfast", [*params, "CounterTop"])
    counts = {c.select: c.count for c in built.components}
    assert counts["Mug"] == 2 and counts["AppleSliced"] == 2 and counts["Plate"] == 2
    serving = [r for r in built.relations if r.tail == "serving_spot"]
    assert len(serving) == 1 and [d for _, d in serving[0].heads] == ["2", "2"]
    assert not serving[0].single


# ----------------------------------------------------------------------------- descriptions


@pytest.mark.parametrize(
    ("goal", "family", "params"),
    [
        ("Prepare coffee in a clean mug.", "Coffee", []),
        ("Water the plant.", "Water Plant", []),
        ("Boil Potato.", "Boil X", ["Potato"]),
        ("Make a slice of toast.", "Toast", []),
        ("Make a plate of toast.", "Plate Of Toast", []),
        ("Clean all the Plates.", "Clean All X", ["Plate"]),
        ("Clean all the Drinkwares.", "Clean All X", ["Drinkware"]),
        ("Clean a Mug.", "Clean X", ["Mug"]),
        ("Make a slice of Tomato.", "Sliced X", ["Tomato"]),
        ("Cook a slice of Potato.", "Cooked Slice Of X", ["Potato"]),
        (
            "Serve 2 slice(s) of Tomato in a Bowl.",
            "N Slices Of X In Y",
            ["2", "Tomato", "in", "Bowl"],
        ),
        (
            "Cook 1 slice(s) of Potato and serve on a Plate.",
            "N Cooked Slices Of X In Y",
            ["1", "Potato", "on", "Plate"],
        ),
        (
            "Put all RemoteControl on one Sofa.",
            "Put All X In One Y",
            ["RemoteControl", "on", "Sofa"],
        ),
        (
            "Put all RemoteControl on one Chairs.",
            "Put All X In One Y",
            ["RemoteControl", "on", "Chairs"],
        ),
        ("Put all Cloth in any Bathtub.", "Put All X On Y", ["Cloth", "in", "Bathtub"]),
        (
            "Put all SmallHandheldObjects on any Tables.",
            "Put All X On Y",
            ["SmallHandheldObjects", "on", "Tables"],
        ),
        (
            "Put all SaltShaker in one Cabinet.",
            "Put All X In One Y",
            ["SaltShaker", "in", "Cabinet"],
        ),
    ],
)
def test_teach_descriptions(goal: str, family: str, params: list[str]) -> None:
    reading = read_goal(goal, [])
    assert reading.request == goal and reading.note is None
    assert reading.spec is not None
    same(reading.spec, family, params)


def test_meals_take_their_parts_from_the_commander() -> None:
    same(
        spec(
            "Make a sandwich.",
            "Commander: toast two slices of bread",
            "Commander: and a slice of tomato",
        ),
        "Sandwich",
        ["0", "1"],
    )
    same(
        spec(
            "Make a salad.",
            "Commander: slice the lettuce",
            "Commander: cook 2 slices of potato",
            "Commander: no tomato this time",
        ),
        "Salad",
        ["1", "0", "2"],
    )
    same(
        spec(
            "Prepare breakfast.",
            "Commander: first make a mug of coffee",
            "Commander: then a sandwich: toast 2 slices of bread and slice a lettuce",
            "Commander: all breakfast items go on the dining table",
        ),
        "Breakfast",
        ["1", "0", "0", "Plate", "0", "Plate", "1", "1", "0", "0", "0", "0", "0", "DiningTable"],
    )


def test_meals_without_their_parts() -> None:
    same(spec("Make a salad.", *[]), "Salad", ["1", "1", "1"])  # everything a salad may hold
    same(spec("make me a sandwich please"), "Sandwich", ["1", "1"])
    reading = read_goal("Prepare breakfast.", [])
    assert reading.spec is None and reading.note and "breakfast" in reading.note


# ----------------------------------------------------------------------------- everyday words


@pytest.mark.parametrize(
    ("goal", "family", "params"),
    [
        (
            "put all the remotes on one coffee table",
            "Put All X In One Y",
            ["RemoteControl", "on", "CoffeeTable"],
        ),
        ("put the sports equipment on the bed", "Put All X On Y", ["SportsEquipment", "on", "Bed"]),
        ("please put the apples in the fridge", "Put All X On Y", ["Apple", "in", "Fridge"]),
        (
            "keep all the newspapers on a single side table",
            "Put All X In One Y",
            ["Newspaper", "on", "SideTable"],
        ),
        ("place every pillow on the couch", "Put All X On Y", ["Pillow", "on", "Sofa"]),
        ("put the watches on one chair", "Put All X In One Y", ["Watch", "on", "Chairs"]),
        ("put my clothes into the bath", "Put All X On Y", ["Cloth", "in", "Bathtub"]),
        ("clean the silverware", "Clean All X", ["Silverware"]),
        ("wash the dishes", "Clean All X", ["Dishware"]),
        ("rinse the cups and mugs", "Clean All X", ["Drinkware"]),
        ("clean a plate", "Clean X", ["Plate"]),
        ("make me a coffee", "Coffee", []),
        (
            "I'd like two slices of tomato in a bowl",
            "N Slices Of X In Y",
            ["2", "Tomato", "in", "Bowl"],
        ),
        (
            "a couple of slices of lettuce on a plate",
            "N Slices Of X In Y",
            ["2", "Lettuce", "on", "Plate"],
        ),
        (
            "three cooked potato slices on a plate",
            "N Cooked Slices Of X In Y",
            ["3", "Potato", "on", "Plate"],
        ),
        ("slice an apple", "Sliced X", ["Apple"]),
        ("boil a potato", "Boil X", ["Potato"]),
        ("the houseplant needs watering", "Water Plant", []),
        ("toast some bread and put it on a plate", "Plate Of Toast", []),
    ],
)
def test_everyday_words(goal: str, family: str, params: list[str]) -> None:
    same(spec(goal), family, params)


def test_the_scene_settles_a_table() -> None:
    same(spec("put the books on the table"), "Put All X On Y", ["Book", "on", "Tables"])
    scene = {"Book", "CoffeeTable", "Sofa"}
    same(
        spec("put the books on the table", scene_types=scene),
        "Put All X On Y",
        ["Book", "on", "CoffeeTable"],
    )


def test_the_task_family_picks_the_family_not_its_parameters() -> None:
    same(
        spec("put the remotes on the sofa", task="Put All X In One Y"),
        "Put All X In One Y",
        ["RemoteControl", "on", "Sofa"],
    )
    same(spec("hi", task="coffee"), "Coffee", [])
    same(
        spec("hello", "Commander: two slices of tomato please", task="N Slices Of X In Y"),
        "N Slices Of X In Y",
        ["2", "Tomato", "on", "Plate"],
    )
    assert read_goal("hi", [], task="Boil X").spec is None  # boil what?
    reading = read_goal("hi", ["Commander: coffee and a salad with tomato"], task="Breakfast")
    assert reading.request == "coffee and a salad with tomato"  # the greeting is no request


# ----------------------------------------------------------------------------- the Commander's words


def test_a_greeting_reads_the_commanders_lines() -> None:
    lines = [
        "Driver: hi, what should I do?",
        "Commander: hello! today we need to make a salad",
        "Commander: slice a tomato... then the potato needs to be cooked",
        "Driver: where is the knife?",
        "Commander: it's in the fridge",
        "Commander: we need 2 slices of tomato and one cooked potato slice",
        "Commander: the plate is dirty, rinse it",
        "Commander: then put everything on the plate",
    ]
    for greeting in ("hi", "what should I do?", "Hello, what is my task?", None, ""):
        reading = read_goal(greeting, lines)
        assert reading.spec is not None, reading.note
        same(reading.spec, "Salad", ["0", "2", "1"])
        assert "Driver" not in reading.request and "where is the knife" not in reading.request
        assert "Tomato" in reading.focus and "Potato" in reading.focus


def test_driver_lines_never_make_the_goal() -> None:
    reading = read_goal("hi", ["Driver: should I make coffee?", "Driver: or water the plant?"])
    assert reading.spec is None and reading.note


@pytest.mark.parametrize(
    ("lines", "family", "params"),
    [
        (
            ["Commander: Hi!", "Commander: I need the alarm clock on a furniture."],
            "Put All X On Y",
            ["AlarmClock", "on", "Furniture"],
        ),
        (
            [
                "Commander: There are 2 remotes",
                "Commander: You need to put them both on a single chair",
            ],
            "Put All X In One Y",
            ["RemoteControl", "on", "Chairs"],
        ),
        (
            [
                "Commander: find newspaper",
                "Commander: one is on the shelf",
                "Commander: put on sofa",
            ],
            "Put All X On Y",
            ["Newspaper", "on", "Sofa"],
        ),
        (
            ["Commander: clean all clothes", "Commander: one by the toilet"],
            "Clean All X",
            ["Cloth"],
        ),
        (["Commander: please get the bowl from the stool and rinse it"], "Clean All X", ["Bowl"]),
        (["Commander: can you clean a mug for me"], "Clean All X", ["Mug"]),  # loose talk
        (
            ["Commander: Please clean the dirty pot.", "Commander: It is beside the coffee maker"],
            "Clean All X",
            ["Pot"],
        ),
        (
            ["Commander: hello. today I need a bowl of cooked potato slices", "Commander: three"],
            "N Cooked Slices Of X In Y",
            ["3", "Potato", "in", "Bowl"],
        ),
        (["Commander: can you make me a cup of coffee please"], "Coffee", []),
        (["Commander: the plant needs some water"], "Water Plant", []),
    ],
)
def test_commander_only(lines: list[str], family: str, params: list[str]) -> None:
    same(spec("hi", *lines), family, params)


def test_no_spec_names_the_objects_and_says_why() -> None:
    reading = read_goal("hi", [])
    assert reading.spec is None and reading.focus == [] and reading.note
    assert "\n" not in reading.note
    reading = read_goal("Hello, what is my task?", ["Commander: the teddy bear is by the bed"])
    assert reading.spec is None and reading.note and "\n" not in reading.note
    assert reading.focus == ["TeddyBear", "Bed"]
    assert reading.request == "the teddy bear is by the bed"


# ----------------------------------------------------------------------------- untrusted text


def test_untrusted_text_is_read_as_words() -> None:
    # huge, repetitive input is read like any other (a pattern that backtracks would hang here;
    # benchmarks/goal_reading.py prints the time a reading takes)
    readings = {
        text[:6]: read_goal(text, [f"Commander: {text}"] * 5)
        for text in (
            "put " * 50_000,
            "(" * 100_000,
            "slice 2 slices of tomato " * 20_000,
            "a" * 1_000_000,
        )
    }
    sliced = readings["slice "]
    assert sliced.spec is not None and sliced.spec.task == "Sliced X" and sliced.focus == ["Tomato"]
    assert all(readings[k].spec is None for k in ("put pu", "((((((", "aaaaaa"))
    # "@Name" markers cannot be written by the text itself, nor code run
    reading = read_goal("@Mug __import__('os') {0.__class__}", [])
    assert reading.spec is None and reading.focus == ["Mug"]


# ----------------------------------------------------------------------------- the command


def test_goal_command_prints_the_spec() -> None:
    result = runner.invoke(app, ["goal", "put all the remotes on one coffee table"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "Put All X In One Y: Put all RemoteControl on one CoffeeTable."
    assert "  every RemoteControl" in lines and "  a CoffeeTable" in lines
    assert "  all RemoteControl on one CoffeeTable" in lines


def test_goal_command_reads_dialogue_and_task() -> None:
    args = ["goal", "hi", "--dialogue", "Commander: slice [bold]two[/bold] tomatoes", "--dialogue"]
    result = runner.invoke(app, [*args, "Driver: ok", "--task", "N Slices Of X In Y", "--json"])
    assert result.exit_code == 0, result.output
    record = orjson.loads(result.output)
    assert record["spec"]["task"] == "N Slices Of X In Y" and record["note"] is None
    assert record["request"] == "slice [bold]two[/bold] tomatoes"  # printed as written
    assert GoalSpec.model_validate(record["spec"]).source == "text"


def test_goal_command_without_a_spec() -> None:
    result = runner.invoke(
        app, ["goal", "hello", "--dialogue", "Commander: fetch the [red]teddy bear[/red]"]
    )
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        "no goal condition read: the words name no TEACh task",
        "objects named: TeddyBear",
    ]
    result = runner.invoke(app, ["goal", "hi", "--task", "Pancakes"])
    assert result.exit_code == 2 and "unknown task family 'Pancakes'" in result.output


# ----------------------------------------------------------------------------- real games


def _games(shared_dir: Path) -> list[tuple[GoalSpec, str | None, list[str], list[str]]]:
    from planverify.inputs.sources import load_episodes

    games = shared_dir / "teach" / "games"
    if not games.is_dir():
        pytest.skip(f"no TEACh games under {shared_dir}")
    out = []
    for episode in load_episodes([games]):
        assert episode.teach_task is not None
        dialogue = [f"{a.agent}: {a.text}" for a in episode.parsed() if a.is_dialogue]
        out.append(
            (
                parse_teach_task(episode.teach_task),
                episode.goal,
                dialogue,
                episode.teach_task.get("task_params") or [],
            )
        )
    return out


def test_real_games(shared_dir: Path) -> None:
    games = _games(shared_dir)
    assert len(games) > 400
    described = spoken = 0
    for truth, goal, dialogue, params in games:
        # the builders give every real task definition's spec from its parameters
        assert signature(spec_of(truth.task, params)) == signature(truth), truth.text
        described += _matches(read_goal(goal, dialogue).spec, truth)
        spoken += _matches(read_goal("hi", dialogue).spec, truth)
    # measured: 95.2% and 87.0% (benchmarks/goal_reading.py); these floors catch regressions
    assert described / len(games) >= 0.94
    assert spoken / len(games) >= 0.85


def _matches(read: GoalSpec | None, truth: GoalSpec) -> bool:
    return read is not None and signature(read) == signature(truth)
