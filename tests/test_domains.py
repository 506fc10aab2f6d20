"""The domain interface: the registry, its contracts, and VirtualHome through verify, corrupt,
score, eval, export and review (programs read from the installed eai-eval; nothing of its data
is kept here). TEACh's settings and results are as they were before the interface."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from planverify.agents.base import as_data
from planverify.api import Verifier, verify_many, verify_plan
from planverify.cli import app
from planverify.domains import MODULES, UnknownDomain, domain_name, domain_of, is_default
from planverify.prompts import template_version
from planverify.records.episode import Episode
from planverify.records.result import VerificationResult

from .conftest import COFFEE_PLAN, COFFEE_REFINED, ROOT, scripted

runner = CliRunner()

# The settings keys of default TEACh runs (`Verifier().key`), pinned: the domain interface must
# not change them (so a TEACh run's checkpoint threads and journals stay); they change only with
# the world or certify version (world 30, certify 10 here).
TEACH_KEYS = {"natural": "d87a0b9aaa", "minimal": "48ad83d533"}

DRINK = "file628_2"  # Drink: a water glass from the cupboard, filled, drunk, rinsed, put back
PROGRAMS = ("file3_1", "file27_2", "file1004_2")  # three programs that meet their vh_goal


def _has_virtualhome() -> bool:
    import importlib.util

    return importlib.util.find_spec("virtualhome_eval") is not None


needs_vh = pytest.mark.skipif(
    not _has_virtualhome(),
    reason="VirtualHome needs eai-eval (make install adds it without its dependencies)",
)


def _record(name: str) -> dict[str, Any]:
    from planverify.domains.virtualhome.data import read_program
    from planverify.domains.virtualhome.records import program_record

    return program_record(read_program(name))


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


# --- the registry ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["nope", "os", "planverify.cli", "virtualhome.adapter", ""])
def test_the_registry_refuses_a_domain_outside_its_table(name: str) -> None:
    with pytest.raises(UnknownDomain, match=r"unknown domain .*knows teach, virtualhome"):
        domain_of(name)


def test_no_domain_is_teach_and_teach_is_a_domain() -> None:
    assert domain_name(None) == "teach" and is_default(None) and is_default("teach")
    assert not is_default("virtualhome")
    teach = domain_of(None)
    assert teach is domain_of("teach") and teach.name == "teach" and teach.version() is None


def test_the_contracts_keep_domains_apart_and_behind_the_registry() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = {c["name"]: c for c in config["tool"]["importlinter"]["contracts"]}
    apart = contracts["Domains: independent of each other"]
    assert apart["type"] == "independence"
    concrete = sorted(f"planverify.domains.{name}" for name in MODULES)
    assert sorted(apart["modules"]) == concrete
    behind = contracts["Domains: the core imports none, only the registry"]
    assert sorted(behind["forbidden_modules"]) == concrete
    core = {"graphs", "agents", "cli", "api", "runs", "export", "review", "metrics"}
    assert {f"planverify.{part}" for part in core} <= set(behind["source_modules"])
    packages = config["tool"]["setuptools"]["packages"]
    assert set(concrete) <= set(packages)


def test_the_teach_adapter_gives_the_rules_judges_critique() -> None:
    import asyncio

    from planverify.agents.rules import RulesJudge
    from planverify.domains import Case

    goal = "Make a mug of coffee."
    case = Case(lines=COFFEE_PLAN, goal=goal)
    reply = asyncio.run(RulesJudge().ajudge(goal, COFFEE_PLAN))
    assert domain_of("teach").critique(case, "natural") == reply.critique
    assert [f.step for f in reply.critique.flags] == [1, 2]


# --- TEACh is as it was ------------------------------------------------------------------------


@pytest.mark.parametrize("trim", sorted(TEACH_KEYS))
def test_teach_settings_keep_their_key(trim: Any) -> None:
    verifier = Verifier(trim=trim)
    assert verifier.key == TEACH_KEYS[trim]
    assert verifier.key_for(Episode(id="e", actions=COFFEE_PLAN)) == verifier.key


def test_a_teach_result_is_the_same_and_records_no_domain() -> None:
    result = verify_plan(COFFEE_PLAN, "Make a mug of coffee.")
    assert result.refined == COFFEE_REFINED
    assert result.settings is not None and result.settings.key == TEACH_KEYS["natural"]
    assert "domains" not in result.settings.model_dump()


# --- VirtualHome through the API ---------------------------------------------------------------


@needs_vh
def test_verify_plan_repairs_a_virtualhome_program_and_records_the_package_version() -> None:
    import importlib.metadata

    from planverify.domains.virtualhome.judge import RULES_VERSION

    lines = list(_record(DRINK)["actions"])
    broken = [line for line in lines if not line.startswith("[OPEN]")]  # the cupboard stays shut
    result = verify_plan(broken, "Drink", domain="virtualhome", program=DRINK)
    assert result.status == "ok", result.error
    assert [i.action for i in result.inserted] == ["[OPEN] <cupboard> (1.229)"]
    assert result.inserted[0].evidence == "proven"
    assert result.original == broken  # the lines are kept as written, never TEACh-parsed
    settings = result.settings
    assert settings is not None and settings.key != TEACH_KEYS["natural"]
    recorded = settings.model_dump()["domains"]["virtualhome"]
    package, rules, prompt = recorded.split("+")
    assert package == importlib.metadata.version("eai-eval") and rules == f"rules-{RULES_VERSION}"
    assert prompt == "judge-" + template_version("judge_system_virtualhome")


@needs_vh
def test_verify_many_takes_virtualhome_records_beside_teach_ones() -> None:
    records = [_record(name) for name in PROGRAMS]
    results = verify_many([*records, {"id": "teach", "actions": COFFEE_PLAN}])
    assert [r.status for r in results] == ["ok"] * 4
    assert [r.refined for r in results[:3]] == [r["actions"] for r in records]  # clean programs
    assert results[3].refined == COFFEE_REFINED and results[3].settings is not None
    assert results[3].settings.key == TEACH_KEYS["natural"]


@needs_vh
def test_a_model_judge_gets_scene_facts_and_its_refused_flag_is_vetoed_with_why() -> None:
    lines = list(_record(DRINK)["actions"])
    grab = next(i for i, line in enumerate(lines) if line.startswith("[GRAB] <water_glass>"))
    answer = "\n".join(  # the plan as the prompt shows it: angle brackets as quotes
        f"ACTION: {i + 1}. {as_data(line)}\nANNOTATION: "
        + ("a detour. #REMOVE: not needed" if i == grab else "needed.")
        for i, line in enumerate(lines)
    )
    model = scripted(answer)
    result = verify_plan(
        lines,
        "Drink",
        domain="virtualhome",
        program=DRINK,
        judge=model,
        grounding=True,
        static=True,
    )
    assert result.status == "ok", result.error
    assert result.refined == lines  # the flag did not survive certify
    (veto,) = result.history[0].vetoes
    assert veto.step == grab and veto.reason.startswith("without it, step")
    prompt = str(model.prompts[0][-1].content)
    assert (
        "water_glass (1000): in dining_room" in prompt
        and as_data("[VERB] <object> (k.ID)") in prompt
    )
    instructions = str(model.prompts[0][0].content)  # VirtualHome's own, not TEACh's
    assert "[WALK] <kitchen> (1.11)" in instructions and "Agent.Verb" not in instructions


# --- VirtualHome through the commands ----------------------------------------------------------


@pytest.fixture(scope="module")
def annotated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three programs with one labelled error each (`corrupt --generator virtualhome`)."""
    if not _has_virtualhome():
        pytest.skip("VirtualHome needs eai-eval (make install adds it without its dependencies)")
    folder = tmp_path_factory.mktemp("vh")
    inputs = _write(folder / "programs.jsonl", [_record(name) for name in PROGRAMS])
    out = folder / "annotated.jsonl"
    done = runner.invoke(
        app,
        [
            *("corrupt", str(inputs), "-o", str(out), "--generator", "virtualhome"),
            *("--seed", "1", "--clean-fraction", "0"),
        ],
    )
    assert done.exit_code == 0, done.output
    assert "3 with errors" in done.stdout
    return out


