"""Bad input never crashes a batch nor costs finished work, and every message says what it
means: usage errors before any work, skipped sources named, text shown exactly as written."""

from __future__ import annotations

import socket
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from planverify import verify_many
from planverify.cli import app
from planverify.cli.verify import _summary
from planverify.inputs.sources import load_episodes, prefetch_games
from planverify.records.result import Inserted, Verdict, VerificationResult
from planverify.runs.batch import BatchReport

from .conftest import ROOT
from .test_cli import tiny_game

runner = CliRunner()
EXAMPLES = ROOT / "examples" / "episodes.jsonl"
PLAN = ["Driver.PickUp('Mug')", "Driver.Move(0.5)", "Driver.Move(-0.5)"]


def jsonl(path: Path, *records: object) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def games_with_bad_ones(root: Path) -> Path:
    """A folder of two good games and a truncated, an empty and a wrong-shaped one."""
    folder = root / "games" / "train"
    folder.mkdir(parents=True)
    for name in ("good-1", "good-2"):
        (folder / f"{name}.game.json").write_bytes(orjson.dumps(tiny_game(name)))
    whole = orjson.dumps(tiny_game("cut"))
    (folder / "cut.game.json").write_bytes(whole[: len(whole) // 2])
    (folder / "empty.game.json").write_bytes(b"")
    (folder / "shape.game.json").write_bytes(b'{"tasks": {"not": "a list"}}')
    return root / "games"


def test_a_truncated_game_in_a_folder_is_one_line_and_the_batch_goes_on(tmp_path: Path) -> None:
    games = games_with_bad_ones(tmp_path)
    out = tmp_path / "out.jsonl"
    result = runner.invoke(app, ["verify", str(games), "--no-checkpoint", "-o", str(out)])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and "BrokenProcessPool" not in result.output
    skipped = [line for line in result.stderr.splitlines() if line.startswith("skipped")]
    assert len(skipped) == 3
    assert any("cut.game.json: malformed JSON" in line for line in skipped)
    assert any("shape.game.json: wrong type: tasks is dict" in line for line in skipped)
    assert sorted(r["id"] for r in map(orjson.loads, out.read_bytes().splitlines())) == [
        "good-1",
        "good-2",
    ]
    assert "skipped inputs" in result.stdout and "malformed JSON: 2" in result.stdout


def test_the_loader_processes_send_errors_back_whole(tmp_path: Path) -> None:
    games = games_with_bad_ones(tmp_path)
    paths = sorted((games / "train").iterdir())
    loaded = list(prefetch_games(paths, workers=1))  # parsed in a second process
    assert [type(x).__name__ for x in loaded] == [
        "EpisodeError",
        "EpisodeError",
        "Episode",
        "Episode",
        "EpisodeError",
    ]


def test_verify_many_of_load_episodes_skips_bad_sources_and_records_them(tmp_path: Path) -> None:
    games = games_with_bad_ones(tmp_path)
    episodes = load_episodes([games])
    results = verify_many(episodes)
    assert sorted(r.id for r in results) == ["good-1", "good-2"]
    assert all(r.status == "ok" for r in results)
    assert len(episodes.skipped) == 3
    assert episodes.skipped_by_reason() == {"malformed JSON": 2, "wrong type": 1}
    with pytest.raises(ValueError, match="malformed JSON"):
        list(load_episodes([games], errors="raise"))


def test_a_failed_run_leaves_the_finished_output_as_it_was(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    out.write_bytes(b'{"id": "finished"}\n')
    before = out.read_bytes()
    typo = runner.invoke(app, ["verify", str(tmp_path / "typo.jsonl"), "-o", str(out)])
    assert typo.exit_code == 2 and "no such file or directory" in typo.stderr
    nothing = jsonl(tmp_path / "bad.jsonl", {"id": "x", "actions": ["not an action"]})
    bad = runner.invoke(app, ["verify", str(nothing), "--no-checkpoint", "-o", str(out)])
    assert bad.exit_code == 1 and "left as it was" in bad.stderr
    empty_split = runner.invoke(
        app, ["verify", str(EXAMPLES), "--split", "valid_seen", "-o", str(out)]
    )
    assert empty_split.exit_code == 2
    assert out.read_bytes() == before
    assert not out.with_name("results.jsonl.partial").exists()
    for command in ("convert", "corrupt"):
        source = tmp_path / "games" if command == "convert" else nothing
        if command == "convert":
            (source / "train").mkdir(parents=True)
            (source / "train" / "broken.game.json").write_bytes(b"{")
        failed = runner.invoke(app, [command, str(source), "-o", str(out)])
        assert failed.exit_code == 1, failed.output
        assert out.read_bytes() == before, f"{command} kept the file"


def test_usage_errors_come_first_with_a_hint(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "games" / "train").mkdir(parents=True)
    (tmp_path / "games" / "valid_seen").mkdir(parents=True)
    (tmp_path / "games" / "train" / "g.game.json").write_bytes(orjson.dumps(tiny_game("g")))
    cases = [
        (
            ["verify", str(tmp_path / "empty")],
            "holds nothing to read: looked for *.jsonl, *.ndjson and *.game.json",
        ),
        (["verify", str(tmp_path / "nothing-*.jsonl")], "no file matches"),
        (["verify", str(tmp_path / "games"), "--split", "valid_unseen"], "splits found: train"),
        (["verify", str(EXAMPLES), "-o", str(tmp_path)], "is a directory"),
        (["convert", str(EXAMPLES), "-o", str(tmp_path / "x.jsonl")], "this command reads TEACh"),
    ]
    for args, message in cases:
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert message in " ".join(result.stderr.split()), (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) <= 2


def test_a_results_file_given_as_input_is_one_message(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    made = runner.invoke(app, ["verify", str(EXAMPLES), "--no-checkpoint", "-o", str(results)])
    assert made.exit_code == 0
    again = runner.invoke(app, ["verify", str(results), "--no-checkpoint"])
    assert again.exit_code == 2, "an input of another kind is a usage error, before any work"
    (said,) = [line for line in again.stderr.splitlines() if line.strip()]
    assert f"{results} holds results of `planverify verify`" in said
    assert "expected episode records" in said
    assert "Field required" not in again.stderr
    other = jsonl(tmp_path / "other.jsonl", {"name": "x"}, {"name": "y"})
    odd = runner.invoke(app, ["verify", str(other), "--no-checkpoint"])
    assert odd.exit_code == 1 and "not an episode: no `actions` (keys: name)" in odd.stderr
    # records of no known kind are bad lines, each named: the file is not condemned whole
    assert sum(line.startswith("skipped") for line in odd.stderr.splitlines()) == 2


def test_file_names_and_text_in_messages_are_printed_as_written(tmp_path: Path) -> None:
    lines = [orjson.dumps({"id": f"e{n}", "actions": PLAN}) for n in range(99)]
    path = tmp_path / "hundred.jsonl"
    path.write_bytes(b"\n".join([*lines, b"{broken"]) + b"\n")
    result = runner.invoke(app, ["verify", str(path), "--no-checkpoint"])
    assert f"{path}:100: malformed JSON" in " ".join(result.stderr.split())
    assert "\U0001f4af" not in result.stderr  # the :100: emoji
    twice = {"id": "[red]x[/] :smile:", "actions": PLAN}
    marked = jsonl(tmp_path / "m.jsonl", twice, twice)
    shown = runner.invoke(app, ["verify", str(marked), "--no-checkpoint"])
    assert "'[red]x[/] :smile:' appears more than once" in " ".join(shown.stderr.split())


def test_an_unreachable_model_server_stops_the_batch_early(tmp_path: Path) -> None:
    pytest.importorskip("langchain_openai")
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    episodes = [{"id": f"e{n}", "goal": "Carry the mug.", "actions": PLAN} for n in range(6)]
    source = jsonl(tmp_path / "in.jsonl", *episodes)
    out = tmp_path / "out.jsonl"
    args = ["verify", str(source), "--judge", "openai:some-model", "--base-url", url]
    args += ["--max-retries", "0", "--concurrency", "1", "--no-checkpoint", "-o", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    text = " ".join(result.stderr.split())
    assert f"stopped: cannot reach {url}" in text and "5 episode(s) not started" in text
    (failed,) = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert failed["status"] == "error" and "ProviderUnreachable" in failed["error"]


def test_static_runs_report_proposals_and_unpriced_costs_are_never_zero(
    capsys: pytest.CaptureFixture[str],
) -> None:
    results = verify_many([{"id": "a", "goal": "Carry the mug.", "actions": PLAN}], static=True)
    _summary(BatchReport(results=results), None)
    shown = " ".join(capsys.readouterr().out.split())
    assert "Judge proposed │ removing 2 of 3 steps" in shown and "3 -> 3" not in shown
    priced = VerificationResult(
        id="p",
        usage={"judge": {"calls": 1, "input_tokens": 10, "output_tokens": 5}},  # type: ignore[dict-item]
        cost_usd=None,
        verdicts=[Verdict(index=0, action=PLAN[0], verdict="keep")],
        inserted=[Inserted(after_index=0, action=PLAN[0], iteration=1)],
    )
    _summary(BatchReport(results=[priced, priced.model_copy(update={"id": "q"})]), None)
    shown = " ".join(capsys.readouterr().out.split())
    assert "unknown (unpriced: 2 episodes)" in shown and "$0.00" not in shown


def test_progress_off_a_terminal_is_plain_lines(tmp_path: Path) -> None:
    result = runner.invoke(app, ["verify", str(EXAMPLES), "--no-checkpoint"])
    assert result.exit_code == 0
    progress = [line for line in result.stderr.splitlines() if line.startswith("verify:")]
    assert progress and progress[-1].startswith("verify: 10/10 done, 0 failed, ")
    assert "\x1b" not in result.stderr and "\r" not in result.stderr


def test_version_and_presets_show_everything() -> None:
    from planverify import __version__

    assert runner.invoke(app, ["--version"]).stdout.strip() == f"planverify {__version__}"
    listed = runner.invoke(app, ["presets"], env={"COLUMNS": "70"})
    assert "groq:meta-llama/llama-4-scout-17b-16e-instruct" in listed.stdout


def test_the_summary_of_skipped_inputs_has_balanced_parentheses(tmp_path: Path) -> None:
    """Each skipped input is counted under a short reason, whatever the message holds: ids
    with parentheses, a line cut short, a bad action, a repeated id."""
    source = tmp_path / "mixed.jsonl"
    lines = [
        orjson.dumps({"id": "mug(a", "actions": PLAN}),
        orjson.dumps({"id": "mug(a", "actions": PLAN}),
        orjson.dumps({"id": "x", "actions": ["Driver.Mo(1"]}),
        b'{"id": "cut", "actions": ["Driver.PickUp(',
    ]
    source.write_bytes(b"\n".join(lines) + b"\n")
    result = runner.invoke(app, ["verify", str(source), "--no-checkpoint"], env={"COLUMNS": "200"})
    assert result.exit_code == 1
    (row,) = [line for line in result.stdout.splitlines() if "skipped inputs" in line]
    counted = row.split("skipped inputs")[1].strip(" │")
    assert counted == "3 (repeated id: 1, actions: 1, malformed JSON: 1)"
    assert counted.count("(") == counted.count(")")


def test_a_line_cut_short_is_named_by_its_line_in_the_file_once(tmp_path: Path) -> None:
    source = tmp_path / "cut.jsonl"
    good = orjson.dumps({"id": "a", "actions": PLAN})
    source.write_bytes(good + b"\n" + good[:40] + b"\n")
    result = runner.invoke(app, ["verify", str(source), "--no-checkpoint"], env={"COLUMNS": "200"})
    (skipped,) = [line for line in result.stderr.splitlines() if line.startswith("skipped")]
    assert skipped == f"skipped {source}:2: malformed JSON: unexpected end of data at column 41"
    assert "line 1" not in result.stderr
