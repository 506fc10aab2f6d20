"""Goal specs from TEACh task definitions (`parse_teach_task`) and whether a state meets them
(`evaluate`: True, False, or None when what is known cannot tell)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planverify.world.classes import types_of
from planverify.world.goals import Component, GoalSpec, evaluate, parse_teach_task
from planverify.world.state import State

from .scenes import OFF, fixture, item, part, run, scene, shared_games

# ----------------------------------------------------------------------------- TEACh's shape


def subtask(
    name: str,
    components: dict[str, Any],
    anchor: str,
    determiner: str = "a",
    relations: list[Any] | None = None,
) -> dict[str, Any]:
    """A component that is a whole task (a Sandwich's toast, a Salad's sliced lettuce)."""
    return {
        "determiner": determiner,
        "task_name": name,
        "task": {
            "task_name": name,
            "task_anchor_object": anchor,
            "components": components,
            "relations": relations or [],
            "episodes": [],
        },
    }


def on(
    tail: str, heads: dict[str, str], tail_determiner: str = "the", text: str = ""
) -> dict[str, Any]:
    """A parentReceptacles relation: heads (component -> determiner) in or on the tail."""
    return {
        "property": "parentReceptacles",
        "tail_entity_list": [tail],
        "tail_determiner_list": [tail_determiner],
        "head_entity_list": list(heads),
        "head_determiner_list": list(heads.values()),
        "failure_desc": text,
    }


def task(
    name: str, components: dict[str, Any], relations: list[Any] | None = None, desc: str = ""
) -> dict[str, Any]:
    return {"task_name": name, "desc": desc, "components": components, "relations": relations or []}


def toast(determiner: str) -> dict[str, Any]:
    return subtask(
        "Toast", {"toast": part({"objectType": "BreadSliced", "isCooked": 1})}, "toast", determiner
    )


def sliced(what: str, determiner: str) -> dict[str, Any]:
    return subtask(
        "Sliced X",
        {
            "knife": part({"objectType": "Knife"}, shareable=True),
            what: part({"objectType": f"{what}Sliced"}),
        },
        what,
        determiner,
    )


def clean(what: str, determiner: str = "a") -> dict[str, Any]:
    return subtask(
        "Clean X",
        {
            "sink": part({"objectType": "Sink", "receptacle": 1}, shareable=True),
            what: part({"simbotObjectClass": what, "isDirty": 0}),
        },
        what,
        determiner,
    )


COFFEE = task(
    "Coffee",
    {"coffee": part({"objectType": "Mug", "isDirty": 0, "simbotIsFilledWithCoffee": 1})},
    desc="Prepare coffee in a clean mug.",
)
SANDWICH = task(
    "Sandwich",
    {
        "toast": toast("2"),
        "lettuce": sliced("Lettuce", "1"),
        "tomato": sliced("Tomato", "0"),
        "plate": clean("Plate"),
    },
    [
        on(
            "plate",
            {"toast": "2", "lettuce": "1", "tomato": "0"},
            text="All sandwich components need to be on a plate.",
        )
    ],
    desc="Make a sandwich.",
)


def components(spec: GoalSpec) -> dict[str, tuple[str, int | str, dict[str, int]]]:
    return {c.name: (c.select, "all" if c.every else c.count, c.states) for c in spec.components}


# ----------------------------------------------------------------------------- parsing


def test_a_task_definition_becomes_components_with_states() -> None:
    spec = parse_teach_task(COFFEE)
    assert (spec.task, spec.text, spec.source) == (
        "Coffee",
        "Prepare coffee in a clean mug.",
        "teach_task",
    )
    assert components(spec) == {"coffee": ("Mug", 1, {"isDirty": 0, "simbotIsFilledWithCoffee": 1})}
    assert spec.components[0].describe() == "a Mug that is clean and filled with coffee"
    assert spec.relations == []


def test_nested_tasks_multiply_counts_and_determiner_zero_leaves_a_part_out() -> None:
    spec = parse_teach_task(SANDWICH)
    assert components(spec) == {
        "toast.toast": ("BreadSliced", 2, {"isCooked": 1}),  # two slices of toast
        "lettuce.knife": ("Knife", 1, {}),
        "lettuce.Lettuce": ("LettuceSliced", 1, {}),
        "plate.sink": ("Sink", 1, {"receptacle": 1}),
        "plate.Plate": ("Plate", 1, {"isDirty": 0}),
    }, "the tomato ('0') is no part of this sandwich"
    [relation] = spec.relations
    assert relation.heads == [("toast.toast", "2"), ("lettuce.Lettuce", "1")]
    assert (relation.tail, relation.single) == ("plate.Plate", True)
    assert relation.describe() == "All sandwich components need to be on a plate."


def test_counts_multiply_at_every_level_but_a_shareable_part_counts_once() -> None:
    spec = parse_teach_task(
        task(
            "Two sandwiches",
            {
                "sandwich": subtask(
                    "Sandwich", SANDWICH["components"], "plate", "2", SANDWICH["relations"]
                )
            },
        )
    )
    counts = {name: count for name, (_, count, _) in components(spec).items()}
    assert counts == {
        "sandwich.toast.toast": 4,
        "sandwich.lettuce.knife": 1,  # one knife slices for both
        "sandwich.lettuce.Lettuce": 2,
        "sandwich.plate.sink": 1,
        "sandwich.plate.Plate": 2,
    }
    [relation] = spec.relations
    assert relation.heads == [("sandwich.toast.toast", "4"), ("sandwich.lettuce.Lettuce", "2")]
    # each sandwich has its own plate: not one and the same plate for all four slices
    assert relation.single is False


def test_numbers_all_and_zero_on_plain_components() -> None:
    spec = parse_teach_task(
        task(
            "Mixed",
            {
                "slices": part({"objectType": "PotatoSliced", "isCooked": 1}, "3"),
                "plates": part({"objectType": "Plate", "isDirty": 0}, "all"),
                "spoon": part({"objectType": "Spoon"}, "0"),
                "cup": part({"objectType": "Cup", "isFilledWithLiquid": 1}),
            },
        )
    )
    assert components(spec) == {
        "slices": ("PotatoSliced", 3, {"isCooked": 1}),
        "plates": ("Plate", "all", {"isDirty": 0}),
        "cup": ("Cup", 1, {"isFilledWithLiquid": 1}),
    }
    described = [c.describe() for c in spec.components]
    assert described == [
        "3 PotatoSliced objects that are cooked",
        "every Plate is clean",
        "a Cup that is filled with liquid",
    ]


def test_a_class_selects_every_type_in_it() -> None:
    spec = parse_teach_task(
        task(
            "Clean All X", {"dishes": part({"simbotObjectClass": "Tableware", "isDirty": 0}, "all")}
        )
    )
    assert components(spec) == {"dishes": ("Tableware", "all", {"isDirty": 0})}
    assert spec.types() == types_of("Tableware")
    assert {"Plate", "Bowl", "Mug", "Cup"} <= spec.types() and "Pan" not in spec.types()


def test_relations_with_the_and_a_tails_and_per_head_determiners() -> None:
    spec = parse_teach_task(
        task(
            "Put All X In One Y",
            {
                "box": part({"objectType": "TissueBox"}, "all"),
                "remote": part({"objectType": "RemoteControl"}, "2"),
                "vase": part({"objectType": "Vase"}),
                "table": part({"simbotObjectClass": "Tables", "receptacle": 1}, shareable=True),
            },
            [
                on("table", {"box": "all", "remote": "2", "vase": "0"}),
                on("table", {"vase": "a"}, tail_determiner="a"),
                on("nowhere", {"box": "all"}),  # a tail that is no component: dropped
                {"property": "isOpen", "tail_entity_list": ["table"], "head_entity_list": ["box"]},
            ],
        )
    )
    assert [(r.heads, r.tail, r.single) for r in spec.relations] == [
        ([("box", "all"), ("remote", "2")], "table", True),
        ([("vase", "1")], "table", False),
    ]
    assert components(spec)["table"] == ("Tables", 1, {"receptacle": 1})


def test_malformed_parts_are_left_out_not_fatal() -> None:
    spec = parse_teach_task(
        {
            "task_name": "Odd",
            "components": {
                "ok": part({"objectType": "Mug"}),
                "no conditions": {"determiner": "a"},
                "not a mapping": "Mug",
                "type not a string": part({"objectType": 3}),
            },
            "relations": "none",
        }
    )
    assert components(spec) == {"ok": ("Mug", 1, {})}
    assert parse_teach_task({}).components == []


# ----------------------------------------------------------------------------- evaluation


KITCHEN = scene(
    fixture("CounterTop", "CounterTop"),
    fixture("DiningTable", "DiningTable"),
    fixture("SideTable", "SideTable"),
    fixture("CoffeeMachine", "CoffeeMachine", **OFF),
    item("Mug", "Mug", receptacle=True, dirty=True),
    item("Mug", "Mug2", receptacle=True),
    item("Plate", "Plate", receptacle=True),
    item("Plate", "Plate2", receptacle=True, dirty=True),
    item("Tomato", "Tomato"),
    item("Knife", "Knife"),
    item("TissueBox", "TissueBox", on=["DiningTable"]),
    item("TissueBox", "TissueBox2", on=["DiningTable"]),
)


def brew(mug: str) -> list[str]:
    return [
        f"Driver.PickUp('{mug}')",
        f"Driver.PutAOnB('{mug}', 'CoffeeMachine')",
        "Driver.ToggleOn('CoffeeMachine')",
    ]


def met(spec: GoalSpec, state: State) -> list[bool | None]:
    return [u.met for u in evaluate(spec, state)]


def test_evaluate_is_three_valued() -> None:
    coffee = parse_teach_task(COFFEE)
    assert met(coffee, run([], KITCHEN)[0]) == [False], "the scene has no mug of coffee"
    assert met(coffee, run(brew("Mug2"), KITCHEN)[0]) == [True]
    assert met(coffee, run(brew("Mug"), KITCHEN)[0]) == [False], "coffee in a dirty mug"
    # without a scene nothing is known of the mug, nor whether there is another
    assert met(coffee, run(["Driver.PickUp('Mug')"])[0]) == [None]
    assert met(coffee, run([])[0]) == [None]
    assert met(coffee, run(brew("Mug"))[0]) == [None], "the mug may be dirty"


def test_progress_counts_an_object_s_kind_and_the_states_it_is_in() -> None:
    coffee = parse_teach_task(COFFEE)
    # best mug: clean and empty (kind + clean = 2); after brewing in it: 3
    assert [u.progress for u in evaluate(coffee, run([], KITCHEN)[0])] == [2]
    assert [u.progress for u in evaluate(coffee, run(brew("Mug2"), KITCHEN)[0])] == [3]
    two = parse_teach_task(
        task("Coffee", {"coffee": part(COFFEE["components"]["coffee"]["conditions"], "2")})
    )
    # two mugs wanted: the clean one with coffee (3) and the dirty empty one (1)
    [unit] = evaluate(two, run(brew("Mug2"), KITCHEN)[0])
    assert (unit.met, unit.progress) == (False, 4)
    [unit] = evaluate(two, run([], KITCHEN)[0])
    assert (unit.met, unit.progress) == (False, 3)


def test_all_means_every_object_of_the_kind() -> None:
    plates = parse_teach_task(
        task("Clean All X", {"plates": part({"objectType": "Plate", "isDirty": 0}, "all")})
    )
    state, _ = run([], KITCHEN)
    [unit] = evaluate(plates, state)
    assert (unit.met, unit.progress) == (False, 3), "Plate is clean (2), Plate2 is not (1)"
    state.set("Plate2", dirty=False)
    assert met(plates, state) == [True]
    tableware = parse_teach_task(
        task("Clean All X", {"t": part({"simbotObjectClass": "Tableware", "isDirty": 0}, "all")})
    )
    assert met(tableware, state) == [False], "the dirty Mug is tableware too"
    state.set("Mug", dirty=False)
    assert met(tableware, state) == [True]
    assert met(plates, run(["Driver.PickUp('Plate')"])[0]) == [None], "no scene: unknown"


SLICE = [
    "Driver.PickUp('Knife')",
    "Driver.Slice('Tomato')",
    "Driver.PutAOnB('Knife', 'CounterTop')",
]


def serve(*targets: str) -> list[str]:
    """Slice the tomato and put one slice on each target."""
    names = ["TomatoSliced", "TomatoSliced2", "TomatoSliced3"]
    return SLICE + [
        line
        for name, target in zip(names, targets, strict=False)
        for line in (f"Driver.PickUp('{name}')", f"Driver.PutAOnB('{name}', '{target}')")
    ]


def slices_on(tail: str, determiner: str, tail_determiner: str = "the") -> GoalSpec:
    return parse_teach_task(
        task(
            "N Slices Of X In Y",
            {
                "tomato": sliced("Tomato", determiner),
                "dish": part({"objectType": tail, "receptacle": 1}),
            },
            [on("dish", {"tomato": determiner}, tail_determiner)],
        )
    )


@pytest.mark.parametrize(
    ("targets", "the", "a"),
    [
        (("Plate", "Plate"), True, True),
        (("Plate", "Plate2"), False, True),
        (("Plate", "CounterTop"), False, False),
        (("Plate",), False, False),
    ],
    ids=["both on one plate", "one on each plate", "one on the counter", "only one slice"],
)
def test_the_tail_is_one_object_a_tail_is_any(targets: tuple[str, ...], the: bool, a: bool) -> None:
    state, outcomes = run(serve(*targets), KITCHEN)
    assert all(o.problem is None for o in outcomes)
    assert met(slices_on("Plate", "2", "the"), state)[-1] is the
    assert met(slices_on("Plate", "2", "a"), state)[-1] is a


def test_what_is_on_a_plate_on_a_table_is_on_the_table() -> None:
    plan = [
        *serve("Plate", "Plate"),
        "Driver.PickUp('Plate')",
        "Driver.PutAOnB('Plate', 'DiningTable')",
    ]
    state, outcomes = run(plan, KITCHEN)
    assert all(o.problem is None for o in outcomes)
    assert met(slices_on("DiningTable", "2"), state)[-1] is True
    assert met(slices_on("SideTable", "2"), state)[-1] is False
    assert state.parents("TomatoSliced") == ["Plate", "DiningTable"]


def test_all_heads_in_one_tail_counting_where_the_scene_puts_them() -> None:
    spec = parse_teach_task(
        task(
            "Put All X In One Y",
            {
                "box": part({"objectType": "TissueBox"}, "all"),
                "table": part({"objectType": "DiningTable", "receptacle": 1}, shareable=True),
            },
            [on("table", {"box": "all"})],
        )
    )
    # both start on the table (a place the scene gives by type)
    assert met(spec, run([], KITCHEN)[0])[-1] is True
    moved = ["Driver.PickUp('TissueBox2')", "Driver.PutAOnB('TissueBox2', 'SideTable')"]
    state, _ = run(moved, KITCHEN)
    [_, _, relation] = evaluate(spec, state)
    assert (relation.met, relation.progress) == (False, 1)
    back = [*moved, "Driver.PickUp('TissueBox2')", "Driver.PutAOnB('TissueBox2', 'DiningTable')"]
    assert met(spec, run(back, KITCHEN)[0])[-1] is True


SANDWICH_KITCHEN = scene(
    fixture("CounterTop", "CounterTop"),
    fixture("Sink", "Sink"),
    fixture("Toaster", "Toaster", **OFF),
    item("Plate", "Plate", receptacle=True),
    item("Plate", "Plate2", receptacle=True),
    item("Bread", "Bread"),
    item("Lettuce", "Lettuce"),
    item("Tomato", "Tomato"),
    item("Knife", "Knife"),
)


def make_sandwich(*, toasted: int = 2, lettuce_on: str = "Plate") -> list[str]:
    plan = [
        "Driver.PickUp('Knife')",
        "Driver.Slice('Bread')",
        "Driver.Slice('Lettuce')",
        "Driver.Slice('Tomato')",
        "Driver.PutAOnB('Knife', 'CounterTop')",
    ]
    for number, piece in enumerate(("BreadSliced", "BreadSliced2")):
        plan += [f"Driver.PickUp('{piece}')"]
        if number < toasted:
            plan += [
                f"Driver.PutAOnB('{piece}', 'Toaster')",
                "Driver.ToggleOn('Toaster')",
                "Driver.ToggleOff('Toaster')",
                f"Driver.PickUp('{piece}')",
            ]
        plan += [f"Driver.PutAOnB('{piece}', 'Plate')"]
    return [
        *plan,
        "Driver.PickUp('LettuceSliced')",
        f"Driver.PutAOnB('LettuceSliced', '{lettuce_on}')",
    ]


@pytest.mark.parametrize(
    ("plan", "expected"),
    [
        (make_sandwich(), [True] * 6),
        (make_sandwich(toasted=1), [False, True, True, True, True, True]),
        (make_sandwich(lettuce_on="Plate2"), [True] * 5 + [False]),
    ],
    ids=["made", "one slice untoasted", "lettuce on another plate"],
)
def test_a_sandwich(plan: list[str], expected: list[bool]) -> None:
    # components: toast, knife, lettuce, sink, plate; then the relation (the tomato, "0" in
    # the task, is sliced but left on the counter: no part of it)
    state, outcomes = run(plan, SANDWICH_KITCHEN)
    assert all(o.problem is None for o in outcomes), [o.problem for o in outcomes]
    assert met(parse_teach_task(SANDWICH), state) == expected


def test_the_tail_must_be_the_object_its_component_describes() -> None:
    # the sandwich goes on the dirty plate while a clean one stands by: the task's "plate" is
    # a clean plate, so the relation is not met, though the plate component is (by the other)
    dirty_plate = item("Plate", "Plate", receptacle=True, dirty=True)
    kitchen = scene(
        *[o for o in SANDWICH_KITCHEN.model_dump(mode="json")["objects"] if o["type"] != "Plate"],
        dirty_plate,
        item("Plate", "Plate2", receptacle=True),
    )
    state, outcomes = run(make_sandwich(), kitchen)
    assert all(o.problem is None for o in outcomes), [o.problem for o in outcomes]
    assert met(parse_teach_task(SANDWICH), state) == [True] * 5 + [False]


# ----------------------------------------------------------------------------- real games


def test_every_real_task_definition_parses(shared_dir: Path) -> None:
    games = shared_games(shared_dir)
    assert len(games) == 478
    tasks: set[str] = set()
    for episode in games:
        assert episode.teach_task is not None
        spec = parse_teach_task(episode.teach_task)
        assert spec.components, episode.id
        names = {c.name for c in spec.components}
        for relation in spec.relations:
            assert relation.tail in names and {h for h, _ in relation.heads} <= names, episode.id
        assert all(isinstance(c, Component) and (c.every or c.count >= 1) for c in spec.components)
        assert spec.types(), episode.id
        tasks.add(spec.task)
    assert len(tasks) == 12, sorted(tasks)  # TEACh's twelve task families
