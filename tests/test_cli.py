"""The command line: exit codes, one-line errors, outputs in input order, show and presets."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from planverify.cli import app
from planverify.llm.models import parse_spec
from planverify.records.result import VerificationResult

from .conftest import ROOT

EXAMPLES = ROOT / "examples" / "episodes.jsonl"
runner = CliRunner()

PLAN = [
    "Driver.PickUp('Mug')",
    "Driver.Move(0.5)",
    "Driver.Move(-0.5)",
    "Driver.PutAOnB('Mug', 'Sink')",
]


def jsonl(path: Path, *records: dict[str, object] | str) -> Path:
    lines = [r if isinstance(r, str) else orjson.dumps(r).decode() for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def read_results(path: Path) -> list[VerificationResult]:
    return [VerificationResult.model_validate_json(line) for line in path.read_bytes().splitlines()]


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY", "GROQ_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_verify_writes_one_record_per_episode_in_input_order(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    result = runner.invoke(app, ["verify", str(EXAMPLES), "--no-checkpoint", "-o", str(out)])
    assert result.exit_code == 0, result.output
    ids = [orjson.loads(line)["id"] for line in EXAMPLES.read_bytes().splitlines()]
    results = read_results(out)
    assert [r.id for r in results] == ids
    assert all(r.status == "ok" and len(r.verdicts) == len(r.original) for r in results)
    assert not (tmp_path / "results.jsonl.partial").exists()
    assert "episodes" in result.stdout and "10 ok" in result.stdout


def test_bad_lines_are_reported_and_the_rest_is_verified(tmp_path: Path) -> None:
    source = jsonl(
        tmp_path / "in.jsonl",
        {"id": "a", "goal": "Put the mug in the sink.", "actions": PLAN},
        "{broken",
        {"id": "b", "actions": ["no action here"]},
        {"id": "c", "goal": "Odd.", "actions": ["Driver.Teleport('Kitchen')"]},
        {"id": "d", "goal": "Nothing to do.", "actions": []},
    )
    out = tmp_path / "out.jsonl"
    result = runner.invoke(app, ["verify", str(source), "--no-checkpoint", "-o", str(out)])
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("skipped")]
    assert len(errors) == 2
    assert f"{source}:2: malformed JSON" in errors[0]
    assert f"{source}:3: actions: action 1: not an action" in errors[1]
    by_id = {r.id: r for r in read_results(out)}
    assert set(by_id) == {"a", "c", "d"}
    assert by_id["a"].refined == ["Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'Sink')"]
    assert by_id["c"].refined == ["Driver.Teleport('Kitchen')"]
    assert "unknown verb 'Teleport'" in by_id["c"].warnings[0]
    assert by_id["d"].status == "ok" and by_id["d"].refined == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--judge", "gpt-4o"], "unknown model spec 'gpt-4o'"),
        (["--judge", "groq:llama-x"], "needs an API key: set GROQ_API_KEY"),
        (["--planner", "o4-mini"], "needs an API key: set OPENAI_API_KEY"),
        (["--judge", "rule"], "unknown model spec 'rule': did you mean 'rules'?"),
        (["--planner", "rule"], "unknown model spec 'rule': did you mean 'rules'?"),
        (["--judge", "baseline1"], "did you mean 'baseline'?"),
        (
            ["--judge", "o4-mini"],
            f"preset 'o4-mini' ({parse_spec('o4-mini').name}) needs an API key",
        ),
        (["--goal", "infer"], "--goal infer needs a model planner"),
        (["--server", "http://127.0.0.1:9"], "with --server the server keeps the checkpoints"),
        (["--server", "http://127.0.0.1:9", "--review"], "--review works with local runs only"),
        (["--review"], "--review needs an interactive terminal"),
        (["--grounding"], "--grounding is for model judges; the 'rules' judge"),
    ],
)
def test_setting_errors_stop_before_any_work(tmp_path: Path, args: list[str], message: str) -> None:
    out = tmp_path / "out.jsonl"
    result = runner.invoke(app, ["verify", str(EXAMPLES), "--no-checkpoint", "-o", str(out), *args])
    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_duplicate_ids_and_missing_files(tmp_path: Path) -> None:
    twice = jsonl(
        tmp_path / "twice.jsonl", {"id": "a", "actions": PLAN}, {"id": "a", "actions": PLAN}
    )
    out = tmp_path / "out.jsonl"
    result = runner.invoke(app, ["verify", str(twice), "--no-checkpoint", "-o", str(out)])
    assert result.exit_code == 1 and "'a' appears more than once" in result.stderr
    assert f"{twice}:2: episode id 'a' appears more than once (first at {twice}:1)" in " ".join(
        result.stderr.split()
    )
    assert [r.id for r in read_results(out)] == ["a"]
    result = runner.invoke(app, ["verify", str(tmp_path / "nope.jsonl"), "--no-checkpoint"])
    assert result.exit_code == 2, "a missing input is a usage error, found before any work"
    assert "no such file or directory:" in result.stderr and "nope.jsonl" in result.stderr


def test_goal_from_dialogue_uses_the_commander(tmp_path: Path) -> None:
    source = jsonl(
        tmp_path / "in.jsonl",
        {
            "id": "a",
            "goal": "ignored",
            "actions": ["Commander.Say('Rinse the mug.')", "Driver.Say('ok')", *PLAN],
        },
    )
    out = tmp_path / "out.jsonl"
    result = runner.invoke(
        app, ["verify", str(source), "--no-checkpoint", "--goal", "dialogue", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert read_results(out)[0].goal == "Rinse the mug."


def test_static_mode_keeps_the_plan_and_reports_proposals(tmp_path: Path) -> None:
    source = jsonl(
        tmp_path / "in.jsonl", {"id": "a", "goal": "Put the mug in the sink.", "actions": PLAN}
    )
    out = tmp_path / "out.jsonl"
    result = runner.invoke(
        app, ["verify", str(source), "--no-checkpoint", "--static", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    (res,) = read_results(out)
    assert res.refined == PLAN and res.stop_reason == "static"
    assert [v.verdict for v in res.verdicts] == ["keep", "remove", "remove", "keep"]


def test_checkpoints_are_reused_and_shown(tmp_path: Path) -> None:
    db = tmp_path / "cp.sqlite"
    source = jsonl(
        tmp_path / "in.jsonl",
        {"id": "mug-run", "goal": "Put the mug in the sink.", "actions": PLAN},
    )
    out1, out2 = tmp_path / "1.jsonl", tmp_path / "2.jsonl"
    for out in (out1, out2):
        result = runner.invoke(
            app, ["verify", str(source), "--checkpoint", str(db), "-o", str(out)]
        )
        assert result.exit_code == 0, result.output
    assert out1.read_bytes() == out2.read_bytes()

    shown = runner.invoke(app, ["show", "mug-run", "--checkpoint", str(db)])
    assert shown.exit_code == 0, shown.output
    assert "Judge pass 1" in shown.stdout and "Judge pass 2" in shown.stdout
    assert "remove  2. Driver.Move(0.5)" in shown.stdout
    assert "stop: no_objections" in shown.stdout

    other = runner.invoke(
        app, ["verify", str(source), "--checkpoint", str(db), "--max-iterations", "1"]
    )
    assert other.exit_code == 0
    shown = runner.invoke(app, ["show", "mug-run", "--checkpoint", str(db)])
    assert shown.stdout.count("thread mug-run#") == 2
    labels = [line for line in shown.stdout.splitlines() if "mug-run: judge rules" in line]
    assert len(labels) == 2, shown.stdout
    assert labels[0].endswith("planner rules, iterative, cap 5")
    assert labels[1].endswith("cap 1")

    missing = runner.invoke(app, ["show", "nope", "--checkpoint", str(db)])
    assert missing.exit_code == 2 and "'nope' is not in" in missing.stderr
    no_file = runner.invoke(app, ["show", "x", "--checkpoint", str(tmp_path / "none.sqlite")])
    assert no_file.exit_code == 2 and "no checkpoint file" in no_file.stderr


def test_show_tells_runs_of_two_inputs_apart_by_digest_and_start_time(tmp_path: Path) -> None:
    """Two inputs with one id, verified under the same settings: their runs' headers differ,
    and nothing in them is cut to the terminal's width."""
    from planverify.records.episode import Episode
    from planverify.stores.checkpoints import episode_threads, load_history

    db = tmp_path / "cp.sqlite"
    goals = ["Put the mug in the sink.", "Put the mug in the sink, then leave it there."]
    digests = []
    for n, goal in enumerate(goals):
        record = {"id": "mug-run", "goal": goal, "actions": PLAN}
        digests.append(Episode.model_validate(record).input_digest)
        source = jsonl(tmp_path / f"in{n}.jsonl", record)
        assert runner.invoke(app, ["verify", str(source), "--checkpoint", str(db)]).exit_code == 0
    shown = runner.invoke(app, ["show", "mug-run", "--checkpoint", str(db)], env={"COLUMNS": "50"})
    assert shown.exit_code == 0, shown.output
    headers = shown.stdout.split("Judge pass 1")[:2]
    assert headers[0] != headers[1]
    starts = [load_history(db, t).started for t in episode_threads(db, "mug-run")]
    for header, digest, started in zip(headers, digests, starts, strict=True):
        whole = "".join(header.split())  # folded lines joined back
        assert f"inputdigest{digest}" in whole
        assert started is not None
        assert "started" + started[:19].replace("T", "") + "UTC" in whole, header
        assert "…" not in header


