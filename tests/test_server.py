"""The graph behind `langgraph dev`: served from `langgraph.json`, run with a per-run context.

One in-memory dev server (langgraph-cli[inmem]) is started per module on a free loopback port,
with its working directory in a temporary folder (it writes `.langgraph_api/` there, not into
the checkout) and an environment without API keys, tracing, analytics or version checks, so
nothing leaves the machine. The offline defaults (baseline Judge, rules Planner) need no model.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from planverify.graphs.context import VerifierContext
from planverify.records.result import VerificationResult

from .conftest import COFFEE_PLAN, COFFEE_REFINED, ROOT

pytest.importorskip(
    "langgraph_sdk", reason="langgraph-sdk is not installed (pip install -e '.[dev]')"
)
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient

pytestmark = pytest.mark.skipif(
    sys.platform == "win32", reason="the server fixture manages a POSIX process group"
)

LANGGRAPH = Path(sys.executable).parent / "langgraph"
CONFIG = ROOT / "langgraph.json"
GRAPH = "planverify"
START_TIMEOUT = 90.0
STOP_TIMEOUT = 15.0
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
LOGS: dict[str, Path] = {}  # server URL -> its log file
PROCESSES: dict[str, subprocess.Popen[bytes]] = {}  # server URL -> its process (a test kills it)

PLAN, REFINED = COFFEE_PLAN, COFFEE_REFINED
INPUT = {"episode_id": "srv", "goal": "Make coffee.", "actions": PLAN}
CONTEXT = {"judge": "baseline", "planner": "rules", "max_iterations": 3}


def server_env(home: Path) -> dict[str, str]:
    """A minimal environment: no API keys reach the server, and it phones nobody.

    - LANGGRAPH_CLI_NO_ANALYTICS=1: the CLI otherwise posts usage data on every command.
    - LANGGRAPH_NO_VERSION_CHECK=true: the server otherwise asks PyPI for a newer langgraph-api.
    - LANGSMITH_TRACING / LANGCHAIN_TRACING_V2=false: no traces (and no LangSmith lookups for
      the Studio URL); without a licence key the server's metadata loop is skipped anyway.
    - `--no-browser` (below) skips the thread that opens Studio and asks LangSmith for an org.
    """
    return {
        "PATH": f"{LANGGRAPH.parent}{os.pathsep}{os.environ.get('PATH', os.defpath)}",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "LANGSMITH_TRACING": "false",
        "LANGCHAIN_TRACING_V2": "false",
        "NO_PROXY": "127.0.0.1,localhost",
    }


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tail(log: Path, size: int = 4000) -> str:
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    return text[-size:]


def is_up(url: str) -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback, no proxy
    try:
        with opener.open(f"{url}/ok", timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate the server's process group; kill it if it does not exit in time."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=STOP_TIMEOUT)


@contextlib.contextmanager
def launch(workdir: Path, *, env: dict[str, str] | None = None, jobs: int = 2) -> Iterator[str]:
    """Run `langgraph dev` serving this repository's `langgraph.json` in `workdir` (its state
    stays there, so a second launch in the same folder is a restart), with `server_env` and
    `env` over it and `jobs` runs at once; yields its URL and stops it on exit."""
    if not LANGGRAPH.exists():
        pytest.skip(f"langgraph CLI not found at {LANGGRAPH} (pip install 'langgraph-cli[inmem]')")
    if importlib.util.find_spec("langgraph_api") is None:
        pytest.skip("the in-memory server is not installed (pip install 'langgraph-cli[inmem]')")
    log = workdir / "server.log"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    LOGS[url] = log
    command = [
        str(LANGGRAPH),
        "dev",
        "--no-browser",
        "--no-reload",  # no file watcher on the checkout
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--config",
        str(CONFIG),  # absolute; the server's cwd is the temporary folder
        "--n-jobs-per-worker",
        str(jobs),
    ]
    with log.open("ab") as out:
        proc = subprocess.Popen(
            command,
            cwd=workdir,
            env={**server_env(workdir), **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so teardown reaches any child
        )
    PROCESSES[url] = proc
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not is_up(url):
            if proc.poll() is not None:
                pytest.fail(f"langgraph dev exited with {proc.returncode}:\n{tail(log)}")
            if "already in use" in tail(log):
                pytest.fail(f"port {port} was taken before the server bound it:\n{tail(log)}")
            if time.monotonic() > deadline:
                pytest.fail(
                    f"langgraph dev did not answer {url}/ok in {START_TIMEOUT}s:\n{tail(log)}"
                )
            time.sleep(0.2)
        yield url
    finally:
        stop(proc)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a running `langgraph dev` serving this repository's `langgraph.json`."""
    with launch(tmp_path_factory.mktemp("server")) as url:
        yield url