@pytest.fixture(scope="module")
def verified(annotated: Path) -> Path:
    out = annotated.with_name("results.jsonl")
    done = runner.invoke(app, ["verify", str(annotated), "-o", str(out)])
    assert done.exit_code == 0, done.output
    return out


def test_corrupt_writes_labels_the_simulator_checked(annotated: Path) -> None:
    episodes = [Episode.model_validate_json(line) for line in annotated.read_text().splitlines()]
    assert [e.id for e in episodes] == list(PROGRAMS)
    for episode in episodes:
        assert episode.domain == "virtualhome" and episode.labels
        extra = episode.model_extra or {}
        assert extra["clean"] == _record(episode.id)["actions"] and extra["vh_error"]


def test_corrupt_verify_score_finds_every_label(annotated: Path, verified: Path) -> None:
    results = [
        VerificationResult.model_validate_json(line) for line in verified.read_text().splitlines()
    ]
    assert all(r.status == "ok" for r in results)
    assert [r.refined for r in results] == [_record(name)["actions"] for name in PROGRAMS]
    report = annotated.with_name("score.json")
    done = runner.invoke(app, ["score", str(annotated), str(verified), "--json", str(report)])
    assert done.exit_code == 0, done.output
    overall = json.loads(report.read_text())["overall"]
    assert overall["recall"] == overall["precision"] == 1.0


