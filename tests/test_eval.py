"""`planverify eval`: convergence and executability figures, the Judge x Planner grid with
offline and fake model judges, the model cache, the report files, the command registered in a
Typer app, and the LangSmith path (offline, and against fakes of the client and runner)."""

from __future__ import annotations

import socket
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import orjson
import pytest
import typer
from matplotlib.image import imread
from typer.testing import CliRunner

from planverify import verify_many
from planverify.cli.eval import eval_command
from planverify.eval import smith
from planverify.eval.cache import SQLiteCache
from planverify.eval.convergence import convergence
from planverify.eval.grid import NO_PLANNER, arun_grid, plan_runs
from planverify.eval.report import false_positive_patterns, miss_patterns
from planverify.metrics import score_results
from planverify.prompts import PROMPT_VERSION
from planverify.records.episode import Episode, Label, iter_jsonl
from planverify.records.result import VerificationResult

from .conftest import ROOT, scripted
from .fake_openai import FakeOpenAI, Reply

ANNOTATED = ROOT / "examples" / "annotated.jsonl"
PNG = b"\x89PNG\r\n\x1a\n"
LOOPBACK = "http://127.0.0.1:9/v1"  # a base URL for runs that are planned, never sent

# One episode whose Move(1.0) is a labelled detour; the Judge texts follow judge_user.txt.
MUG = Episode(
    id="mug",
    goal="Take the mug.",
    actions=["Driver.Move(1.0)", "Driver.PickUp('Mug')"],
    labels=[Label(type="REMOVE", index=0, error="detour", reason="walks off for nothing")],
)
FLAG_MOVE = (
    "ACTION: 1. Driver.Move(1.0)\nANNOTATION: walks away #REMOVE: not needed for the mug\n"
    "ACTION: 2. Driver.PickUp('Mug')\nANNOTATION: takes the mug"
)
FLAG_MUG = (
    "ACTION: 1. Driver.Move(1.0)\nANNOTATION: walks to the mug\n"
    "ACTION: 2. Driver.PickUp('Mug')\nANNOTATION: #REMOVE: the mug looks pointless"
)
ALL_FINE = "ACTION: 1. Driver.PickUp('Mug')\nANNOTATION: takes the mug"
ALL_FINE_MOVE = "ACTION: 1. Driver.Move(1.0)\nANNOTATION: walks to the mug"


def annotated(limit: int | None = None) -> list[Episode]:
    episodes = [e for e in iter_jsonl(ANNOTATED) if isinstance(e, Episode)]
    return episodes[:limit]


def result(
    id: str, original: list[str], refined: list[str], revisions: int, **kw: Any
) -> VerificationResult:
    return VerificationResult(id=id, original=original, refined=refined, revisions=revisions, **kw)


# --------------------------------------------------------------------------- convergence


def test_convergence_shares_stop_reasons_and_length_cut_by_hand() -> None:
    say = "Commander.Say('make coffee')"
    a, b, c = "Driver.PickUp('Mug')", "Driver.Move(1.0)", "Driver.Move(-1.0)"
    runs = [
        # 3 Driver steps -> 3, no revision
        result("r0", [say, a, b, c], [say, a, b, c], 0, iterations=1, stop_reason="no_objections"),
        # 3 -> 1 in one round (the Say line is not a step)
        result("r1", [say, a, b, c], [say, a], 1, iterations=2, stop_reason="no_objections"),
        # 2 -> 1 over three rounds, stopped by the cap
        result("r3", [a, b], [a], 3, iterations=3, stop_reason="max_iterations"),
        # 1 -> 1 in one round (one removed, one inserted)
        result("r1b", [b], [c], 1, iterations=2, stop_reason="no_change"),
        # left out of every share:
        VerificationResult.failed(Episode(id="bad", actions=[a]), "timeout"),
    ]
    flow = convergence(runs)
    assert (flow.episodes, flow.failed) == (4, 1)
    assert flow.rounds == [1, 2, 0, 1]
    assert flow.final_after == [0.25, 0.75, 0.75, 1.0]
    assert flow.mean_revisions == pytest.approx((0 + 1 + 3 + 1) / 4)
    assert flow.mean_iterations == pytest.approx((1 + 2 + 3 + 2) / 4)
    assert flow.stop_reasons == {"max_iterations": 1, "no_change": 1, "no_objections": 2}
    assert flow.mean_steps_removed == pytest.approx((0 + 2 + 1 + 0) / 4)
    assert flow.mean_length_reduction == pytest.approx((0 + 2 / 3 + 1 / 2 + 0) / 4)
    assert [f.id for f in flow.per_episode] == ["r0", "r1", "r3", "r1b", "bad"]
    assert convergence([]).final_after == [] and convergence([]).executable is None