@pytest.fixture
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The servers are on loopback: no proxy settings reach the clients a test makes."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    yield


def sdk_client(url: str, **options: Any) -> SyncLangGraphClient:
    """An SDK client that sends no API key and ignores proxy settings (the server is local);
    `options` as `get_sync_client` takes them (headers, timeout)."""
    with pytest.MonkeyPatch.context() as patch:
        for name in PROXY_VARIABLES:  # httpx reads these when the client is created
            patch.delenv(name, raising=False)
            patch.delenv(name.lower(), raising=False)
        return get_sync_client(url=url, api_key=None, **{"timeout": 60, **options})


@pytest.fixture(scope="module")
def client(server: str) -> Iterator[SyncLangGraphClient]:
    """An SDK client for the module's server."""
    with sdk_client(server) as sdk:
        yield sdk


def actions(values: dict[str, Any]) -> list[str]:
    return [step["action"] for step in values["plan"]]


def test_the_graph_is_served_as_an_assistant_with_its_context_schema(
    client: SyncLangGraphClient,
) -> None:
    assistants = client.assistants.search(graph_id=GRAPH)
    assert [a["graph_id"] for a in assistants] == [GRAPH]
    described = json.loads(CONFIG.read_text(encoding="utf-8"))["graphs"][GRAPH]["description"]
    assert assistants[0]["description"] == described
    schemas = client.assistants.get_schemas(assistants[0]["assistant_id"])
    context = schemas["context_schema"] or {}
    assert {"judge", "planner", "max_iterations", "static"} <= set(context.get("properties", {}))
    fields = schemas["input_schema"]["properties"]
    assert list(fields) == [
        "episode_id",
        "goal",
        "domain",
        "actions",
        "scene",
        "task",
        "teach_task",
        "program",
    ]
    assert schemas["input_schema"]["required"] == ["actions"]
    assert all(fields[name].get("description") for name in fields), "every input is documented"
    assert set(schemas["output_schema"]["properties"]) == set(VerificationResult.model_fields)


def test_a_thread_run_removes_the_cancelling_moves_and_keeps_checkpoints(
    client: SyncLangGraphClient,
) -> None:
    thread = client.threads.create()
    values = client.runs.wait(thread["thread_id"], GRAPH, input=INPUT, context=CONTEXT)
    assert isinstance(values, dict)
    result = VerificationResult.model_validate(values)  # the output is the result record
    assert set(values) == set(VerificationResult.model_fields)
    assert (result.id, result.status, result.original, result.refined) == (
        "srv",
        "ok",
        PLAN,
        REFINED,
    )
    assert (result.stop_reason, result.iterations, result.revisions) == ("no_objections", 2, 1)
    assert [(v.index, v.verdict) for v in result.verdicts if v.verdict == "remove"] == [
        (1, "remove"),
        (2, "remove"),
    ]
    removed = [(e["kind"], e["origin"]) for e in values["history"][0]["edits"]]
    assert removed == [("remove", 1), ("remove", 2)], "history is not written twice"
    assert len(values["history"]) == 2 and values["warnings"] == []
    assert result.settings is not None
    assert (result.settings.judge, result.settings.max_iterations) == ("baseline", 3)

    history = client.threads.get_history(thread["thread_id"], limit=100)
    assert len(history) >= 5
    latest, first = history[0], history[-1]
    assert latest["next"] == [] and latest["values"]["stop_reason"] == "no_objections"
    assert actions(latest["values"]) == REFINED
    assert first["next"] == ["__start__"]
    stepped = {s["metadata"]["step"] for s in history}
    assert stepped == set(range(-1, len(history) - 1)), "one checkpoint per super-step"
    visited = {node for s in history for node in s["next"]}
    assert {"prepare", "judge", "planner", "record"} <= visited
    assert "converge" not in visited, "a pass decides itself whether the loop goes on"
    assert history[1]["next"] == ["record"], "the record is the last step"
    assert "review" not in visited, "review is skipped unless the context asks for it"


@pytest.mark.parametrize(
    ("context", "stop_reason", "iterations", "plan"),
    [
        ({"max_iterations": 1}, "max_iterations", 1, REFINED),
        ({"static": True}, "static", 1, PLAN),
        ({}, "no_objections", 2, REFINED),
    ],
    ids=["max_iterations=1", "static", "defaults"],
)
def test_the_run_context_changes_the_loop(
    client: SyncLangGraphClient,
    context: dict[str, Any],
    stop_reason: str,
    iterations: int,
    plan: list[str],
) -> None:
    values = client.runs.wait(None, GRAPH, input=INPUT, context=context)  # stateless run
    assert isinstance(values, dict)
    assert (values["stop_reason"], values["iterations"]) == (stop_reason, iterations)
    assert values["refined"] == plan
    expected = VerifierContext(**context).settings()
    assert values["settings"] == expected.model_dump(mode="json"), "settings of the run's context"


