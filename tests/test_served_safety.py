"""A served graph keeps its keys and stays up: `langgraph dev` attacked as an outsider would.

The server is `tests/test_server.py`'s (`launch`: its own `langgraph dev` on a free loopback
port, in a temporary folder, with a minimal environment), here with an operator's model keys
set, a token, an allow-list, ceilings and a short deadline. The model servers are loopback
catchers (`tests/fake_openai.py`) that record every request that reaches them, so a test can
tell whether the server's keys went anywhere. Nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import json
import socketserver
import threading
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from planverify.graphs.policy import (
    ALLOWED_ENV,
    DEADLINE_ENV,
    MAX_ACTIONS_ENV,
    MAX_CONCURRENCY_ENV,
    TOKEN_ENV,
)
from planverify.records.result import VerificationResult

from . import test_server as dev
from .conftest import COFFEE_PLAN, COFFEE_REFINED
from .fake_openai import FakeOpenAI, Reply

pytest.importorskip("langgraph_sdk", reason="langgraph-sdk is not installed")
from langgraph_sdk.client import SyncLangGraphClient

pytestmark = [dev.pytestmark, pytest.mark.usefixtures("no_proxy")]
no_proxy = dev.no_proxy  # no proxy settings reach the clients (the servers are on loopback)

OPENAI_KEY = "sk-operator-openai-7d1e"  # the server's own keys: they must reach no catcher
DEEPSEEK_KEY = "sk-operator-deepseek-52c9"
TOKEN = "token-for-tests-3b8a"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
DEADLINE = 10  # seconds, the module server's PLANVERIFY_RUN_DEADLINE_S
GRAPH = dev.GRAPH
STEP = ["Driver.Move(1.0)"]
FINE = "ACTION: 1. Driver.Move(1.0)\nANNOTATION: the plan needs it"
INPUT = {"episode_id": "served", "goal": "Make coffee.", "actions": COFFEE_PLAN}
OFFLINE = {"judge": "baseline", "planner": "rules", "max_iterations": 3}
STALL_DELAY = 600.0  # seconds a "slow" model takes to answer: far beyond any deadline here


MAX_ACTIONS = 50  # the module server's PLANVERIFY_MAX_ACTIONS


def answer(body: dict[str, Any]) -> Reply:
    """A no-objection answer for the one-step plan; "busy" and "slow" models take their time;
    "echo" refuses the request quoting the key it was sent, as a careless server may."""
    if body.get("model") == "echo":
        return Reply(status=400, error=f"Incorrect API key provided: {OPENAI_KEY}")
    delay = {"slow": STALL_DELAY, "busy": 3.0}.get(str(body.get("model")), 0.0)
    return Reply(content=FINE, delay=delay)


class Catcher:
    """A loopback TCP server that counts the connections it gets, whatever they carry (plain
    HTTP or a TLS handshake): any at all means a client was sent to it."""

    def __init__(self) -> None:
        self.connections = 0

        catcher = self

        class Count(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                catcher.connections += 1

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Count)
        self._server.daemon_threads = True
        self.address = "{}:{}".format(*self._server.server_address[:2])
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture(scope="module")
def catcher() -> Iterator[Catcher]:
    """Where a hostile client would send the server's Google credentials."""
    sink = Catcher()
    yield sink
    sink.close()


@pytest.fixture(scope="module")
def refused() -> Iterator[FakeOpenAI]:
    """A model server the operator never allowed."""
    with FakeOpenAI(answer, slots=4) as catcher:
        yield catcher


@pytest.fixture(scope="module")
def allowed() -> Iterator[FakeOpenAI]:
    """A model server in the allow-list."""
    with FakeOpenAI(answer, slots=4) as catcher:
        yield catcher