def test_executable_share_comes_from_the_simulator_in_the_episode_scene() -> None:
    pick, put = "Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'Sink')"
    other = "Driver.PickUp('Apple')"
    runs = [
        result("fine", [pick, put], [pick, put], 0),
        # the loop removed the pick-up: the put-down has nothing to put
        result("broken", [pick, put], [put], 1),
        # the input picks up two things at once; the loop fixed it
        result("fixed", [pick, other, put], [pick, put], 1),
    ]
    episodes = {r.id: Episode(id=r.id, actions=r.original) for r in runs}
    flow = convergence(runs, episodes)
    assert flow.executable == pytest.approx(2 / 3)
    assert flow.executable_before == pytest.approx(2 / 3)
    by_id = {f.id: f for f in flow.per_episode}
    assert by_id["broken"].problem == f"step 1 ({put}): nothing is held, so Mug cannot be put down"
    assert not by_id["broken"].executable and by_id["broken"].executable_before
    assert by_id["fixed"].executable and not by_id["fixed"].executable_before


# --------------------------------------------------------------------------- grid


def test_plan_runs_static_once_per_judge_then_every_pair() -> None:
    runs = plan_runs(["rules", "baseline", "rules"], ["rules", "rules"], ["static", "iterative"])
    assert [(r.judge, r.planner, r.mode) for r in runs] == [
        ("rules", NO_PLANNER, "static"),
        ("baseline", NO_PLANNER, "static"),
        ("rules #2", NO_PLANNER, "static"),
        ("rules", "rules", "iterative"),
        ("rules", "rules #2", "iterative"),
        ("baseline", "rules", "iterative"),
        ("baseline", "rules #2", "iterative"),
        ("rules #2", "rules", "iterative"),
        ("rules #2", "rules #2", "iterative"),
    ]
    assert [r.verifier.context.static for r in runs] == [True] * 3 + [False] * 6
    only_static = plan_runs(["rules"], [], ["static"], max_iterations=2)
    assert [r.name for r in only_static] == ["rules (static)"]


async def test_grid_of_offline_judges_scores_as_planverify_scoring_does() -> None:
    episodes = annotated()
    cells = await arun_grid(
        episodes, judges=["rules", "baseline"], planners=["rules"], resamples=50, seed=3
    )
    assert [c.name for c in cells] == [
        "rules (static)",
        "baseline (static)",
        "rules / rules",
        "baseline / rules",
    ]
    for cell in cells:
        static = cell.mode == "static"
        direct = verify_many(episodes, judge=cell.judge, planner="rules", static=static)
        expected = score_results(episodes, direct, mode=cell.mode, resamples=50, seed=3)
        assert cell.report == expected
        assert (cell.convergence is None) == static
    # the rules Judge finds more of the injected errors than the paper's rule baseline
    assert cells[2].report.overall.counts.tp > cells[3].report.overall.counts.tp


