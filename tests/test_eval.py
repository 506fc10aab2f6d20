"""`planverify eval`: the grid, convergence, the cache, the report files and the offline
LangSmith evaluators."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from langchain_core.globals import set_llm_cache
from typer.testing import CliRunner

from planverify import verify_plan
from planverify.cli import app
from planverify.episode import Episode, Label
from planverify.eval.cache import SQLiteCache
from planverify.eval.convergence import convergence
from planverify.eval.grid import plan_runs
from planverify.eval.smith import example_scores, summary_scores
from planverify.result import VerificationResult

from .conftest import ROOT, scripted

ANNOTATED = ROOT / "examples" / "annotated.jsonl"
PNG = b"\x89PNG\r\n\x1a\n"


def test_the_grid_runs_static_once_per_judge_and_every_pair_iteratively() -> None:
    runs = plan_runs(["a", "b"], ["p", "q"], ["static", "iterative"])
    assert runs == [
        ("a", "-", "static"),
        ("b", "-", "static"),
        ("a", "p", "iterative"),
        ("a", "q", "iterative"),
        ("b", "p", "iterative"),
        ("b", "q", "iterative"),
    ]


def test_convergence_figures_on_a_hand_made_set() -> None:
    runs = [
        VerificationResult(
            id="a", original=["x"] * 4, refined=["x"] * 4, revisions=0, stop_reason="no_objections"
        ),
        VerificationResult(
            id="b", original=["x"] * 4, refined=["x"] * 2, revisions=1, stop_reason="no_objections"
        ),
        VerificationResult(
            id="c", original=["x"] * 2, refined=[], revisions=3, stop_reason="max_iterations"
        ),
        VerificationResult.failed("d", ["x"], "boom"),
    ]
    flow = convergence(runs)
    assert flow.episodes == 3
    assert flow.final_after == pytest.approx([1 / 3, 2 / 3, 2 / 3, 1.0])
    assert flow.stop_reasons == {"no_objections": 2, "max_iterations": 1}
    assert flow.mean_length_reduction == pytest.approx((0 + 0.5 + 1.0) / 3)


def test_executability_uses_the_simulator() -> None:
    ok = VerificationResult(
        id="ok", refined=["Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'Sink')"]
    )
    bad = VerificationResult(id="bad", refined=["Driver.PutAOnB('Mug', 'Sink')"])
    episodes = {e: Episode(id=e, actions=[]) for e in ("ok", "bad")}
    assert convergence([ok, bad], episodes).executable == 0.5


def test_the_cache_answers_a_rerun_without_the_model(tmp_path: Path) -> None:
    cache = SQLiteCache(tmp_path / "cache.sqlite")
    set_llm_cache(cache)
    try:
        first = verify_plan(
            ["Driver.Move(1.0)"],
            "Walk.",
            judge=scripted("ACTION: 1. Driver.Move(1.0)\nANNOTATION: fine"),
        )
        again = verify_plan(["Driver.Move(1.0)"], "Walk.", judge=scripted())  # no replies left
    finally:
        set_llm_cache(None)
        cache.close()
    assert first.status == again.status == "ok", again.error
    assert (cache.hits, cache.misses) == (1, 1)


def test_langsmith_evaluators_offline() -> None:
    episode = Episode(
        id="e",
        actions=["Driver.Move(1.0)", "Driver.Move(-1.0)", "Driver.PickUp('Mug')"],
        labels=[Label(type="REMOVE", index=0), Label(type="REMOVE", index=1)],
    )
    result = verify_plan(episode.actions, "Take the mug.", id="e")
    scores = example_scores(episode, result)
    assert scores == {"tp": 2, "fp": 0, "fn": 0}
    assert summary_scores([scores, {"tp": 0, "fp": 1, "fn": 2}]) == {
        "recall": 0.5,
        "precision": pytest.approx(2 / 3),
        "f1": pytest.approx(4 / 7),
    }


def test_eval_writes_the_report_with_tables_plots_and_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    report = tmp_path / "report"
    result = CliRunner().invoke(
        app,
        [
            "eval",
            str(ANNOTATED),
            "--judge",
            "rules",
            "--judge",
            "baseline",
            "--report",
            str(report),
            "--langsmith-dataset",
            "sample",
        ],
    )
    assert result.exit_code == 0, result.output
    text = (report / "report.md").read_text(encoding="utf-8")
    for heading in (
        "Static: one Judge pass",
        "Judge x Planner",
        "Convergence",
        "Recall per error type",
    ):
        assert heading in text
    for png in ("grid.png", "convergence.png", "errors.png"):
        data = (report / png).read_bytes()
        assert data.startswith(PNG) and len(data) > 5_000
        assert f"({png})" in text
    numbers = orjson.loads((report / "results.json").read_bytes())
    assert [(r["judge"], r["planner"], r["mode"]) for r in numbers["runs"]] == [
        ("rules", "-", "static"),
        ("baseline", "-", "static"),
        ("rules", "rules", "iterative"),
        ("baseline", "rules", "iterative"),
    ]
    rules = numbers["runs"][2]["report"]["overall"]
    assert rules["recall"] > numbers["runs"][3]["report"]["overall"]["recall"]
    assert len(numbers["runs"][2]["report"]["episodes"]) == 10
    assert "ran locally (no LANGSMITH_API_KEY)" in result.stdout
    assert (tmp_path / ".planverify" / "model-cache.sqlite").exists()


def test_eval_refuses_unlabelled_data_and_bad_modes(tmp_path: Path) -> None:
    runner = CliRunner()
    plain = runner.invoke(
        app, ["eval", str(ROOT / "examples" / "episodes.jsonl"), "--report", str(tmp_path)]
    )
    assert plain.exit_code == 2 and "has no labels" in plain.stderr
    mode = runner.invoke(
        app, ["eval", str(ANNOTATED), "--mode", "sideways", "--report", str(tmp_path)]
    )
    assert mode.exit_code == 2 and "--mode must be" in mode.stderr
    spec = runner.invoke(
        app, ["eval", str(ANNOTATED), "--judge", "nope", "--report", str(tmp_path)]
    )
    assert spec.exit_code == 2 and "unknown model spec 'nope'" in spec.stderr


async def test_the_grid_runs_fake_model_judges_next_to_offline_ones() -> None:
    from planverify.eval.grid import arun_grid

    episode = Episode(
        id="g",
        goal="Take the mug.",
        actions=["Driver.Move(1.0)", "Driver.PickUp('Mug')"],
        labels=[Label(type="REMOVE", index=0, error="cancelling_navigation")],
    )
    flag_move = "ACTION: 1. Driver.Move(1.0)\nANNOTATION: #REMOVE: not needed\nACTION: 2. Driver.PickUp('Mug')\nANNOTATION: fine"
    fake = scripted(flag_move, flag_move, "ACTION: 1. Driver.PickUp('Mug')\nANNOTATION: fine")
    cells = await arun_grid([episode], judges=[fake, "baseline"], planners=["rules"])
    assert [(c.judge, c.planner, c.mode) for c in cells] == [
        ("ScriptedChatModel", "-", "static"),
        ("baseline", "-", "static"),
        ("ScriptedChatModel", "rules", "iterative"),
        ("baseline", "rules", "iterative"),
    ]
    recall = [c.report.overall.recall for c in cells]
    assert recall == [1.0, 0.0, 1.0, 0.0]
    assert cells[2].convergence.final_after == [0.0, 1.0]
