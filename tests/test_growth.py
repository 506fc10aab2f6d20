"""A model Planner that makes a plan more than half again as long is warned about, in the
record and in the run's summary, which also counts insertions by evidence level."""

from __future__ import annotations

import pytest

from planverify import verify_plan
from planverify.graphs.graph import GROWTH_WARNING

from .conftest import scripted

GOAL = "Make a mug of coffee."
PLAN = [
    "Driver.PickUp('Mug')",
    "Driver.Move(1.0)",
    "Driver.PutAOnB('Mug', 'CoffeeMachine')",
    "Driver.ToggleOn('CoffeeMachine')",
]
ADDED = ["Driver.Move(0.5)", "Driver.TurnLeft(90.0)", "Driver.Open('Fridge')"]


def judged(plan: list[str], missing: str = "") -> str:
    lines = [f"ACTION: {n}. {a}\nANNOTATION: needed" for n, a in enumerate(plan, start=1)]
    return "\n".join(lines) + (f"\n#MISSING: {missing}" if missing else "")


def grown_plan() -> tuple[list[str], str]:
    """A Planner answer inserting `ADDED` after step 1, and the plan it makes."""
    answer = "\n".join(f"INSERT AFTER 1: {action}" for action in reversed(ADDED))
    return [PLAN[0], *ADDED, *PLAN[1:]], answer


def test_a_plan_a_model_planner_grows_by_half_is_warned_about_once() -> None:
    grown, answer = grown_plan()
    judge = scripted(judged(PLAN, "walk over first"), judged(grown))
    result = verify_plan(PLAN, GOAL, judge=judge, planner=scripted(answer))
    assert len(result.refined) == 7, result.refined
    (warning,) = [w for w in result.warnings if w.startswith(GROWTH_WARNING)]
    assert "4 steps became 7" in warning and "heuristic" in warning
    assert {step.evidence for step in result.inserted} == {"heuristic"}


def test_a_small_growth_or_the_rules_planner_is_not_warned_about() -> None:
    judge = scripted(judged(PLAN, "open the fridge"), judged([*PLAN, "Driver.Open('Fridge')"]))
    result = verify_plan(
        PLAN, GOAL, judge=judge, planner=scripted("INSERT AFTER 4: Driver.Open('Fridge')")
    )
    assert len(result.refined) == 5
    assert not [w for w in result.warnings if w.startswith(GROWTH_WARNING)]


def test_the_summary_counts_insertions_by_level_and_the_grown_plans(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from planverify.cli.verify import _summary
    from planverify.runs.batch import BatchReport

    grown, answer = grown_plan()
    judge = scripted(judged(PLAN, "walk over first"), judged(grown))
    result = verify_plan(PLAN, GOAL, judge=judge, planner=scripted(answer)).model_copy(
        update={"id": "grown-one"}
    )
    _summary(BatchReport(results=[result]), None)
    shown = " ".join(capsys.readouterr().out.split())
    assert "3 inserted" in shown and "insertions by evidence │ 3 heuristic" in shown
    assert "plans grown by half" in shown and "1 by the model Planner" in shown
    assert "grown-one" in shown
