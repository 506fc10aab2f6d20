"""`planverify export`: results joined with their input episodes by id and content, in four
formats, as JSONL or Parquet with a dataset card, and loadable with `datasets`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from planverify.api import verify_many
from planverify.cli import app
from planverify.export import (
    Decision,
    Options,
    curate,
    export_results,
    read_decisions,
    rebuild,
)
from planverify.export.formats import rows
from planverify.inputs.sources import load_episodes
from planverify.records.episode import Episode, dump_jsonl_line, iter_jsonl
from planverify.records.jsonl import UnusableFile
from planverify.records.result import VerificationResult

from .conftest import ROOT

EXAMPLES = ROOT / "examples" / "episodes.jsonl"
SAMPLE = [e for e in iter_jsonl(EXAMPLES) if isinstance(e, Episode)]
runner = CliRunner()


def lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def write_results(path: Path, results: list[VerificationResult]) -> Path:
    path.write_bytes(b"".join(r.model_dump_json().encode() + b"\n" for r in results))
    return path


@pytest.fixture(scope="module")
def sample_results() -> list[VerificationResult]:
    return verify_many(SAMPLE)


@pytest.fixture
def results_file(tmp_path: Path, sample_results: list[VerificationResult]) -> Path:
    return write_results(tmp_path / "results.jsonl", sample_results)


def export(*args: str) -> Any:
    return runner.invoke(app, ["export", *args])


def test_episodes_keep_every_input_key_with_the_refined_plan(
    results_file: Path, tmp_path: Path, sample_results: list[VerificationResult]
) -> None:
    out = tmp_path / "clean.jsonl"
    done = export(str(results_file), "--episodes", str(EXAMPLES), "-f", "episodes", "-o", str(out))
    assert done.exit_code == 0, done.output
    records = lines(out)
    source = [orjson.loads(line) for line in EXAMPLES.read_bytes().splitlines()]
    assert [r["id"] for r in records] == [s["id"] for s in source]
    for record, given, result in zip(records, source, sample_results, strict=True):
        assert set(record) == set(given) | {"verification"}
        assert {k: record[k] for k in given if k != "actions"} == {
            k: v for k, v in given.items() if k != "actions"
        }
        assert record["actions"] == result.refined
        check = record["verification"]
        assert check["input_digest"] == result.input_digest
        assert check["stop_reason"] == result.stop_reason
        assert check["settings"]["judge"] == "rules"
        assert [v["verdict"] for v in check["verdicts"]] == [v.verdict for v in result.verdicts]
        assert [i["action"] for i in check["inserted"]] == [i.action for i in result.inserted]
    assert records[0]["verification"]["verdicts"][4]["reason"], "removed steps carry reasons"


def test_the_exported_file_can_be_verified_corrupted_and_scored_again(
    results_file: Path, tmp_path: Path
) -> None:
    clean = tmp_path / "clean.jsonl"
    assert export(str(results_file), "--episodes", str(EXAMPLES), "-o", str(clean)).exit_code == 0
    again = tmp_path / "again.jsonl"
    verified = runner.invoke(app, ["verify", str(clean), "--no-checkpoint", "-o", str(again)])
    assert verified.exit_code == 0, verified.output
    for record, result in zip(
        lines(clean), map(VerificationResult.model_validate, lines(again)), strict=True
    ):
        if record["verification"]["stop_reason"] == "no_objections":
            assert result.iterations == 1 and result.refined == record["actions"], result.id
    annotated = tmp_path / "annotated.jsonl"
    corrupted = runner.invoke(app, ["corrupt", str(clean), "--seed", "1", "-o", str(annotated)])
    assert corrupted.exit_code == 0, corrupted.output
    results = tmp_path / "scored.jsonl"
    assert (
        runner.invoke(
            app, ["verify", str(annotated), "--no-checkpoint", "-o", str(results)]
        ).exit_code
        == 0
    )
    scored = runner.invoke(app, ["score", str(annotated), str(results)])
    assert scored.exit_code == 0, scored.output


def test_results_on_other_content_are_refused_by_name(
    sample_results: list[VerificationResult], tmp_path: Path
) -> None:
    edited = tmp_path / "edited.jsonl"
    records = [orjson.loads(line) for line in EXAMPLES.read_bytes().splitlines()]
    records[2]["goal"] = "Something else entirely."
    edited.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    results = write_results(tmp_path / "results.jsonl", sample_results)
    out = tmp_path / "out.jsonl"
    done = export(str(results), "--episodes", str(edited), "-o", str(out))
    assert done.exit_code == 1
    assert records[2]["id"] in done.stderr and "other content" in done.stderr
    assert not out.exists(), "nothing is written"


def test_error_results_are_left_out_of_every_format_and_counted(
    sample_results: list[VerificationResult], tmp_path: Path
) -> None:
    failed = VerificationResult.failed(SAMPLE[0], "RuntimeError: provider down")
    results = write_results(tmp_path / "results.jsonl", [failed, *sample_results[1:]])
    for fmt in ("episodes", "sft", "preference", "recovery"):
        out = tmp_path / f"{fmt}.jsonl"
        done = export(str(results), "--episodes", str(EXAMPLES), "-f", fmt, "-o", str(out))
        assert done.exit_code == 0, done.output
        assert SAMPLE[0].id not in {r["id"] for r in lines(out)}
        assert "left out: 1 (status error)" in done.stderr and SAMPLE[0].id in done.stderr


def test_sft_turns_hold_dialogue_and_goal_then_the_driver_actions(
    sample_results: list[VerificationResult],
) -> None:
    curation = curate(sample_results, SAMPLE)
    (row, *_) = rows("sft", curation.curated, Options())
    _system, user, assistant = row["messages"]
    assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant"]
    assert "Goal: Prepare coffee in a clean mug." in user["content"]
    assert "Commander: Please make a cup of coffee." in user["content"]
    answer = assistant["content"].splitlines()
    assert answer == [a for a in sample_results[0].refined if "Say(" not in a]
    (mixed, *_) = rows("sft", curation.curated, Options(interleave=True))
    assert mixed["messages"][2]["content"].splitlines() == sample_results[0].refined
    assert "Dialogue" not in mixed["messages"][1]["content"]


def test_preference_pairs_only_changed_episodes_and_filter_by_removals(
    sample_results: list[VerificationResult],
) -> None:
    curation = curate(sample_results, SAMPLE)
    pairs = list(rows("preference", curation.curated, Options()))
    changed = [r for r in sample_results if r.refined != r.original]
    assert [p["id"] for p in pairs] == [r.id for r in changed]
    for pair in pairs:
        assert set(pair) >= {"prompt", "chosen", "rejected"}
        assert pair["chosen"] != pair["rejected"]
    many = list(rows("preference", curation.curated, Options(min_removed=2)))
    assert many and all(p["removed"] >= 2 for p in many) and len(many) < len(pairs)


def test_a_recovery_record_names_the_block_its_reasons_the_undo_and_the_correction(
    sample_results: list[VerificationResult],
) -> None:
    curation = curate(sample_results, SAMPLE)
    records = [
        r for r in rows("recovery", curation.curated, Options()) if r["id"] == "salad-wrong-stool"
    ]
    (record,) = records
    assert [s["action"] for s in record["block"]] == [
        "Driver.PutAOnB('LettuceSliced', 'Stool')",
        "Driver.PickUp('LettuceSliced')",
    ]
    assert all(s["reason"] for s in record["block"])
    assert [(s["kind"], s["action"]) for s in record["recovery"]] == [
        ("undo", "Driver.PickUp('LettuceSliced')"),  # the re-pick-up
        ("correction", "Driver.PutAOnB('LettuceSliced', 'Plate')"),  # the right put-down
    ]
    assert record["context"] == SAMPLE[4].actions[: record["block"][0]["index"]]
    assert (record["task"], record["goal"]) == ("Salad", SAMPLE[4].goal)


def test_decisions_overrule_verdicts(
    sample_results: list[VerificationResult], tmp_path: Path, results_file: Path
) -> None:
    result = sample_results[0]
    removed = next(v for v in result.verdicts if v.verdict == "remove")
    kept = next(v for v in result.verdicts if v.verdict == "keep" and "Say(" not in v.action)
    decisions = {
        "format": "planverify-decisions",
        "version": 1,
        "decisions": [
            {
                "id": result.id,
                "input_digest": result.input_digest,
                "step": removed.index,
                "verdict": "keep",
                "action": removed.action,
            },
            {
                "id": result.id,
                "input_digest": result.input_digest,
                "step": kept.index,
                "verdict": "remove",
                "action": kept.action,
                "note": "not needed, says the reviewer",
            },
            {"id": result.id, "input_digest": "0" * 64, "step": 0, "verdict": "remove"},
        ],
    }
    file = tmp_path / "decisions.json"
    file.write_text(json.dumps(decisions), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    done = export(
        str(results_file), "--episodes", str(EXAMPLES), "-o", str(out), "--decisions", str(file)
    )
    assert done.exit_code == 0, done.output
    assert "other content" in done.stderr, "a decision on other content is not applied"
    record = lines(out)[0]
    assert removed.action in record["actions"] and kept.action not in record["actions"]
    verdicts = record["verification"]["verdicts"]
    assert verdicts[removed.index]["verdict"] == "keep" and verdicts[removed.index]["overruled"]
    assert verdicts[kept.index]["reason"] == "not needed, says the reviewer"
    assert record["verification"]["decisions"] == 2


def test_rebuilding_verdicts_and_insertions_gives_the_refined_plan(
    sample_results: list[VerificationResult],
) -> None:
    for result in sample_results:
        kept = [v.verdict == "keep" for v in result.verdicts]
        assert rebuild(result.original, kept, result) == result.refined, result.id


def test_split_by_writes_one_file_per_value(results_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "by-task"
    done = export(
        str(results_file),
        "--episodes",
        str(EXAMPLES),
        "-f",
        "sft",
        "-o",
        str(out),
        "--split-by",
        "task",
    )
    assert done.exit_code == 0, done.output
    files = sorted(p.name for p in out.glob("*.jsonl"))
    assert len(files) == len({e.task for e in SAMPLE}) and "clean_all_x.jsonl" in files
    assert sum(len(lines(p)) for p in out.glob("*.jsonl")) == len(SAMPLE)


HF_LOAD = r"""
import json, sys
import datasets
datasets.disable_progress_bars()
answer = {}
for kind, name, files in json.loads(sys.argv[1]):
    ds = datasets.load_dataset(kind, data_files=files, cache_dir=sys.argv[2])
    answer[f"{kind}:{name}"] = {split: [len(d), sorted(d.column_names)] for split, d in ds.items()}
