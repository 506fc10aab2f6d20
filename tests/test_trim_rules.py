"""The trim policies in the rules Judge and certify: each kind `natural` keeps as optional and
each kind both policies remove, the certify veto under `natural`, a flag the Judge also inserts
back, the round trip between policies through one results file, and the optional steps of a
plan the Judge repaired, answered from its memo."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from planverify import verify_plan
from planverify.agents.base import JudgeReply
from planverify.agents.rules import RulesJudge, judge_plan
from planverify.records.critique import Critique, Flag, Missing
from planverify.records.episode import Scene
from planverify.records.result import VerificationResult
from planverify.records.trim import TrimPolicy
from planverify.world import ground
from planverify.world.certify import certify_flags
from planverify.world.repair import Reviewer

from .conftest import ForgetfulRulesJudge
from .scenes import CLOSED, OFF, ON, fixture, item, part, scene

RINSE = "Rinse the mug."
FIXTURES = (
    fixture("CounterTop", "CounterTop"),
    fixture("Sink", "Sink"),
    fixture("SinkBasin", "SinkBasin", on=["Sink"]),
    fixture("Faucet", "Faucet", on=["Sink"], receptacle=False, **ON),
    fixture("Fridge", "Fridge", **CLOSED),
    fixture("Microwave", "Microwave", on=["CounterTop"], **OFF, **CLOSED),
    fixture("CoffeeMachine", "CoffeeMachine", on=["CounterTop"], **OFF),
)
SINK = scene(
    *FIXTURES,
    item("Mug", "Mug", receptacle=True, dirty=True, within=["CounterTop|0"]),
    item("Cup", "Cup", receptacle=True, on=["SinkBasin"]),
)
GROUNDING = ground(RINSE, [], SINK, task=None, teach_task=None)
TAKE, RINSE_IT = "Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'SinkBasin')"
OFF_TAP, ON_TAP = "Driver.ToggleOff('Faucet')", "Driver.ToggleOn('Faucet')"
OPEN, CLOSE = "Driver.Open('Fridge')", "Driver.Close('Fridge')"

KEPT_KINDS = {
    "search before taking the mug": ([OPEN, CLOSE, TAKE, RINSE_IT], [0, 1], "search"),
    "running tap off and on around loading": (
        [TAKE, OFF_TAP, RINSE_IT, ON_TAP],
        [1, 3],
        "device_around_loading",
    ),
}
TOLD = "Commander.Say('Rinse the mug.')"
KEPT_KINDS["fridge searched once the Commander said what to do"] = (
    [TOLD, OPEN, CLOSE, TAKE, RINSE_IT],
    [1, 2],
    "search",
)
REMOVED_KINDS = {
    "tap off and straight on, nothing loaded": [OFF_TAP, ON_TAP, TAKE, RINSE_IT],
    "fridge opened before the Commander said anything": [OPEN, CLOSE, TOLD, TAKE, RINSE_IT],
    "fridge opened with the mug in hand, then put down": [TAKE, OPEN, CLOSE, RINSE_IT],
    "fridge opened once nothing is left to take": [TAKE, RINSE_IT, OPEN, CLOSE],
}
MICROWAVE_OPEN, MICROWAVE_CLOSE = "Driver.Open('Microwave')", "Driver.Close('Microwave')"
KEPT_KINDS["microwave searched before taking the mug"] = (
    [MICROWAVE_OPEN, MICROWAVE_CLOSE, TAKE, RINSE_IT],
    [0, 1],
    "search",
)
SET_DOWN, TAKE_CUP = "Driver.PutAOnB('Mug', 'CounterTop')", "Driver.PickUp('Cup')"
CLEAR_CUP = [TAKE_CUP, "Driver.PutAOnB('Cup', 'CounterTop')"]
KEPT_KINDS["mug carried to the sink and set down while the sink is cleared"] = (
    [TAKE, "Driver.Move(1.0)", SET_DOWN, *CLEAR_CUP, TAKE, RINSE_IT],
    [0, 2],
    "freeing_hands",
)
REMOVED_KINDS["mug set down where it was picked up, never carried"] = [
    TAKE,
    SET_DOWN,
    *CLEAR_CUP,
    TAKE,
    RINSE_IT,
]


def put_all_in_one(
    desc: str,
    head: tuple[str, dict[str, Any]],
    tail: tuple[str, dict[str, Any]],
    *,
    tail_determiner: str = "a",
) -> dict[str, Any]:
    """A "Put All X In One Y" task definition: every `head` object in or on one `tail`."""
    (head_name, head_conditions), (tail_name, tail_conditions) = head, tail
    return {
        "task_name": "Put All X In One Y",
        "desc": desc,
        "components": {
            head_name: part(head_conditions, "all"),
            tail_name: part(tail_conditions),
        },
        "relations": [
            {
                "property": "parentReceptacles",
                "tail_entity_list": [tail_name],
                "tail_determiner_list": [tail_determiner],
                "head_entity_list": [head_name],
                "head_determiner_list": ["all"],
            }
        ],
    }


def critique(plan: list[str], trim: TrimPolicy) -> Critique:
    return judge_plan(RINSE, plan, GROUNDING, trim=trim)


@pytest.mark.parametrize("name", KEPT_KINDS)
def test_natural_keeps_as_optional_what_minimal_removes(name: str) -> None:
    plan, steps, kind = KEPT_KINDS[name]
    natural, minimal = critique(plan, "natural"), critique(plan, "minimal")
    assert natural.flags == []
    assert [(f.step, f.optional and f.optional.kind) for f in natural.optional] == [
        (s, kind) for s in steps
    ]
    assert [(f.step, f.optional and f.optional.kind) for f in minimal.flags] == [
        (s, kind) for s in steps
    ]
    assert minimal.optional == []
    assert all(f.optional and f.optional.reason == f.reason for f in minimal.flags)


@pytest.mark.parametrize("name", REMOVED_KINDS)
def test_both_policies_remove_what_no_demonstrator_meant(name: str) -> None:
    plan = REMOVED_KINDS[name]
    natural, minimal = critique(plan, "natural"), critique(plan, "minimal")
    assert [f.step for f in natural.flags] == [f.step for f in minimal.flags]
    assert len(natural.flags) == 2
    assert natural.optional == [] and all(f.optional is None for f in minimal.flags)


def test_a_microwave_opened_to_see_what_it_would_cook_is_no_search() -> None:
    plan = [MICROWAVE_OPEN, MICROWAVE_CLOSE, "Driver.ToggleOn('Microwave')", TAKE, RINSE_IT]
    natural, minimal = critique(plan, "natural"), critique(plan, "minimal")
    assert {0, 1} <= {f.step for f in natural.flags}
    assert [f.step for f in natural.flags] == [f.step for f in minimal.flags]
    assert natural.optional == []


RUNNING_MICROWAVE = scene(
    *(f for f in SINK.model_dump()["objects"] if f["type"] != "Microwave"),
    fixture("Microwave", "Microwave", on=["CounterTop"], **ON, **CLOSED),
)
MICROWAVE_OFF = "Driver.ToggleOff('Microwave')"


@pytest.mark.parametrize(
    ("plan", "search"),
    [
        ([MICROWAVE_OFF, MICROWAVE_OPEN, MICROWAVE_CLOSE, TAKE, RINSE_IT], [0, 1, 2]),
        ([MICROWAVE_OFF, OPEN, CLOSE, TAKE, RINSE_IT], [1, 2]),
    ],
    ids=["switched off to look inside", "switched off, another container searched"],
)
def test_a_running_microwave_switched_off_to_look_inside_is_part_of_the_search(
    plan: list[str], search: list[int]
) -> None:
    grounding = ground(RINSE, [], RUNNING_MICROWAVE, task=None, teach_task=None)
    natural = judge_plan(RINSE, plan, grounding, trim="natural")
    minimal = judge_plan(RINSE, plan, grounding, trim="minimal")
    assert [(f.step, f.optional and f.optional.kind) for f in natural.optional] == [
        (s, "search") for s in search
    ]
    assert [f.step for f in natural.flags] == sorted({0, 1, 2} - set(search))
    assert [f.step for f in minimal.flags] == [0, 1, 2]


def test_a_running_microwave_switched_off_and_never_opened_goes_under_both_policies() -> None:
    plan = [MICROWAVE_OFF, TAKE, RINSE_IT]
    grounding = ground(RINSE, [], RUNNING_MICROWAVE, task=None, teach_task=None)
    for trim in ("natural", "minimal"):
        critique = judge_plan(RINSE, plan, grounding, trim=trim)
        assert [f.step for f in critique.flags] == [0]
        assert critique.optional == []


MUG_IN_FRIDGE = scene(*FIXTURES, item("Mug", "Mug", receptacle=True, dirty=True, on=["Fridge"]))


MUG_ON_A_PLATE_IN_FRIDGE = scene(
    *FIXTURES,
    item("Plate", "Plate", receptacle=True, on=["Fridge"]),
    item("Mug", "Mug", receptacle=True, dirty=True, on=["Fridge", "Plate"]),
)


@pytest.mark.parametrize(
    "where", [MUG_IN_FRIDGE, MUG_ON_A_PLATE_IN_FRIDGE], ids=["in the fridge", "on a plate in it"]
)
def test_natural_keeps_a_container_closed_after_use_and_opened_again(where: Scene) -> None:
    plan = [OPEN, TAKE, CLOSE, RINSE_IT, TAKE, OPEN, "Driver.PutAOnB('Mug', 'Fridge')", CLOSE]
    grounding = ground(RINSE, [], where, task=None, teach_task=None)
    natural = judge_plan(RINSE, plan, grounding, trim="natural")
    minimal = judge_plan(RINSE, plan, grounding, trim="minimal")
    assert natural.flags == []
    assert [(f.step, f.optional and f.optional.kind) for f in natural.optional] == [
        (2, "tidying"),
        (5, "tidying"),
    ]
    assert [f.step for f in minimal.flags] == [2, 5]


IDLE_MICROWAVE = ["Driver.ToggleOn('Microwave')", "Driver.ToggleOff('Microwave')"]  # nothing in it


@pytest.mark.parametrize(
    ("between", "kept"),
    [
        (["Driver.Move(0.25)"], False),  # closed and opened again at once: no tidying
        (["Commander.Say('One more thing')"], True),  # told something new in between
        (IDLE_MICROWAVE, False),  # only what goes anyway between: side by side once it is gone
    ],
)
def test_a_container_closed_and_opened_again_at_once_is_no_tidying(
    between: list[str], kept: bool
) -> None:
    plan = [OPEN, TAKE, CLOSE, *between, OPEN, CLOSE, RINSE_IT]
    closed, reopened = 2, 3 + len(between)
    grounding = ground(RINSE, [], MUG_IN_FRIDGE, task=None, teach_task=None)
    natural = judge_plan(RINSE, plan, grounding, trim="natural")
    minimal = judge_plan(RINSE, plan, grounding, trim="minimal")
    assert {closed, reopened} <= {f.step for f in minimal.flags}
    optional = {f.step for f in natural.optional}
    assert ({closed, reopened} <= optional) is kept
    assert ({closed, reopened} <= {f.step for f in natural.flags}) is not kept


MUG_UNDER_TAP = scene(
    *FIXTURES,
    item("Mug", "Mug", receptacle=True, on=["SinkBasin"], filled=True),
    fixture("HousePlant", "HousePlant", on=["CounterTop"], receptacle=False),
)
POUR = "Driver.PourFromAIntoB('Mug', 'HousePlant')"


@pytest.mark.parametrize(
    ("goal", "plan", "flagged"),
    [
        ("Put the mug on the counter.", [OFF_TAP, TAKE, SET_DOWN], [0]),  # the tap served nothing
        (
            "Water the plant.",
            [OFF_TAP, TAKE, POUR],
            [],
        ),  # it filled the mug: switched off after use
    ],
)
@pytest.mark.parametrize("trim", ["natural", "minimal"])
def test_a_tap_running_from_the_start_switched_off_goes_unless_the_plan_used_it(
    goal: str, plan: list[str], flagged: list[int], trim: TrimPolicy
) -> None:
    grounding = ground(goal, [], MUG_UNDER_TAP, task=None, teach_task=None)
    assert [f.step for f in judge_plan(goal, plan, grounding, trim=trim).flags] == flagged


def test_a_tap_switched_off_and_on_after_a_pour_into_the_sink_is_not_around_loading() -> None:
    goal = "Put the mug on the counter."
    plan = [TAKE, "Driver.PourFromAIntoB('Mug', 'SinkBasin')", OFF_TAP, ON_TAP, SET_DOWN]
    grounding = ground(goal, [], MUG_UNDER_TAP, task=None, teach_task=None)
    natural = judge_plan(goal, plan, grounding, trim="natural")
    minimal = judge_plan(goal, plan, grounding, trim="minimal")
    assert {2, 3} <= {f.step for f in natural.flags}
    assert [f.step for f in natural.flags] == [f.step for f in minimal.flags]
    assert natural.optional == []


def test_natural_keeps_a_tap_switched_around_loading_with_the_rinse_it_was_around() -> None:
    # the tap runs from the start: switched off, the mug set in the sink, the basin cleared of
    # a cup, the mug put in the basin and the tap switched on again; `minimal` lets the tap run
    # so that the mug is washed at once in the sink, and the later rinse goes too
    sink_it = "Driver.PutAOnB('Mug', 'Sink')"
    plan = [TAKE, OFF_TAP, sink_it, *CLEAR_CUP, TAKE, RINSE_IT, ON_TAP, OFF_TAP, TAKE]
    natural, minimal = critique(plan, "natural"), critique(plan, "minimal")
    assert [f.step for f in natural.flags] == [3, 4]  # the cup: no room was needed in the sink
    assert [(f.step, f.optional and f.optional.kind) for f in natural.optional] == [
        (s, "device_around_loading") for s in (1, 6, 7, 9)
    ]
    assert [f.step for f in minimal.flags] == [1, 3, 4, 6, 7, 9]


def test_a_tap_switched_on_and_straight_off_for_a_needless_rinse_goes_under_both_policies() -> None:
    # the tap runs from the start: off early, on and straight off for a clean mug put in the
    # basin (a rinse the goal does without), on again once the plate is in; `natural` keeps the
    # first switch-off and the last switch-on as the pair around loading, not the two between
    mug_and_plate = scene(
        *FIXTURES,
        item("Mug", "Mug", receptacle=True, filled=True, dirty=False),
        item("Plate", "Plate", receptacle=True, dirty=True),
    )
    breakfast = {
        "task_name": "Breakfast",
        "desc": "Coffee in a clean mug, and a clean plate.",
        "components": {
            "coffee": part({"objectType": "Mug", "isDirty": 0, "simbotIsFilledWithCoffee": 1}),
            "plate": part({"objectType": "Plate", "isDirty": 0}),
        },
        "relations": [],
    }
    empty_it = "Driver.PourFromAIntoB('Mug', 'SinkBasin')"
    plan = [
        OFF_TAP,
        TAKE,
        empty_it,
        RINSE_IT,
        ON_TAP,
        OFF_TAP,
        TAKE,
        empty_it,
        "Driver.PutAOnB('Mug', 'CoffeeMachine')",
        "Driver.ToggleOn('CoffeeMachine')",
        "Driver.PickUp('Plate')",
        "Driver.PutAOnB('Plate', 'SinkBasin')",
        ON_TAP,
    ]
    grounding = ground("", [], mug_and_plate, task=None, teach_task=breakfast)
    natural = judge_plan("", plan, grounding, trim="natural")
    minimal = judge_plan("", plan, grounding, trim="minimal")
    assert [f.step for f in natural.flags] == [3, 4, 5, 6, 7]
    assert [(f.step, f.optional and f.optional.kind) for f in natural.optional] == [
        (0, "device_around_loading"),
        (12, "device_around_loading"),
    ]
    assert [(f.step, f.optional and f.optional.kind) for f in minimal.flags] == [
        (0, "device_around_loading"),
        (3, None),
        (4, None),
        (5, None),
        (6, None),
        (7, None),
        (12, "device_around_loading"),
    ]


def test_three_tap_pairs_in_a_row_keep_only_the_first_switch_off_and_the_last_switch_on() -> None:
    # without a scene: the tap off, a cloth rinsed in the basin, the tap off while the second
    # cloth is fetched, on and straight off, the second cloth put in and the tap on at the end,
    # which rinses both; the inner switches undo each other, pair after pair
    clean_cloths = {
        "task_name": "Clean All X",
        "desc": "Clean all the cloths.",
        "components": {"cloth": part({"objectType": "Cloth", "isDirty": 0}, "all")},
        "relations": [],
    }
    plan = [
        OFF_TAP,
        "Driver.PickUp('Cloth')",
        "Driver.PutAOnB('Cloth', 'SinkBasin')",
        ON_TAP,
        OFF_TAP,
        "Driver.PickUp('Cloth2')",
        ON_TAP,
        OFF_TAP,
        "Driver.PutAOnB('Cloth2', 'SinkBasin')",
        ON_TAP,
    ]
    grounding = ground("", [], None, task=None, teach_task=clean_cloths)
    natural = judge_plan("", plan, grounding, trim="natural")
    minimal = judge_plan("", plan, grounding, trim="minimal")
    assert [f.step for f in natural.flags] == [3, 4, 6, 7]
    assert [(f.step, f.optional and f.optional.kind) for f in natural.optional] == [
        (0, "device_around_loading"),
        (9, "device_around_loading"),
    ]
    assert [f.step for f in minimal.flags] == [0, 3, 4, 6, 7, 9]


STOVE = scene(
    fixture("CounterTop", "CounterTop"),
    fixture("StoveBurner", "StoveBurner"),
    fixture("StoveKnob", "StoveKnob", receptacle=False, **ON),
    fixture("StoveKnob", "StoveKnob2", receptacle=False, **ON),
    item("Pan", "Pan", on=["StoveBurner"], receptacle=True),
    item("Potato", "Potato"),
    item("Knife", "Knife"),
)


def test_two_knobs_switched_off_and_on_after_the_pan_is_loaded_are_both_around_loading() -> None:
    goal = "Cook a slice of potato."
    plan = [
        "Driver.PickUp('Knife')",
        "Driver.Slice('Potato')",
        "Driver.PutAOnB('Knife', 'CounterTop')",
        "Driver.PickUp('PotatoSliced')",
        "Driver.PutAOnB('PotatoSliced', 'Pan')",
        "Driver.ToggleOff('StoveKnob')",
        "Driver.ToggleOff('StoveKnob2')",  # loaded right before, the other knob aside
        "Driver.ToggleOn('StoveKnob')",
        "Driver.ToggleOn('StoveKnob2')",
    ]
    grounding = ground(goal, [], STOVE, task=None, teach_task=None)
    natural = judge_plan(goal, plan, grounding, trim="natural")
    minimal = judge_plan(goal, plan, grounding, trim="minimal")
    assert natural.flags == []
    assert [(f.step, f.optional and f.optional.kind) for f in natural.optional] == [
        (s, "device_around_loading") for s in (5, 6, 7, 8)
    ]
    assert [f.step for f in minimal.flags] == [5, 6, 7, 8]


def test_cabinets_opened_with_the_mug_in_hand_to_put_it_in_another_are_no_search() -> None:
    # the Driver holds the mug, opens one cabinet, then another, and puts the mug in the second:
    # looking for room, not for the cup taken later from the counter, so both policies remove
    # the first cabinet's opening and closing
    cabinets = scene(
        fixture("CounterTop", "CounterTop"),
        fixture("Cabinet", "Cabinet", **CLOSED),
        fixture("Cabinet", "Cabinet2", **CLOSED),
        item("Mug", "Mug", receptacle=True),
        item("Cup", "Cup", receptacle=True),
    )
    put_away = put_all_in_one(
        "Put all drinkware in one cabinet.",
        ("drinks", {"simbotObjectClass": "Drinkware"}),
        ("cabinet", {"objectType": "Cabinet", "receptacle": 1}),
    )
    plan = [
        TAKE,
        "Driver.Open('Cabinet')",
        "Driver.Open('Cabinet2')",
        "Driver.PutAOnB('Mug', 'Cabinet2')",
        "Driver.Close('Cabinet')",
        "Driver.PickUp('Cup')",
        "Driver.PutAOnB('Cup', 'Cabinet2')",
        "Driver.Close('Cabinet2')",
    ]
    grounding = ground("", [], cabinets, task=None, teach_task=put_away)
    natural = judge_plan("", plan, grounding, trim="natural")
    minimal = judge_plan("", plan, grounding, trim="minimal")
    assert [f.step for f in natural.flags] == [f.step for f in minimal.flags] == [1, 4]
    assert natural.optional == []
    assert all(f.optional is None for f in minimal.flags)


@pytest.mark.parametrize(("set_down_on", "search"), [("CounterTop", True), ("SinkBasin", False)])
def test_a_fridge_opened_with_the_mug_in_hand_sought_room_only_if_no_counter_had_it(
    set_down_on: str, search: bool
) -> None:
    # the Driver holds the mug, opens and closes the fridge and sets the mug down next: in the
    # sink it was room the Driver looked for; a counter has room to spare, so the fridge was
    # searched for what the plan takes next (the cup, cleared out of the sink)
    plan = [TOLD, TAKE, OPEN, CLOSE, f"Driver.PutAOnB('Mug', '{set_down_on}')", *CLEAR_CUP]
    plan += [TAKE, RINSE_IT]
    natural, minimal = critique(plan, "natural"), critique(plan, "minimal")
    optional = [(f.step, f.optional and f.optional.kind) for f in natural.optional]
    assert optional == ([(2, "search"), (3, "search")] if search else [])
    assert {2, 3} <= {f.step for f in minimal.flags}
    assert ({2, 3} <= {f.step for f in natural.flags}) is not search


DRAWERS = ("Drawer", "Drawer2", "Drawer3")
CABINETS_THEN_DRAWERS = [
    TOLD,
    "Driver.Open('Cabinet')",
    "Driver.Open('Cabinet2')",
    *(f"Driver.Open('{d}')" for d in DRAWERS),
    *(f"Driver.Close('{d}')" for d in DRAWERS),
    TAKE,
    RINSE_IT,
]


def test_each_search_is_read_with_the_later_ones_put_back() -> None:
    # without a scene an open left open is a search when the Driver opens another container
    # next: in the shortest plan the drawers are gone, and only once they are back does the
    # first cabinet read as the search it began
    grounding = ground(RINSE, [], None, task=None, teach_task=None)
    natural = judge_plan(RINSE, CABINETS_THEN_DRAWERS, grounding, trim="natural")
    minimal = judge_plan(RINSE, CABINETS_THEN_DRAWERS, grounding, trim="minimal")
    searched = [(s, "search") for s in range(1, 9)]
    assert natural.flags == []
    assert [(f.step, f.optional and f.optional.kind) for f in natural.optional] == searched
    assert [(f.step, f.optional and f.optional.kind) for f in minimal.flags] == searched


def test_put_back_tries_no_second_pass_once_the_budget_is_spent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    put_back = Reviewer.put_back

    def with_the_budget_spent(reviewer: Reviewer) -> None:
        monkeypatch.setattr(Reviewer, "exhausted", lambda _: True)
        put_back(reviewer)

    monkeypatch.setattr(Reviewer, "put_back", with_the_budget_spent)
    grounding = ground(RINSE, [], None, task=None, teach_task=None)
    natural = judge_plan(RINSE, CABINETS_THEN_DRAWERS, grounding, trim="natural")
    assert [f.step for f in natural.flags] == [1, 2]  # the cabinets: read before the drawers
    assert [f.step for f in natural.optional] == list(range(3, 9))


def test_a_drawer_opened_to_put_away_the_wrong_object_is_no_search() -> None:
    where = scene(
        fixture("CounterTop", "CounterTop"),
        fixture("DiningTable", "DiningTable"),
        fixture("Drawer", "Drawer", **CLOSED),
        fixture("Cabinet", "Cabinet", **CLOSED),
        item("PepperShaker", "PepperShaker", on=["DiningTable"]),
        item("SaltShaker", "SaltShaker", on=["DiningTable"]),
    )
    goal = "Put all SaltShaker in one Cabinet."
    plan = [
        "Driver.PickUp('PepperShaker')",  # the wrong shaker, set down to open the drawer
        "Driver.PutAOnB('PepperShaker', 'CounterTop')",
        "Driver.Open('Drawer')",
        "Driver.PickUp('PepperShaker')",
        "Driver.PutAOnB('PepperShaker', 'Drawer')",
        "Driver.Close('Drawer')",
        "Driver.PickUp('SaltShaker')",
        "Driver.Open('Cabinet')",
        "Driver.PutAOnB('SaltShaker', 'Cabinet')",
        "Driver.Close('Cabinet')",
    ]
    grounding = ground(goal, [], where, task=None, teach_task=None)
    natural = judge_plan(goal, plan, grounding, trim="natural")
    minimal = judge_plan(goal, plan, grounding, trim="minimal")
    assert [f.step for f in natural.flags] == [0, 1, 2, 3, 4, 5]
    assert natural.optional == []
    assert [(f.step, f.optional) for f in minimal.flags] == [(s, None) for s in range(6)]


LIVING_ROOM = scene(
    fixture("CoffeeTable", "CoffeeTable"),
    fixture("Sofa", "Sofa"),
    fixture("DiningTable", "DiningTable"),
    item("Laptop", "Laptop", within=["CoffeeTable|0"]),
    item("Newspaper", "Newspaper", within=["DiningTable|2"]),
)
NEWSPAPERS_ON_THE_COFFEE_TABLE = put_all_in_one(
    "Put all Newspaper on one CoffeeTable.",
    ("Newspaper", {"simbotObjectClass": "Newspaper"}),
    ("CoffeeTable", {"simbotObjectClass": "CoffeeTable", "receptacle": 1}),
    tail_determiner="the",
)
MOVE_LAPTOP = ["Driver.PickUp('Laptop')", "Driver.PutAOnB('Laptop', 'Sofa')"]
BRING_NEWSPAPER = ["Driver.PickUp('Newspaper')", "Driver.PutAOnB('Newspaper', 'CoffeeTable')"]


@pytest.mark.parametrize(
    ("plan", "kept"),
    [
        ([*MOVE_LAPTOP, *BRING_NEWSPAPER], True),  # room made where the newspaper goes next
        ([*BRING_NEWSPAPER, *MOVE_LAPTOP], False),  # moved once nothing else goes there: a detour
    ],
)
def test_natural_keeps_room_made_where_the_goal_puts_things(plan: list[str], kept: bool) -> None:
    goal = NEWSPAPERS_ON_THE_COFFEE_TABLE["desc"]
    grounding = ground(goal, [], LIVING_ROOM, task=None, teach_task=NEWSPAPERS_ON_THE_COFFEE_TABLE)
    natural = judge_plan(goal, plan, grounding, trim="natural")
    minimal = judge_plan(goal, plan, grounding, trim="minimal")
    laptop = [plan.index(MOVE_LAPTOP[0]), plan.index(MOVE_LAPTOP[1])]
    assert [f.step for f in minimal.flags] == laptop
    if kept:
        assert natural.flags == []
        assert [(f.step, f.optional and f.optional.kind) for f in natural.optional] == [
            (s, "making_room") for s in laptop
        ]
    else:
        assert [f.step for f in natural.flags] == laptop and natural.optional == []


SOFA_TAKEN = scene(
    fixture("CoffeeTable", "CoffeeTable"),
    fixture("Sofa", "Sofa"),
    fixture("DiningTable", "DiningTable"),
    item("Laptop", "Laptop", on=["Sofa"], within=["Sofa|1"]),
    item("Newspaper", "Newspaper", within=["DiningTable|2"]),
    item("Newspaper", "Newspaper2", within=["DiningTable|2"]),
)
ROOM_FOR_A_NEWSPAPER = [
    "Driver.PickUp('Laptop')",
    "Driver.PutAOnB('Laptop', 'DiningTable')",
    "Driver.PickUp('Newspaper')",
    "Driver.Move(1.0)",
    "Driver.PutAOnB('Newspaper', 'Sofa')",
    "Driver.PickUp('Newspaper2')",
    "Driver.PutAOnB('Newspaper2', 'CoffeeTable')",
    "Driver.PickUp('Newspaper')",
    "Driver.PutAOnB('Newspaper', 'CoffeeTable')",
]


def test_room_made_for_a_thing_the_goal_is_about_is_kept_wherever_it_is_made() -> None:
    # the sofa is no place the goal puts things, but a newspaper is set down there next
    goal = NEWSPAPERS_ON_THE_COFFEE_TABLE["desc"]
    grounding = ground(goal, [], SOFA_TAKEN, task=None, teach_task=NEWSPAPERS_ON_THE_COFFEE_TABLE)
    natural = judge_plan(goal, ROOM_FOR_A_NEWSPAPER, grounding, trim="natural")
    minimal = judge_plan(goal, ROOM_FOR_A_NEWSPAPER, grounding, trim="minimal")
    assert [f.step for f in minimal.flags] == [0, 1]
    assert natural.flags == []
    assert [(f.step, f.optional and f.optional.kind) for f in natural.optional] == [
        (0, "making_room"),
        (1, "making_room"),
    ]
    elsewhere = [*ROOM_FOR_A_NEWSPAPER[:4], "Driver.PutAOnB('Newspaper', 'CoffeeTable')"]
    laptop_only = judge_plan(goal, elsewhere, grounding, trim="natural")  # nothing goes on the sofa
    assert [f.step for f in laptop_only.flags] == [0, 1]


def test_room_made_with_the_hands_freed_for_it_is_kept_whole() -> None:
    goal = NEWSPAPERS_ON_THE_COFFEE_TABLE["desc"]
    grounding = ground(goal, [], LIVING_ROOM, task=None, teach_task=NEWSPAPERS_ON_THE_COFFEE_TABLE)
    set_aside = ["Driver.PutAOnB('Newspaper', 'Sofa')", "Driver.PickUp('Newspaper')"]
    plan = [BRING_NEWSPAPER[0], set_aside[0], *MOVE_LAPTOP, set_aside[1], BRING_NEWSPAPER[1]]
    minimal = judge_plan(goal, plan, grounding, trim="minimal")
    natural = judge_plan(goal, plan, grounding, trim="natural")
    assert sorted(f.step for f in minimal.flags) == [1, 2, 3, 4]
    assert natural.flags == []
    assert sorted((f.step, f.optional and f.optional.kind) for f in natural.optional) == [
        (s, "making_room") for s in (1, 2, 3, 4)
    ]


TWO_MUGS = scene(
    *FIXTURES,
    item("Mug", "Mug", receptacle=True, dirty=True, on=["Fridge"]),
    item("Mug", "Mug2", receptacle=True, dirty=True, within=["CounterTop|0"]),
)


CLEAN_A_MUG = {
    "task_name": "Clean X",
    "desc": "Clean a Mug.",
    "components": {"Mug": part({"objectType": "Mug", "isDirty": 0})},
    "relations": [],
}


def test_a_container_searched_where_a_look_alike_was_found_and_set_aside_is_a_search() -> None:
    grounding = ground(RINSE, [], TWO_MUGS, task=None, teach_task=CLEAN_A_MUG)
    plan = [
        OPEN,
        "Driver.PickUp('Mug')",
        CLOSE,
        "Driver.PutAOnB('Mug', 'CounterTop')",
        "Driver.PickUp('Mug2')",
        "Driver.PutAOnB('Mug2', 'SinkBasin')",
    ]
    minimal = judge_plan(RINSE, plan, grounding, trim="minimal")
    natural = judge_plan(RINSE, plan, grounding, trim="natural")
    assert [f.step for f in minimal.flags] == [0, 1, 2, 3]
    assert [f.step for f in natural.flags] == [1, 3]  # the mug found and set aside goes
    assert [(f.step, f.optional and f.optional.kind) for f in natural.optional] == [
        (0, "search"),
        (2, "search"),
    ]
    reviewer = Reviewer(plan, TWO_MUGS, grounding.spec)  # the block as one, as certify sees it
    assert reviewer.trim_blocks({0, 1, 2, 3}) == [({0, 2}, "search")]
    assert reviewer.trim_blocks({0, 1, 2, 3, 4, 5}) == []  # the mug found is the one rinsed


EGG_IN_FRIDGE = scene(
    *FIXTURES, item("Egg", "Egg", on=["Fridge"]), *SINK.model_dump()["objects"][-2:]
)


def test_a_search_stays_a_search_when_what_it_turned_up_is_put_back() -> None:
    looked_at = ["Driver.PickUp('Egg')", "Driver.PutAOnB('Egg', 'Fridge')"]
    plan = [OPEN, *looked_at, CLOSE, TAKE, RINSE_IT]
    grounding = ground(RINSE, [], EGG_IN_FRIDGE, task=None, teach_task=None)
    natural = judge_plan(RINSE, plan, grounding, trim="natural")
    assert [f.step for f in natural.flags] == [1, 2]
    assert [(f.step, f.optional and f.optional.kind) for f in natural.optional] == [
        (0, "search"),
        (3, "search"),
    ]
    taken_away = [OPEN, looked_at[0], CLOSE, "Driver.PutAOnB('Egg', 'CounterTop')", TAKE, RINSE_IT]
    trip = judge_plan(RINSE, taken_away, grounding, trim="natural")
    assert [f.step for f in trip.flags] == [0, 1, 2, 3]  # opened for the egg: the trip goes whole


TOMATO_KITCHEN = scene(
    *FIXTURES,
    fixture("Cabinet", "Cabinet", **CLOSED),
    item("Tomato", "Tomato"),
    item("Knife", "Knife"),
    item("Plate", "Plate", receptacle=True),
)
SERVE_A_SLICE = "Serve a slice of tomato on a plate."
CUT = ["Driver.PickUp('Knife')", "Driver.Slice('Tomato')", "Driver.PutAOnB('Knife', 'CounterTop')"]
SERVE = ["Driver.PickUp('TomatoSliced')", "Driver.PutAOnB('TomatoSliced', 'Plate')"]
SEARCH_CABINET = ["Driver.Open('Cabinet')", "Driver.Close('Cabinet')"]
KNIFE_ON_PLATE = "Driver.PutAOnB('Knife', 'Plate')"  # the plate found


@pytest.mark.parametrize(
    ("plan", "kind"),
    [
        ([*SEARCH_CABINET, *CUT, *SERVE], "search"),  # the tomato and the plate not yet found
        ([*CUT, *SEARCH_CABINET, *SERVE], "search"),  # for the plate, not the slice
        ([*CUT[:2], KNIFE_ON_PLATE, *SEARCH_CABINET, *SERVE], None),  # only the slice it cut
    ],
)
def test_a_search_looks_for_what_the_plan_takes_or_serves_on_not_for_a_slice_it_cut(
    plan: list[str], kind: str | None
) -> None:
    grounding = ground(SERVE_A_SLICE, [], TOMATO_KITCHEN, task=None, teach_task=None)
    opened = plan.index(SEARCH_CABINET[0])
    natural = judge_plan(SERVE_A_SLICE, plan, grounding, trim="natural")
    minimal = judge_plan(SERVE_A_SLICE, plan, grounding, trim="minimal")
    assert [f.step for f in minimal.flags if f.step in (opened, opened + 1)] == [opened, opened + 1]
    kept = [(f.step, f.optional and f.optional.kind) for f in natural.optional]
    assert kept == ([] if kind is None else [(opened, kind), (opened + 1, kind)])


def test_a_container_opened_again_while_it_stands_open_is_no_part_of_the_search() -> None:
    plan = [OPEN, OPEN, CLOSE, TAKE, RINSE_IT]
    natural, minimal = critique(plan, "natural"), critique(plan, "minimal")
    assert [f.step for f in minimal.flags] == [0, 1, 2]
    assert [f.step for f in natural.flags] == [1]  # it changes nothing: no demonstrator meant it
    assert [(f.step, f.optional and f.optional.kind) for f in natural.optional] == [
        (0, "search"),
        (2, "search"),
    ]


CLEARED_WHILE_OFF = [  # the faucet off while an egg is taken away, on again, then the mug in
    TOLD,
    OFF_TAP,
    "Driver.PickUp('Egg')",
    "Driver.PutAOnB('Egg', 'CounterTop')",
    ON_TAP,
    TAKE,
    RINSE_IT,
]
EGG_ON_COUNTER = scene(*SINK.model_dump()["objects"], item("Egg", "Egg", on=["CounterTop"]))


@pytest.mark.parametrize(
    ("known", "kept"),
    [(None, True), (EGG_ON_COUNTER, False)],  # without a scene the egg may have stood in the sink
)
def test_without_a_scene_a_device_switched_around_taking_something_away_is_kept(
    known: Scene | None, kept: bool
) -> None:
    grounding = ground(RINSE, [], known, task=None, teach_task=None)
    natural = judge_plan(RINSE, CLEARED_WHILE_OFF, grounding, trim="natural")
    minimal = judge_plan(RINSE, CLEARED_WHILE_OFF, grounding, trim="minimal")
    switches = [1, 4]
    assert [f.step for f in minimal.flags if f.step in switches] == switches
    optional = [(f.step, f.optional and f.optional.kind) for f in natural.optional]
    assert optional == ([(s, "device_around_loading") for s in switches] if kept else [])
    assert [f.step for f in natural.flags if f.step in switches] == ([] if kept else switches)


def test_under_natural_certify_vetoes_a_search_a_model_judge_flags() -> None:
    plan, steps, _ = KEPT_KINDS["search before taking the mug"]
    flagged = Critique(flags=[Flag(step=s, action=plan[s], reason="not needed") for s in steps])
    natural = certify_flags(plan, flagged, GROUNDING, trim="natural")
    minimal = certify_flags(plan, flagged, GROUNDING, trim="minimal")
    assert natural.critique.flags == []
    assert [v.step for v in natural.vetoes] == steps
    assert all("natural trim policy keeps it" in v.reason for v in natural.vetoes)
    assert [f.step for f in minimal.critique.flags] == steps and minimal.vetoes == []


@pytest.mark.parametrize("flag_between", [True, False])
def test_certify_vetoes_a_tidying_close_and_open_and_decides_as_minimal_once_between_goes(
    flag_between: bool,
) -> None:
    plan = [OPEN, TAKE, CLOSE, *IDLE_MICROWAVE, OPEN, CLOSE, RINSE_IT]
    steps = [2, 3, 4, 5] if flag_between else [2, 5]
    grounding = ground(RINSE, [], MUG_IN_FRIDGE, task=None, teach_task=None)
    flagged = Critique(flags=[Flag(step=s, action=plan[s], reason="not needed") for s in steps])
    natural = certify_flags(plan, flagged, grounding, trim="natural")
    minimal = certify_flags(plan, flagged, grounding, trim="minimal")
    kept = [v.step for v in natural.vetoes if "natural trim policy keeps it" in v.reason]
    if flag_between:  # the close and the open end side by side: no tidying, as under minimal
        assert kept == []
        assert natural.critique.flags == minimal.critique.flags
    else:
        assert kept == [2, 5] and natural.critique.flags == []
        assert [f.step for f in minimal.critique.flags] == [2, 5]


def test_certify_removes_a_tap_run_straight_off_whatever_else_it_pairs_with() -> None:
    # the tap runs from the start: off before the mug goes in and on after it is out are the
    # care `natural` keeps; on and straight off again between them (3, 4) is no care at all
    take_out = ["Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'CounterTop')"]
    plan = [OFF_TAP, TAKE, RINSE_IT, ON_TAP, OFF_TAP, *take_out, ON_TAP]
    steps = [0, 3, 4, 7]
    flagged = Critique(flags=[Flag(step=s, action=plan[s], reason="not needed") for s in steps])
    natural = certify_flags(plan, flagged, GROUNDING, trim="natural")
    assert [f.step for f in natural.critique.flags] == [3, 4]
    assert [v.step for v in natural.vetoes] == [0, 7]
    assert all("around loading" in v.reason for v in natural.vetoes)


def test_a_thing_set_down_in_passing_makes_no_room() -> None:
    # the cup comes out of the basin, is set down on the stool and taken up again before the
    # mug goes in: the stool and back is a misplacement, not the room made
    stool = scene(
        *FIXTURES,
        item("Mug", "Mug", receptacle=True, dirty=True, within=["CounterTop|0"]),
        item("Cup", "Cup", receptacle=True, on=["SinkBasin"], within=["SinkBasin|2"]),
        fixture("Stool", "Stool"),
    )
    grounding = ground(RINSE, [], stool, task=None, teach_task=CLEAN_A_MUG)
    plan = [
        TAKE_CUP,
        "Driver.PutAOnB('Cup', 'Stool')",
        "Driver.PickUp('Cup')",
        "Driver.PutAOnB('Cup', 'CounterTop')",
        TAKE,
        RINSE_IT,
    ]
    reviewer = Reviewer(plan, stool, grounding.spec)
    assert reviewer.trim_blocks({0, 1}) == []
    straight = [TAKE_CUP, "Driver.PutAOnB('Cup', 'CounterTop')", TAKE, RINSE_IT]
    assert Reviewer(straight, stool, grounding.spec).trim_blocks({0, 1}) == [
        ({0, 1}, "making_room")
    ]


class FlagsAndPutsBack:
    """A `Judge` that flags step 2 and asks for the same step after step 1: where it stood."""

    name = "puts-back"

    async def ajudge(self, goal: str, plan: Sequence[str], scene: Scene | None) -> JudgeReply:
        if len(plan) < 3:
            return JudgeReply(Critique())
        again = Missing(description="walk there", action=plan[1], after=0)
        flag = Flag(step=1, action=plan[1], reason="walks")
        return JudgeReply(Critique(flags=[flag], missing=[again]))


def test_a_step_flagged_and_inserted_back_where_it_stands_is_kept() -> None:
    plan = [TAKE, "Driver.Move(1.0)", RINSE_IT]
    result = verify_plan(plan, RINSE, judge=FlagsAndPutsBack())
    assert [v.verdict for v in result.verdicts] == ["keep", "keep", "keep"]
    assert result.inserted == [] and result.refined == plan
    assert result.history[0].edits == []
    assert "inserted back" in result.history[0].dropped[-1].why


@pytest.mark.parametrize("name", [*KEPT_KINDS, *REMOVED_KINDS])
def test_one_results_file_answers_for_both_policies(name: str) -> None:
    plan = KEPT_KINDS[name][0] if name in KEPT_KINDS else REMOVED_KINDS[name]
    scene_data = SINK.model_dump(mode="json")
    natural = verify_plan(plan, RINSE, scene=scene_data, trim="natural")
    minimal = verify_plan(plan, RINSE, scene=scene_data, trim="minimal")
    assert natural.under("minimal").refined == minimal.refined
    assert minimal.under("natural").refined == natural.refined
    assert [v.verdict for v in natural.under("minimal").verdicts] == [
        v.verdict for v in minimal.verdicts
    ]
    removed_natural = {v.index for v in natural.verdicts if v.verdict == "remove"}
    removed_minimal = {v.index for v in minimal.verdicts if v.verdict == "remove"}
    assert removed_natural <= removed_minimal  # every natural removal is a minimal removal


SEARCH_AFTER_A_DETOUR = [
    "Driver.ToggleOn('CoffeeMachine')",
    "Driver.ToggleOff('CoffeeMachine')",
    OPEN,
    CLOSE,
    TAKE,
    RINSE_IT,
]


def test_natural_answers_its_own_repair_from_memory_with_the_optional_steps_first_noted(
    reviews: list[int],
) -> None:
    scene_data = SINK.model_dump(mode="json")

    def run(judge: RulesJudge) -> VerificationResult:
        return verify_plan(SEARCH_AFTER_A_DETOUR, RINSE, scene=scene_data, judge=judge)

    fresh = run(ForgetfulRulesJudge())
    assert len(reviews) == fresh.iterations == 2
    reviews.clear()
    remembered = run(RulesJudge())
    assert len(reviews) == 1  # the plan it repaired needs no second review
    assert remembered.model_dump(exclude={"settings"}) == fresh.model_dump(exclude={"settings"})
    assert [v.verdict for v in fresh.verdicts] == ["remove"] * 2 + ["keep"] * 4
    search = [v for v in fresh.verdicts if v.optional is not None]
    assert [(v.index, v.optional.kind, v.iteration) for v in search if v.optional] == [
        (2, "search", 1),
        (3, "search", 1),
    ]
    # counted in the input, as the first pass read it (a second review would say "steps 1-2")
    assert all("without steps 1-4 " in v.optional.reason for v in search if v.optional)
    assert fresh.history[1].optional == [] and fresh.history[1].critique.optional == []
    # a run that starts from the repaired plan holds no notes: it is reviewed, in its own numbers
    judge, reviews[:] = RulesJudge(), []
    run(judge)
    alone = verify_plan(fresh.refined, RINSE, scene=scene_data, judge=judge)
    assert len(reviews) == 2
    assert [(v.index, v.optional.kind) for v in alone.verdicts if v.optional] == [
        (0, "search"),
        (1, "search"),
    ]
    assert all("without steps 1-2 " in v.optional.reason for v in alone.verdicts if v.optional)
