"""A result always belongs to the input it claims to describe.

An episode's identity is its id, a digest of its content (goal, actions, scene, task, teach_task)
and the run settings: checkpoints, the partial output journal and `--retry-failed` reuse a
result only for exactly that input, whatever the id says.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from planverify import Episode, verify_many
from planverify.agents.base import JudgeReply
from planverify.cli import app
from planverify.records.critique import Critique, Flag
from planverify.records.episode import EpisodeError, Scene
from planverify.records.result import VerificationResult

from .conftest import ROOT

runner = CliRunner()
EXAMPLES = ROOT / "examples" / "episodes.jsonl"


class CountingJudge:
    """A Judge object that flags the first motion of the plan, and counts the plans it saw."""

    name = "counting"

    def __init__(self) -> None:
        self.seen: list[list[str]] = []

    async def ajudge(self, goal: str, plan: Sequence[str], scene: Scene | None) -> JudgeReply:
        self.seen.append(list(plan))
        moves = [i for i, line in enumerate(plan) if ".Move(" in line]
        return JudgeReply(
            Critique(flags=[Flag(step=i, action=plan[i], reason="a detour") for i in moves[:1]])
        )


def lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Run in a fresh folder, so the default checkpoint `.planverify/checkpoints.sqlite` is its."""
    monkeypatch.chdir(tmp_path)
    yield tmp_path


def test_corrupt_verify_twice_with_the_default_checkpoint_scores_each_seed_on_its_own_results(
    in_tmp: Path,
) -> None:
    for seed in (1, 2):
        made = runner.invoke(
            app,
            [
                "corrupt",
                str(EXAMPLES),
                "--seed",
                str(seed),
                "--clean-fraction",
                "0",
                "-o",
                f"a{seed}.jsonl",
            ],
        )
        assert made.exit_code == 0, made.output
        run = runner.invoke(app, ["verify", f"a{seed}.jsonl", "-o", f"r{seed}.jsonl"])
        assert run.exit_code == 0, run.output
        scored = runner.invoke(
            app, ["score", f"a{seed}.jsonl", f"r{seed}.jsonl", "--json", f"s{seed}.json"]
        )
        assert scored.exit_code == 0, scored.output
    annotated = {r["id"]: r for r in lines(in_tmp / "a2.jsonl")}
    for result in lines(in_tmp / "r2.jsonl"):
        assert result["original"] == annotated[result["id"]]["actions"], "seed 2's own plan"
        assert (
            result["input_digest"] == Episode.model_validate(annotated[result["id"]]).input_digest
        )
    # the same numbers as a run that never saw seed 1
    fresh = runner.invoke(app, ["verify", "a2.jsonl", "--no-checkpoint", "-o", "fresh.jsonl"])
    assert fresh.exit_code == 0
    assert (
        runner.invoke(app, ["score", "a2.jsonl", "fresh.jsonl", "--json", "f.json"]).exit_code == 0
    )
    mine, theirs = (
        orjson.loads((in_tmp / "s2.json").read_bytes()),
        orjson.loads((in_tmp / "f.json").read_bytes()),
    )
    assert mine["overall"] == theirs["overall"] and mine["overall"]["counts"]["tp"] > 0
    # seed 1's results against seed 2's annotations: an error naming the mismatch, never a table
    wrong = runner.invoke(app, ["score", "a2.jsonl", "r1.jsonl"])
    assert wrong.exit_code == 1
    assert "computed on other content than the annotated episodes" in wrong.stderr
    assert "TP" not in wrong.stdout