async def test_grid_with_fake_model_judges_next_to_an_offline_one() -> None:
    # each fake answers: the static pass, then the loop's first pass, then its second pass
    right = scripted(FLAG_MOVE, FLAG_MOVE, ALL_FINE)
    wrong = scripted(FLAG_MUG, FLAG_MUG, ALL_FINE_MOVE)
    cells = await arun_grid([MUG], judges=[right, wrong, "baseline"], planners=["rules"])
    assert [(c.judge, c.planner, c.mode) for c in cells] == [
        ("ScriptedChatModel", NO_PLANNER, "static"),
        ("ScriptedChatModel #2", NO_PLANNER, "static"),
        ("baseline", NO_PLANNER, "static"),
        ("ScriptedChatModel", "rules", "iterative"),
        ("ScriptedChatModel #2", "rules", "iterative"),
        ("baseline", "rules", "iterative"),
    ]
    counts = [c.report.overall.counts for c in cells]
    assert [(k.tp, k.fp, k.fn) for k in counts] == [
        (1, 0, 0),
        (0, 1, 1),
        (0, 0, 1),
        (1, 0, 0),
        (0, 1, 1),
        (0, 0, 1),
    ]
    assert cells[3].results[0].refined == ["Driver.PickUp('Mug')"]
    assert cells[3].convergence is not None and cells[3].convergence.final_after == [0.0, 1.0]
    assert cells[5].convergence is not None and cells[5].convergence.final_after == [1.0]
    # the wrong judge's false positive keeps its rationale; its miss keeps the label's
    (fp,) = false_positive_patterns(cells[4])
    assert (fp.what, fp.count, fp.episode) == ("remove PickUp(Mug)", 1, "mug")
    assert "the mug looks pointless" in fp.detail
    (miss,) = miss_patterns(cells[4], {"mug": MUG})
    assert (miss.error, miss.what, miss.detail) == (
        "detour",
        "remove Move",
        "walks off for nothing",
    )
    (static_fp,) = false_positive_patterns(cells[1])
    assert "the mug looks pointless" in static_fp.detail
    assert len(right.prompts) == len(wrong.prompts) == 3


# --------------------------------------------------------------------------- cache


async def test_a_rerun_is_answered_from_the_cache_without_any_model_call(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    cache = SQLiteCache(path)
    # two replies suffice: the loop's first pass has the static pass's prompt, a cache hit
    first_model = scripted(FLAG_MOVE, ALL_FINE)
    first = await arun_grid([MUG], judges=[first_model], planners=["rules"], cache=cache)
    assert (cache.hits, cache.misses, len(cache)) == (1, 2, 2)
    assert first_model.cache is None  # the caller's model is left as it was
    cache.close()

    again = SQLiteCache(path)
    silent = scripted()  # fails if it is ever called
    second = await arun_grid([MUG], judges=[silent], planners=["rules"], cache=again)
    assert (again.hits, again.misses) == (3, 0)
    assert silent.prompts == []
    assert [c.report for c in second] == [c.report for c in first]
    assert [c.results[0].refined for c in second] == [c.results[0].refined for c in first]
    again.clear()
    assert len(again) == 0
    again.close()


def test_cache_keys_on_prompt_and_model_settings(tmp_path: Path) -> None:
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration

    cache = SQLiteCache(tmp_path / "c.sqlite")
    answer = [ChatGeneration(message=AIMessage(content="fine"))]
    cache.update("prompt", "model-a", answer)
    assert cache.lookup("prompt", "model-b") is None
    assert cache.lookup("other prompt", "model-a") is None
    found = cache.lookup("prompt", "model-a")
    assert found is not None and found[0].text == "fine"
    assert (cache.hits, cache.misses) == (1, 2)


# --------------------------------------------------------------------------- command


def app_with_eval() -> typer.Typer:
    """A throwaway app with the command registered as planverify.cli.program registers it."""
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    app.command("eval")(eval_command)

    @app.command("other")
    def other() -> None:  # a second command, so `eval` is a subcommand as in the real CLI
        """Nothing."""

    return app


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app_with_eval(), ["eval", *args])


def is_real_png(path: Path, min_bytes: int = 10_000) -> bool:
    data = path.read_bytes()
    if not data.startswith(PNG) or len(data) < min_bytes:
        return False
    pixels = imread(path)
    height, width = pixels.shape[:2]
    colours = np.unique(pixels.reshape(-1, pixels.shape[-1]), axis=0)
    return height >= 300 and width >= 500 and len(colours) > 50


