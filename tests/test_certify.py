"""`certify`: another Judge's flags and a Planner's insertions checked by simulation.

Flags are completed into blocks, the largest set that keeps the plan executable and every goal
condition it meets is accepted, the rest vetoed with the simulator's reason; vetoes are kept in
the history and shown to a model Judge in its next pass. Insertions that cannot happen where
they go, or change nothing, are vetoed too.
"""

from __future__ import annotations

from typing import Any

import pytest

from planverify import verify_plan
from planverify.graphs.context import VerifierContext
from planverify.records.critique import Critique, Flag
from planverify.records.episode import Scene
from planverify.world import certify, ground
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


def test_flags_are_checked_together_and_needed_ones_vetoed_with_a_reason() -> None:
    kept, vetoes, check = certify_flags(PLAN, flags(1, 2, 5), GROUNDING)
    assert [f.step for f in kept.flags] == [1, 2], "the apple's pick-up and put-down go together"
    assert [f.reason for f in kept.flags] == ["not needed", "not needed"], "the Judge's reasons"
    assert check == (
        "without steps 2-3 together the plan can still be carried out, "
        "and every goal condition the plan meets still holds"
    )
    (veto,) = vetoes
    assert (veto.kind, veto.step, veto.action) == ("flag", 5, PLAN[5])
    assert veto.reason == "removing step 6 loses: a Mug that is clean and filled with coffee"


def test_a_flag_is_completed_only_into_a_block_that_changes_nothing() -> None:
    misplaced = [
        *PLAN[:4],
        "Driver.PutAOnB('Mug', 'DiningTable')",
        "Driver.PickUp('Mug')",
        *PLAN[4:],
    ]
    kept, vetoes, check = certify_flags(misplaced, flags(4), GROUNDING)
    assert [f.step for f in kept.flags] == [4, 5], "the wrong put-down goes with its re-pickup"
    assert kept.flags[1].reason == "goes with the flagged step 5"
    assert vetoes == [] and check is not None and check.startswith("without steps 5-6 together")
    # a pick-up is not completed with a put-down elsewhere: that would move the apple for good
    kept, vetoes, check = certify_flags(PLAN, flags(1), GROUNDING)
    assert kept.flags == [] and check is None
    assert [v.reason for v in vetoes] == [
        "removing step 2 makes step 3 impossible: nothing is held, so Apple cannot be put down"
    ]


def test_a_flag_whose_removal_breaks_a_later_step_is_vetoed() -> None:
    kept, vetoes, _ = certify_flags(PLAN, flags(3), GROUNDING)
    assert kept.flags == []
    assert vetoes[0].step == 3 and "Mug" in vetoes[0].reason


