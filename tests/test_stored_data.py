"""Stores and results written by earlier code still read back: `show` restores models, `export`
and `review` work, and a resume under the same settings finds the stored threads."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import orjson
from typer.testing import CliRunner

from planverify.cli import app
from planverify.graphs.context import VerifierContext
from planverify.graphs.state import PlanState
from planverify.records.critique import Critique
from planverify.records.episode import Scene
from planverify.records.history import Iteration, Step
from planverify.stores.checkpoints import episode_threads, load_history
from planverify.stores.serde import state_serializer

from .conftest import ROOT

STORED = ROOT / "tests" / "fixtures" / "stored"
EXAMPLES = ROOT / "examples" / "episodes.jsonl"
IDS = ["coffee-detour", "clean-plate-fridge", "water-plant-microwave"]
runner = CliRunner()


def threads(store: Path) -> set[str]:
    with sqlite3.connect(store) as db:
        return {row[0] for row in db.execute("SELECT DISTINCT thread_id FROM checkpoints")}


def stored_results() -> list[dict[str, object]]:
    return [orjson.loads(line) for line in (STORED / "results.jsonl").read_bytes().splitlines()]


def test_a_stored_run_restores_the_states_models() -> None:
    results = {r["id"]: r for r in stored_results()}
    for episode in IDS:
        (thread,) = episode_threads(STORED / "checkpoints.sqlite", episode)
        run = load_history(STORED / "checkpoints.sqlite", thread)
        assert isinstance(run.state, PlanState) and run.settings is not None
        assert run.state.plan and all(type(step) is Step for step in run.state.plan)
        assert [step.action for step in run.state.plan] == results[episode]["refined"]


def test_every_stored_value_restores_as_the_model_it_was() -> None:
    serializer = state_serializer()
    with sqlite3.connect(STORED / "checkpoints.sqlite") as db:
        stored = db.execute("SELECT type, checkpoint FROM checkpoints").fetchall()
        writes = db.execute("SELECT channel, type, value FROM writes").fetchall()
    for kind, blob in stored:
        values = serializer.loads_typed((kind, blob))["channel_values"]
        assert all(type(step) is Step for step in values.get("plan", []))
        assert all(type(record) is Iteration for record in values.get("history", []))
        assert type(values.get("scene")) in (Scene, type(None))
    models = {"plan": Step, "history": Iteration, "scene": Scene, "pending": Critique}
    for channel, kind, blob in writes:
        value = serializer.loads_typed((kind, blob))
        if channel in models and value:
            items = value if isinstance(value, list) else [value]
            assert all(type(item) is models[channel] for item in items), channel


def test_show_prints_a_stored_runs_critiques(tmp_path: Path) -> None:
    store = shutil.copy(STORED / "checkpoints.sqlite", tmp_path / "checkpoints.sqlite")
    shown = runner.invoke(app, ["show", "coffee-detour", "--checkpoint", str(store)])
    assert shown.exit_code == 0, shown.output
    assert "judge rules" in shown.output and "remove" in shown.output.lower()


def test_stored_results_export_and_review(tmp_path: Path) -> None:
    out = tmp_path / "clean.jsonl"
    exported = runner.invoke(
        app,
        ["export", str(STORED / "results.jsonl"), "--episodes", str(EXAMPLES), "-o", str(out)],
    )
    assert exported.exit_code == 0, exported.output
    cleaned = {r["id"]: r for r in map(orjson.loads, out.read_bytes().splitlines())}
    assert {r["id"]: r["refined"] for r in stored_results()} == {
        i: cleaned[i]["actions"] for i in IDS
    }
    site = tmp_path / "site"
    built = runner.invoke(app, ["review", str(STORED / "results.jsonl"), "--html", str(site)])
    assert built.exit_code == 0, built.output
    assert (site / "index.html").is_file()


def test_a_resume_finds_the_stored_threads_unless_the_judge_changed(tmp_path: Path) -> None:
    store = Path(shutil.copy(STORED / "checkpoints.sqlite", tmp_path / "checkpoints.sqlite"))
    before = threads(store)
    stored_key = {thread.split("#")[1].split(".")[0] for thread in before}
    out = tmp_path / "results.jsonl"
    args = ["verify", str(EXAMPLES), "--limit", "3", "--checkpoint", str(store), "-o", str(out)]
    assert runner.invoke(app, args).exit_code == 0
    added = threads(store) - before
    if stored_key == {VerifierContext().settings().key}:
        assert not added  # the same settings: every episode came from its stored thread
    else:  # a Judge version changed since: verified afresh, as the identity rule says
        assert len(added) == len(IDS)
