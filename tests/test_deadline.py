"""The cooperative deadline of the world model's work (`planverify.world.deadline`): a review
stops with `Stopped` once its caller's time is up or it is cancelled, also mid-search and in a
worker thread, and runs as before without one."""

from __future__ import annotations

import asyncio
import threading

import pytest

from planverify.agents.rules import RulesJudge
from planverify.world import ground
from planverify.world.deadline import Stopped, current, stop_when
from planverify.world.repair import review

from .test_repair import COFFEE, KITCHEN

LONG = [  # a detour and the coffee, over and over: a search with plenty to do
    "Driver.PickUp('Apple')",
    "Driver.PutAOnB('Apple', 'DiningTable')",
    "Driver.PickUp('Mug')",
    "Driver.PutAOnB('Mug', 'CoffeeMachine')",
    "Driver.ToggleOn('CoffeeMachine')",
    "Driver.ToggleOff('CoffeeMachine')",
] * 50


class CancelAfter(threading.Event):
    """An event that reads as set from its `n`-th look on: a caller cancelling mid-search."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n
        self.looks = 0

    def is_set(self) -> bool:
        self.looks += 1
        return self.looks >= self.n


def test_a_review_past_its_deadline_stops() -> None:
    with stop_when(seconds=0), pytest.raises(Stopped, match="past its deadline"):
        review(LONG, scene=KITCHEN, spec=COFFEE)


def test_a_review_cancelled_mid_search_stops_there() -> None:
    looks = CancelAfter(10**9)
    with stop_when(cancel=looks):
        whole = review(LONG, scene=KITCHEN, spec=COFFEE)
    assert looks.looks > 20  # the search looks again and again, not once at the start
    midway = CancelAfter(looks.looks // 2)
    with stop_when(cancel=midway), pytest.raises(Stopped, match="cancelled"):
        review(LONG, scene=KITCHEN, spec=COFFEE)
    assert midway.looks == looks.looks // 2  # it stopped at the first look after the cancel
    assert whole == review(LONG, scene=KITCHEN, spec=COFFEE)  # checks change no verdict


def test_a_worker_thread_sees_the_deadline_of_its_caller() -> None:
    async def judged_in_a_thread() -> None:
        with stop_when(seconds=0):
            await asyncio.to_thread(review, LONG, scene=KITCHEN, spec=COFFEE)

    with pytest.raises(Stopped):
        asyncio.run(judged_in_a_thread())
    assert current() is None  # the deadline ends with its block


def test_an_enclosing_cancel_still_holds() -> None:
    cancel = threading.Event()
    cancel.set()
    with stop_when(cancel=cancel), stop_when(seconds=3600), pytest.raises(Stopped):
        review(LONG, scene=KITCHEN, spec=COFFEE)


def test_the_rules_judge_stops_at_its_deadline() -> None:
    goal = "Prepare coffee in a clean mug."
    grounding = ground(goal, [], KITCHEN, task=None, teach_task=None)
    with stop_when(seconds=0), pytest.raises(Stopped):
        asyncio.run(RulesJudge().ajudge(goal, LONG, KITCHEN, grounding=grounding))