@pytest.fixture(scope="module")
def slow() -> Iterator[FakeOpenAI]:
    """An allowed model server whose "slow" model never answers in time."""
    with FakeOpenAI(answer, slots=4) as catcher:
        yield catcher


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory,
    refused: FakeOpenAI,
    allowed: FakeOpenAI,
    slow: FakeOpenAI,
) -> Iterator[str]:
    env = {
        "OPENAI_API_KEY": OPENAI_KEY,
        "DEEPSEEK_API_KEY": DEEPSEEK_KEY,
        ALLOWED_ENV: f"{allowed.base_url},{slow.base_url}",
        TOKEN_ENV: TOKEN,
        DEADLINE_ENV: str(DEADLINE),
        MAX_CONCURRENCY_ENV: "1",
        MAX_ACTIONS_ENV: str(MAX_ACTIONS),
    }
    with dev.launch(tmp_path_factory.mktemp("served"), env=env) as url:
        yield url


@pytest.fixture(scope="module")
def client(served: str) -> Iterator[SyncLangGraphClient]:
    with dev.sdk_client(served, headers=AUTH) as sdk:
        yield sdk


def failure(outcome: Any) -> dict[str, str]:
    """The `__error__` of a run that failed (the test fails when the run did not)."""
    assert isinstance(outcome, dict) and "__error__" in outcome, f"the run did not fail: {outcome}"
    error: dict[str, str] = outcome["__error__"]
    return error


def answered_within(seconds: float, url: str, **run: Any) -> Any:
    """The answer of a stateless run (`runs.wait`), failing the test when there is none within
    `seconds`: a generous bound of completion, not a timing figure. (The client's own read
    timeout never fires: the server keeps the connection alive while a run waits.)"""
    from langgraph_sdk import get_client

    async def wait() -> Any:
        sdk = get_client(url=url, api_key=None, headers=run.pop("headers", None))
        try:
            async with asyncio.timeout(seconds):
                return await sdk.runs.wait(None, GRAPH, **run)
        except TimeoutError:
            pytest.fail(f"no answer within {seconds} s")
        finally:
            await sdk.aclose()

    return asyncio.run(wait())


def keys_seen(catcher: FakeOpenAI) -> list[str]:
    """The Authorization headers of every request that reached a catcher."""
    return [
        next((v for k, v in headers.items() if k.lower() == "authorization"), "")
        for _, headers in catcher.arrivals
    ]


# ----------------------------------------------------------------- 1: where the keys go


def test_a_run_reaches_only_model_servers_the_operator_allowed(
    client: SyncLangGraphClient, refused: FakeOpenAI, allowed: FakeOpenAI
) -> None:
    here = refused.base_url
    hidden = here.replace("http://", f"http://{allowed.base_url.split('/')[2]}@")
    attempts: dict[str, tuple[dict[str, Any], str]] = {
        "base_url": ({"judge": "openai:gpt-4o-mini", "base_url": here}, "base_url:"),
        "model_params": (
            {"judge": "openai:gpt-4o-mini", "model_params": {"base_url": here}},
            "model_params.base_url:",
        ),
        "preset": ({"judge": "deepseek-r1", "base_url": here}, "DEEPSEEK_API_KEY"),
        "preset, allowed server": (
            {"judge": "deepseek-r1", "base_url": allowed.base_url},
            "DEEPSEEK_API_KEY",
        ),
        "alias": (
            {"judge": "openai:m", "model_params": {"openai_api_base": here}},
            "model_params.openai_api_base:",
        ),
        "user info": ({"judge": "openai:m", "base_url": hidden}, "user info"),
        "credentials": (
            {"judge": "openai:m", "base_url": allowed.base_url.replace("//", "//me:pw-4e1a@")},
            "user info",
        ),
        "key and headers": (
            {
                "judge": "openai:m",
                "base_url": allowed.base_url,
                "model_params": {"api_key": "mine", "model_kwargs": {"extra_headers": {}}},
            },
            "model_params.model_kwargs:",
        ),
    }
    for name, (context, says) in attempts.items():
        outcome = client.runs.wait(
            None, GRAPH, input={"actions": STEP}, context=context, raise_error=False
        )
        error = failure(outcome)
        assert error["error"] == "PolicyError", name
        assert says in error["message"] and "pw-4e1a" not in error["message"], (name, error)
    assistant = client.assistants.create(
        GRAPH, context={"judge": "openai:m", "base_url": here}, name="planverify elsewhere"
    )
    try:
        through = client.runs.wait(
            None, assistant["assistant_id"], input={"actions": STEP}, raise_error=False
        )
        assert "base_url:" in failure(through)["message"]
    finally:
        client.assistants.delete(assistant["assistant_id"])
    assert refused.arrivals == [], "no request reached a server the operator did not allow"
    assert allowed.arrivals == [], "nor the operator's keys an allowed server they do not own"

    values = client.runs.wait(
        None,
        GRAPH,
        input={"actions": STEP},
        context={"judge": "openai:m", "base_url": allowed.base_url},
    )
    assert isinstance(values, dict) and values["status"] == "ok", values
    assert [path for path, _ in allowed.arrivals] == ["/v1/chat/completions"]
    assert keys_seen(allowed) == [f"Bearer {OPENAI_KEY}"], "an allowed server gets the key"
    assert refused.arrivals == []


