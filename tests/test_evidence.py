"""Evidence levels: how sure each removal and insertion is, from the Judge that made it to the
result record, and how records written before levels existed read."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from planverify import verify_many, verify_plan
from planverify.agents.base import Insertion
from planverify.cli import app
from planverify.export import Decision, Options, curate, export_results
from planverify.export.formats import rows
from planverify.graphs.edits import grade, insert_steps
from planverify.graphs.review import apply_review
from planverify.inputs.sources import load_episodes
from planverify.metrics import Counts, evidence_levels, format_report, score_results
from planverify.noise import ANNOTATION_KEYS, GENERATORS
from planverify.records.critique import Critique, Flag, Missing
from planverify.records.episode import Episode, iter_jsonl
from planverify.records.evidence import (
    LEVELS,
    MEANINGS,
    at_least,
    goal_evidence,
    levels_from,
    rank,
    simulated,
    state_evidence,
    weakest,
)
from planverify.records.history import Step
from planverify.records.result import Inserted, Verdict, VerificationResult
from planverify.world import ground
from planverify.world.certify import certify_flags

from .conftest import ROOT, scripted
from .test_certify import GOAL, KITCHEN, PLAN
from .test_goals import COFFEE
from .test_graph import ScriptedJudge, judged

runner = CliRunner()
EXAMPLES = ROOT / "examples" / "episodes.jsonl"
APPLE_DETOUR = (2, 3)  # 1-based: the apple picked up and put on the table, which coffee needs not


def removed(result: VerificationResult) -> dict[int, str | None]:
    return {v.index: v.evidence for v in result.verdicts if v.verdict == "remove"}


# --- the order and the precedence rule ------------------------------------------------------


def test_levels_are_ordered_strongest_first_in_one_place() -> None:
    assert LEVELS == ("proven", "goal-text", "heuristic")
    assert [rank(level) for level in LEVELS] == [0, 1, 2]
    assert at_least("proven", "goal-text") and at_least("goal-text", "goal-text")
    assert not at_least("heuristic", "goal-text")
    assert levels_from("goal-text") == {"proven", "goal-text"}
    assert levels_from("heuristic") == set(LEVELS)


def test_the_weakest_input_decides() -> None:
    assert weakest(["proven", "proven"]) == "proven"
    assert weakest(["proven", "goal-text"]) == weakest(["goal-text", "proven"]) == "goal-text"
    assert weakest(["goal-text", "heuristic", "proven"]) == "heuristic"
    assert weakest([]) == "heuristic", "a verdict resting on nothing known"
    assert goal_evidence("teach_task") == "proven"
    assert goal_evidence("text") == "goal-text"
    assert goal_evidence(None) == "heuristic", "no goal spec: the named objects only"
    assert state_evidence(known=True) == "proven" and state_evidence(known=False) == "heuristic"


@pytest.mark.parametrize(
    ("scene_known", "goal_source", "uses_goal", "level"),
    [
        (True, "teach_task", True, "proven"),
        (True, "text", True, "goal-text"),
        (True, None, True, "heuristic"),
        (False, "teach_task", True, "heuristic"),  # states the simulator did not know
        (True, "text", False, "proven"),  # impossible whatever the goal: the scene decides
        (True, None, False, "proven"),
        (False, "text", False, "heuristic"),
    ],
)
def test_a_simulated_verdict_is_as_strong_as_the_inputs_it_used(
    scene_known: bool, goal_source: Any, uses_goal: bool, level: str
) -> None:
    assert simulated(scene_known=scene_known, goal_source=goal_source, uses_goal=uses_goal) == level


# --- model Judges: heuristic, unless certified ------------------------------------------------


def detour_flags() -> str:
    return judged(PLAN, (APPLE_DETOUR[0], "no apple in coffee"), (APPLE_DETOUR[1], "nor this"))


@pytest.mark.parametrize(
    ("scene", "teach_task", "level"),
    [
        (KITCHEN, COFFEE, "proven"),
        (KITCHEN, None, "goal-text"),
        (None, None, "heuristic"),  # accepted without a veto, on states nobody knew
    ],
)
def test_a_certified_model_flag_takes_the_level_of_the_check_that_accepted_it(
    scene: Any, teach_task: Any, level: str
) -> None:
    judge = scripted(detour_flags(), judged([PLAN[0], *PLAN[3:]]))
    result = verify_plan(PLAN, GOAL, scene=scene, teach_task=teach_task, judge=judge)
    assert result.status == "ok", result.error
    assert removed(result) == {1: level, 2: level}
    assert [f.evidence for f in result.history[0].critique.flags] == [level, level]


def test_a_model_flag_nobody_certified_is_heuristic() -> None:
    judge = scripted(detour_flags(), judged([PLAN[0], *PLAN[3:]]))
    result = verify_plan(PLAN, GOAL, scene=KITCHEN, teach_task=COFFEE, judge=judge, certify=False)
    assert removed(result) == {1: "heuristic", 2: "heuristic"}


def test_a_step_impossible_whatever_the_goal_is_proven_under_a_text_goal() -> None:
    plan = [*PLAN[:1], "Driver.PutAOnB('Apple', 'DiningTable')", *PLAN[3:]]  # nothing is held
    critique = Critique(
        flags=[
            Flag(step=1, action=plan[1], reason="cannot happen"),
            Flag(step=4, action=plan[4], reason="not needed"),  # vetoed: coffee needs it
        ]
    )
    text_goal = ground(GOAL, [], KITCHEN, task=None, teach_task=None)
    kept, vetoes, _ = certify_flags(plan, critique, text_goal)
    assert [(f.step, f.evidence) for f in kept.flags] == [(1, "proven")]
    assert [v.step for v in vetoes] == [4]
    no_scene = ground(GOAL, [], None, task=None, teach_task=None)
    kept, _, _ = certify_flags(plan, critique, no_scene)
    assert [f.evidence for f in kept.flags if f.step == 1] == ["heuristic"]


def test_a_custom_judge_sets_its_own_levels_and_they_reach_the_record() -> None:
    plan = ["Driver.PickUp('Mug')", "Driver.Move(1.0)", "Driver.Move(-1.0)"]
    critique = Critique(
        flags=[
            Flag(step=1, action=plan[1], reason="goes and", evidence="proven"),
            Flag(step=2, action=plan[2], reason="comes back", evidence="goal-text"),
        ],
        missing=[
            Missing(description="put it down", action="Driver.PutAOnB('Mug', 'Sink')", after=0)
        ],
    )
    judge = ScriptedJudge(critique, Critique())
    result = verify_plan(plan, "Put the mug in the sink.", judge=judge, certify=False)
    assert removed(result) == {1: "proven", 2: "goal-text"}
    assert [v.evidence for v in result.verdicts if v.verdict == "keep"] == [None]
    (inserted,) = result.inserted
    assert (inserted.action, inserted.evidence) == ("Driver.PutAOnB('Mug', 'Sink')", "heuristic")
    edits = {(e.kind, e.action): e.evidence for e in result.history[0].edits}
    assert edits[("remove", plan[1])] == "proven"


def test_static_verdicts_carry_the_levels_of_the_first_pass() -> None:
    judge = scripted(detour_flags())
    result = verify_plan(PLAN, GOAL, scene=KITCHEN, teach_task=COFFEE, judge=judge, static=True)
    assert result.stop_reason == "static" and result.refined == PLAN
    assert removed(result) == {1: "proven", 2: "proven"}


# --- insertions: the Judge's missing step, as the Planner placed it ----------------------------


def test_an_insertion_takes_the_level_of_the_missing_step_only_when_it_is_that_step() -> None:
    needed = Missing(
        description="switch it on",
        action="Driver.ToggleOn('CoffeeMachine')",
        after=3,
        evidence="proven",
    )
    vague = Missing(description="wash the mug", evidence="proven")
    graded = grade(
        [
            Insertion(after=3, action="Driver.ToggleOn('CoffeeMachine')", reason="on"),
            Insertion(after=2, action="Driver.ToggleOn('CoffeeMachine')", reason="earlier"),
            Insertion(after=3, action="Driver.Clean('Mug')", reason="a reading of 'wash'"),
        ],
        [needed, vague],
    )
    assert [i.evidence for i in graded] == ["proven", "heuristic", "heuristic"]
    first = [Step(action="Driver.PickUp('Mug')", origin=0)]
    plan, edits = insert_steps(first, [replace(graded[0], after=0)], 1)
    assert plan[-1].evidence == "proven" and edits[0].evidence == "proven"


def test_a_model_planner_inserting_the_judges_step_where_it_said_keeps_its_level() -> None:
    critique = Critique(
        missing=[
            Missing(
                description="switch it on",
                action="Driver.ToggleOn('CoffeeMachine')",
                after=4,
                evidence="goal-text",
            )
        ]
    )
    for answer, level in (
        ("INSERT AFTER 5: Driver.ToggleOn('CoffeeMachine')", "goal-text"),
        ("INSERT AFTER 5: Driver.ToggleOn('Toaster')", "heuristic"),
    ):
        judge = ScriptedJudge(critique, Critique())
        result = verify_plan(PLAN[:5], GOAL, judge=judge, planner=scripted(answer), certify=False)
        assert [i.evidence for i in result.inserted] == [level], answer


# --- the rules Judge: each verdict's level from what its proof rests on -----------------------


@pytest.mark.parametrize(
    ("scene", "teach_task", "level"),
    [(KITCHEN, COFFEE, "proven"), (KITCHEN, None, "goal-text")],
)
def test_the_rules_judges_goal_verdicts_take_the_goals_level(
    scene: Any, teach_task: Any, level: str
) -> None:
    # a turn and the turn back, the apple detour, and the coffee machine never switched on
    plan = [PLAN[0], "Driver.TurnLeft(90.0)", "Driver.TurnRight(90.0)", *PLAN[1:5]]
    result = verify_plan(plan, GOAL, scene=scene, teach_task=teach_task, judge="rules")
    assert result.status == "ok", result.error
    # the detour is useless for the goal: as sure as the goal; the turns go whatever the goal
    assert removed(result) == {1: "proven", 2: "proven", 3: level, 4: level}
    assert [(i.action, i.evidence) for i in result.inserted] == [
        ("Driver.ToggleOn('CoffeeMachine')", level)
    ]


def test_the_rules_judge_calls_a_step_impossible_whatever_the_goal_proven_under_a_text_goal() -> (
    None
):
    # the precedence rule: only what a verdict rests on counts, and this one needs no goal
    plan = [*PLAN, "Driver.PutAOnB('Apple', 'CounterTop')"]  # nothing is held any more
    result = verify_plan(plan, GOAL, scene=KITCHEN, judge="rules")
    assert removed(result)[6] == "proven"
    assert removed(result)[1] == "goal-text"  # the detour rests on the goal read from text


def test_without_a_scene_a_verdict_on_states_nobody_knew_is_heuristic() -> None:
    # the mug is washed under the tap, so the goal is met even without a scene; the apple was
    # carried off elsewhere, but every state the proof used was presumed
    plan = [
        "Driver.PickUp('Apple')",
        "Driver.TurnRight(180.0)",
        "Driver.Move(1.0)",
        "Driver.PutAOnB('Apple', 'CounterTop')",
        "Driver.PickUp('Mug')",
        "Driver.PutAOnB('Mug', 'SinkBasin')",
        "Driver.ToggleOn('Faucet')",
    ]
    result = verify_plan(plan, "Clean a mug.", judge="rules")
    assert removed(result) == {0: "heuristic", 3: "heuristic"}


# --- human review ---------------------------------------------------------------------------


def test_a_reviewer_keeps_the_judges_level_on_the_steps_it_flagged_and_adds_heuristic_ones() -> (
    None
):
    critique = Critique(flags=[Flag(step=1, action=PLAN[1], reason="r", evidence="proven")])
    edited = apply_review(critique, {"flags": [{"step": 2}, {"step": 4, "reason": "mine"}]}, PLAN)
    assert [(f.step, f.evidence) for f in edited.flags] == [(1, "proven"), (3, "heuristic")]
    assert apply_review(critique, "accept", PLAN).flags[0].evidence == "proven"


# --- records --------------------------------------------------------------------------------


def test_records_written_before_levels_read_as_heuristic_on_removals_and_insertions() -> None:
    old = {
        "id": "old",
        "original": ["Driver.PickUp('Mug')", "Driver.Move(1.0)"],
        "refined": ["Driver.PickUp('Mug')", "Driver.ToggleOn('Faucet')"],
        "verdicts": [
            {"index": 0, "action": "Driver.PickUp('Mug')", "verdict": "keep"},
            {"index": 1, "action": "Driver.Move(1.0)", "verdict": "remove", "reason": "r",
             "iteration": 1},
        ],
        "inserted": [{"after_index": 0, "action": "Driver.ToggleOn('Faucet')", "iteration": 1}],
        "history": [
            {"iteration": 1, "critique": {"flags": [
                {"step": 1, "action": "Driver.Move(1.0)", "reason": "r"}]},
             "edits": [{"kind": "remove", "action": "Driver.Move(1.0)", "origin": 1,
                        "reason": "r"}]}
        ],
    }  # fmt: skip
    result = VerificationResult.model_validate(old)
    assert [v.evidence for v in result.verdicts] == [None, "heuristic"]
    assert [i.evidence for i in result.inserted] == ["heuristic"]
    assert result.history[0].critique.flags[0].evidence == "heuristic"
    assert result.history[0].edits[0].evidence == "heuristic"
    again = VerificationResult.model_validate(result.model_dump(mode="json"))
    assert again == result, "written back with the levels it was read with"


def test_a_kept_step_has_no_level() -> None:
    with pytest.raises(ValidationError, match="a kept step has no evidence level"):
        Verdict(index=0, action="Driver.Move(1.0)", verdict="keep", evidence="proven")
    assert Verdict(index=0, action="x", verdict="remove", evidence=None).evidence == "heuristic"
    assert Inserted(after_index=0, action="x", iteration=1, evidence=None).evidence == "heuristic"


def test_new_records_write_the_level_of_every_removal_and_insertion() -> None:
    (result,) = verify_many(
        [Episode(id="e", goal=GOAL, actions=PLAN[:5], scene=KITCHEN, teach_task=COFFEE)]
    )
    record = result.model_dump(mode="json")
    assert {v["verdict"]: v["evidence"] for v in record["verdicts"]} == {
        "keep": None,
        "remove": "proven",
    }
    assert [i["evidence"] for i in record["inserted"]] == ["proven"]


# --- a result as if only some levels had been acted on -----------------------------------------


def mixed() -> VerificationResult:
    plan = [
        "Driver.PickUp('Mug')",
        "Driver.Move(1.0)",
        "Driver.Move(-1.0)",
        "Driver.Open('Fridge')",
    ]
    critique = Critique(
        flags=[
            Flag(step=1, action=plan[1], reason="there", evidence="proven"),
            Flag(step=2, action=plan[2], reason="and back", evidence="heuristic"),
            Flag(step=3, action=plan[3], reason="no fridge", evidence="goal-text"),
        ],
        missing=[
            Missing(description="a", action="Driver.PutAOnB('Mug', 'Sink')", after=0,
                    evidence="proven"),
            Missing(description="b", action="Driver.ToggleOn('Faucet')", after=3,
                    evidence="heuristic"),
        ],
    )  # fmt: skip
    judge = ScriptedJudge(critique, Critique())
    result = verify_plan(plan, "Rinse the mug.", judge=judge, certify=False)
    assert result.status == "ok", result.error
    return result


def test_a_result_restricted_to_some_levels_keeps_the_other_removals_and_drops_the_insertions() -> (
    None
):
    result = mixed()
    assert removed(result) == {1: "proven", 2: "heuristic", 3: "goal-text"}
    assert [i.evidence for i in result.inserted] == ["proven", "heuristic"]
    proven = result.only(levels_from("proven"))
    assert removed(proven) == {1: "proven"}
    assert [i.action for i in proven.inserted] == ["Driver.PutAOnB('Mug', 'Sink')"]
    assert proven.refined == [
        "Driver.PickUp('Mug')",
        "Driver.PutAOnB('Mug', 'Sink')",
        "Driver.Move(-1.0)",
        "Driver.Open('Fridge')",
    ]
    assert [f.step for f in proven.history[0].critique.flags] == [1]
    assert {e.evidence for e in proven.history[0].edits} == {"proven"}
    assert proven.original == result.original and proven.settings == result.settings
    assert removed(result.only(levels_from("goal-text"))) == {1: "proven", 3: "goal-text"}
    assert result.only(LEVELS) is result, "nothing left out: the same result"


# --- score --min-evidence -------------------------------------------------------------------

SCORED_PLAN = [
    "Driver.PickUp('Mug')",
    "Driver.Move(1.0)",  # labelled: removed with proof
    "Driver.PickUp('Apple')",  # labelled: removed on a hunch
    "Driver.Open('Fridge')",  # not an error: removed on a hunch
    "Driver.PutAOnB('Mug', 'Sink')",
]


def scored_pair() -> tuple[Episode, VerificationResult]:
    episode = Episode.model_validate(
        {
            "id": "s",
            "goal": "Rinse the mug.",
            "actions": SCORED_PLAN,
            "labels": [
                {"type": "REMOVE", "index": 1, "error": "detour"},
                {"type": "REMOVE", "index": 2, "error": "wrong_object"},
                {"type": "MISSING", "after": 4, "action": "Driver.ToggleOn('Faucet')"},
            ],
        }
    )
    levels = {1: "proven", 2: "heuristic", 3: "heuristic"}
    result = VerificationResult.model_validate(
        {
            "id": "s",
            "input_digest": episode.input_digest,
            "original": SCORED_PLAN,
            "refined": [SCORED_PLAN[0], SCORED_PLAN[4], "Driver.ToggleOn('Faucet')"],
            "verdicts": [
                {"index": i, "action": line, "verdict": "remove", "evidence": levels[i]}
                if i in levels
                else {"index": i, "action": line, "verdict": "keep"}
                for i, line in enumerate(SCORED_PLAN)
            ],
            "inserted": [
                {"after_index": 4, "action": "Driver.ToggleOn('Faucet')", "iteration": 1,
                 "evidence": "goal-text"}
            ],
            "stop_reason": "no_objections",
        }
    )  # fmt: skip
    return episode, result


def test_scoring_at_a_level_treats_the_changes_below_it_as_not_made() -> None:
    episode, result = scored_pair()
    every = score_results([episode], [result], mode="iterative", resamples=0)
    assert every.overall.counts == Counts(tp=3, fp=1, fn=0, tn=2)
    assert every.min_evidence is None
    text = score_results(
        [episode], [result], mode="iterative", resamples=0, min_evidence="goal-text"
    )
    # the hunch on the apple is not made: its label is missed; the fridge's is no false alarm
    assert text.overall.counts == Counts(tp=2, fp=0, fn=1, tn=3)
    proven = score_results(
        [episode], [result], mode="iterative", resamples=0, min_evidence="proven"
    )
    assert proven.overall.counts == Counts(tp=1, fp=0, fn=2, tn=3), "the insertion left out too"
    assert proven.min_evidence == "proven"
    assert "level proven or stronger" in format_report(proven)


def test_score_min_evidence_on_the_command_line(tmp_path: Path) -> None:
    episode, result = scored_pair()
    annotated = tmp_path / "annotated.jsonl"
    annotated.write_text(episode.model_dump_json() + "\n", encoding="utf-8")
    results = tmp_path / "results.jsonl"
    results.write_text(result.model_dump_json() + "\n", encoding="utf-8")
    report = tmp_path / "report.json"
    done = runner.invoke(
        app,
        ["score", str(annotated), str(results), "--min-evidence", "proven", "--json", str(report)],
    )
    assert done.exit_code == 0, done.output
    assert "count as not made" in done.output and "evidence proven or stronger" in done.output
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["min_evidence"] == "proven"
    assert (data["overall"]["counts"]["tp"], data["overall"]["counts"]["fp"]) == (1, 0)
    wrong = runner.invoke(app, ["score", str(annotated), str(results), "--min-evidence", "sure"])
    assert wrong.exit_code == 2


# --- measured: precision and share per level ----------------------------------------------------


def test_each_level_is_measured_on_its_own_removals_raw_and_excused() -> None:
    episode, result = scored_pair()
    clean = [SCORED_PLAN[0], SCORED_PLAN[3], SCORED_PLAN[4], "Driver.ToggleOn('Faucet')"]
    episode = episode.model_copy(update={"clean": clean})
    base = {"s": [SCORED_PLAN[0], SCORED_PLAN[4]]}  # the judge drops the fridge from the base too
    table = evidence_levels([episode], [result], mode="iterative", base=base)
    assert list(table) == list(LEVELS)
    proven, text, hunch = table.values()
    assert (proven.removals, proven.share) == (1, pytest.approx(1 / 3))
    assert proven.labels.precision == 1.0 and proven.plan and proven.plan.precision == 1.0
    assert (text.removals, text.share, text.labels.precision) == (0, 0.0, None)
    assert (hunch.removals, hunch.share) == (2, pytest.approx(2 / 3))
    assert hunch.labels == Counts(tp=1, fp=1, fn=2, tn=2), "the apple right, the fridge wrong"
    assert hunch.plan is not None and hunch.plan.precision == 0.5
    assert hunch.excused is not None and hunch.excused.precision == 1.0, (
        "the base removes the fridge itself: excused"
    )
    assert evidence_levels([episode], [result], mode="iterative")["heuristic"].excused is None
    failed = VerificationResult.failed(episode, "boom")
    assert all(
        s.removals == 0 for s in evidence_levels([episode], [failed], mode="iterative").values()
    )


def detour_labelled(result: VerificationResult) -> Episode:
    """The episode a result on `PLAN` was computed on, with the apple detour labelled."""
    labels = [{"type": "REMOVE", "index": 1}, {"type": "REMOVE", "index": 2}]
    episode = Episode(id=result.id, goal=GOAL, actions=PLAN, scene=KITCHEN, labels=labels)
    assert episode.input_digest == result.input_digest
    return episode


def test_each_level_is_measured_on_the_first_pass_in_static_mode() -> None:
    result = verify_plan(PLAN, GOAL, scene=KITCHEN, judge=scripted(detour_flags()), static=True)
    episode = detour_labelled(result)
    table = evidence_levels([episode], [result], mode="static")
    assert table["goal-text"].removals == 2 and table["goal-text"].labels.precision == 1.0
    assert table["proven"].removals == table["heuristic"].removals == 0


def test_static_scoring_at_a_level_leaves_out_the_missing_steps_below_it() -> None:
    answer = judged(PLAN, (2, "no apple"), (3, "nor this"), missing=["wash the mug first"])
    result = verify_plan(PLAN, GOAL, scene=KITCHEN, judge=scripted(answer), static=True)
    assert [m.evidence for m in result.history[0].critique.missing] == ["heuristic"]
    episode = detour_labelled(result)
    every = score_results([episode], [result], mode="static", resamples=0)
    assert (every.overall.counts.tp, every.overall.counts.fp) == (2, 1), "the wash: a false alarm"
    text = score_results([episode], [result], mode="static", resamples=0, min_evidence="goal-text")
    assert (text.overall.counts.tp, text.overall.counts.fp) == (2, 0)


# --- export --min-evidence ------------------------------------------------------------------


def mixed_episode(result: VerificationResult) -> Episode:
    episode = Episode(id=result.id, goal=result.goal, actions=result.original)
    assert episode.input_digest == result.input_digest
    return episode


def test_an_export_at_a_level_undoes_removals_and_leaves_out_insertions_below_it(
    tmp_path: Path,
) -> None:
    result = mixed()
    results = tmp_path / "results.jsonl"
    results.write_text(result.model_dump_json() + "\n", encoding="utf-8")
    inputs = tmp_path / "in.jsonl"
    inputs.write_text(mixed_episode(result).model_dump_json() + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    done = runner.invoke(
        app,
        ["export", str(results), "--episodes", str(inputs), "-o", str(out),
         "--min-evidence", "goal-text"],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "below goal-text: 1 removal(s) undone, 1 insertion(s) left out" in done.output
    (row,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    plan = result.original
    assert row["actions"] == [plan[0], "Driver.PutAOnB('Mug', 'Sink')", plan[2]]
    check = row["verification"]
    assert check["min_evidence"] == "goal-text"
    assert [(v["verdict"], v["evidence"], v["overruled"]) for v in check["verdicts"]] == [
        ("keep", None, False),
        ("remove", "proven", False),
        ("keep", None, False),  # removed on a hunch: undone, which no reviewer overruled
        ("remove", "goal-text", False),
    ]
    assert [(i["action"], i["evidence"]) for i in check["inserted"]] == [
        ("Driver.PutAOnB('Mug', 'Sink')", "proven")
    ]


def test_decisions_overrule_an_export_level_as_they_overrule_verdicts() -> None:
    result = mixed()
    episode = mixed_episode(result)
    decisions = [
        Decision(id=result.id, index=2, verdict="remove"),  # the hunch, confirmed by a person
        Decision(id=result.id, inserted=1, verdict="keep"),  # the heuristic insertion, kept
    ]
    (item,) = curate([result], [episode], decisions, min_evidence="proven").curated
    assert item.restored == {2, 3} and item.withheld == {1}
    assert item.removed == [1, 2] and item.insertions == 2
    # the person's removal agrees with the Judge's: the Judge's level stands with it
    assert [item.evidence(i) for i in range(4)] == [None, "proven", "heuristic", None]
    (row,) = rows("episodes", [item], Options())
    assert [v["overruled"] for v in row["verification"]["verdicts"]] == [False, False, True, False]


def test_the_dataset_card_says_what_levels_mean_and_which_was_used(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow", reason="Parquet needs pip install 'planverify[export]'")
    result = mixed()
    episode = mixed_episode(result)
    for level, used in (
        ("proven", "Level used: `proven` (`--min-evidence proven`)"),
        (None, "Level used: all (no `--min-evidence`)"),
    ):
        folder = tmp_path / f"card-{level}"
        export_results([result], [episode], "episodes", folder, as_parquet=True, min_evidence=level)
        card = (folder / "README.md").read_text(encoding="utf-8")
        assert "## Evidence" in card and used in card
        for name, meaning in MEANINGS.items():
            assert f"- `{name}`: {meaning}" in card
        assert "`verification.verdicts[*].evidence`" in card
    assert "2 removal(s) below it were undone" in (
        tmp_path / "card-proven" / "README.md"
    ).read_text(encoding="utf-8")
    assert "Steps removed by the Judge, by level: proven 1, goal-text 1, heuristic 1." in card


def assert_no_proven_objection(
    exported: list[Episode], first: list[VerificationResult], again: list[VerificationResult]
) -> None:
    """Verified again, an exported plan raises no objection of level `proven`, unless its first
    run did not end without objections (its record says why)."""
    for episode, before, after in zip(exported, first, again, strict=True):
        assert after.status == "ok", after.error
        critique = after.history[0].critique
        proven = [f.action for f in critique.flags if f.evidence == "proven"]
        proven += [m.description for m in critique.missing if m.evidence == "proven"]
        if before.stop_reason == "no_objections":
            assert proven == [], episode.id
        else:
            assert (episode.model_extra or {})["verification"]["stop_reason"] != "no_objections"


def export_and_verify_again(
    episodes: list[Episode], tmp_path: Path
) -> tuple[list[VerificationResult], Any, list[Episode], list[VerificationResult]]:
    results = verify_many(episodes, judge="rules")
    out = tmp_path / "proven.jsonl"
    report = export_results(results, iter(episodes), "episodes", out, min_evidence="proven")
    exported = [e for e in iter_jsonl(out) if isinstance(e, Episode)]
    return results, report.curation, exported, verify_many(exported, judge="rules")


def test_an_export_at_proven_verifies_again_with_no_proven_objection(tmp_path: Path) -> None:
    sample = [e for e in iter_jsonl(EXAMPLES) if isinstance(e, Episode)]
    with_task = [  # the coffee episodes again, with TEACh's task definition: proven levels
        e.model_copy(update={"id": f"{e.id}-task", "teach_task": COFFEE})
        for e in sample
        if e.task == "Coffee"
    ]
    plan = [PLAN[0], "Driver.TurnLeft(90.0)", "Driver.TurnRight(90.0)", *PLAN[1:5]]
    made = Episode(id="made", goal=GOAL, actions=plan, scene=KITCHEN, teach_task=COFFEE)
    results, curation, exported, again = export_and_verify_again(
        [*sample, *with_task, made], tmp_path
    )
    levels = {v.evidence for r in results for v in r.verdicts if v.verdict == "remove"}
    assert levels == {"proven", "goal-text"}, "both kinds, so the export undid some"
    assert curation.restored > 0 and made.actions != exported[-1].actions
    assert exported[-1].actions == results[-1].refined, "proven changes all kept"
    assert_no_proven_objection(exported, results, again)


def test_teach_games_exported_at_proven_verify_again_with_no_proven_objection(
    shared_dir: Path, tmp_path: Path
) -> None:
    games = list(load_episodes([shared_dir / "teach" / "games" / "valid_seen"]))[:60]
    corrupted = list(GENERATORS["injected"](games, seed=1))
    inputs = []
    for n, episode in enumerate(corrupted):  # every other one with its goal as text only
        data = episode.model_dump(mode="json", exclude_none=True)
        for key in (*ANNOTATION_KEYS, *(("teach_task",) if n % 2 else ())):
            data.pop(key, None)
        inputs.append(Episode.model_validate(data))
    results, curation, exported, again = export_and_verify_again(inputs, tmp_path)
    assert curation.restored > 0, "goal-text removals were undone"
    assert_no_proven_objection(exported, results, again)


def test_a_removal_resting_on_a_presumption_is_heuristic_even_with_a_scene_and_teach_task() -> None:
    # the apple is set back on a counter: the scene knows only that it stood on one of that
    # type, so "the same counter" is presumed; the apple taken to the table is simulated
    back = [PLAN[0], "Driver.PickUp('Apple')", "Driver.PutAOnB('Apple', 'CounterTop')", *PLAN[3:]]
    result = verify_plan(back, GOAL, scene=KITCHEN, teach_task=COFFEE, judge="rules")
    assert removed(result) == {1: "heuristic", 2: "heuristic"}
    away = verify_plan(PLAN, GOAL, scene=KITCHEN, teach_task=COFFEE, judge="rules")
    assert removed(away) == {1: "proven", 2: "proven"}


def test_a_turn_and_its_reverse_brought_together_by_a_removal_are_as_sure_as_the_removal() -> None:
    plan = [PLAN[0], "Driver.TurnLeft(90.0)", *PLAN[1:3], "Driver.TurnRight(90.0)", *PLAN[3:]]
    result = verify_plan(plan, GOAL, scene=KITCHEN, judge="rules")  # the goal read from text
    assert removed(result) == {1: "goal-text", 2: "goal-text", 3: "goal-text", 4: "goal-text"}
