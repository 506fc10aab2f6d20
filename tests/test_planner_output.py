"""What model Planners write is cleaned before use: an inferred goal loses the speaker label and
wrapping a model copies from the dialogue, and an insertion that repeats the step already at its
place (or another insertion there) is dropped with a diagnostic."""

from __future__ import annotations

import asyncio

import pytest

from planverify import verify_plan
from planverify.agents.base import Insertion, PlannerReply
from planverify.agents.planner import ModelPlanner, clean_goal, drop_repeats

from .conftest import scripted
from .test_graph import BREW, GOAL, SAY, TOGGLE, judged

MADE = [*BREW, TOGGLE]  # a plan that already switches the machine on


@pytest.mark.parametrize(
    ("written", "goal"),
    [
        ("Driver: Please make a cup of coffee.", "Please make a cup of coffee."),
        ("Commander: Make a mug of coffee.", "Make a mug of coffee."),
        ("commander - water the plant", "water the plant"),
        ("USER: Slice the bread.", "Slice the bread."),
        ("Robot \u2014 Boil the potato.", "Boil the potato."),
        ("assistant:Clean the mug.", "Clean the mug."),
        ("The Commander says: boil water", "boil water"),
        ('"Driver: Put the fork in the sink."', "Put the fork in the sink."),
        ("\u201cCommander: Make toast.\u201d", "Make toast."),
        ("**Driver:** make tea", "make tea"),
        ('**GOAL:** "Commander: Make coffee."', "Make coffee."),
        ("> - `Driver: Water the plant.`", "Water the plant."),
        ("Make a salad.", "Make a salad."),
        ("Robot-friendly tidying of the desk.", "Robot-friendly tidying of the desk."),
        ("User manuals go on the shelf.", "User manuals go on the shelf."),
    ],
)
def test_speaker_labels_quotes_and_markdown_are_stripped_from_a_goal(
    written: str, goal: str
) -> None:
    assert clean_goal(written) == goal


def test_an_inferred_goal_keeps_no_speaker_label() -> None:
    planner = scripted("GOAL: Driver: Please make a cup of coffee.")
    goal, usage = asyncio.run(ModelPlanner(planner).agoal(["Commander: Please make a coffee."]))
    assert goal == "Please make a cup of coffee." and usage.calls == 1


def test_a_goal_that_is_only_a_label_falls_back_to_the_commanders_words() -> None:
    planner = scripted("GOAL: **Driver:**")
    goal, _ = asyncio.run(ModelPlanner(planner).agoal(["Commander: Coffee, please."]))
    assert goal == "Coffee, please."


def test_the_loop_judges_against_the_cleaned_goal() -> None:
    judge = scripted(judged(MADE))
    planner = scripted("GOAL: 'Driver: Please make a cup of coffee.'")
    result = verify_plan(MADE, None, judge=judge, planner=planner, goal_source="infer")
    assert result.goal == "Please make a cup of coffee."
    assert "<goal>\nPlease make a cup of coffee.\n</goal>" in str(judge.prompts[0][-1].content)


def test_an_insertion_next_to_the_same_step_is_dropped_with_why() -> None:
    judge = scripted(judged(MADE, missing=["Driver.ToggleOn('CoffeeMachine') to brew"]))
    planner = scripted(f"INSERT AFTER 4: {TOGGLE}")  # right after the existing ToggleOn
    result = verify_plan(MADE, GOAL, judge=judge, planner=planner, certify=False)
    assert result.status == "ok", result.error
    assert result.refined == MADE and result.inserted == []
    assert result.stop_reason == "no_change"
    (dropped,) = result.history[0].dropped
    assert dropped.text == f"after 4: {TOGGLE}"
    assert dropped.why == (
        f"step 4, right before the insertion point, is already {TOGGLE}: "
        "a second copy in a row changes nothing"
    )


def test_repeats_before_after_and_within_one_reply_are_dropped() -> None:
    plan = [SAY, "Driver.PickUp('Mug')", TOGGLE, "Driver.Open('Fridge')"]
    reply = PlannerReply(
        insertions=[
            Insertion(after=1, action=TOGGLE, reason="r"),  # the next step is the same
            Insertion(after=2, action=TOGGLE, reason="r"),  # the previous step is the same
            Insertion(after=3, action="Driver.Close('Fridge')", reason="r"),
            Insertion(after=3, action="Driver.Close('Fridge')", reason="r"),  # twice in the reply
            Insertion(after=0, action="Driver.Close('Fridge')", reason="r"),  # elsewhere: kept
        ]
    )
    kept = drop_repeats(plan, reply)
    assert [(i.after, i.action) for i in kept.insertions] == [
        (3, "Driver.Close('Fridge')"),
        (0, "Driver.Close('Fridge')"),
    ]
    assert [d.why.split(",")[0] for d in kept.dropped] == [
        "step 3",
        "step 3",
        "repeats another insertion at the same place",
    ]
    assert "right after" in kept.dropped[0].why and "right before" in kept.dropped[1].why


def test_motion_may_repeat_two_moves_go_further() -> None:
    plan = ["Driver.Move(1.0)", "Driver.TurnLeft(90)"]
    reply = PlannerReply(
        insertions=[
            Insertion(after=0, action="Driver.Move(1.0)", reason="closer"),
            Insertion(after=1, action="Driver.TurnLeft(90)", reason="turn around"),
        ]
    )
    assert drop_repeats(plan, reply).insertions == reply.insertions
