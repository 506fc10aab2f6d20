"""The world model's simulator: TEACh's state rules, one step at a time (`planverify.world.rules`).

Each test builds the smallest scene that shows one rule, or none (every state unknown), and
checks what the steps do to the objects and which steps cannot happen.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planverify.records.episode import Scene
from planverify.records.notation import parse_action
from planverify.world import simulate
from planverify.world.goals import evaluate, parse_teach_task
from planverify.world.rules import apply, cancels, stove_lit, undone, water_running
from planverify.world.start import initial_state
from planverify.world.state import COFFEE, EMPTY, HAND, WATER, State

from .scenes import CLOSED, OFF, ON, OPEN, fixture, item, problems, run, scene, shared_games

KITCHEN = scene(
    fixture("CounterTop", "CounterTop"),
    fixture("DiningTable", "DiningTable"),
    fixture("Sink", "Sink"),
    fixture("SinkBasin", "SinkBasin", on=["Sink"]),
    fixture("Faucet", "Faucet", on=["Sink"], receptacle=False, **OFF),
    fixture("CoffeeMachine", "CoffeeMachine", on=["CounterTop"], **OFF),
    fixture("Toaster", "Toaster", on=["CounterTop"], **OFF),
    fixture("Microwave", "Microwave", on=["CounterTop"], **OFF, **CLOSED),
    fixture("StoveBurner", "StoveBurner"),
    fixture("StoveKnob", "StoveKnob", receptacle=False, **OFF),
    fixture("HousePlant", "HousePlant"),
    item("Pan", "Pan", on=["StoveBurner"], receptacle=True),
    item("Pot", "Pot", receptacle=True),
    item("Bowl", "Bowl", receptacle=True),
    item("Mug", "Mug", receptacle=True, dirty=True),
    item("Mug", "Mug2", receptacle=True, filled=True),
    item("Cup", "Cup", receptacle=True, filled=True),
    item("Cup", "Cup2", receptacle=True),
    item("Apple", "Apple", on=["Bowl", "CounterTop"]),
    item("Potato", "Potato"),
    item("Egg", "Egg"),
    item("Bread", "Bread"),
    item("Tomato", "Tomato"),
    item("Knife", "Knife"),
    item("ButterKnife", "ButterKnife"),
)


def final(plan: list[str], where: Scene | None = KITCHEN) -> tuple[State, list[str | None]]:
    state, outcomes = run(plan, where)
    return state, problems(outcomes)


# ----------------------------------------------------------------------------- holding


def test_one_object_in_hand_at_a_time() -> None:
    state, outcomes = run(
        [
            "Driver.PickUp('Mug')",
            "Driver.PickUp('Apple')",
            "Driver.PutAOnB('Apple', 'DiningTable')",
            "Driver.PickUp('Mug')",
        ],
        KITCHEN,
    )
    assert problems(outcomes) == [
        None,
        "the Driver already holds Mug, so Apple cannot be picked up",
        "Apple is not held, so Apple cannot be put down",
        "Mug is already held",
    ]
    assert [o.changed for o in outcomes] == [True, False, False, False]
    assert state.held == "Mug" and state.get("Mug").loc == HAND
    assert state.get("Apple").loc == "Bowl", "an impossible step changes nothing"
    state, outcomes = run(["Driver.PutAOnB('Mug', 'SinkBasin')"], KITCHEN)
    assert outcomes[0].problem == "nothing is held, so Mug cannot be put down"


def test_a_picked_up_container_takes_what_it_holds_along() -> None:
    state, outcomes = run(
        ["Driver.PickUp('Bowl')", "Driver.PutAOnB('Bowl', 'DiningTable')"], KITCHEN
    )
    assert problems(outcomes) == [None, None]
    assert state.get("Apple").loc == "Bowl"
    assert state.parents("Apple") == ["Bowl", "DiningTable"]
    # once taken out, the apple no longer travels with the bowl
    state, _ = run(
        [
            "Driver.PickUp('Apple')",
            "Driver.PutAOnB('Apple', 'CounterTop')",
            "Driver.PickUp('Bowl')",
            "Driver.PutAOnB('Bowl', 'DiningTable')",
        ],
        KITCHEN,
    )
    assert state.parents("Apple") == ["CounterTop"]


def test_a_thing_put_down_on_itself_is_put_down_somewhere() -> None:
    # TEACh records some put-downs with the object as its own target: the hands are free
    state, outcomes = run(["Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'Mug')"], KITCHEN)
    assert problems(outcomes) == [None, None]
    assert state.held is None and state.get("Mug").loc is None


def test_what_cannot_be_picked_up_or_hold_things() -> None:
    state, outcomes = run(
        [
            "Driver.PickUp('CounterTop')",
            "Driver.PickUp('Apple')",
            "Driver.PutAOnB('Apple', 'Knife')",
        ],
        KITCHEN,
    )
    assert problems(outcomes) == [
        "CounterTop cannot be picked up",
        None,
        "Knife cannot hold Apple",
    ]
    assert state.held == "Apple"


# ----------------------------------------------------------------------------- containers


@pytest.mark.parametrize("kind", ["Fridge", "Cabinet", "Drawer", "Microwave", "Box", "Safe"])
def test_a_closed_container_can_be_neither_reached_into_nor_put_into(kind: str) -> None:
    where = scene(
        fixture("CounterTop", "CounterTop"),
        fixture(kind, kind, **CLOSED),
        item("Apple", "Apple", on=[kind]),
        item("Egg", "Egg"),
    )
    _, outcomes = run(["Driver.PickUp('Apple')"], where)
    assert problems(outcomes) == [f"Apple is inside the closed {kind}"]
    state, outcomes = run(["Driver.PickUp('Egg')", f"Driver.PutAOnB('Egg', '{kind}')"], where)
    assert problems(outcomes) == [None, f"{kind} is closed"]
    assert state.held == "Egg"
    state, outcomes = run(
        [
            f"Driver.Open('{kind}')",
            "Driver.PickUp('Apple')",
            "Driver.PutAOnB('Apple', 'CounterTop')",
            "Driver.PickUp('Egg')",
            f"Driver.PutAOnB('Egg', '{kind}')",
            f"Driver.Close('{kind}')",
        ],
        where,
    )
    assert problems(outcomes) == [None] * 6
    assert state.get("Egg").loc == kind and state.get(kind).open is False


@pytest.mark.parametrize("kind", ["Toilet", "Laptop"])
def test_a_toilet_lid_or_a_laptop_screen_closes_nothing_in(kind: str) -> None:
    where = scene(fixture(kind, kind, **CLOSED), item("Apple", "Apple"), fixture("CounterTop"))
    state, outcomes = run(["Driver.PickUp('Apple')", f"Driver.PutAOnB('Apple', '{kind}')"], where)
    assert problems(outcomes) == [None, None]
    assert state.get("Apple").loc == kind


def test_a_closed_place_given_by_type_is_closed_only_when_every_one_is() -> None:
    # the scene says the mug is in "a cabinet": reachable when some cabinet is open
    shut = scene(
        fixture("Cabinet", "Cabinet", **CLOSED),
        fixture("Cabinet", "Cabinet2", **CLOSED),
        item("Mug", "Mug", on=["Cabinet"]),
    )
    ajar = scene(
        fixture("Cabinet", "Cabinet", **CLOSED),
        fixture("Cabinet", "Cabinet2", **OPEN),
        item("Mug", "Mug", on=["Cabinet"]),
    )
    assert problems(run(["Driver.PickUp('Mug')"], shut)[1]) == ["Mug is inside the closed Cabinet"]
    assert problems(run(["Driver.PickUp('Mug')"], ajar)[1]) == [None]


def test_a_microwave_runs_only_closed_and_stops_when_opened() -> None:
    open_one = scene(fixture("Microwave", "Microwave", **OFF, **OPEN))
    state, outcomes = run(["Driver.ToggleOn('Microwave')"], open_one)
    assert problems(outcomes) == ["the microwave is open; it only runs closed"]
    assert state.get("Microwave").on is False
    state, outcomes = run(
        ["Driver.Close('Microwave')", "Driver.ToggleOn('Microwave')", "Driver.Open('Microwave')"],
        open_one,
    )
    assert problems(outcomes) == [None, None, None]
    assert state.get("Microwave").on is False, "opening a running microwave stops it"


# ----------------------------------------------------------------------------- water


PUT_IN_SINK = ["Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'SinkBasin')"]


@pytest.mark.parametrize(
    "plan",
    [
        [*PUT_IN_SINK, "Driver.ToggleOn('Faucet')"],
        ["Driver.ToggleOn('Faucet')", *PUT_IN_SINK],
        ["Driver.ToggleOn('Faucet')", "Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'Sink')"],
    ],
    ids=["tap turned on over it", "put under the running tap", "the sink stands for its basin"],
)
def test_a_dirty_mug_under_a_running_tap_is_washed_and_filled(plan: list[str]) -> None:
    state, outcomes = final(plan)
    assert outcomes == [None] * len(plan)
    mug = state.get("Mug")
    assert (mug.dirty, mug.liquid) == (False, WATER)


@pytest.mark.parametrize(
    "plan",
    [
        PUT_IN_SINK,
        ["Driver.ToggleOn('Faucet')", "Driver.ToggleOff('Faucet')", *PUT_IN_SINK],
        [*PUT_IN_SINK, "Driver.PickUp('Mug')", "Driver.ToggleOn('Faucet')"],
        ["Driver.ToggleOn('Faucet')", "Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'Pot')"],
    ],
    ids=["tap never on", "tap off again first", "taken out first", "not in the sink"],
)
def test_a_mug_not_under_running_water_stays_dirty_and_empty(plan: list[str]) -> None:
    state, outcomes = final(plan)
    assert outcomes == [None] * len(plan)
    mug = state.get("Mug")
    assert (mug.dirty, mug.liquid) == (True, EMPTY)


BATHROOM_AND_KITCHEN = scene(
    fixture("Sink", "Sink"),
    fixture("SinkBasin", "SinkBasin", on=["Sink"]),
    fixture("Faucet", "Faucet", on=["Sink"], receptacle=False, **OFF),
    fixture("Bathtub", "Bathtub"),
    fixture("BathtubBasin", "BathtubBasin", on=["Bathtub"]),
    fixture("Faucet", "Faucet2", on=["Bathtub"], receptacle=False, **OFF),
    fixture("ShowerHead", "ShowerHead", receptacle=False, **OFF),
    fixture("CounterTop"),
    item("Mug", "Mug", receptacle=True, dirty=True),
)


@pytest.mark.parametrize(
    ("tap", "basin", "washed"),
    [
        ("Faucet", "SinkBasin", True),
        ("Faucet2", "SinkBasin", False),
        ("ShowerHead", "SinkBasin", False),
        ("Faucet2", "BathtubBasin", True),
        ("ShowerHead", "Bathtub", True),
        ("Faucet", "BathtubBasin", False),
    ],
)
def test_a_tap_washes_only_in_the_basin_it_runs_into(tap: str, basin: str, washed: bool) -> None:
    for plan in (
        ["Driver.PickUp('Mug')", f"Driver.PutAOnB('Mug', '{basin}')", f"Driver.ToggleOn('{tap}')"],
        [f"Driver.ToggleOn('{tap}')", "Driver.PickUp('Mug')", f"Driver.PutAOnB('Mug', '{basin}')"],
    ):
        state, outcomes = run(plan, BATHROOM_AND_KITCHEN)
        assert problems(outcomes) == [None] * 3
        assert state.get("Mug").dirty is (not washed), plan


def test_water_running_follows_the_taps() -> None:
    state = initial_state(BATHROOM_AND_KITCHEN, names=["Faucet", "Faucet2"])
    assert water_running(state, "SinkBasin") is False
    apply(state, parse_action("Driver.ToggleOn('Faucet2')"))
    assert (water_running(state, "SinkBasin"), water_running(state, "BathtubBasin")) == (
        False,
        True,
    )
    assert water_running(initial_state(None, names=["Faucet"]), "SinkBasin") is None


# ----------------------------------------------------------------------------- coffee


BREW = ["Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'CoffeeMachine')"]


@pytest.mark.parametrize(
    ("plan", "liquid"),
    [
        ([*BREW, "Driver.ToggleOn('CoffeeMachine')"], COFFEE),
        (["Driver.ToggleOn('CoffeeMachine')", *BREW], COFFEE),
        (BREW, EMPTY),
        ([*BREW, "Driver.ToggleOn('CoffeeMachine')", "Driver.ToggleOff('CoffeeMachine')"], COFFEE),
        (["Driver.ToggleOn('CoffeeMachine')", "Driver.ToggleOff('CoffeeMachine')", *BREW], EMPTY),
        (
            [*BREW[:1], "Driver.ToggleOn('CoffeeMachine')", "Driver.PutAOnB('Mug', 'CounterTop')"],
            EMPTY,
        ),
    ],
    ids=[
        "machine switched on with the mug in",
        "mug put into the running machine",
        "never on",
        "on then off",
        "off again before",
        "mug put elsewhere",
    ],
)
def test_coffee_fills_an_empty_mug_in_a_running_machine(plan: list[str], liquid: str) -> None:
    state, outcomes = final(plan)
    assert outcomes == [None] * len(plan)
    assert state.get("Mug").liquid == liquid


def test_a_mug_full_of_water_gets_no_coffee_until_poured_out() -> None:
    full = [
        "Driver.PickUp('Mug2')",
        "Driver.PutAOnB('Mug2', 'CoffeeMachine')",
        "Driver.ToggleOn('CoffeeMachine')",
    ]
    state, outcomes = final(full)
    assert outcomes == [None] * 3
    assert state.get("Mug2").liquid == WATER
    poured = [full[0], "Driver.PourFromAIntoB('Mug2', 'SinkBasin')", *full[1:]]
    state, outcomes = final(poured)
    assert outcomes == [None] * 4
    assert state.get("Mug2").liquid == COFFEE


def test_a_mug_the_scene_puts_in_the_machine_brews_when_it_is_switched_on() -> None:
    where = scene(
        fixture("CoffeeMachine", "CoffeeMachine", on=["CounterTop"], **OFF),
        fixture("CounterTop"),
        item("Mug", "Mug", on=["CoffeeMachine", "CounterTop"], receptacle=True),
    )
    state, outcomes = run(["Driver.ToggleOn('CoffeeMachine')"], where)
    assert problems(outcomes) == [None]
    assert state.get("Mug").liquid == COFFEE


# ----------------------------------------------------------------------------- cooking


SLICE_BREAD = [
    "Driver.PickUp('Knife')",
    "Driver.Slice('Bread')",
    "Driver.PutAOnB('Knife', 'CounterTop')",
    "Driver.PickUp('BreadSliced')",
]


@pytest.mark.parametrize(
    ("plan", "cooked"),
    [
        (
            [
                *SLICE_BREAD,
                "Driver.PutAOnB('BreadSliced', 'Toaster')",
                "Driver.ToggleOn('Toaster')",
            ],
            True,
        ),
        (
            [
                "Driver.ToggleOn('Toaster')",
                *SLICE_BREAD,
                "Driver.PutAOnB('BreadSliced', 'Toaster')",
            ],
            True,
        ),
        ([*SLICE_BREAD, "Driver.PutAOnB('BreadSliced', 'Toaster')"], False),
        (
            [
                *SLICE_BREAD,
                "Driver.PutAOnB('BreadSliced', 'CounterTop')",
                "Driver.ToggleOn('Toaster')",
            ],
            False,
        ),
    ],
    ids=["toaster switched on", "put into the running toaster", "never on", "not in the toaster"],
)
def test_toasting_a_slice_of_bread(plan: list[str], cooked: bool) -> None:
    state, outcomes = final(plan)
    assert outcomes == [None] * len(plan)
    assert state.get("BreadSliced").cooked is cooked


def test_a_toaster_toasts_only_bread_slices() -> None:
    state, outcomes = final(
        [
            "Driver.PickUp('Potato')",
            "Driver.PutAOnB('Potato', 'Toaster')",
            "Driver.ToggleOn('Toaster')",
        ]
    )
    assert outcomes == [None] * 3
    assert state.get("Potato").cooked is False


FRY = ["Driver.PickUp('Potato')", "Driver.PutAOnB('Potato', 'Pan')"]


@pytest.mark.parametrize(
    ("plan", "cooked"),
    [
        ([*FRY, "Driver.ToggleOn('StoveKnob')"], True),
        (["Driver.ToggleOn('StoveKnob')", *FRY], True),
        (FRY, False),
        (["Driver.ToggleOn('StoveKnob')", "Driver.ToggleOff('StoveKnob')", *FRY], False),
        (
            [*FRY, "Driver.PickUp('Pan')", "Driver.ToggleOn('StoveKnob')"],
            False,
        ),
        (
            [
                *FRY,
                "Driver.PickUp('Pan')",
                "Driver.ToggleOn('StoveKnob')",
                "Driver.PutAOnB('Pan', 'StoveBurner')",
            ],
            True,
        ),
    ],
    ids=[
        "knob turned on",
        "put into the pan on the lit stove",
        "stove never lit",
        "lit and put out first",
        "pan off the stove",
        "pan put back on the lit stove",
    ],
)
def test_frying_in_a_pan_on_a_lit_stove(plan: list[str], cooked: bool) -> None:
    state, outcomes = final(plan)
    assert outcomes == [None] * len(plan)
    potato = state.get("Potato")
    assert potato.cooked is cooked
    assert potato.boiled is False, "no water in the pan: fried, not boiled"


def test_food_put_on_a_burner_under_a_pan_lands_in_the_pan() -> None:
    # TEACh records the burner the Driver clicked; THOR drops the food into the pan on it
    plan = ["Driver.ToggleOn('StoveKnob')", "Driver.PickUp('Potato')"]
    state, outcomes = final([*plan, "Driver.PutAOnB('Potato', 'StoveBurner')"])
    assert outcomes == [None] * 3
    assert state.get("Potato").loc == "Pan"
    assert state.get("Potato").cooked is True


def test_the_floor_is_in_nothing() -> None:
    # THOR lists the cabinets whose boxes overlap the floor as its receptacles
    room = scene(
        fixture("Cabinet", "Cabinet", **CLOSED),
        fixture("Floor", "Floor", on=["Cabinet"]),
        item("Box", "Box", on=["Floor"]),
    )
    state = initial_state(room, names=["Box"])
    assert state.get("Floor").loc is None


def test_furniture_stands_in_nothing_it_overlaps() -> None:
    # THOR lists the chairs around a dining table as the table's receptacles (with ids), which
    # put the newspaper on the table on a chair as well: "all newspapers on one chair" was met
    room = scene(
        fixture("Chair", "Chair"),
        fixture("DiningTable", "DiningTable", on=["Chair"], within=["Chair|0"]),
        item("Newspaper", "Newspaper", on=["DiningTable"], within=["DiningTable|1"]),
    )
    state = initial_state(room, names=["Newspaper"])
    assert state.get("DiningTable").loc is None
    assert state.get("Newspaper").loc == "DiningTable"


def test_a_pan_listed_on_a_burner_and_an_overlapping_counter_stands_on_the_burner() -> None:
    room = scene(
        fixture("CounterTop", "CounterTop"),
        fixture("StoveBurner", "StoveBurner"),
        item("Pan", "Pan", receptacle=True, within=["CounterTop|0", "StoveBurner|1"]),
    )
    state = initial_state(room, names=["Pan"])
    assert state.get("Pan").loc == "StoveBurner"


def test_a_cold_stove_is_known_to_be_cold() -> None:
    # TEACh's burners are not switchable: the knobs say whether the stove is lit
    state = initial_state(KITCHEN, names=["StoveKnob"])
    assert stove_lit(state) is False
    apply(state, parse_action("Driver.ToggleOn('StoveKnob')"))
    assert stove_lit(state) is True
    assert stove_lit(initial_state(None, names=["StoveKnob"])) is None


FILL_POT = [
    "Driver.PickUp('Pot')",
    "Driver.PutAOnB('Pot', 'SinkBasin')",
    "Driver.ToggleOn('Faucet')",
    "Driver.ToggleOff('Faucet')",
    "Driver.PickUp('Pot')",
    "Driver.PutAOnB('Pot', 'StoveBurner')",
]


BOIL = ["Driver.PickUp('Potato')", "Driver.PutAOnB('Potato', 'Pot')"]
POT_ON_STOVE = ["Driver.PickUp('Pot')", "Driver.PutAOnB('Pot', 'StoveBurner')"]


@pytest.mark.parametrize(
    ("plan", "cooked", "boiled"),
    [
        ([*FILL_POT, *BOIL, "Driver.ToggleOn('StoveKnob')"], True, True),
        (["Driver.ToggleOn('StoveKnob')", *FILL_POT, *BOIL], True, True),
        ([*FILL_POT, *BOIL], False, False),
        ([*POT_ON_STOVE, *BOIL, "Driver.ToggleOn('StoveKnob')"], True, False),
        (
            [
                *POT_ON_STOVE,
                *BOIL,
                "Driver.ToggleOn('StoveKnob')",
                "Driver.PickUp('Cup')",
                "Driver.PourFromAIntoB('Cup', 'Pot')",
            ],
            True,
            True,
        ),
    ],
    ids=["knob on", "into boiling water", "stove cold", "no water", "water poured in on the stove"],
)
def test_boiling_in_a_pot_of_water_on_a_lit_stove(
    plan: list[str], cooked: bool, boiled: bool
) -> None:
    state, outcomes = final(plan)
    assert outcomes == [None] * len(plan)
    potato = state.get("Potato")
    assert (potato.cooked, potato.boiled) == (cooked, boiled)


MICROWAVE = ["Driver.Open('Microwave')"]
RUN_MICROWAVE = ["Driver.Close('Microwave')", "Driver.ToggleOn('Microwave')"]


@pytest.mark.parametrize(
    ("plan", "cooked", "boiled"),
    [
        (
            [
                *MICROWAVE,
                "Driver.PickUp('Potato')",
                "Driver.PutAOnB('Potato', 'Microwave')",
                *RUN_MICROWAVE,
            ],
            True,
            False,
        ),
        (
            [
                *MICROWAVE,
                "Driver.PickUp('Cup')",
                "Driver.PourFromAIntoB('Cup', 'Bowl')",
                "Driver.PutAOnB('Cup', 'CounterTop')",
                "Driver.PickUp('Bowl')",
                "Driver.PutAOnB('Bowl', 'Microwave')",
                "Driver.PickUp('Potato')",
                "Driver.PutAOnB('Potato', 'Bowl')",
                *RUN_MICROWAVE,
            ],
            True,
            True,
        ),
        (
            [*MICROWAVE, "Driver.PickUp('Potato')", "Driver.PutAOnB('Potato', 'Microwave')"],
            False,
            False,
        ),
    ],
    ids=["microwaved", "in water in the microwave", "never switched on"],
)
def test_cooking_and_boiling_in_the_microwave(plan: list[str], cooked: bool, boiled: bool) -> None:
    state, outcomes = final(plan)
    assert outcomes == [None] * len(plan)
    potato = state.get("Potato")
    assert (potato.cooked, potato.boiled) == (cooked, boiled)


def test_what_the_scene_puts_in_the_microwave_cooks_when_it_runs() -> None:
    where = scene(
        fixture("Microwave", "Microwave", **OFF, **CLOSED),
        fixture("CounterTop"),
        item("Potato", "Potato", on=["Microwave"]),
    )
    state, outcomes = run(["Driver.ToggleOn('Microwave')"], where)
    assert problems(outcomes) == [None]
    assert state.get("Potato").cooked is True


# ----------------------------------------------------------------------------- pouring


def test_pouring_from_a_held_filled_vessel() -> None:
    state, outcomes = run(
        [
            "Driver.PickUp('Cup')",
            "Driver.PourFromAIntoB('Cup', 'HousePlant')",
            "Driver.PourFromAIntoB('Cup', 'HousePlant')",
        ],
        KITCHEN,
    )
    assert problems(outcomes) == [None, None, None]
    assert [o.changed for o in outcomes] == [True, True, False], "an empty cup pours nothing"
    assert (state.get("Cup").liquid, state.get("HousePlant").liquid) == (EMPTY, WATER)


def test_pouring_from_an_empty_vessel_changes_nothing() -> None:
    state, outcomes = run(
        ["Driver.PickUp('Cup2')", "Driver.PourFromAIntoB('Cup2', 'HousePlant')"], KITCHEN
    )
    assert [o.changed for o in outcomes] == [True, False] and problems(outcomes) == [None, None]
    assert state.get("HousePlant").liquid == EMPTY


def test_pouring_needs_the_vessel_in_hand_and_carries_what_it_holds() -> None:
    _, outcomes = run(["Driver.PourFromAIntoB('Cup', 'HousePlant')"], KITCHEN)
    assert problems(outcomes) == ["Cup is not held, so nothing can be poured from it"]
    state, outcomes = run(
        [
            "Driver.PickUp('Mug')",
            "Driver.PutAOnB('Mug', 'CoffeeMachine')",
            "Driver.ToggleOn('CoffeeMachine')",
            "Driver.PickUp('Mug')",
            "Driver.PourFromAIntoB('Mug', 'Cup2')",
        ],
        KITCHEN,
    )
    assert problems(outcomes) == [None] * 5
    assert (state.get("Mug").liquid, state.get("Cup2").liquid) == (EMPTY, COFFEE)


# ----------------------------------------------------------------------------- slicing


def test_slicing_needs_a_knife_in_hand() -> None:
    state, outcomes = run(
        ["Driver.Slice('Tomato')", "Driver.PickUp('Apple')", "Driver.Slice('Tomato')"], KITCHEN
    )
    assert problems(outcomes) == [
        "slicing Tomato needs a knife in hand",
        None,
        "slicing Tomato needs a knife in hand",
    ]
    assert state.get("Tomato").sliced is False
    for knife in ("Knife", "ButterKnife"):
        state, outcomes = run([f"Driver.PickUp('{knife}')", "Driver.Slice('Tomato')"], KITCHEN)
        assert problems(outcomes) == [None, None]
        assert state.get("Tomato").sliced is True


def test_slices_exist_once_the_whole_is_sliced_where_it_was() -> None:
    _, outcomes = run(["Driver.PickUp('TomatoSliced')"], KITCHEN)
    assert problems(outcomes) == [
        "TomatoSliced does not exist yet (nothing was sliced or broken to make it)"
    ]
    plan = [
        "Driver.PickUp('Tomato')",
        "Driver.PutAOnB('Tomato', 'DiningTable')",
        "Driver.PickUp('Knife')",
        "Driver.Slice('Tomato')",
        "Driver.Slice('Tomato')",
        "Driver.PutAOnB('Knife', 'CounterTop')",
    ]
    state = initial_state(KITCHEN, names=["Tomato", "Knife", "TomatoSliced", "TomatoSliced2"])
    assert state.get("TomatoSliced").present is False
    outcomes = [apply(state, parse_action(line)) for line in plan]
    assert problems(outcomes) == [None] * 6
    assert outcomes[4].changed is False, "slicing again changes nothing"
    for name in ("TomatoSliced", "TomatoSliced2"):
        piece = state.get(name)
        assert piece.present is True and state.kind_at(piece.loc) == "DiningTable"
    assert apply(state, parse_action("Driver.PickUp('TomatoSliced2')")).problem is None


def test_cutting_a_whole_makes_only_its_own_slices_where_the_scene_says_whose_they_are() -> None:
    two = scene(
        fixture("CounterTop"),
        item("Tomato", "Tomato"),
        item("Tomato", "Tomato2"),
        item("Knife", "Knife"),
    )
    two.made_from = {"TomatoSliced": "Tomato", "TomatoSliced2": "Tomato2"}
    cut_first = [
        "Driver.PickUp('Knife')",
        "Driver.Slice('Tomato')",
        "Driver.PutAOnB('Knife', 'CounterTop')",
    ]
    _, outcomes = run([*cut_first, "Driver.PickUp('TomatoSliced2')"], two)
    assert problems(outcomes)[-1] == (
        "TomatoSliced2 does not exist yet (nothing was sliced or broken to make it)"
    )
    both = ["Driver.PickUp('Knife')", "Driver.Slice('Tomato')", "Driver.Slice('Tomato2')"]
    _, outcomes = run(
        [*both, "Driver.PutAOnB('Knife', 'CounterTop')", "Driver.PickUp('TomatoSliced2')"], two
    )
    assert problems(outcomes) == [None] * 5
    two.made_from = {}  # whose slices they are is not known: either whole makes any of them
    _, outcomes = run([*cut_first, "Driver.PickUp('TomatoSliced2')"], two)
    assert problems(outcomes) == [None] * 4


def test_cracking_an_egg_makes_only_its_own_where_the_scene_says_whose_it_is() -> None:
    eggs = scene(fixture("CounterTop"), item("Egg", "Egg"), item("Egg", "Egg2"))
    eggs.made_from = {"EggCracked": "Egg2"}
    _, outcomes = run(["Driver.Break('Egg')", "Driver.PickUp('EggCracked')"], eggs)
    assert problems(outcomes)[-1] == (
        "EggCracked does not exist yet (nothing was sliced or broken to make it)"
    )
    _, outcomes = run(["Driver.Break('Egg2')", "Driver.PickUp('EggCracked')"], eggs)
    assert problems(outcomes) == [None, None]


def test_slices_of_a_cooked_potato_are_cooked() -> None:
    where = scene(
        fixture("CounterTop"),
        item("Potato", "Potato", cooked=True),
        item("Potato", "Potato2"),
        item("Knife", "Knife"),
    )
    state, outcomes = run(
        [
            "Driver.PickUp('Knife')",
            "Driver.Slice('Potato')",
            "Driver.PutAOnB('Knife', 'CounterTop')",
            "Driver.PickUp('PotatoSliced')",
        ],
        where,
    )
    assert problems(outcomes) == [None] * 4
    assert state.get("PotatoSliced").cooked is True
    state, _ = run(
        [
            "Driver.PickUp('Knife')",
            "Driver.Slice('Potato2')",
            "Driver.PutAOnB('Knife', 'CounterTop')",
            "Driver.PickUp('PotatoSliced')",
        ],
        where,
    )
    assert state.get("PotatoSliced").cooked is False


@pytest.mark.parametrize(
    "crack",
    [
        ["Driver.Break('Egg')"],
        ["Driver.PickUp('Knife')", "Driver.Slice('Egg')", "Driver.PutAOnB('Knife', 'CounterTop')"],
    ],
    ids=["broken", "sliced"],
)
def test_an_egg_cracks(crack: list[str]) -> None:
    _, outcomes = run(["Driver.PickUp('EggCracked')"], KITCHEN)
    assert problems(outcomes)[0] is not None
    plan = [
        *crack,
        "Driver.PickUp('EggCracked')",
        "Driver.PutAOnB('EggCracked', 'Pan')",
        "Driver.ToggleOn('StoveKnob')",
    ]
    state, outcomes = run(plan, KITCHEN)
    assert problems(outcomes) == [None] * len(plan)
    assert state.get("EggCracked").cooked is True


# ----------------------------------------------------------------------------- names


def test_objects_absent_from_the_scene_do_not_exist() -> None:
    state, outcomes = run(["Driver.Open('Fridge')", "Driver.PickUp('Spatula')"], KITCHEN)
    assert problems(outcomes) == [
        "there is no Fridge in the scene",
        "there is no Spatula in the scene",
    ]
    assert "Fridge" not in state.objects
    # without a scene, anything may exist
    _, outcomes = run(["Driver.Open('Fridge')", "Driver.PickUp('Spatula')"])
    assert problems(outcomes) == [None, None]


def test_a_second_object_of_a_type_is_another_scene_object() -> None:
    state, outcomes = run(["Driver.PickUp('Mug2')"], KITCHEN)
    assert problems(outcomes) == [None]
    assert state.get("Mug2").liquid == WATER and state.get("Mug").loc != HAND


def test_a_name_the_scene_does_not_use_is_the_scene_s_object_the_plan_leaves_unnamed() -> None:
    # the plan calls the scene's only egg Egg2 (and never says Egg)
    state, outcomes = run(
        ["Driver.PickUp('Egg2')", "Driver.PutAOnB('Egg2', 'Pan')", "Driver.ToggleOn('StoveKnob')"],
        KITCHEN,
    )
    assert problems(outcomes) == [None] * 3
    assert "Egg" not in state.objects and state.get("Egg2").cooked is True


def test_everyday_names_map_onto_the_scene_types() -> None:
    state, outcomes = run(
        [
            "Driver.PickUp('Mug')",
            "Driver.PutAOnB('Mug', 'Basin')",
            "Driver.ToggleOn('Faucet')",
            "Driver.PickUp('Mug')",
            "Driver.PutAOnB('Mug', 'Counter')",
        ],
        KITCHEN,
    )
    assert problems(outcomes) == [None] * 5
    mug = state.get("Mug")
    assert (mug.dirty, state.kind_at(mug.loc)) == (False, "CounterTop")


def test_a_slice_named_by_what_it_is_cut_from_is_the_scene_s_slice() -> None:
    where = scene(
        fixture("CounterTop"), item("Tomato", "Tomato"), item("Knife", "Knife"), fixture("Plate")
    )
    plan = [
        "Driver.PickUp('Knife')",
        "Driver.Slice('Tomato')",
        "Driver.PutAOnB('Knife', 'CounterTop')",
        "Driver.PickUp('TomatoSlice')",
        "Driver.PutAOnB('TomatoSlice', 'Plate')",
    ]
    state, outcomes = run(plan, where)
    assert problems(outcomes) == [None] * 5
    assert state.kind_at(state.get(state.key("TomatoSlice")).loc) == "Plate"


def test_a_table_is_the_scene_s_table_only_when_it_has_one_kind() -> None:
    plan = ["Driver.PickUp('Apple')", "Driver.PutAOnB('Apple', 'Table')"]
    state, outcomes = run(plan, KITCHEN)
    assert problems(outcomes) == [None, None]
    assert state.kind_at(state.get("Apple").loc) == "DiningTable"
    two = scene(
        fixture("DiningTable"), fixture("SideTable"), fixture("CounterTop"), item("Apple", "Apple")
    )
    assert problems(run(plan, two)[1]) == [None, "there is no Table in the scene"]


def test_a_renamed_object_is_the_scene_s_object() -> None:
    # the scene calls it Faucet (running); the plan says Tap
    where = scene(
        fixture("SinkBasin", "SinkBasin"),
        fixture("Faucet", "Faucet", receptacle=False, **ON),
        fixture("CounterTop"),
        item("Mug", "Mug", receptacle=True, dirty=True),
    )
    state, outcomes = run(
        [
            "Driver.ToggleOff('Tap')",
            "Driver.PickUp('Mug')",
            "Driver.PutAOnB('Mug', 'SinkBasin')",
            "Driver.ToggleOn('Tap')",
        ],
        where,
    )
    assert problems(outcomes) == [None] * 4
    assert outcomes[0].changed is True, "the scene's faucet was running"
    assert "Faucet" not in state.objects and state.get("Tap").kind == "Faucet"
    assert state.get("Mug").dirty is False


# ----------------------------------------------------------------------------- unknowns


def test_without_a_scene_effects_of_unknown_states_are_unknown() -> None:
    state, outcomes = run(
        [
            "Driver.ToggleOn('Faucet')",
            "Driver.ToggleOn('Faucet')",
            "Driver.Open('Fridge')",
            "Driver.Close('Fridge')",
            "Driver.ToggleOff('Microwave')",
        ]
    )
    assert problems(outcomes) == [None] * 5
    assert [o.changed for o in outcomes] == [None, False, None, True, None]
    assert (state.get("Faucet").on, state.get("Fridge").open, state.get("Microwave").on) == (
        True,
        False,
        False,
    )


def test_without_a_scene_nothing_is_decided_that_the_steps_do_not_decide() -> None:
    state, outcomes = run(["Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'SinkBasin')"])
    assert problems(outcomes) == [None, None]
    mug = state.get("Mug")
    assert (mug.dirty, mug.liquid) == (None, None), "the tap may be running: unknown"
    state, _ = run(["Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'CoffeeMachine')"])
    assert state.get("Mug").liquid is None
    state, outcomes = run(
        ["Driver.PickUp('Knife')", "Driver.Slice('Tomato')", "Driver.Slice('Tomato')"]
    )
    assert [o.changed for o in outcomes[1:]] == [None, False]
    # a step that sets the cause decides the effect
    state, _ = run(
        ["Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'SinkBasin')", "Driver.ToggleOn('Faucet')"]
    )
    assert (state.get("Mug").dirty, state.get("Mug").liquid) == (False, WATER)


def test_unknown_states_never_make_a_step_impossible() -> None:
    _, outcomes = run(
        [
            "Driver.PickUp('Mug')",
            "Driver.PutAOnB('Mug', 'Cabinet')",
            "Driver.PickUp('Apple')",
            "Driver.ToggleOn('Microwave')",
            "Driver.PourFromAIntoB('Apple', 'HousePlant')",
        ]
    )
    assert problems(outcomes) == [None] * 5
    assert outcomes[4].changed is None, "whether the apple held anything is unknown"


def test_undone_fills_unknowns_with_what_no_goal_wants_yet() -> None:
    state = initial_state(None, names=["Mug", "Apple", "Faucet", "Bread", "BreadSliced", "Fridge"])
    apply(state, parse_action("Driver.ToggleOn('Faucet')"))
    world = undone(state)
    mug, apple, bread = world.get("Mug"), world.get("Apple"), world.get("Bread")
    assert (mug.dirty, mug.liquid, mug.cooked, mug.boiled) == (True, EMPTY, False, False)
    assert apple.dirty is False, "an apple cannot be dirty"
    assert (bread.present, bread.sliced) == (True, False)
    assert world.get("BreadSliced").present is False, "slices not made"
    assert world.get("Faucet").on is True, "what the steps set stays"
    assert world.get("Fridge").on is False and undone(state, running=True).get("Fridge").on is True
    assert state.get("Mug").dirty is None, "the state itself is untouched"


@pytest.mark.parametrize(
    ("a", "b", "undoes"),
    [
        ("Driver.Move(0.5)", "Driver.Move(-0.5)", True),
        ("Driver.Move(-1.0)", "Driver.Move(1.0)", True),
        ("Driver.Move(0.5)", "Driver.Move(0.5)", False),
        ("Driver.Move(0.5)", "Driver.Move(-0.25)", False),
        ("Driver.Move(0)", "Driver.Move(0)", False),
        ("Driver.TurnLeft(90.0)", "Driver.TurnRight(90.0)", True),
        ("Driver.TurnRight(180.0)", "Driver.TurnLeft(180.0)", True),
        ("Driver.TurnLeft(90.0)", "Driver.TurnLeft(90.0)", False),
        ("Driver.TurnLeft(90.0)", "Driver.TurnRight(180.0)", False),
        ("Driver.Move(0.5)", "Driver.TurnLeft(90.0)", False),
        ("Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'Sink')", False),
    ],
)
def test_cancels(a: str, b: str, undoes: bool) -> None:
    assert cancels(parse_action(a), parse_action(b)) is undoes


def test_motion_and_dialogue_change_no_object() -> None:
    state, outcomes = run(
        ["Driver.Move(0.5)", "Driver.Move(0)", "Commander.Say('hi')", "Driver.TurnLeft(90.0)"],
        KITCHEN,
    )
    assert [o.changed for o in outcomes] == [True, False, False, True]
    assert state.snapshot() == initial_state(KITCHEN).snapshot()


# ----------------------------------------------------------------------------- real games


def _figures(shared_dir: Path) -> tuple[int, int, int, int, int]:
    met = unknown = total = impossible = games = 0
    for episode in shared_games(shared_dir):
        assert episode.teach_task is not None and episode.scene is not None
        spec = parse_teach_task(episode.teach_task)
        state, outcomes = simulate(episode.actions, episode.scene)
        impossible += sum(o.problem is not None for o in outcomes)
        units = evaluate(spec, state)
        total += len(units)
        met += sum(u.met is True for u in units)
        unknown += sum(u.met is None for u in units)
        games += 1
    return games, total, met, unknown, impossible


def test_human_plans_meet_their_teach_goals_in_simulation(shared_dir: Path) -> None:
    games, total, met, unknown, impossible = _figures(shared_dir)
    assert games == 478
    # Measured: 1970 of 1987 conditions met (99.1%); the rest are TEACh's own quirks (a mug
    # the scene gives as filled that held coffee, a put-down recorded without its target).
    # 14 impossible steps, all picking up a bread's end piece (`Bread2`, made by slicing),
    # which the simulator takes for another loaf in a closed fridge or cabinet.
    # Two conditions stay unknown: a plate and a watering cup that start in a basin under a
    # running tap, which TEACh may or may not have washed or filled before the Driver acts.
    assert met / total >= 0.99, (met, total)
    assert unknown <= 2, "with a scene every other goal condition is decided"
    assert impossible <= 16


def test_simulated_final_states_agree_with_teach_s_recorded_ones(shared_dir: Path) -> None:
    """The states the simulator ends with, for the objects the plans name, against the final
    state TEACh recorded (its simulator's own `isDirty`, `isFilledWithLiquid`, ...)."""
    agree = disagree = 0
    for episode in shared_games(shared_dir):
        source = (episode.model_extra or {}).get("source")
        assert episode.scene is not None and isinstance(source, str)
        game = json.loads(Path(source).read_text())
        recorded = {
            o["objectId"]: o for o in game["tasks"][0]["episodes"][0]["final_state"]["objects"]
        }
        state, _ = simulate(episode.actions, episode.scene)
        for obj in episode.scene.objects:
            truth = recorded.get(obj.id)
            if obj.name is None or obj.name not in state.objects or truth is None:
                continue
            mine = state.objects[obj.name]
            pairs = [
                (mine.dirty, truth.get("isDirty")),
                (
                    None if mine.liquid is None else mine.liquid != EMPTY,
                    truth.get("isFilledWithLiquid"),
                ),
                (mine.cooked, truth.get("isCooked")),
                (mine.on, truth.get("isToggled") if truth.get("toggleable") else None),
                (mine.open, truth.get("isOpen") if truth.get("openable") else None),
                (mine.sliced, truth.get("isSliced") if truth.get("sliceable") else None),
            ]
            for simulated, true in pairs:
                if simulated is not None and true is not None:
                    agree += bool(simulated) == bool(true)
                    disagree += bool(simulated) != bool(true)
    # measured: 14248 agree, 34 disagree (99.76%); a mug's coffee read as water was 48 more
    assert agree > 10_000
    assert disagree / (agree + disagree) <= 0.004, (agree, disagree)