def test_a_changed_episode_under_the_same_id_is_verified_again_with_a_checkpoint(
    tmp_path: Path,
) -> None:
    judge = CountingJudge()
    plan = ["Driver.PickUp('Mug')", "Driver.Move(1.0)", "Driver.PutAOnB('Mug', 'Sink')"]
    first = Episode(id="e", goal="Put the mug in the sink.", actions=plan)
    checkpoint = tmp_path / "cp.sqlite"
    (a,) = verify_many([first], judge=judge, checkpoint=checkpoint)
    calls = len(judge.seen)
    (again,) = verify_many([first], judge=judge, checkpoint=checkpoint)
    assert len(judge.seen) == calls, "unchanged content: the stored result, no new Judge pass"
    assert again.model_dump(exclude={"cost_usd"}) == a.model_dump(exclude={"cost_usd"})

    for change in (
        {"actions": [*plan, "Driver.ToggleOn('Faucet')"]},
        {"goal": "Wash the mug."},
        {"task": "Clean All X"},
        {"teach_task": {"task_name": "Clean All X", "components": {}}},
        {"scene": {"objects": [{"id": "Mug|1", "type": "Mug", "name": "Mug"}]}},
    ):
        edited = Episode.model_validate({**first.model_dump(), **change})
        before = len(judge.seen)
        (result,) = verify_many([edited], judge=judge, checkpoint=checkpoint)
        assert len(judge.seen) > before, f"{change}: verified, not read back"
        assert result.input_digest == edited.input_digest != first.input_digest
        assert result.original == edited.actions and result.goal == edited.goal
        assert result.settings is not None and result.settings.judge == "counting"


def test_results_carry_their_digest_and_settings_and_annotations_are_not_input() -> None:
    plain = Episode.model_validate(orjson.loads(EXAMPLES.read_bytes().splitlines()[0]))
    annotated = Episode.model_validate(
        {**plain.model_dump(), "labels": [], "clean": plain.actions, "injected": []}
    )
    assert annotated.input_digest == plain.input_digest
    (a,) = verify_many([annotated], static=True, max_iterations=3)
    assert a.input_digest == plain.input_digest
    assert a.settings is not None
    assert (a.settings.judge, a.settings.mode, a.settings.max_iterations) == ("rules", "static", 3)
    assert a.settings.judge_version and a.settings.prompts


def test_the_partial_output_never_answers_for_other_content(tmp_path: Path) -> None:
    source = write(
        tmp_path / "in.jsonl",
        [{"id": "e", "goal": "Carry the mug.", "actions": ["Driver.Move(1.0)"]}],
    )
    out = tmp_path / "out.jsonl"
    assert (
        runner.invoke(app, ["verify", str(source), "--no-checkpoint", "-o", str(out)]).exit_code
        == 0
    )
    old = lines(out)[0]
    # an interrupted run left the journal of the old content behind
    journal = out.with_name("out.jsonl.partial")
    journal.write_bytes(
        orjson.dumps({"settings": old["settings"] and _key(old), "result": old}) + b"\n"
    )
    write(source, [{"id": "e", "goal": "Carry the mug.", "actions": ["Driver.Move(2.0)"]}])
    assert (
        runner.invoke(app, ["verify", str(source), "--no-checkpoint", "-o", str(out)]).exit_code
        == 0
    )
    (new,) = lines(out)
    assert new["original"] == ["Driver.Move(2.0)"] and new["input_digest"] != old["input_digest"]
    assert not journal.exists()


def _key(record: dict[str, Any]) -> str:
    return VerificationResult.model_validate(record).settings.key  # type: ignore[union-attr]


def test_retry_failed_keeps_only_results_of_this_content_and_these_settings(tmp_path: Path) -> None:
    records = [
        {"id": "a", "goal": "Carry the mug.", "actions": ["Driver.Move(1.0)", "Driver.Move(-1.0)"]},
        {"id": "b", "goal": "Carry the mug.", "actions": ["Driver.PickUp('Mug')"]},
    ]
    source = write(tmp_path / "in.jsonl", records)
    out = tmp_path / "out.jsonl"
    assert (
        runner.invoke(app, ["verify", str(source), "--no-checkpoint", "-o", str(out)]).exit_code
        == 0
    )
    first = {r["id"]: r for r in lines(out)}
    assert first["a"]["refined"] == []
    # the episode changes under its id, and the run is repeated with --retry-failed
    records[0]["actions"] = ["Driver.Move(1.0)"]
    write(source, records)
    args = ["verify", str(source), "--no-checkpoint", "-o", str(out), "--retry-failed"]
    assert runner.invoke(app, args).exit_code == 0
    second = {r["id"]: r for r in lines(out)}
    assert second["a"]["original"] == ["Driver.Move(1.0)"], "verified again: new content"
    assert second["b"] == first["b"], "unchanged content and settings: kept as it was"
    # other settings never reuse an ok record
    other = runner.invoke(app, [*args, "--judge", "baseline"])
    assert other.exit_code == 0
    assert {r["id"]: r for r in lines(out)}["b"]["settings"]["judge"] == "baseline"