def test_eval_command_writes_the_report_numbers_and_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "report"
    run = invoke(
        str(ANNOTATED), "--judge", "rules,baseline", "--report", str(folder), "--seed", "7"
    )
    assert run.exit_code == 0, run.output
    assert "iterative  rules / rules: recall 100.0, precision 100.0" in run.stdout
    assert f"report: {folder / 'report.md'}" in run.stdout
    assert not (tmp_path / ".planverify").exists()  # offline judges need no cache

    text = (folder / "report.md").read_text(encoding="utf-8")
    for heading in (
        "## Summary",
        "## Static: one Judge pass per judge (Table 1)",
        "## Iterative: Judge x Planner (Table 2)",
        "## Convergence (Figure 3)",
        "## Recall per error type",
        "## F1 per task family",
        "## Most frequent false positives and misses",
    ):
        assert heading in text
    assert "| judge \\ planner | rules |" in text
    assert "switches Toaster off before it was ever switched on" in text  # baseline's reason
    for name in ("grid.png", "convergence.png", "errors.png"):
        assert f"]({name})" in text
        assert is_real_png(folder / name), name

    numbers = orjson.loads((folder / "results.json").read_bytes())
    assert numbers["settings"]["seed"] == 7
    assert numbers["settings"]["prompts"] == PROMPT_VERSION
    runs = numbers["runs"]
    assert [(r["judge"], r["planner"], r["mode"]) for r in runs] == [
        ("rules", "-", "static"),
        ("baseline", "-", "static"),
        ("rules", "rules", "iterative"),
        ("baseline", "rules", "iterative"),
    ]
    episodes = annotated()
    for entry in runs:
        # each run's raw results are kept; rescoring them gives results.json's numbers
        found = [
            VerificationResult.model_validate_json(line)
            for line in (folder / entry["results_file"]).read_text().splitlines()
        ]
        again = score_results(episodes, found, mode=entry["mode"], seed=7)
        assert entry["report"] == again.model_dump(mode="json")
        assert len(entry["report"]["episodes"]) == 10
    loop = runs[2]["convergence"]
    assert loop["episodes"] == 10 and loop["final_after"][-1] == 1.0
    assert len(loop["per_episode"]) == 10 and runs[0]["convergence"] is None