def leaked(text: str, secret: str) -> bool:
    """Whether text shows a secret, whole or any 10 characters of it in a row."""
    return any(secret[i : i + 10] in text for i in range(len(secret) - 9))


def test_a_run_sets_only_sampling_parameters_and_google_credentials_stay(
    client: SyncLangGraphClient, catcher: Catcher, refused: FakeOpenAI
) -> None:
    """A parameter that does not look like an endpoint still chooses one (google-genai builds
    `https://{location}-aiplatform.googleapis.com` and sends the server's Application Default
    Credentials there): every parameter but the sampling ones is refused, by name."""
    vertex = {"vertexai": True, "project": "p", "location": f"{catcher.address}/"}
    others = {
        "model_kwargs": {"model": "x"},
        "http_client": "x",
        "default_headers": {"X-Forwarded-For": "1"},
        "openai_proxy": refused.base_url,
        "client_options": {"api_endpoint": catcher.address},
    }
    outcome = client.runs.wait(
        None,
        GRAPH,
        input={"actions": STEP},
        context={
            "judge": "google_genai:gemini-2.5-flash",
            "model_params": {**vertex, **others, "temperature": 0.3, "top_p": 0.5, "seed": 7},
        },
        raise_error=False,
    )
    error = failure(outcome)
    assert error["error"] == "PolicyError"
    lines = error["message"].splitlines()
    assert [line.split(":")[0] for line in lines] == [
        f"model_params.{name}" for name in [*vertex, *others]
    ]
    assert catcher.connections == 0 and refused.arrivals == []


def test_no_error_text_shows_a_key_of_the_server(
    served: str, client: SyncLangGraphClient, allowed: FakeOpenAI, tmp_path: Path
) -> None:
    """A client-chosen parameter the chat-model class fails (pydantic quotes its arguments, the
    key among them), a model server echoing the key: neither run's answer, the `verify
    --server` record, the MCP answer nor the server's log shows it."""
    from typer.testing import CliRunner

    from planverify.cli import app

    model = {"judge": "openai:m", "base_url": allowed.base_url}
    answers = [
        client.runs.wait(
            None,
            GRAPH,
            input={"actions": STEP},
            context={**model, "model_params": {"model_kwargs": {"model": "x"}}},
            raise_error=False,
        ),
        client.runs.wait(
            None,
            GRAPH,
            input={"actions": STEP},
            context={**model, "model_params": {"top_p": "x"}},
            raise_error=False,
        ),
        client.runs.wait(
            None,
            GRAPH,
            input={"actions": STEP},
            context={**model, "judge": "openai:echo"},
            raise_error=False,
        ),
    ]
    errors = [failure(outcome) for outcome in answers]
    assert [error["error"] for error in errors] == [
        "PolicyError",  # the policy's refusal comes first now
        "ModelSpecError",  # one line, without the values the class was given
        "RedactedError",  # the model server's text, with the key redacted
    ]
    assert all("\n" not in error["message"] for error in errors), errors

    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "echo", "actions": STEP}) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    command = ["verify", str(source), "--server", served, "-o", str(out)]
    command += ["--judge", "openai:echo", "--base-url", allowed.base_url]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(TOKEN_ENV, TOKEN)
        CliRunner().invoke(app, command)
    record = VerificationResult.model_validate_json(out.read_text())
    assert record.status == "error" and record.error, record

    texts = {
        "answers": json.dumps(answers),
        "record": out.read_text(),
        "mcp": asyncio.run(mcp_answer(client, {**model, "judge": "openai:echo"})),
        "log": dev.LOGS[served].read_text(encoding="utf-8", errors="replace"),
    }
    assert "REDACTED" in texts["record"] + texts["answers"]
    for where, text in texts.items():
        assert not leaked(text, OPENAI_KEY), (where, text)
        assert not leaked(text, TOKEN), where