def test_a_veto_names_the_smallest_set_that_fails_never_another_options_reason() -> None:
    kept, vetoes, _ = certify_flags(PLAN, flags(3, 4), GROUNDING)
    assert kept.flags == []
    assert {v.reason for v in vetoes} == {
        "removing steps 4-5 loses: a Mug that is clean and filled with coffee"
    }, "the pair fails as a pair, not as a pick-up whose put-down cannot happen"
    two_mugs = KITCHEN.model_copy(
        update={
            "objects": [
                *KITCHEN.objects,
                KITCHEN.objects[0].model_copy(update={"id": "m2", "name": "Mug2"}),
            ]
        }
    )
    plan = [
        *PLAN[:4],  # the first mug goes into the machine,
        "Driver.PutAOnB('Mug', 'CoffeeMachine')",
        "Driver.ToggleOn('CoffeeMachine')",
        "Driver.PickUp('Mug')",
        "Driver.PutAOnB('Mug', 'CounterTop')",
        "Driver.PickUp('Mug2')",  # and the second one too: either alone makes the coffee
        "Driver.PutAOnB('Mug2', 'CoffeeMachine')",
    ]
    grounding = ground(GOAL, [], two_mugs, task=None, teach_task=None)
    critique = Critique(flags=[Flag(step=s, action=plan[s], reason="no") for s in (3, 4, 8, 9)])
    kept, vetoes, _ = certify_flags(plan, critique, grounding)
    assert [f.step for f in kept.flags] == [3, 4], "the earliest of two equal sets"
    assert [(v.step, v.reason) for v in vetoes] == [
        (step, "removing steps 9-10 together with the accepted steps 4-5 loses: "
         "a Mug that is clean and filled with coffee")
        for step in (8, 9)
    ]  # fmt: skip


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
    first = judged(
        PLAN,
        (6, "the machine need not run"),
        (2, "an apple is no part of coffee"),
        (3, "nor is putting it away"),
    )
    rest = [PLAN[0], *PLAN[3:]]
    judge = scripted(first, judged(rest))
    result = verify_plan(PLAN, GOAL, scene=KITCHEN, judge=judge)
    assert result.status == "ok", result.error
    assert needed in result.refined, "the simulator kept the step the goal needs"
    assert result.refined == rest, "the apple detour went, as a whole block"
    (veto,) = result.history[0].vetoes
    assert veto.step == 5 and "a Mug that is clean and filled with coffee" in veto.reason
    assert result.history[0].certified == (
        "without steps 2-3 together the plan can still be carried out, "
        "and every goal condition the plan meets still holds"
    )
    second_prompt = str(judge.prompts[1][-1].content)
    assert "<vetoes>" in second_prompt and "removing step 6 loses" in second_prompt
    unchecked = verify_plan(
        PLAN,
        GOAL,
        scene=KITCHEN,
        judge=scripted(first, judged([PLAN[0], *PLAN[3:5]])),
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


def test_certify_is_part_of_the_settings_and_defaults_to_grounded_episodes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    keys = {VerifierContext(certify=value).settings().key for value in (None, True, False)}
    assert len(keys) == 3
    monkeypatch.setattr(certify, "CERTIFY_VERSION", "next")
    changed = {VerifierContext(certify=value).settings().key for value in (None, True, False)}
    assert len(keys & changed) == 1, "a new version of certify's checks changes where it is on"
    assert VerifierContext(certify=False).settings().key in keys
    ungrounded: Any = ground("hello", [], None, task=None, teach_task=None)
    assert not ungrounded.grounded and GROUNDING.grounded


# Regression: blocks the simulation accepts were vetoed by the rules Judge's own policies (an
# object picked up and put down must not be touched again; a block handling an object the goal
# is about must be a put-down taken straight back), with the reason of a single step.


def thing(type_: str, **states: Any) -> dict[str, Any]:
    return {"id": type_, "type": type_, "name": type_, **states}


ROOM = Scene.model_validate(
    {
        "objects": [
            thing("Knife", pickupable=True, parent=["CounterTop"]),
            thing("Bread", pickupable=True, parent=["CounterTop"]),
            thing("Plate", pickupable=True, receptacle=True, parent=["CounterTop"]),
            thing("Potato", pickupable=True, parent=["CounterTop"]),
            thing("RemoteControl", pickupable=True, parent=["CounterTop"]),
            thing("Microwave", receptacle=True, toggleable=True, openable=True),
            thing("Chair", receptacle=True),
            thing("Sofa", receptacle=True),
            thing("CounterTop", receptacle=True),
        ]
    }
)


def teach_task(name: str, components: dict[str, Any], *relations: Any) -> dict[str, Any]:
    return {"task_name": name, "desc": name, "components": components, "relations": relations}


def certified_pair(plan: list[str], pair: tuple[int, int], grounding: Any) -> str:
    """The check the pair is certified by; fails when either flag is vetoed."""
    critique = Critique(flags=[Flag(step=s, action=plan[s], reason="a mistake") for s in pair])
    kept, vetoes, check = certify_flags(plan, critique, grounding)
    assert vetoes == []
    assert [(f.step, f.reason) for f in kept.flags] == [(s, "a mistake") for s in pair]
    assert check is not None
    return check


def test_a_mistaken_put_down_goes_with_the_pick_up_before_it_though_the_knife_is_held_on() -> None:
    plan = [
        "Driver.PickUp('Knife')",
        "Driver.PutAOnB('Knife', 'Chair')",  # by mistake
        "Driver.PickUp('Knife')",
        "Driver.Slice('Bread')",
    ]
    grounding = ground("Slice the bread.", [], None, task=None, teach_task=None)
    assert certified_pair(plan, (0, 1), grounding) == (
        "without steps 1-2 together the plan can still be carried out, "
        "and every goal condition the plan meets still holds"
    )


def test_the_same_pair_goes_when_the_goal_is_about_the_object() -> None:
    remotes = teach_task(
        "Put All RemoteControl On Sofa",
        {
            "remote": {"determiner": "all", "conditions": {"objectType": "RemoteControl"}},
            "sofa": {"determiner": "a", "conditions": {"objectType": "Sofa", "receptacle": 1}},
        },
        {
            "property": "parentReceptacles",
            "head_entity_list": ["remote"],
            "head_determiner_list": ["all"],
            "tail_entity_list": ["sofa"],
            "tail_determiner_list": ["a"],
        },
    )
    plan = [
        "Driver.PickUp('RemoteControl')",
        "Driver.PutAOnB('RemoteControl', 'Chair')",
        "Driver.PickUp('RemoteControl')",
        "Driver.PutAOnB('RemoteControl', 'Sofa')",
    ]
    grounding = ground("", [], ROOM, task=None, teach_task=remotes)
    assert "every goal condition the plan meets still holds" in certified_pair(
        plan, (0, 1), grounding
    )


def test_a_pick_up_and_its_wrong_put_down_go_though_the_object_is_used_later() -> None:
    plan = [
        "Driver.PickUp('Knife')",
        "Driver.PutAOnB('Knife', 'Chair')",
        "Driver.PickUp('Plate')",
        "Driver.PutAOnB('Plate', 'CounterTop')",
        "Driver.PickUp('Knife')",
        "Driver.Slice('Bread')",
        "Driver.PutAOnB('Knife', 'CounterTop')",
    ]
    grounding = ground("Slice the bread.", [], ROOM, task=None, teach_task=None)
    assert certified_pair(plan, (0, 1), grounding).startswith("without steps 1-2 together")


def test_a_put_down_and_its_re_pick_up_go_with_an_open_in_between() -> None:
    cook = teach_task(
        "Cook Potato",
        {"potato": {"determiner": "a", "conditions": {"objectType": "Potato", "isCooked": 1}}},
    )
    plan = [
        "Driver.PickUp('Potato')",
        "Driver.PutAOnB('Potato', 'CounterTop')",
        "Driver.Open('Microwave')",
        "Driver.PickUp('Potato')",
        "Driver.PutAOnB('Potato', 'Microwave')",
        "Driver.Close('Microwave')",
        "Driver.ToggleOn('Microwave')",
    ]
    grounding = ground("", [], ROOM, task=None, teach_task=cook)
    assert certified_pair(plan, (1, 3), grounding) == (
        "without steps 2, 4 together the plan can still be carried out, "
        "and every goal condition the plan meets still holds"
    )


def test_a_flag_that_keeps_the_plan_broken_when_the_others_would_mend_it_is_vetoed() -> None:
    # the mug is put down by mistake before the coffee machine, so the last put-down cannot
    # happen; removing the wrong put-down alone mends the plan, removing the pick-up with it
    # would leave the plan as broken as it was, which alone the check would let through
    plan = [
        "Driver.PickUp('Mug')",
        "Driver.PutAOnB('Mug', 'DiningTable')",
        "Driver.PutAOnB('Mug', 'CoffeeMachine')",
        "Driver.ToggleOn('CoffeeMachine')",
    ]
    critique = Critique(flags=[Flag(step=s, action=plan[s], reason="not needed") for s in (0, 1)])
    kept, vetoes, _ = certify_flags(plan, critique, GROUNDING)
    assert [f.step for f in kept.flags] == [1]
    assert [v.step for v in vetoes] == [0]
    assert "the other removals leave a better plan" in vetoes[0].reason