def test_presets_are_listed() -> None:
    result = runner.invoke(app, ["presets"])
    assert result.exit_code == 0
    for name in ("o4-mini", "deepseek-r1", "gemini-2.5", "llama-4-scout"):
        assert name in result.stdout


@pytest.mark.parametrize("command", ["verify", "show", "presets"])
def test_every_command_has_help(command: str) -> None:
    result = runner.invoke(app, [command, "--help"])
    assert result.exit_code == 0
    assert "Usage:" in result.stdout
    doc = app.registered_commands
    assert any((c.name or c.callback.__name__) == command and c.callback.__doc__ for c in doc)  # type: ignore[union-attr]


def tiny_game(episode_id: str, *, task: str = "Coffee") -> dict[str, object]:
    """A minimal TEACh game: two forward steps and a mug pick-up."""
    events = [
        {"agent_id": 1, "action_id": 2, "time_start": 1.0, "success": 1},
        {"agent_id": 1, "action_id": 2, "time_start": 2.0, "success": 1},
        {"agent_id": 1, "action_id": 200, "time_start": 3.0, "success": 1, "oid": "Mug|+1|+2|+3"},
    ]
    episode = {"episode_id": episode_id, "interactions": events}
    return {
        "tasks": [
            {"task_name": task, "desc": "Prepare coffee in a clean mug.", "episodes": [episode]}
        ]
    }


