"""Trim policies from the command line and the API: one results file read under `natural` or
`minimal` by `score` and `export` (no new verification), combined with `--min-evidence`; the
policy of a run chosen by `verify`, `verify_plan`, `Verifier` and a served run's context."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planverify import verify_plan
from planverify.api import Verifier
from planverify.cli import app
from planverify.export import curate
from planverify.graphs.context import SettingsError
from planverify.graphs.policy import ServingPolicy
from planverify.graphs.served import served_context
from planverify.metrics import Counts, score_results
from planverify.records.critique import Critique, Flag
from planverify.records.episode import Episode, Label
from planverify.records.history import Iteration
from planverify.records.reading import as_read
from planverify.records.result import RunSettings, Verdict, VerificationResult
from planverify.records.trim import OptionalNote

from .conftest import COFFEE_PLAN
from .test_graph import ScriptedJudge

runner = CliRunner()

PLAN = [
    "Driver.PickUp('Mug')",
    "Driver.Open('Cabinet')",  # a search: only `minimal` removes it (proven)
    "Driver.Move(1.0)",  # removed under both policies
    "Driver.ToggleOff('CoffeeMachine')",  # switched off around loading: `minimal` (heuristic)
    "Driver.PutAOnB('Mug', 'CoffeeMachine')",
]
SEARCH = OptionalNote(kind="search", reason="the mug is already in hand", evidence="proven")
DEVICE = OptionalNote(kind="device", reason="the machine needs no switching", evidence="heuristic")
NATURAL_PLAN = [PLAN[0], PLAN[1], PLAN[3], PLAN[4]]
MINIMAL_PLAN = [PLAN[0], PLAN[4]]


def episode() -> Episode:
    return Episode(
        id="t",
        goal="Make coffee.",
        actions=PLAN,
        labels=[Label(type="REMOVE", index=i) for i in (1, 2, 3)],
    )


def natural_result() -> VerificationResult:
    """A result of a `natural` run: step 3 removed, steps 2 and 4 kept with optional notes."""
    verdicts = [
        Verdict(index=0, action=PLAN[0], verdict="keep"),
        Verdict(index=1, action=PLAN[1], verdict="keep", iteration=1, optional=SEARCH),
        Verdict(
            index=2, action=PLAN[2], verdict="remove", reason="moves for nothing",
            iteration=1, evidence="proven",
        ),
        Verdict(index=3, action=PLAN[3], verdict="keep", iteration=1, optional=DEVICE),
        Verdict(index=4, action=PLAN[4], verdict="keep"),
    ]  # fmt: skip
    return VerificationResult(
        id="t",
        input_digest=episode().input_digest,
        settings=RunSettings(judge="scripted", planner="rules", trim="natural"),
        goal="Make coffee.",
        original=PLAN,
        refined=NATURAL_PLAN,
        verdicts=verdicts,
        iterations=2,
        revisions=1,
        stop_reason="no_objections",
    )


def files(tmp_path: Path, result: VerificationResult) -> tuple[Path, Path]:
    annotated = tmp_path / "annotated.jsonl"
    annotated.write_text(episode().model_dump_json() + "\n", encoding="utf-8")
    results = tmp_path / "results.jsonl"
    results.write_text(result.model_dump_json() + "\n", encoding="utf-8")
    return annotated, results


# --- records -------------------------------------------------------------------------------


def test_a_result_read_under_the_other_policy_and_back_is_the_same() -> None:
    natural = natural_result()
    minimal = natural.under("minimal")
    assert minimal.refined == MINIMAL_PLAN
    assert [v.index for v in minimal.verdicts if v.verdict == "remove"] == [1, 2, 3]
    assert (minimal.verdicts[1].reason, minimal.verdicts[1].evidence) == (
        SEARCH.reason,
        "proven",
    )
    back = minimal.under("natural")
    assert back.verdicts == natural.verdicts and back.refined == natural.refined
    assert natural.under("natural") is natural, "its own policy changes nothing"
    # a result of a `minimal` run reads back the same way
    ran_minimal = minimal.model_copy(
        update={"settings": RunSettings(judge="scripted", planner="rules", trim="minimal")}
    )
    assert ran_minimal.trim == "minimal"
    assert ran_minimal.under("natural").refined == NATURAL_PLAN
    assert ran_minimal.under("natural").under("minimal").verdicts == minimal.verdicts


def test_the_trim_policy_comes_before_the_evidence_filter() -> None:
    natural = natural_result()
    assert as_read(natural).refined == NATURAL_PLAN, "by default: the policy it ran under"
    assert as_read(natural, trim="minimal").refined == MINIMAL_PLAN
    # the device step is a `minimal` removal at `heuristic`: below `proven`, it stays
    both = as_read(natural, trim="minimal", min_evidence="proven")
    assert both.refined == [PLAN[0], PLAN[3], PLAN[4]]
    assert as_read(natural, trim="natural", min_evidence="proven").refined == NATURAL_PLAN


def test_a_static_results_judge_pass_is_read_under_the_policy_too() -> None:
    flag = Flag(step=2, action=PLAN[2], reason="moves for nothing", evidence="proven")
    optional = Flag(step=1, action=PLAN[1], reason=SEARCH.reason, optional=SEARCH)
    result = natural_result().model_copy(
        update={
            "refined": PLAN,
            "stop_reason": "static",
            "history": [
                Iteration(iteration=1, critique=Critique(flags=[flag], optional=[optional]))
            ],
        }
    )
    minimal = as_read(result, trim="minimal")
    assert [(f.step, f.evidence) for f in minimal.history[0].critique.flags] == [
        (1, "proven"),
        (2, "proven"),
    ]
    assert minimal.refined == PLAN, "a static result's plan stays the input"
    natural = as_read(minimal, trim="natural")
    assert [f.step for f in natural.history[0].critique.flags] == [2]
    static = score_results([episode()], [result], mode="static", resamples=0, trim="minimal")
    assert static.overall.counts.tp == 2


# --- score ---------------------------------------------------------------------------------


def test_score_reads_one_file_under_either_policy(tmp_path: Path) -> None:
    annotated, results = files(tmp_path, natural_result())
    counts = {}
    for trim in ("natural", "minimal", None):
        report = tmp_path / f"{trim}.json"
        more = ["--trim", trim] if trim else []
        done = runner.invoke(
            app, ["score", str(annotated), str(results), "--json", str(report), *more]
        )
        assert done.exit_code == 0, done.output
        data = json.loads(report.read_text(encoding="utf-8"))
        assert data["trim"] == trim
        counts[trim] = Counts.model_validate(data["overall"]["counts"])
        if trim:
            assert f"trim {trim}" in done.output
    assert counts["natural"] == counts[None] == Counts(tp=1, fp=0, fn=2, tn=2)
    assert counts["minimal"] == Counts(tp=3, fp=0, fn=0, tn=2)


def test_score_combines_trim_with_min_evidence(tmp_path: Path) -> None:
    annotated, results = files(tmp_path, natural_result())
    report = tmp_path / "r.json"
    done = runner.invoke(
        app,
        ["score", str(annotated), str(results), "--trim", "minimal", "--min-evidence", "proven",
         "--json", str(report)],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    data = json.loads(report.read_text(encoding="utf-8"))
    assert (data["trim"], data["min_evidence"]) == ("minimal", "proven")
    # the heuristic `minimal` removal (step 4) counts as not made
    assert Counts.model_validate(data["overall"]["counts"]) == Counts(tp=2, fp=0, fn=1, tn=2)


# --- export --------------------------------------------------------------------------------


def exported(tmp_path: Path, *options: str) -> dict[str, object]:
    _, results = files(tmp_path, natural_result())
    inputs = tmp_path / "in.jsonl"
    inputs.write_text(episode().model_dump_json() + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    done = runner.invoke(
        app, ["export", str(results), "--episodes", str(inputs), "-o", str(out), *options]
    )
    assert done.exit_code == 0, done.output
    (row,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert isinstance(row, dict)
    return row


def test_export_minimal_leaves_out_the_optional_steps(tmp_path: Path) -> None:
    row = exported(tmp_path, "--trim", "minimal")
    assert row["actions"] == MINIMAL_PLAN
    check = row["verification"]
    assert isinstance(check, dict) and check["trim"] == "minimal"
    assert [(v["verdict"], v["reason"]) for v in check["verdicts"]][1] == (
        "remove",
        SEARCH.reason,
    )
    natural = exported(tmp_path, "--trim", "natural")
    assert natural["actions"] == NATURAL_PLAN
    assert exported(tmp_path)["actions"] == NATURAL_PLAN, "by default: the policy it ran under"


def test_export_combines_trim_with_min_evidence(tmp_path: Path) -> None:
    row = exported(tmp_path, "--trim", "minimal", "--min-evidence", "proven")
    assert row["actions"] == [PLAN[0], PLAN[3], PLAN[4]]
    curation = curate([natural_result()], [episode()], trim="minimal", min_evidence="proven")
    (item,) = curation.curated
    assert item.restored == {3} and item.trim == "minimal"
    assert "read under trim minimal" in curation.describe()
    assert "1 removal(s) undone" in curation.describe()


# --- verifying under a policy --------------------------------------------------------------


def test_verify_plan_and_verifier_record_the_policy() -> None:
    result = verify_plan(COFFEE_PLAN, "Make coffee.", judge=ScriptedJudge(Critique()))
    assert result.settings is not None and result.settings.trim == "natural"
    minimal = verify_plan(
        COFFEE_PLAN, "Make coffee.", judge=ScriptedJudge(Critique()), trim="minimal"
    )
    assert minimal.settings is not None and minimal.settings.trim == "minimal"
    assert minimal.trim == "minimal"
    verifier = Verifier(judge=ScriptedJudge(Critique()), trim="minimal")
    assert verifier.context.trim == "minimal" and verifier.settings.trim == "minimal"
    assert verifier.key != Verifier(judge=ScriptedJudge(Critique())).key, "its own checkpoints"
    with pytest.raises(SettingsError) as refused:
        Verifier(trim="most")  # type: ignore[arg-type]
    assert len(str(refused.value).splitlines()) == 1
    assert str(refused.value).startswith("trim:")


def test_a_served_run_takes_the_policy_as_a_setting() -> None:
    policy = ServingPolicy()
    assert served_context({"trim": "minimal"}, policy).trim == "minimal"
    assert served_context(None, policy).trim == "natural"
    with pytest.raises(SettingsError) as refused:
        served_context({"trim": "shortest"}, policy)
    (line,) = str(refused.value).splitlines()
    assert line.startswith("trim:") and "natural" in line and "minimal" in line


@pytest.mark.parametrize("command", ["verify", "eval", "score", "export"])
def test_an_unknown_policy_is_refused_on_the_command_line(command: str) -> None:
    wrong = runner.invoke(app, [command, "x.jsonl", "--trim", "bogus"])
    assert wrong.exit_code == 2
    assert "Invalid value for '--trim'" in wrong.stderr
    assert "'natural'" in wrong.stderr and "'minimal'" in wrong.stderr


def test_verify_runs_under_the_policy_it_is_given(tmp_path: Path) -> None:
    inputs = tmp_path / "in.jsonl"
    inputs.write_text(
        Episode(id="c", goal="Make coffee.", actions=COFFEE_PLAN).model_dump_json() + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "out.jsonl"
    done = runner.invoke(
        app,
        ["verify", str(inputs), "--no-checkpoint", "-o", str(out), "--trim", "minimal"],
    )
    assert done.exit_code == 0, done.output
    (record,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert record["settings"]["trim"] == "minimal"


async def test_a_server_run_sends_the_policy_with_its_settings() -> None:
    from planverify.runs.remote import RemoteVerifier

    async with RemoteVerifier("http://127.0.0.1:9", trim="minimal") as remote:
        assert remote.context.model_dump(mode="json")["trim"] == "minimal"
        assert remote.settings.trim == "minimal"
        assert remote.key == Verifier(trim="minimal").key, "the same threads as a local run"


def test_a_parquet_export_and_its_card_say_the_policy(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet", reason="pip install 'planverify[export]'")
    _, results = files(tmp_path, natural_result())
    inputs = tmp_path / "in.jsonl"
    inputs.write_text(episode().model_dump_json() + "\n", encoding="utf-8")
    out = tmp_path / "data"
    done = runner.invoke(
        app,
        ["export", str(results), "--episodes", str(inputs), "-o", str(out), "--parquet",
         "--trim", "minimal"],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    (row,) = pq.read_table(out / "data" / "train.parquet").to_pylist()
    assert row["verification"]["trim"] == "minimal" and row["actions"] == MINIMAL_PLAN
    assert "Trim policy: `minimal`" in (out / "README.md").read_text(encoding="utf-8")