def test_eval_runs_on_virtualhome_episodes(annotated: Path) -> None:
    folder = annotated.with_name("eval")
    done = runner.invoke(app, ["eval", str(annotated), "--report", str(folder), "-j", "rules"])
    assert done.exit_code == 0, done.output
    assert "executable 100.0%" in done.stdout


def test_export_writes_virtualhome_plans_in_their_own_notation(
    annotated: Path, verified: Path
) -> None:
    out = annotated.with_name("sft.jsonl")
    done = runner.invoke(
        app,
        ["export", str(verified), "--episodes", str(annotated), "--format", "sft", "-o", str(out)],
    )
    assert done.exit_code == 0, done.output
    row = json.loads(out.read_text().splitlines()[0])
    system, _, answer = row["messages"]
    assert "VirtualHome script lines" in system["content"]
    assert answer["content"].splitlines() == _record(PROGRAMS[0])["actions"]


def test_review_names_the_scene_objects_of_a_virtualhome_plan(
    annotated: Path, verified: Path
) -> None:
    site = annotated.with_name("site")
    done = runner.invoke(
        app, ["review", str(verified), "--html", str(site), "--episodes", str(annotated)]
    )
    assert done.exit_code == 0, done.output
    page = (site / "data" / "e" / "000000.js").read_text(encoding="utf-8")
    assert '["352","couch"]' in page  # file3_1: Relax on sofa


def test_verify_server_refuses_virtualhome_records_with_one_line() -> None:
    import asyncio

    from planverify.runs.remote import RemoteVerifier

    class Bare:  # what `averify` reads of a RemoteVerifier before it calls the server
        settings = Verifier().settings

    episode = Episode.model_validate(
        {"id": "v", "domain": "virtualhome", "actions": ["[WALK] <x> (1.1)"]}
    )
    result = asyncio.run(RemoteVerifier.averify(Bare(), episode))  # type: ignore[arg-type]
    assert result.status == "error"
    assert result.error == (
        "verify --server takes TEACh records only, not virtualhome: verify it locally"
    )


@needs_vh
def test_a_cancelled_run_stops_the_virtualhome_judges_search() -> None:
    import threading

    from planverify.domains import Case, domain_of
    from planverify.world.deadline import Stopped, stop_when

    cancel = threading.Event()
    cancel.set()  # the served run gave up: the search stops at its first check
    case = Case(lines=list(_record(DRINK)["actions"]), goal="Drink", program=DRINK)
    with stop_when(cancel=cancel), pytest.raises(Stopped):
        domain_of("virtualhome").critique(case, "natural")