print(json.dumps(answer))
"""


def test_every_format_loads_with_datasets_as_jsonl_and_parquet(
    results_file: Path, tmp_path: Path
) -> None:
    pytest.importorskip("pyarrow", reason="Parquet needs pip install 'planverify[export]'")
    pytest.importorskip("datasets", reason="the datasets library is not installed")
    jobs: list[tuple[str, str, Any]] = []
    expected: dict[str, int] = {}
    for fmt in ("episodes", "sft", "preference", "recovery"):
        plain = tmp_path / f"{fmt}.jsonl"
        folder = tmp_path / f"{fmt}-parquet"
        base = [str(results_file), "--episodes", str(EXAMPLES), "-f", fmt]
        assert export(*base, "-o", str(plain)).exit_code == 0
        done = export(*base, "-o", str(folder), "--parquet", "--split-by", "task")
        assert done.exit_code == 0, done.output
        card = (folder / "README.md").read_text(encoding="utf-8")
        header = card.split("---")[1]
        assert "license:" in header and "dataset_info:" in header and "configs:" in header
        assert "size_categories:" in header and "judge" in card and "rules" in card
        parts = {p.stem: str(p) for p in sorted((folder / "data").glob("*.parquet"))}
        assert len(parts) == len({e.task for e in SAMPLE}) or fmt in ("preference", "recovery")
        jobs += [("json", fmt, str(plain)), ("parquet", fmt, parts)]
        expected[fmt] = len(lines(plain))
    env = {
        **os.environ,
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf-home"),
        "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
    }
    done = subprocess.run(
        [sys.executable, "-c", HF_LOAD, json.dumps(jobs), str(tmp_path / "hf-cache")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    for fmt, count in expected.items():
        assert loaded[f"json:{fmt}"]["train"][0] == count
        assert sum(n for n, _ in loaded[f"parquet:{fmt}"].values()) == count
    assert "messages" in loaded["parquet:sft"]["clean_all_x"][1]
    assert {"prompt", "chosen", "rejected"} <= set(loaded["json:preference"]["train"][1])


def test_teach_games_export_and_verify_again_without_objections(
    shared_dir: Path, tmp_path: Path
) -> None:
    """The property on real episodes: exported, then verified again with the same judge, an
    episode raises no objections, or its `verification` says why not (the loop did not end
    with no objections)."""
    games = shared_dir / "teach" / "games" / "valid_seen"
    episodes = list(load_episodes([games]))[:60]
    results = verify_many(episodes)
    assert all(r.status == "ok" for r in results)
    for result in results:
        kept = [v.verdict == "keep" for v in result.verdicts]
        assert rebuild(result.original, kept, result) == result.refined, result.id
    out = tmp_path / "clean.jsonl"
    report = export_results(results, iter(episodes), "episodes", out)
    assert report.rows == len(episodes)
    cleaned = [e for e in iter_jsonl(out) if isinstance(e, Episode)]
    assert len(cleaned) == len(episodes)
    assert all(e.model_extra and {"split", "source"} <= set(e.model_extra) for e in cleaned)
    again = verify_many(cleaned)
    for episode, result in zip(cleaned, again, strict=True):
        why = (episode.model_extra or {})["verification"]["stop_reason"]
        if why == "no_objections":
            assert result.iterations == 1 and result.refined == episode.actions, episode.id
            assert result.history[0].critique.objections is False
        else:
            assert why in ("max_iterations", "no_change"), "the record says why not"
    recovery = list(rows("recovery", curate(results, episodes).curated, Options()))
    assert recovery and all(r["block"] and all(s["reason"] for s in r["block"]) for r in recovery)
    assert any(any(s["kind"] == "correction" for s in r["recovery"]) for r in recovery)


def test_unknown_decisions_files_and_formats_are_usage_errors(
    results_file: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[]", encoding="utf-8")
    out = str(tmp_path / "o.jsonl")
    done = export(
        str(results_file), "--episodes", str(EXAMPLES), "-o", out, "--decisions", str(bad)
    )
    assert done.exit_code == 2 and "not a decisions file" in done.stderr
    assert (
        export(str(results_file), "--episodes", str(EXAMPLES), "-o", out, "-f", "yaml").exit_code
        == 2
    )
    assert export(str(results_file), "-o", out).exit_code == 2, "--episodes is required"
    assert Decision(id="x", step=1, verdict="keep").verdict == "keep"


def test_decisions_that_do_not_apply_name_steps_as_the_site_numbers_them(
    sample_results: list[VerificationResult],
) -> None:
    """The site numbers steps from 1; a decision that cannot be applied says which step in
    the same numbering (its `index` field counts from 0, as `verdicts[*].index` does)."""
    first = SAMPLE[0]
    decisions = [
        Decision(id=first.id, index=4, verdict="keep", action="Driver.Open('Fridge')"),
        Decision(id=first.id, index=0, verdict="remove"),
        Decision(id=first.id, index=99, verdict="keep"),
    ]
    notes = curate(sample_results, SAMPLE, decisions).unmatched_decisions
    assert f"step 5 is {first.actions[4]!r}, not \"Driver.Open('Fridge')\"" in notes[0]
    assert "step 1 is dialogue, always kept" in notes[1]
    assert "no step 100" in notes[2]


def with_tasks(tmp_path: Path, names: list[str | None]) -> tuple[Path, Path]:
    """The examples with these task families, in turn (None: no task family), and their
    results."""
    episodes = [e.model_copy(update={"task": names[k % len(names)]}) for k, e in enumerate(SAMPLE)]
    n = len(list(tmp_path.glob("episodes-*")))
    path = tmp_path / f"episodes-{n}.jsonl"
    path.write_bytes(b"".join(dump_jsonl_line(e) for e in episodes))
    return path, write_results(tmp_path / f"results-{n}.jsonl", verify_many(episodes))


def test_split_by_keeps_values_that_make_the_same_name_apart(tmp_path: Path) -> None:
    episodes, results_file = with_tasks(tmp_path, ["a/b", "a_b", "A_B", "Clean All X", None])
    out = tmp_path / "by-task"
    base = [str(results_file), "--episodes", str(episodes), "-o", str(out)]
    done = export(*base, "--split-by", "task")
    assert done.exit_code == 0, done.output
    by_file = {p.name: {row["task"] for row in lines(p)} for p in out.glob("*.jsonl")}
    assert len(by_file) == 5 and all(len(tasks) == 1 for tasks in by_file.values())
    assert by_file["a_b.jsonl"] == {"a_b"} and by_file["clean_all_x.jsonl"] == {"Clean All X"}
    assert by_file["unknown.jsonl"] == {None}
    assert len({name.lower() for name in by_file}) == 5, "apart on case-blind file systems too"


def test_split_by_removes_only_the_files_its_earlier_export_wrote(tmp_path: Path) -> None:
    out = tmp_path / "by-task"
    first, results = with_tasks(tmp_path, ["Coffee", "Salad", "Boil X"])
    base = ["-o", str(out), "--split-by", "task", "--episodes"]
    assert export(str(results), *base, str(first)).exit_code == 0
    assert sorted(p.name for p in out.glob("*.jsonl")) == [
        "boil_x.jsonl",
        "coffee.jsonl",
        "salad.jsonl",
    ]
    (out / "notes.jsonl").write_text("{}\n", encoding="utf-8")
    second = out / "salad.jsonl"  # an input now: never removed
    episodes, results = with_tasks(tmp_path, ["Coffee"])
    second.write_bytes(episodes.read_bytes())
    done = export(str(results), *base, str(second))
    assert done.exit_code == 0, done.output
    assert sorted(p.name for p in out.glob("*.jsonl")) == [
        "coffee.jsonl",
        "notes.jsonl",
        "salad.jsonl",
    ]
    assert len(lines(out / "coffee.jsonl")) == len(SAMPLE)


def test_split_by_into_the_current_folder(
    results_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    done = export(str(results_file), "--episodes", str(EXAMPLES), "-o", ".", "--split-by", "task")
    assert done.exit_code == 0, done.output
    assert "clean_all_x.jsonl" in {p.name for p in here.iterdir()}
    assert not list(tmp_path.glob("*.lock")), "the lock is gone once the export is done"


def test_an_insertion_decision_applies_only_to_the_step_it_was_made_on(
    sample_results: list[VerificationResult],
) -> None:
    made_on = next(r for r in sample_results if r.inserted)
    episode = next(e for e in SAMPLE if e.id == made_on.id)
    step = made_on.inserted[0]
    other = made_on.model_copy(  # another run's result: another step inserted there
        update={"inserted": [step.model_copy(update={"action": "Driver.Open('Fridge')"})]}
    )
    reject = Decision(
        id=made_on.id,
        input_digest=made_on.input_digest,
        inserted=0,
        verdict="remove",
        action=step.action,
    )
    (applied,) = curate([made_on], [episode], [reject]).curated
    assert step.action not in applied.plan and applied.decided == 1
    curation = curate([other], [episode], [reject])
    assert "Driver.Open('Fridge')" in curation.curated[0].plan, "an unrelated step stays"
    assert curation.unmatched_decisions == [
        f"{made_on.id!r}: insertion 1 is \"Driver.Open('Fridge')\", not {step.action!r}"
    ]


@pytest.mark.parametrize(
    "decision",
    [
        {"id": "x", "verdict": "keep"},
        {"id": "x", "verdict": "keep", "step": 1, "inserted": 0},
        {"id": "x", "verdict": "keep", "step": True},
        {"id": "x", "verdict": "remove", "inserted": False},
        {"id": "x", "verdict": "keep", "step": "2"},
    ],
)
def test_a_decision_on_no_step_or_a_boolean_step_is_refused(
    decision: dict[str, Any], results_file: Path, tmp_path: Path
) -> None:
    file = tmp_path / "decisions.json"
    file.write_text(
        json.dumps({"format": "planverify-decisions", "version": 1, "decisions": [decision]}),
        encoding="utf-8",
    )
    out = tmp_path / "out.jsonl"
    done = export(
        str(results_file), "--episodes", str(EXAMPLES), "-o", str(out), "--decisions", str(file)
    )
    assert done.exit_code == 2 and f"{file}: decision 1" in " ".join(done.stderr.split())
    assert not out.exists()


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda r: r["verdicts"].pop(), "8 verdict(s) for 9 input step(s)"),
        (lambda r: r["verdicts"].reverse(), "verdict 1 is on step 9"),
        (lambda r: r["verdicts"][2].update(action="Driver.Move(9.0)"), "verdict 3 is on step 3"),
        (lambda r: r["inserted"].append(r["inserted"][0] | {"after_index": 9}), "insertion 2"),
    ],
)
def test_a_result_whose_parts_do_not_fit_is_named_by_line_not_a_traceback(
    change: Any, problem: str, sample_results: list[VerificationResult], tmp_path: Path
) -> None:
    records = [r.model_dump(mode="json") for r in sample_results]
    (line, record) = next((n, r) for n, r in enumerate(records, 1) if r["id"] == "toast-no-power")
    assert len(record["original"]) == 9 and len(record["inserted"]) == 1
    change(record)
    results = tmp_path / "results.jsonl"
    results.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    done = export(str(results), "--episodes", str(EXAMPLES), "-o", str(tmp_path / "o.jsonl"))
    said = " ".join(done.stderr.split())
    assert done.exit_code == 2 and f"{results}:{line}: not a result record ({problem}" in said
    assert "Traceback" not in done.output


def decisions_file(path: Path, version: int | None, *decisions: dict[str, Any]) -> Path:
    data: dict[str, Any] = {"format": "planverify-decisions", "decisions": list(decisions)}
    if version is not None:
        data["version"] = version
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_version_2_names_a_step_by_index_and_version_1_by_a_0_based_step(
    sample_results: list[VerificationResult], tmp_path: Path
) -> None:
    result = sample_results[0]
    removed = next(v for v in result.verdicts if v.verdict == "remove")
    same = {"id": result.id, "verdict": "keep", "action": removed.action}
    files = {
        "v2 index": decisions_file(tmp_path / "a.json", 2, {**same, "index": removed.index}),
        "v2 both": decisions_file(
            tmp_path / "b.json", 2, {**same, "index": removed.index, "step": removed.index + 1}
        ),
        "v2 step": decisions_file(tmp_path / "c.json", 2, {**same, "step": removed.index + 1}),
        "v1 step": decisions_file(tmp_path / "d.json", 1, {**same, "step": removed.index}),
        "no version": decisions_file(tmp_path / "e.json", None, {**same, "step": removed.index}),
    }
    for name, file in files.items():
        (decision,) = read_decisions(file)
        assert (decision.index, decision.step) == (removed.index, removed.index + 1), name
        (item,) = curate([result], SAMPLE[:1], [decision]).curated
        assert item.kept[removed.index] and item.decided == 1, name


@pytest.mark.parametrize(
    ("version", "decision", "message"),
    [
        (2, {"index": 3, "step": 3}, "decision 1: step 3 is not the step at index 3"),
        (1, {"index": 3, "step": 3}, "decision 1: a version 1 file names a step by `step`"),
        (3, {"index": 3}, "decisions file of version 3; this planverify reads versions 1 and 2"),
        (2, {"step": True}, "decision 1, step: Input should be a valid integer"),
    ],
)
def test_a_decisions_file_that_mixes_the_numberings_is_refused(
    version: int, decision: dict[str, Any], message: str, tmp_path: Path
) -> None:
    file = decisions_file(tmp_path / "d.json", version, {"id": "x", "verdict": "keep", **decision})
    with pytest.raises(UnusableFile, match=re.escape(message)):
        read_decisions(file)


SALAD = "salad-wrong-stool"  # step 10 puts the lettuce slice on the plate, 11 picks up tomato


@pytest.mark.parametrize("fmt", ["episodes", "sft", "preference", "recovery"])
def test_a_plan_the_decisions_made_impossible_is_exported_marked_and_named(
    fmt: str, results_file: Path, tmp_path: Path
) -> None:
    lettuce_on_plate = "Driver.PutAOnB('LettuceSliced', 'Plate')"
    file = decisions_file(
        tmp_path / "decisions.json",
        2,
        {"id": SALAD, "index": 9, "step": 10, "verdict": "remove", "action": lettuce_on_plate},
    )
    out = tmp_path / "out.jsonl"
    done = export(
        str(results_file),
        "--episodes",
        str(EXAMPLES),
        "-o",
        str(out),
        "--decisions",
        str(file),
        "-f",
        fmt,
    )
    assert done.exit_code == 0, done.output
    warning = " ".join(done.stderr.split())
    assert f"warning: {SALAD!r}: after the decisions the simulator finds step 8 " in warning
    assert "Driver.PickUp('TomatoSliced'): the Driver already holds LettuceSliced" in warning
    assert "1 marked impossible after decisions" in done.stdout
    rows = [row for row in lines(out) if row["id"] == SALAD]
    assert rows, "the episode is exported all the same"
    for row in lines(out):
        marks = (row["verification"] if fmt == "episodes" else row)["impossible"]
        if row["id"] != SALAD:
            assert marks == []
            continue
        first = marks[0]
        assert (first["index"], first["action"]) == (7, "Driver.PickUp('TomatoSliced')")
        if fmt == "episodes":
            assert row["actions"][first["index"]] == first["action"], "0-based in the plan"


def test_only_what_the_decisions_made_impossible_is_marked(
    sample_results: list[VerificationResult],
) -> None:
    result = next(r for r in sample_results if r.id == SALAD)
    episode = next(e for e in SAMPLE if e.id == SALAD)
    both_kept = [  # the input plan again: the Stool detour undone at once, possible
        Decision(id=SALAD, index=6, verdict="keep"),
        Decision(id=SALAD, index=8, verdict="keep"),
    ]
    (item,) = curate([result], [episode], both_kept).curated
    assert item.decided == 2 and item.impossible == []
    (item,) = curate([result], [episode], both_kept[:1]).curated  # put down, never picked up
    assert [(s.index + 1, s.action) for s in item.impossible] == [
        (9, "Driver.PutAOnB('LettuceSliced', 'Plate')")
    ]


def test_a_step_already_impossible_in_the_judges_plan_is_not_the_decisions_doing() -> None:
    from planverify.export.feasible import made_impossible

    before = {("input", 3): (3, "nothing is held")}
    after = {("input", 3): (2, "nothing is held"), ("inserted", 0): (4, "already holds Mug")}
    plan = ["A", "B", "C", "D", "E"]
    (only,) = made_impossible(before, after, plan)
    assert (only.index, only.action, only.describe()) == (4, "E", "step 5 E: already holds Mug")