@asynccontextmanager
async def mcp_session(served: str) -> AsyncIterator[Any]:
    """An initialized MCP client session on the served graph's endpoint, with the token."""
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(headers=AUTH, timeout=60) as http,
        streamable_http_client(f"{served}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def mcp_answer(client: SyncLangGraphClient, context: dict[str, Any]) -> str:
    """The text of an MCP tool call on an assistant with these settings."""
    assistant = client.assistants.create(GRAPH, context=context, name="planverify echo")
    served = str(client.http.client.base_url).rstrip("/")
    try:
        async with mcp_session(served) as session:
            answer = await session.call_tool("planverify_echo", {"actions": STEP})
    finally:
        client.assistants.delete(assistant["assistant_id"])
    return answer.model_dump_json()


def test_a_plan_longer_than_the_operator_allows_is_refused_before_the_graph_starts(
    client: SyncLangGraphClient,
) -> None:
    long = [STEP[0]] * (MAX_ACTIONS + 1)
    error = failure(
        client.runs.wait(None, GRAPH, input={"actions": long}, context=OFFLINE, raise_error=False)
    )
    assert error == {
        "error": "PolicyError",
        "message": f"actions: {MAX_ACTIONS + 1} actions, more than this server verifies in "
        f"one run ({MAX_ACTIONS}, {MAX_ACTIONS_ENV})",
    }
    fits = client.runs.wait(None, GRAPH, input={"actions": long[:-1]}, context=OFFLINE)
    assert isinstance(fits, dict) and fits["status"] == "ok", fits


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("http://127.0.0.1:8000/v1", True),
        ("http://127.0.0.1:8000/v1/", True),
        ("http://127.0.0.1:8000/v1/deployments/a", True),
        ("http://127.0.0.1:8000/v10", False),  # a path prefix ends at a segment
        ("http://127.0.0.1:8000/v1/../admin", False),  # what the client would really call
        ("http://127.0.0.1:8000/v1/%2e%2e/admin", False),
        ("http://127.0.0.1:8000\\@evil.example/v1", False),
        ("http://127.0.0.1:8000@evil.example/v1", False),
        ("http://me:pw@127.0.0.1:8000/v1", False),
        ("http://127.0.0.1:8000/v1?key=x", False),
        ("https://127.0.0.1:8000/v1", False),
        ("http://127.0.0.1:8001/v1", False),
        ("http://localhost:8000/v1", False),
        ("http://[::1]:8000/v1", False),
    ],
)
def test_the_allow_list_matches_scheme_host_port_and_whole_path_segments(
    url: str, allowed: bool
) -> None:
    from planverify.graphs.policy import ServingPolicy

    policy = ServingPolicy.from_env({ALLOWED_ENV: "http://127.0.0.1:8000/v1/, https://api.example"})
    assert (policy.allows(url) is None) is allowed
    assert policy.allows("https://api.example/anything") is None
    assert policy.allows("https://api.example:443/v1") is None


# ----------------------------------------------------------------- 2: the operator's limits