def test_episode_errors_cross_process_boundaries_intact() -> None:
    error = EpisodeError("games/x.game.json", 0, "malformed JSON: unexpected end of data")
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.source, copy.line, copy.message, str(copy)) == (
        error.source,
        error.line,
        error.message,
        "games/x.game.json: malformed JSON: unexpected end of data",
    )


def test_score_reads_static_results_as_static_even_without_objections(tmp_path: Path) -> None:
    annotated = tmp_path / "a.jsonl"
    made = runner.invoke(app, ["corrupt", str(EXAMPLES), "--seed", "1", "-o", str(annotated)])
    assert made.exit_code == 0
    results = tmp_path / "static.jsonl"
    run = runner.invoke(
        app, ["verify", str(annotated), "--static", "--no-checkpoint", "-o", str(results)]
    )
    assert run.exit_code == 0
    records = lines(results)
    assert {r["stop_reason"] for r in records} == {"static"}, "whatever the Judge said"
    assert any(not r["history"][0]["critique"]["flags"] for r in records), "a clean verdict too"
    auto = runner.invoke(
        app, ["score", str(annotated), str(results), "--json", str(tmp_path / "auto.json")]
    )
    forced = runner.invoke(
        app,
        [
            "score",
            str(annotated),
            str(results),
            "--mode",
            "static",
            "--json",
            str(tmp_path / "s.json"),
        ],
    )
    assert auto.exit_code == forced.exit_code == 0
    auto_report = orjson.loads((tmp_path / "auto.json").read_bytes())
    assert auto_report["mode"] == "static"
    assert auto_report["overall"] == orjson.loads((tmp_path / "s.json").read_bytes())["overall"]
    # a file mixing both kinds is refused in auto mode
    iterative = tmp_path / "it.jsonl"
    assert (
        runner.invoke(
            app, ["verify", str(annotated), "--no-checkpoint", "-o", str(iterative)]
        ).exit_code
        == 0
    )
    mixed = write(tmp_path / "mixed.jsonl", [*records[:5], *lines(iterative)[5:]])
    refused = runner.invoke(app, ["score", str(annotated), str(mixed)])
    assert refused.exit_code == 2 and "mix static and iterative" in refused.stderr


def test_score_refuses_files_that_do_not_belong_together_and_warns_on_a_partial_overlap(
    tmp_path: Path,
) -> None:
    annotated = tmp_path / "a.jsonl"
    assert (
        runner.invoke(
            app, ["corrupt", str(EXAMPLES), "--seed", "4", "-o", str(annotated)]
        ).exit_code
        == 0
    )
    results = tmp_path / "r.jsonl"
    assert (
        runner.invoke(
            app, ["verify", str(annotated), "--no-checkpoint", "-o", str(results)]
        ).exit_code
        == 0
    )
    others = write(tmp_path / "o.jsonl", [{**r, "id": f"other-{r['id']}"} for r in lines(results)])
    none = runner.invoke(app, ["score", str(annotated), str(others)])
    assert none.exit_code == 1
    assert "share no episode id (10 result(s), 10 annotated episode(s))" in " ".join(
        none.stderr.split()
    )
    assert none.stdout == ""
    part = write(tmp_path / "p.jsonl", lines(results)[:7])
    partial = runner.invoke(
        app, ["score", str(annotated), str(part), "--json", str(tmp_path / "p.json")]
    )
    assert partial.exit_code == 0
    assert "3 annotated episode(s) have no result and are left out" in " ".join(
        partial.stderr.split()
    )
    assert orjson.loads((tmp_path / "p.json").read_bytes())["overall"]["episodes"] == 7