def test_eval_command_with_a_model_judge_caches_its_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model spec goes through init_chat_model with the cache; here the factory is replaced
    by fakes that take the same keyword arguments."""
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "mug.jsonl"
    data.write_bytes(orjson.dumps(MUG.model_dump(mode="json")) + b"\n")
    made: list[Any] = []

    def fake_factory(replies: list[str]) -> Any:
        def load(spec: Any, **options: Any) -> Any:
            model = scripted(*replies).model_copy(update=options)
            made.append(model)
            return model

        return load

    import planverify.agents

    monkeypatch.setattr(planverify.agents, "load_chat_model", fake_factory([FLAG_MOVE, ALL_FINE]))
    first = invoke(str(data), "--judge", "openai:fake", "--report", "r1", "--resamples", "0")
    assert first.exit_code == 0, first.output
    assert "model cache: 1 answers reused, 2 model calls" in first.stdout
    assert isinstance(made[0].cache, SQLiteCache)
    assert (tmp_path / ".planverify" / "model-cache.sqlite").is_file()

    monkeypatch.setattr(planverify.agents, "load_chat_model", fake_factory([]))
    second = invoke(str(data), "--judge", "openai:fake", "--report", "r2", "--resamples", "0")
    assert second.exit_code == 0, second.output
    assert "model cache: 3 answers reused, 0 model calls" in second.stdout
    assert made[1].prompts == []
    one, two = (orjson.loads((tmp_path / d / "results.json").read_bytes()) for d in ("r1", "r2"))
    assert [r["report"] for r in one["runs"]] == [r["report"] for r in two["runs"]]

    # --no-cache asks the model again (and this fake has nothing left to say)
    nothing = invoke(str(data), "--judge", "openai:fake", "--report", "r3", "--no-cache")
    assert nothing.exit_code == 1
    assert nothing.stdout.count("; 1 failed") == 2


def test_eval_command_refuses_bad_input_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    plain = invoke(str(ROOT / "examples" / "episodes.jsonl"), "--report", str(tmp_path / "r"))
    assert plain.exit_code == 2 and "DATASET expects annotated episodes" in plain.stderr
    mode = invoke(str(ANNOTATED), "--mode", "sideways", "--report", str(tmp_path / "r"))
    assert mode.exit_code == 2 and "sideways" in mode.stderr
    spec = invoke(str(ANNOTATED), "--judge", "nope", "--report", str(tmp_path / "r"))
    assert spec.exit_code == 2 and "unknown model spec 'nope'" in spec.stderr
    output = invoke(str(ANNOTATED), "--judge-output", "yaml", "--report", str(tmp_path / "r"))
    assert output.exit_code == 2 and "--judge-output" in output.stderr
    missing = invoke(str(tmp_path / "nothing.jsonl"), "--report", str(tmp_path / "r"))
    assert missing.exit_code == 2 and "no such file" in missing.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no report, no cache file


def test_eval_command_leaves_out_bad_records_and_says_so(tmp_path: Path) -> None:
    data = tmp_path / "mixed.jsonl"
    lines = ANNOTATED.read_bytes().splitlines()[:2]
    plain = orjson.dumps({"id": "plain", "actions": ["Driver.Move(1.0)"]})
    data.write_bytes(b"\n".join([*lines, b"{not json", plain, lines[0]]) + b"\n")
    run = invoke(str(data), "--mode", "static", "--judge", "rules", "--report", str(tmp_path / "r"))
    assert run.exit_code == 1
    assert "malformed JSON" in run.stderr and "no labels" in run.stderr
    assert "repeated id" in run.stderr
    numbers = orjson.loads((tmp_path / "r" / "results.json").read_bytes())
    assert len(numbers["settings"]["skipped"]) == 3
    assert [r["mode"] for r in numbers["runs"]] == ["static"]
    assert len(numbers["runs"][0]["report"]["episodes"]) == 2
    text = (tmp_path / "r" / "report.md").read_text()
    assert "3 input record(s) left out" in text and "## Convergence" not in text


def test_eval_temperature_and_model_param_reach_the_requests_and_both_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Against the loopback fake server: the options are sent, change the run settings key,
    and miss the model cache that answered the same prompt under other parameters."""
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "mug.jsonl"
    data.write_bytes(orjson.dumps(MUG.model_dump(mode="json")) + b"\n")
    tuned = ["--temperature", "0.3", "--model-param", "seed=11", "--model-param", "top_p=0.5"]
    calls: list[int] = []
    with FakeOpenAI(lambda body: Reply(content=FLAG_MOVE)) as server:
        for n, extra in enumerate(([], tuned, tuned)):
            run = invoke(
                str(data), "--judge", "openai:m", "--mode", "static", "--base-url",
                server.base_url, "--report", f"r{n}", "--resamples", "0", *extra,
            )  # fmt: skip
            assert run.exit_code == 0, run.output
            calls.append(len(server.requests))
    assert calls == [1, 2, 2]  # the third run is answered from the cache
    first, second = server.requests
    assert (first["temperature"], first["seed"], "top_p" in first) == (0, 1234, False)
    assert (second["temperature"], second["seed"], second["top_p"]) == (0.3, 11, 0.5)
    keys = [_settings_key(tmp_path / f"r{n}") for n in range(3)]
    assert keys[0] != keys[1] == keys[2]
    numbers = orjson.loads((tmp_path / "r1" / "results.json").read_bytes())
    assert numbers["settings"]["temperature"] == 0.3
    assert numbers["settings"]["model_params"] == {"seed": 11, "top_p": 0.5}


def _settings_key(report: Path) -> str:
    """The settings key of the one result of a report's one run."""
    (results,) = (report / "results").glob("*.jsonl")
    found = VerificationResult.model_validate_json(results.read_text().splitlines()[0])
    assert found.settings is not None
    return found.settings.key


def test_plan_runs_settings_key_follows_temperature_and_model_params() -> None:
    def key(**options: Any) -> str:
        (run,) = plan_runs(["openai:m"], ["openai:m"], ["iterative"], base_url=LOOPBACK, **options)
        return run.verifier.key

    assert len({key(), key(temperature=0.7), key(model_params={"top_p": 0.5})}) == 3


def test_eval_command_rejects_a_model_param_without_a_value(tmp_path: Path) -> None:
    run = invoke(str(ANNOTATED), "--model-param", "seed", "--report", str(tmp_path / "r"))
    assert run.exit_code == 2 and "KEY=VALUE" in run.stderr
    assert not (tmp_path / "r").exists()


def test_eval_command_without_matplotlib_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    run = invoke(str(ANNOTATED), "--report", str(tmp_path / "r"))
    assert run.exit_code == 2
    assert run.stderr.strip().splitlines() == [
        "error: plots need matplotlib: pip install 'planverify[eval]'"
    ]
    assert not (tmp_path / "r").exists()