def test_an_assistant_created_with_a_context_runs_with_its_settings(
    client: SyncLangGraphClient,
) -> None:
    assistant = client.assistants.create(
        GRAPH, context={"judge": "baseline", "static": True}, name="planverify-static"
    )
    try:
        values = client.runs.wait(None, assistant["assistant_id"], input=INPUT)
        assert isinstance(values, dict)
        assert (values["stop_reason"], values["refined"]) == ("static", PLAN)
        assert values["settings"]["judge"] == "baseline" and values["settings"]["mode"] == "static"
        overruled = client.runs.wait(
            None, assistant["assistant_id"], input=INPUT, context={"static": False}
        )
        assert isinstance(overruled, dict)
        assert (overruled["stop_reason"], overruled["refined"]) == ("no_objections", REFINED)
    finally:
        client.assistants.delete(assistant["assistant_id"])


def test_served_runs_do_not_warn_about_durability(client: SyncLangGraphClient, server: str) -> None:
    thread = client.threads.create()
    for thread_id in (None, thread["thread_id"]):  # a stateless run has no checkpointer
        values = client.runs.wait(thread_id, GRAPH, input=INPUT, context=CONTEXT)
        assert isinstance(values, dict) and values["status"] == "ok"
    log = LOGS[server].read_text(encoding="utf-8", errors="replace")
    assert "POST /runs/wait" in log or "runs/wait" in log, "the log is the server's"
    assert "durability" not in log


def test_verify_runs_on_the_server_and_resumes_from_its_threads(
    server: str, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from planverify.cli import app
    from planverify.records.episode import Episode

    source = tmp_path / "in.jsonl"
    episodes = [
        Episode(id="srv-a", goal="Make coffee.", actions=PLAN),
        Episode(id="srv-b", goal="Make coffee.", actions=PLAN[:1] + PLAN[3:]),
    ]
    source.write_text("".join(e.model_dump_json() + "\n" for e in episodes), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    runner = CliRunner()
    with pytest.MonkeyPatch.context() as patch:
        for name in PROXY_VARIABLES:
            patch.delenv(name, raising=False)
            patch.delenv(name.lower(), raising=False)
        first = runner.invoke(app, ["verify", str(source), "--server", server, "-o", str(out)])
        assert first.exit_code == 0, first.output
        results = [
            VerificationResult.model_validate_json(line) for line in out.read_bytes().splitlines()
        ]
        assert [r.id for r in results] == ["srv-a", "srv-b"]
        assert results[0].refined == REFINED and results[1].refined == REFINED

        sdk = get_sync_client(url=server, api_key=None)
        threads = sdk.threads.search(metadata={"episode_id": "srv-a"})
        assert len(threads) == 1
        runs_before = len(sdk.runs.list(threads[0]["thread_id"]))
        again = runner.invoke(app, ["verify", str(source), "--server", server, "-o", str(out)])
        assert again.exit_code == 0, again.output
        assert len(sdk.runs.list(threads[0]["thread_id"])) == runs_before, "finished: no new run"

        bad = runner.invoke(
            app, ["verify", str(source), "--server", server, "--judge", "nope:x", "-o", str(out)]
        )
        assert bad.exit_code == 1
        assert all(
            r.status == "error"
            for r in (
                VerificationResult.model_validate_json(x) for x in out.read_bytes().splitlines()
            )
        )
        down = runner.invoke(
            app, ["verify", str(source), "--server", "http://127.0.0.1:9", "-o", str(out)]
        )
        assert down.exit_code == 2 and "no LangGraph server at http://127.0.0.1:9" in down.stderr


def test_a_run_chooses_its_trim_policy_and_a_wrong_one_is_one_line(
    client: SyncLangGraphClient,
) -> None:
    values = client.runs.wait(None, GRAPH, input=INPUT, context={**CONTEXT, "trim": "minimal"})
    assert isinstance(values, dict) and values["settings"]["trim"] == "minimal"
    expected = VerifierContext(**CONTEXT, trim="minimal").settings()
    assert values["settings"] == expected.model_dump(mode="json")
    outcome = client.runs.wait(
        None, GRAPH, input=INPUT, context={"trim": "shortest"}, raise_error=False
    )
    assert isinstance(outcome, dict) and "__error__" in outcome, outcome
    error = outcome["__error__"]
    assert error["error"] == "SettingsError"
    (line,) = error["message"].splitlines()
    assert line.startswith("trim:") and "'natural'" in line and "'minimal'" in line