def test_convert_and_verify_read_teach_games_dirs_and_globs(tmp_path: Path) -> None:
    for split, name in [("train", "g1"), ("valid_seen", "g2"), ("valid_seen", "g3")]:
        (tmp_path / "games" / split).mkdir(parents=True, exist_ok=True)
        path = tmp_path / "games" / split / f"{name}.game.json"
        path.write_bytes(orjson.dumps(tiny_game(f"ep-{name}")))
    (tmp_path / "games" / "valid_seen" / "bad.game.json").write_text("{oops", encoding="utf-8")

    out = tmp_path / "episodes.jsonl"
    result = runner.invoke(
        app, ["convert", str(tmp_path / "games"), "--split", "valid_seen", "-o", str(out)]
    )
    assert result.exit_code == 1  # one unreadable file, reported; the rest converted
    assert "bad.game.json: malformed JSON" in result.stderr.replace("\n", "")
    assert "read 2 game(s), skipped 1" in result.stdout
    records = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert [(r["id"], r["split"], r["actions"]) for r in records] == [
        ("ep-g2", "valid_seen", ["Driver.Move(0.5)", "Driver.PickUp('Mug')"]),
        ("ep-g3", "valid_seen", ["Driver.Move(0.5)", "Driver.PickUp('Mug')"]),
    ]

    results = tmp_path / "results.jsonl"
    pattern = str(tmp_path / "games" / "*" / "g*.game.json")
    result = runner.invoke(
        app, ["verify", pattern, "--no-checkpoint", "--limit", "2", "-o", str(results)]
    )
    assert result.exit_code == 0, result.output
    assert [r.id for r in read_results(results)] == ["ep-g1", "ep-g2"]
    assert read_results(results)[0].goal == "Prepare coffee in a clean mug."