# --------------------------------------------------------------------------- LangSmith


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Every attempt to resolve a name or open a connection is recorded and refused."""
    attempts: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args)
        raise OSError("network is off in tests")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    yield attempts


async def test_langsmith_offline_runs_the_same_evaluators_and_sends_nothing(
    no_network: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LANGSMITH_API_KEY", raising=False)
    episodes = annotated(6)
    cells = await arun_grid(episodes, judges=["rules", "baseline"], planners=["rules"])
    monkeypatch.setenv("LANGSMITH_TRACING", "true")  # only the LangSmith part is under test
    sync, experiments = await smith.run_langsmith(
        "sample", episodes, cells, max_iterations=5, dataset="annotated.jsonl"
    )
    assert sync is None
    assert no_network == []
    assert [(e.judge, e.planner, e.mode, e.uploaded) for e in experiments] == [
        (c.judge, c.planner, c.mode, False) for c in cells
    ]
    for experiment, cell in zip(experiments, cells, strict=True):
        overall = cell.report.overall
        assert (experiment.recall, experiment.precision, experiment.f1) == (
            overall.recall,
            overall.precision,
            overall.f1,
        )
        per_episode = {
            s.id: {"tp": s.counts.tp, "fp": s.counts.fp, "fn": s.counts.fn}
            for s in cell.report.episodes
        }
        assert experiment.per_example == per_episode
    assert experiments[0].experiment == "sample-rules-static"


def test_the_offline_client_refuses_to_send(no_network: list[Any]) -> None:
    from langsmith.utils import LangSmithConnectionError

    client = smith.offline_client()
    with pytest.raises(LangSmithConnectionError, match="refused GET"):
        client.read_dataset(dataset_name="anything")
    assert no_network == []


class FakeLangSmith:
    """The parts of langsmith.Client that creating and updating a dataset uses, in memory."""

    def __init__(self) -> None:
        self.datasets: dict[str, SimpleNamespace] = {}
        self.examples: dict[str, dict[str, SimpleNamespace]] = {}
        self.calls: list[str] = []

    def has_dataset(self, *, dataset_name: str) -> bool:
        return dataset_name in self.datasets

    def read_dataset(self, *, dataset_name: str) -> SimpleNamespace:
        return self.datasets[dataset_name]

    def create_dataset(self, name: str, **kwargs: Any) -> SimpleNamespace:
        self.calls.append("create_dataset")
        self.datasets[name] = SimpleNamespace(id=uuid.uuid4(), name=name)
        self.examples[str(self.datasets[name].id)] = {}
        return self.datasets[name]

    def list_examples(self, *, dataset_id: Any, example_ids: Any = None) -> list[SimpleNamespace]:
        found = list(self.examples[str(dataset_id)].values())
        if example_ids is not None:
            wanted = {str(i) for i in example_ids}
            found = [e for e in found if str(e.id) in wanted]
        return found

    def create_examples(self, *, dataset_id: Any, examples: list[dict[str, Any]]) -> None:
        self.calls.append(f"create_examples {len(examples)}")
        for e in examples:
            self.examples[str(dataset_id)][str(e["id"])] = SimpleNamespace(
                id=e["id"],
                dataset_id=dataset_id,
                inputs=e["inputs"],
                outputs=e["reference_outputs"],
                metadata=e["metadata"],
            )

    def update_examples(self, *, dataset_id: Any, updates: list[dict[str, Any]]) -> None:
        self.calls.append(f"update_examples {len(updates)}")
        for u in updates:
            example = self.examples[str(dataset_id)][str(u["id"])]
            example.inputs, example.outputs, example.metadata = (
                u["inputs"],
                u["outputs"],
                u["metadata"],
            )


def test_dataset_is_created_then_updated_in_place() -> None:
    client = FakeLangSmith()
    episodes = annotated(3)
    first = smith.sync_dataset(client, "teach", episodes)
    assert (first.created, first.added, first.updated, first.unchanged) == (True, 3, 0, 0)
    example = first.examples[0]
    assert example.inputs == {
        "goal": episodes[0].goal,
        "actions": episodes[0].actions,
        "scene": episodes[0].scene.model_dump(mode="json") if episodes[0].scene else None,
        "task": episodes[0].task,
        "teach_task": episodes[0].teach_task,
    }
    assert example.outputs["labels"][0]["type"] in ("REMOVE", "MISSING")
    assert example.metadata == {"episode_id": episodes[0].id, "task": episodes[0].task}

    relabelled = episodes[1].model_copy(update={"labels": []})
    again = smith.sync_dataset(client, "teach", [episodes[0], relabelled, *annotated(4)[3:]])
    assert (again.created, again.added, again.updated, again.unchanged) == (False, 1, 1, 1)
    assert [e.id for e in again.examples][:2] == [e.id for e in first.examples][:2]
    assert client.calls == [
        "create_dataset",
        "create_examples 3",
        "create_examples 1",
        "update_examples 1",
    ]
    assert len(client.examples[first.id]) == 4


async def test_online_experiments_run_the_graph_with_metadata(
    monkeypatch: pytest.MonkeyPatch, no_network: list[Any]
) -> None:
    """With a client, each run becomes an uploaded experiment whose target runs the graph;
    `aevaluate` is replaced by a stand-in that calls the target and evaluators as it would."""
    seen: list[dict[str, Any]] = []

    async def fake_aevaluate(target: Any, **kwargs: Any) -> Any:
        seen.append(kwargs)
        rows = []
        for example in kwargs["data"]:
            outputs = await target(example.inputs)
            (evaluator,) = kwargs["evaluators"]
            got = evaluator(example.inputs, outputs, example.outputs)
            rows.append(
                {
                    "example": example,
                    "evaluation_results": {
                        "results": [SimpleNamespace(**r) for r in got["results"]]
                    },
                    "outputs": outputs,
                }
            )
        (summary,) = kwargs["summary_evaluators"]
        summary(
            [r["example"].inputs for r in rows],
            [r["outputs"] for r in rows],
            [r["example"].outputs for r in rows],
        )

        class Results:
            experiment_name = kwargs["experiment_prefix"] + "-1234"
            url = "https://smith.example/experiment"

            async def __aiter__(self) -> Any:
                for row in rows:
                    yield row

        return Results()

    monkeypatch.setattr(smith, "aevaluate", fake_aevaluate)
    episodes = annotated(4)
    cells = await arun_grid(episodes, judges=["rules"], planners=["rules"], max_iterations=3)
    client = FakeLangSmith()
    sync, experiments = await smith.run_langsmith(
        "teach", episodes, cells, max_iterations=3, dataset="a.jsonl", client=client
    )
    assert sync is not None and sync.added == 4
    assert [e.uploaded for e in experiments] == [True, True]
    assert experiments[1].experiment == "teach-rules-rules-iterative-1234"
    assert seen[1]["metadata"] == {
        "judge": "rules",
        "planner": "rules",
        "mode": "iterative",
        "prompts": PROMPT_VERSION,
        "max_iterations": 3,
        "dataset_file": "a.jsonl",
    }
    for experiment, cell in zip(experiments, cells, strict=True):
        assert experiment.f1 == cell.report.overall.f1
        assert experiment.recall == cell.report.overall.recall
    assert no_network == []


def test_eval_trim_reaches_every_run_and_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = plan_runs(["rules"], ["rules"], ["static", "iterative"], trim="minimal")
    assert [r.verifier.context.trim for r in runs] == ["minimal", "minimal"]
    assert [r.verifier.settings.trim for r in runs] == ["minimal", "minimal"]
    assert runs[0].verifier.key != plan_runs(["rules"], [], ["static"])[0].verifier.key
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "report"
    run = invoke(
        str(ANNOTATED), "--judge", "rules", "--report", str(folder), "--trim", "minimal",
        "--resamples", "0", "--limit", "2",
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    numbers = orjson.loads((folder / "results.json").read_bytes())
    assert numbers["settings"]["trim"] == "minimal"
    assert "trim policy minimal" in (folder / "report.md").read_text(encoding="utf-8")
    for entry in numbers["runs"]:
        for line in (folder / entry["results_file"]).read_text().splitlines():
            assert VerificationResult.model_validate_json(line).trim == "minimal"
