"""`certify`: another Judge's flags and a Planner's insertions checked by simulation.

Flags are completed into blocks, the largest set that keeps the plan executable and every goal
condition it meets is accepted, the rest vetoed with the simulator's reason; vetoes are kept in
the history and shown to a model Judge in its next pass. Insertions that cannot happen where
they go, or change nothing, are vetoed too.
"""

from __future__ import annotations

from typing import Any

from planverify import verify_plan
from planverify.critique import Critique, Flag
from planverify.episode import Scene
from planverify.graphs.context import VerifierContext
from planverify.world import ground
from planverify.world.certify import certify_flags, certify_insertion

from .conftest import scripted
from .test_graph import judged

KITCHEN = Scene.model_validate(
    {
        "objects": [
            {"id": "m", "type": "Mug", "name": "Mug", "pickupable": True, "receptacle": True,
             "dirty": False, "parent": ["CounterTop"]},
            {"id": "a", "type": "Apple", "name": "Apple", "pickupable": True, "parent": ["CounterTop"]},
            {"id": "c", "type": "CoffeeMachine", "name": "CoffeeMachine", "receptacle": True,
             "toggleable": True, "toggled": False},
            {"id": "t", "type": "DiningTable", "receptacle": True},
            {"id": "k", "type": "CounterTop", "receptacle": True},
        ]
    }
)  # fmt: skip
GOAL = "Prepare coffee in a clean mug."
PLAN = [
    "Commander.Say('Please make me a coffee.')",
    "Driver.PickUp('Apple')",
    "Driver.PutAOnB('Apple', 'DiningTable')",
    "Driver.PickUp('Mug')",
    "Driver.PutAOnB('Mug', 'CoffeeMachine')",
    "Driver.ToggleOn('CoffeeMachine')",
]
GROUNDING = ground(GOAL, [], KITCHEN, task=None, teach_task=None)


def flags(*steps: int) -> Critique:
    return Critique(flags=[Flag(step=s, action=PLAN[s], reason="not needed") for s in steps])


def test_flags_are_completed_into_blocks_and_needed_ones_vetoed_with_a_reason() -> None:
    kept, vetoes = certify_flags(PLAN, flags(1, 5), GROUNDING)
    assert [f.step for f in kept.flags] == [1, 2], "the pick-up goes with its put-down"
    assert "goes with" in kept.flags[1].reason
    (veto,) = vetoes
    assert (veto.kind, veto.step, veto.action) == ("flag", 5, PLAN[5])
    assert veto.reason == "removing step 6 loses: a Mug that is clean and filled with coffee"


def test_a_flag_whose_removal_breaks_a_later_step_is_vetoed() -> None:
    kept, vetoes = certify_flags(PLAN, flags(3), GROUNDING)
    assert kept.flags == []
    assert vetoes[0].step == 3 and "Mug" in vetoes[0].reason


def test_an_insertion_is_vetoed_when_impossible_there_or_when_it_changes_nothing() -> None:
    brewed = PLAN[:6]
    assert certify_insertion(brewed, "Driver.ToggleOn('CoffeeMachine')", 5, GROUNDING) == (
        "changes nothing: CoffeeMachine is already that way"
    )
    assert certify_insertion(brewed, "Driver.PutAOnB('Apple', 'Plate')", 0, GROUNDING) == (
        "impossible where it is placed: there is no Plate in the scene"
    )
    assert certify_insertion(brewed[:5], "Driver.ToggleOn('CoffeeMachine')", 4, GROUNDING) is None


def test_in_the_loop_vetoes_are_recorded_and_shown_to_the_judge_next_time() -> None:
    needed = PLAN[5]
    first = judged(PLAN, (6, "the machine need not run"), (2, "an apple is no part of coffee"))
    rest = [PLAN[0], *PLAN[3:]]
    judge = scripted(first, judged(rest))
    result = verify_plan(PLAN, GOAL, scene=KITCHEN, judge=judge)
    assert result.status == "ok", result.error
    assert needed in result.refined, "the simulator kept the step the goal needs"
    assert result.refined == rest, "the apple detour went, as a whole block"
    (veto,) = result.history[0].vetoes
    assert veto.step == 5 and "a Mug that is clean and filled with coffee" in veto.reason
    second_prompt = str(judge.prompts[1][-1].content)
    assert "<vetoes>" in second_prompt and "removing step 6 loses" in second_prompt
    unchecked = verify_plan(
        PLAN,
        GOAL,
        scene=KITCHEN,
        judge=scripted(first, judged([PLAN[0], PLAN[2], *PLAN[3:5]])),
        certify=False,
    )
    assert needed not in unchecked.refined and unchecked.history[0].vetoes == []


def test_a_planner_insertion_that_changes_nothing_is_vetoed_in_the_loop() -> None:
    # (a copy right next to the same step never reaches the simulator: `drop_repeats`)
    judge = scripted(judged(PLAN, missing=["the mug must be clean"]), judged(PLAN))
    planner = scripted("INSERT AFTER 4: Driver.Clean('Mug')")
    result = verify_plan(PLAN, GOAL, scene=KITCHEN, judge=judge, planner=planner)
    assert result.refined == PLAN, "the mug is clean already: cleaning it changes nothing"
    (veto,) = result.history[0].vetoes
    assert (veto.kind, veto.action) == ("insertion", "Driver.Clean('Mug')")
    assert veto.reason.startswith("changes nothing")


def test_certify_is_part_of_the_settings_and_defaults_to_grounded_episodes() -> None:
    keys = {VerifierContext(certify=value).settings().key for value in (None, True, False)}
    assert len(keys) == 3
    ungrounded: Any = ground("hello", [], None, task=None, teach_task=None)
    assert not ungrounded.grounded and GROUNDING.grounded