def test_verify_reads_the_shared_teach_split(shared_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    games = shared_dir / "teach" / "games"
    result = runner.invoke(
        app,
        [
            "verify",
            str(games),
            "--split",
            "valid_seen",
            "--limit",
            "5",
            "--no-checkpoint",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    results = read_results(out)
    assert len(results) == 5 and all(r.status == "ok" for r in results)
    assert all(len(r.verdicts) == len(r.original) > 0 for r in results)


def test_corrupt_then_verify_then_score(tmp_path: Path) -> None:
    annotated = tmp_path / "annotated.jsonl"
    args = ["corrupt", str(EXAMPLES), "--seed", "3", "--clean-fraction", "0", "-o", str(annotated)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "read 10" in result.stdout
    again = tmp_path / "again.jsonl"
    runner.invoke(app, [*args[:-1], str(again)])
    assert again.read_bytes() == annotated.read_bytes(), "same seed, same file"
    records = [orjson.loads(line) for line in annotated.read_bytes().splitlines()]
    assert all(r["labels"] for r in records)

    results = tmp_path / "results.jsonl"
    verified = runner.invoke(app, ["verify", str(annotated), "--no-checkpoint", "-o", str(results)])
    assert verified.exit_code == 0, verified.output
    report = tmp_path / "report.json"
    scored = runner.invoke(app, ["score", str(annotated), str(results), "--json", str(report)])
    assert scored.exit_code == 0, scored.output
    assert "iterative scores, 10 episodes" in scored.stdout
    overall = orjson.loads(report.read_bytes())["overall"]
    assert overall["counts"]["tp"] > 0 and 0 < overall["recall"] <= 1


def test_score_rejects_bad_arguments(tmp_path: Path) -> None:
    annotated = ROOT / "examples" / "annotated.jsonl"
    bad = runner.invoke(app, ["score", str(annotated), str(tmp_path / "none.jsonl")])
    assert bad.exit_code == 2 and "no such file" in bad.stderr
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text(
        '{"id": 1, "original": [], "refined": [], "verdicts": []}\nnot json\n', encoding="utf-8"
    )
    bad = runner.invoke(app, ["score", str(annotated), str(garbage)])
    assert (
        bad.exit_code == 2
        and "garbage.jsonl:1: not a result record (id: Input should be a valid string)"
        in bad.stderr.replace("\n", "")
    )
    mode = runner.invoke(app, ["score", str(EXAMPLES), str(garbage), "--mode", "both"])
    assert mode.exit_code == 2 and "Invalid value for '--mode'" in mode.stderr
    errors = runner.invoke(
        app, ["corrupt", str(EXAMPLES), "--errors-per-episode", "3..1", "-o", str(tmp_path / "x")]
    )
    assert errors.exit_code == 2 and "LOW..HIGH" in errors.stderr


def test_retry_failed_keeps_ok_records_and_redoes_the_rest(tmp_path: Path) -> None:
    source = jsonl(
        tmp_path / "in.jsonl",
        {"id": "a", "goal": "Put the mug in the sink.", "actions": PLAN},
        {"id": "b", "goal": "Put the mug in the sink.", "actions": PLAN},
    )
    out = tmp_path / "out.jsonl"
    first = runner.invoke(app, ["verify", str(source), "--no-checkpoint", "-o", str(out)])
    assert first.exit_code == 0
    records = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    records[0]["refined"] = ["kept as it was"]  # marks the ok record that must be kept
    records[1].update(status="error", error="boom")
    out.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    retried = runner.invoke(
        app, ["verify", str(source), "--no-checkpoint", "--retry-failed", "-o", str(out)]
    )
    assert retried.exit_code == 0, retried.output
    a, b = read_results(out)
    assert a.refined == ["kept as it was"]
    assert b.status == "ok" and b.refined == [PLAN[0], PLAN[3]]
    missing = runner.invoke(
        app, ["verify", str(source), "--retry-failed", "-o", str(tmp_path / "no.jsonl")]
    )
    assert missing.exit_code == 2 and "--retry-failed needs" in missing.stderr


def test_corrupt_natural_then_score_plan_level(tmp_path: Path) -> None:
    annotated = tmp_path / "natural.jsonl"
    args = ["corrupt", str(EXAMPLES), "--generator", "natural", "--seed", "2", "-o", str(annotated)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    again = tmp_path / "again.jsonl"
    runner.invoke(app, [*args[:-1], str(again)])
    assert again.read_bytes() == annotated.read_bytes(), "same seed, same file"
    records = [orjson.loads(line) for line in annotated.read_bytes().splitlines()]
    assert len(records) == 10 and all("clean" in r and "injected" in r for r in records)
    results = tmp_path / "results.jsonl"
    verified = runner.invoke(app, ["verify", str(annotated), "--no-checkpoint", "-o", str(results)])
    assert verified.exit_code == 0, verified.output
    report = tmp_path / "report.json"
    scored = runner.invoke(app, ["score", str(annotated), str(results), "--json", str(report)])
    assert scored.exit_code == 0, scored.output
    assert "plan, with motion" in scored.stdout and "labels, without motion" in scored.stdout
    data = orjson.loads(report.read_bytes())
    assert data["mode"] == "iterative" and "counts" in data["overall"]
    assert set(data["plan_level"]) == {"with_motion", "without_motion"}
    assert data["without_motion"]["episodes"] == 10
    bad = runner.invoke(app, ["corrupt", str(EXAMPLES), "--generator", "llm", "-o", str(again)])
    assert bad.exit_code == 2 and "Invalid value for '--generator'" in bad.stderr


def test_a_json_file_that_is_no_teach_game_is_named_for_what_it_is(tmp_path: Path) -> None:
    """Any `.json` input is read as a TEACh game; one without `tasks` is refused before any work
    with what it is and what was expected, not `missing key: tasks` from deep in the reader."""
    config = tmp_path / "langgraph.json"
    config.write_text('{"graphs": {"verifier": "graphs/graph.py:graph"}}', encoding="utf-8")
    refused = runner.invoke(app, ["verify", str(config), "--no-checkpoint"])
    assert refused.exit_code == 2, refused.output
    assert f"{config} is not a TEACh game: it has no `tasks` list" in refused.stderr
    assert "expected *.jsonl episodes" in refused.stderr and "*.game.json" in refused.stderr
    assert "missing key" not in refused.output
    converted = runner.invoke(app, ["convert", str(config), "-o", str(tmp_path / "x.jsonl")])
    assert converted.exit_code == 2 and "expected TEACh *.game.json files" in converted.stderr

    named_json = jsonl(tmp_path / "plans.json", {"id": "a", "actions": PLAN})
    wrong_name = runner.invoke(app, ["verify", str(named_json), "--no-checkpoint"])
    assert wrong_name.exit_code == 2 and "(name it plans.jsonl)" in wrong_name.stderr

    game = {
        "tasks": [
            {
                "task_name": "Coffee",
                "desc": "Prepare coffee in a clean mug.",
                "episodes": [
                    {
                        "episode_id": "e1",
                        "interactions": [
                            {"agent_id": 1, "action_id": 2, "time_start": 1.0, "success": 1}
                        ],
                    }
                ],
            }
        ]
    }
    (tmp_path / "game.json").write_bytes(orjson.dumps(game))
    read = runner.invoke(app, ["verify", str(tmp_path / "game.json"), "--no-checkpoint"])
    assert read.exit_code == 0, read.output


def test_show_finds_the_demo_store_and_says_each_removal_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Right after `make demo` (whose store is `.planverify/demo/`), `show ID` without
    --checkpoint finds the episode; one run is shown without digests or thread ids, each
    removal on one line with its step, and a reason two neighbours share said once."""
    monkeypatch.chdir(tmp_path)
    nothing = runner.invoke(app, ["show", "coffee-detour"])
    assert nothing.exit_code == 2
    assert "no checkpoint file at .planverify/checkpoints.sqlite" in nothing.stderr
    assert ".planverify/demo" in nothing.stderr and "--checkpoint" in nothing.stderr

    demo = Path(".planverify") / "demo" / "checkpoints.sqlite"
    made = runner.invoke(app, ["verify", str(EXAMPLES), "--checkpoint", str(demo)])
    assert made.exit_code == 0, made.output
    shown = runner.invoke(app, ["show", "coffee-detour"])
    assert shown.exit_code == 0, shown.output
    assert str(demo) in shown.stderr
    lines = shown.stdout.splitlines()
    assert "  remove  5. Driver.PickUp('Apple')" in lines
    assert "  remove  6. Driver.PutAOnB('Apple', 'DiningTable')" in lines
    assert sum("Driver.PickUp('Apple')" in line for line in lines) == 1
    assert sum("Driver.Move(0.5) is undone" in line for line in lines) == 1
    assert not [line for line in lines if "digest" in line or "thread" in line]
    missing = runner.invoke(app, ["show", "nope"])
    assert missing.exit_code == 2 and f"'nope' is not in {demo}" in missing.stderr


def test_a_run_without_an_output_says_where_its_results_are(tmp_path: Path) -> None:
    db = tmp_path / "cp.sqlite"
    stored = runner.invoke(app, ["verify", str(EXAMPLES), "--checkpoint", str(db)])
    assert stored.exit_code == 0, stored.output
    (note,) = [line for line in stored.stderr.splitlines() if line.startswith("note:")]
    assert "no results file was written (no -o)" in note
    assert f"checkpoint store {db}" in note and f"planverify show ID --checkpoint {db}" in note
    assert "add -o results.jsonl" in note
    kept_nothing = runner.invoke(app, ["verify", str(EXAMPLES), "--no-checkpoint"])
    assert "--no-checkpoint kept nothing: add -o results.jsonl" in kept_nothing.stderr
    written = runner.invoke(
        app, ["verify", str(EXAMPLES), "--no-checkpoint", "-o", str(tmp_path / "r.jsonl")]
    )
    assert written.exit_code == 0 and "note:" not in written.stderr