def test_runs_together_keep_to_the_operators_ceiling_whatever_each_asks(
    client: SyncLangGraphClient, allowed: FakeOpenAI
) -> None:
    """Two runs at once asking for 7 and 8 calls in flight (each its own gate before): the
    ceiling (PLANVERIFY_MAX_CONCURRENCY=1) holds for both together."""
    allowed.max_in_service = 0
    before = len(allowed.arrivals)
    runs = []
    for cap in (7, 8):
        thread = client.threads.create()
        context = {"judge": "openai:busy", "base_url": allowed.base_url, "concurrency": cap}
        run = client.runs.create(
            thread["thread_id"], GRAPH, input={"actions": STEP}, context=context
        )
        runs.append((thread["thread_id"], run["run_id"]))
    for thread_id, run_id in runs:
        values = client.runs.join(thread_id, run_id)
        assert isinstance(values, dict) and values.get("status") == "ok", values
    assert len(allowed.arrivals) - before == 2, "each run called the model once"
    assert allowed.max_in_service == 1


# ----------------------------------------------------------------- 3: nothing stalls the server


def test_stalling_settings_are_refused_and_a_normal_run_answers_afterwards(
    served: str, client: SyncLangGraphClient, allowed: FakeOpenAI
) -> None:
    model = {"judge": "openai:m", "base_url": allowed.base_url}
    stalls = [
        ({**model, "concurrency": 0}, "concurrency: "),
        ({**model, "concurrency": 0}, "concurrency: "),
        ({**model, "rps": 1e-6}, "rps: "),
        ({**model, "rps": 1e-6}, "rps: "),
        ({"max_iterations": "abc"}, "max_iterations: "),
        ({"max_iterations": 0}, "max_iterations: "),
        ({"max_iterations": -1}, "max_iterations: "),
    ]
    started = []
    for context, _ in stalls:
        thread = client.threads.create()
        run = client.runs.create(
            thread["thread_id"], GRAPH, input={"actions": STEP}, context=context
        )
        started.append((thread["thread_id"], run["run_id"]))
    values = answered_within(30, served, headers=AUTH, input=INPUT, context=OFFLINE)
    assert isinstance(values, dict) and values["refined"] == COFFEE_REFINED
    for (thread_id, run_id), (_, says) in zip(started, stalls, strict=True):
        error = failure(client.runs.join(thread_id, run_id))
        assert error["error"] == "SettingsError"
        assert error["message"].startswith(says) and "\n" not in error["message"], error


def test_a_run_past_its_deadline_ends_as_an_error_record(
    served: str, client: SyncLangGraphClient, slow: FakeOpenAI
) -> None:
    context = {"judge": "openai:slow", "base_url": slow.base_url}
    late = {"episode_id": "late", "actions": STEP}
    values = answered_within(DEADLINE + 50, served, headers=AUTH, input=late, context=context)
    assert isinstance(values, dict), values
    record = VerificationResult.model_validate(values)
    assert (record.id, record.status, record.original, record.refined) == (
        "late",
        "error",
        STEP,
        STEP,
    )
    assert record.error is not None and f"deadline of {DEADLINE} s ({DEADLINE_ENV})" in record.error
    assert record.settings is not None and record.settings.judge == "openai:slow"

    from planverify.records.episode import Episode
    from planverify.runs.remote import RemoteVerifier

    async def remote() -> VerificationResult:  # `verify --server`: a thread per episode
        async with (
            asyncio.timeout(DEADLINE + 50),
            RemoteVerifier(
                served, judge="openai:slow", base_url=slow.base_url, api_key=""
            ) as verifier,
        ):
            return await verifier.averify(Episode(id="late-remote", actions=STEP))

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(TOKEN_ENV, TOKEN)
        failed = asyncio.run(remote())
    assert failed.status == "error" and failed.error is not None and DEADLINE_ENV in failed.error


