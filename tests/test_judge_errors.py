"""benchmarks/judge_errors.py: the plan-level disagreements it lists are the ones the score counts."""

from __future__ import annotations

import doctest
from collections.abc import Iterator
from types import ModuleType

import pytest

from planverify import verify_many
from planverify.metrics import plan_counts, score_plan
from planverify.records.episode import Episode, Label
from planverify.records.result import Inserted, Verdict, VerificationResult

from .conftest import benchmark_script

MUG_TO_SINK = ["Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'SinkBasin')"]


@pytest.fixture(scope="module")
def judge_errors() -> Iterator[ModuleType]:
    """The script, imported from its file with its sibling scripts importable (benchmarks/ is
    no package)."""
    with benchmark_script("judge_errors") as module:
        yield module


def test_its_examples_hold(judge_errors: ModuleType) -> None:
    result = doctest.testmod(judge_errors)
    assert result.attempted >= 2 and result.failed == 0


def test_a_needed_step_removed_and_a_detour_kept_are_listed(judge_errors: ModuleType) -> None:
    noisy = [
        "Driver.PickUp('Apple')",
        "Driver.Move(0.25)",
        "Driver.PutAOnB('Apple', 'CounterTop')",
        "Commander.Say('the mug is in the cabinet')",
        *MUG_TO_SINK,
    ]
    clean = ["Driver.Move(0.25)", "Commander.Say('the mug is in the cabinet')", *MUG_TO_SINK]
    false, missed = judge_errors.plan_errors(noisy, clean, removed={1, 5})
    assert (false, missed) == ([5], [0, 2])  # the motion removed is not scored
    counts = plan_counts(noisy, clean, {1, 5}, motion=False)
    assert (counts.fp, counts.fn) == (len(false), len(missed))


def test_a_removal_of_either_of_two_identical_steps_is_no_error(judge_errors: ModuleType) -> None:
    noisy = ["Driver.Open('Fridge')", "Driver.Open('Fridge')", "Driver.PickUp('Egg')"]
    clean = ["Driver.Open('Fridge')", "Driver.PickUp('Egg')"]
    assert judge_errors.plan_errors(noisy, clean, removed={0}) == ([], [])
    assert judge_errors.plan_errors(noisy, clean, removed={1}) == ([], [])
    false, missed = judge_errors.plan_errors(noisy, clean, removed={2})
    assert false == [2] and missed in ([0], [1])  # one of the two opens is the one too many


def test_an_episode_is_listed_with_the_rules_judge_verdicts(judge_errors: ModuleType) -> None:
    actions = [
        "Driver.PickUp('Mug')",
        "Driver.PutAOnB('Mug', 'CounterTop')",
        "Driver.PickUp('Mug')",
        "Driver.PutAOnB('Mug', 'SinkBasin')",
        "Driver.ToggleOn('Faucet')",
        "Driver.ToggleOff('Faucet')",
        "Driver.ToggleOff('Faucet')",
    ]
    labels = [Label(type="REMOVE", index=6, error="duplicate", reason="the tap is off already")]
    clean = [a for i, a in enumerate(actions) if i != 6]
    episode = Episode(id="e1", goal="Rinse the mug.", actions=actions, labels=labels, clean=clean)
    bare = Episode(id="e1", goal="Rinse the mug.", actions=actions)
    result = verify_many([bare], judge="rules")[0]
    errors = judge_errors.disagreements("made-up", episode, result)
    removed = {v.index for v in result.verdicts if v.verdict == "remove"}
    assert errors.counts == plan_counts(actions, clean, removed, motion=False)
    assert set(errors.false) <= removed and not set(errors.missed) & removed
    assert (len(errors.false), len(errors.missed)) == (errors.counts.fp, errors.counts.fn)
    text = "\n".join(judge_errors.describe(errors))
    assert text.startswith(f"## made-up e1: tp {errors.counts.tp}, fp {errors.counts.fp}")
    for index in errors.missed:
        assert f"miss          {index:4d} {actions[index]}" in text


def test_insertions_are_scored_and_listed_as_the_score_counts_them(
    judge_errors: ModuleType,
) -> None:
    actions = ["Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'CoffeeMachine')"]
    switch_on = "Driver.ToggleOn('CoffeeMachine')"
    labels = [Label(type="MISSING", after=1, action=switch_on, error="missing_step")]
    episode = Episode(
        id="e2", goal="Make coffee.", actions=actions, labels=labels, clean=[*actions, switch_on]
    )
    wrong = "Driver.ToggleOn('Toaster')"
    result = VerificationResult(
        id="e2",
        original=actions,
        refined=[*actions, wrong],
        verdicts=[Verdict(index=i, action=a, verdict="keep") for i, a in enumerate(actions)],
        inserted=[Inserted(after_index=1, action=wrong, iteration=1)],
    )
    errors = judge_errors.disagreements("made-up", episode, result)
    assert errors.counts == score_plan(episode, result, mode="iterative", motion=False)
    assert (errors.counts.fp, errors.counts.fn) == (1, 1)
    assert (errors.false_inserted, errors.missed_inserted) == ([wrong], [switch_on])
    text = "\n".join(judge_errors.describe(errors))
    assert f"false insertion after 1 {wrong}" in text
    assert f"missed insertion {switch_on}" in text