def test_a_run_stuck_when_the_server_stopped_ends_by_its_deadline_after_a_restart(
    tmp_path: Path,
) -> None:
    """The dev server saves its run queue and starts unfinished runs again when it comes back;
    a run stuck on a model that never answers gives the worker back at its deadline."""
    with FakeOpenAI(answer, slots=4) as stuck:
        env = {ALLOWED_ENV: stuck.base_url, DEADLINE_ENV: "8"}
        with dev.launch(tmp_path, env=env, jobs=1) as url, dev.sdk_client(url) as sdk:
            thread = sdk.threads.create()
            context = {"judge": "openai:slow", "base_url": stuck.base_url}
            sdk.runs.create(thread["thread_id"], GRAPH, input={"actions": STEP}, context=context)
            waited = time.monotonic() + 60
            while not stuck.arrivals and time.monotonic() < waited:
                time.sleep(0.2)
            assert stuck.arrivals, "the run reached its model"
        calls = len(stuck.arrivals)
        with dev.launch(tmp_path, env=env, jobs=1) as url:
            values = answered_within(30, url, input=INPUT, context=OFFLINE)
        assert isinstance(values, dict) and values["refined"] == COFFEE_REFINED
        assert len(stuck.arrivals) > calls, "the stuck run was started again"


# ----------------------------------------------------------------- 4: the token


def status_of(url: str, *, method: str = "GET", headers: dict[str, str] | None = None) -> int:
    """The HTTP status a request gets (no proxy: the server is on loopback)."""
    body = b"{}" if method == "POST" else None
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    request.add_header("Content-Type", "application/json")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


async def test_every_route_but_the_health_check_needs_the_token(served: str) -> None:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    search = f"{served}/assistants/search"
    assert status_of(f"{served}/ok") == 200
    assert status_of(search, method="POST") == 401
    assert status_of(search, method="POST", headers={"Authorization": "Bearer wrong"}) == 401
    assert status_of(f"{served}/mcp", method="POST") == 401
    assert status_of(f"{served}/docs") == 401
    preflight = {"Origin": "http://page.example", "Access-Control-Request-Method": "POST"}
    assert status_of(search, method="OPTIONS", headers=preflight) == 200  # runs nothing
    assert status_of(search, method="POST", headers=AUTH) == 200

    async with (
        httpx2.AsyncClient(headers=AUTH, timeout=60) as http,
        streamable_http_client(f"{served}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        answer = await session.call_tool(GRAPH, {"actions": COFFEE_PLAN})
    assert not answer.is_error and answer.structured_content is not None
    assert answer.structured_content["refined"] == COFFEE_REFINED


def test_verify_on_the_server_sends_the_token_from_the_environment(
    served: str, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from planverify.cli import app

    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "tok", "actions": COFFEE_PLAN}) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    runner = CliRunner()
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(TOKEN_ENV, raising=False)
        refused = runner.invoke(app, ["verify", str(source), "--server", served, "-o", str(out)])
        assert refused.exit_code == 2 and "refused the request (401)" in refused.stderr
        patch.setenv(TOKEN_ENV, TOKEN)
        sent = runner.invoke(app, ["verify", str(source), "--server", served, "-o", str(out)])
    assert sent.exit_code == 0, sent.output
    assert VerificationResult.model_validate_json(out.read_text()).refined == COFFEE_REFINED


# ----------------------------------------------------------------- 5: errors a client can read


async def test_mcp_tool_errors_say_which_field_which_step_and_what_is_wrong(
    served: str, client: SyncLangGraphClient
) -> None:
    from planverify.records.episode import Episode

    assistant = client.assistants.create(
        GRAPH, context={"max_iterations": "abc", "concurrency": 0}, name="planverify broken"
    )
    try:
        async with mcp_session(served) as session:
            bad_step = await session.call_tool(GRAPH, {"actions": [STEP[0], "walk to the mug"]})
            missing = await session.call_tool(GRAPH, {"goal": "Make coffee."})
            settings = await session.call_tool("planverify_broken", {"actions": STEP})
            tasked = await session.call_tool(GRAPH, {"actions": STEP, "task": "Coffee"})
    finally:
        client.assistants.delete(assistant["assistant_id"])
    texts = {}
    for name, answer in (("bad_step", bad_step), ("missing", missing), ("settings", settings)):
        assert answer.is_error, name
        (content,) = answer.content
        texts[name] = str(getattr(content, "text", ""))
    assert texts["bad_step"] == (
        "InputError: actions: action 2: not an action in Agent.Verb(args) form: 'walk to the mug'"
    )
    assert texts["missing"] == "InputError: actions: Field required"
    assert texts["settings"].splitlines() == [
        "SettingsError: max_iterations: Input should be a valid integer, unable to parse string "
        "as an integer (got 'abc')",
        "concurrency: Input should be greater than or equal to 1 (got 0)",
    ]
    assert not tasked.is_error and tasked.structured_content is not None
    given = Episode(id="episode", actions=STEP, task="Coffee")
    assert tasked.structured_content["input_digest"] == given.input_digest
    assert given.input_digest != Episode(id="episode", actions=STEP).input_digest


def test_graph_errors_are_one_readable_line_per_problem(client: SyncLangGraphClient) -> None:
    outcome = client.runs.wait(
        None,
        GRAPH,
        input={"actions": STEP},
        context={"max_iterations": "abc", "timeout": 0, "judge_output": "xml"},
        raise_error=False,
    )
    error = failure(outcome)
    assert error["error"] == "SettingsError"
    lines = error["message"].splitlines()
    assert [line.split(":")[0] for line in lines] == ["max_iterations", "judge_output", "timeout"]
    assert all("{" not in line and "errors.pydantic.dev" not in line for line in lines)
    wrong = failure(
        client.runs.wait(None, GRAPH, input={"actions": "Driver.Move(1.0)"}, raise_error=False)
    )
    assert wrong == {
        "error": "InputError",
        "message": "actions: Input should be a valid list (got 'Driver.Move(1.0)')",
    }


async def test_the_deadline_in_process_also_when_a_thread_continues(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`ainvoke` on the served graph (no server): the error record is the output, built from
    the input, or from the thread's state when a run continues it (no input)."""
    from langgraph.checkpoint.memory import InMemorySaver

    from planverify.graphs.served import served_graph

    with FakeOpenAI(answer, slots=4) as stuck:
        monkeypatch.setenv(ALLOWED_ENV, stuck.base_url)
        monkeypatch.setenv(DEADLINE_ENV, "1")
        graph = served_graph()
        graph.checkpointer = InMemorySaver()
        config: Any = {"configurable": {"thread_id": "late"}}
        context = {"judge": "openai:slow", "base_url": stuck.base_url}
        given = {"episode_id": "late", "goal": "Go.", "actions": STEP}
        async with asyncio.timeout(60):  # a bound of completion: the model never answers
            first = await graph.ainvoke(given, config, context=context)
            again = await graph.ainvoke(None, config, context=context)  # continues the thread
    for record in (first, again):
        result = VerificationResult.model_validate(record)
        assert (result.id, result.status, result.goal, result.original) == (
            "late",
            "error",
            "Go.",
            STEP,
        )
        assert result.error is not None and "deadline of 1 s" in result.error
    assert first["input_digest"] == again["input_digest"]
    state = await graph.aget_state(config)
    assert state.values["episode_id"] == "late" and state.next == ("judge",)


@pytest.mark.parametrize("program", ["../../../../etc/passwd", "file1_1/../../x", "/etc/hosts"])
def test_a_program_name_never_becomes_a_path_on_the_server(
    client: SyncLangGraphClient, program: str
) -> None:
    given = {"actions": ["[WALK] <kitchen> (1.11)"], "domain": "virtualhome", "program": program}
    outcome = client.runs.wait(None, GRAPH, input=given, context=OFFLINE, raise_error=False)
    text = json.dumps(outcome)
    assert "root:" not in text and "localhost" not in text  # nothing of the files it names
    if isinstance(outcome, dict) and "__error__" in outcome:
        assert "program" in outcome["__error__"]["message"]
    else:  # a record of the failure, never a result computed from that path
        assert outcome["status"] == "error" and "program" in outcome["error"]
