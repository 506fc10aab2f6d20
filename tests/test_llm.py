"""Opt-in: the model path against a real OpenAI-compatible server (`make test-llm`).

The server's model is far too small to judge quality, so these tests check structure only:
every episode finishes, every flag names a real step, the tokens counted are the tokens the
server reported, and a rerun makes no calls. The server is reached through a recording proxy on
loopback that this module starts, which is how "what the server reported" is known.

Two tests talk to the server directly, about its one slot: a call that timed out must not keep
the server busy (the next call is about as fast as calls before it), and two calls sent at once
both end complete (llama-cpp-python interrupts the first for the second; the interruption is
seen and the call retried). The first compares latencies, which only this opt-in suite does.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import openai
import pytest
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI
from typer.testing import CliRunner

from planverify.agents.base import Answer, ask
from planverify.cli import app
from planverify.llm.calls import CallPolicy
from planverify.llm.concurrency import gate_for
from planverify.llm.errors import ModelCallFailed
from planverify.records.result import VerificationResult

from .conftest import ROOT
from .fake_openai import send_json

pytestmark = pytest.mark.llm

BASE_URL = os.environ.get("PLANVERIFY_TEST_OPENAI_BASE_URL")
MODEL = os.environ.get("PLANVERIFY_TEST_OPENAI_MODEL")
EXAMPLES = ROOT / "examples" / "episodes.jsonl"
runner = CliRunner()

if not BASE_URL or not MODEL:
    pytest.skip(
        "set PLANVERIFY_TEST_OPENAI_BASE_URL and PLANVERIFY_TEST_OPENAI_MODEL "
        "(`make test-llm` starts a local server and sets both)",
        allow_module_level=True,
    )


@dataclass
class Recorder:
    """What the server answered through the proxy."""

    calls: int = 0  # requests forwarded
    input_tokens: int = 0  # prompt tokens the server reported
    output_tokens: int = 0  # completion tokens the server reported
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, status: int, body: bytes) -> None:
        with self.lock:
            self.calls += 1
            if status != 200:
                return
            for usage in usages(body):
                self.input_tokens += usage.get("prompt_tokens", 0)
                self.output_tokens += usage.get("completion_tokens", 0)


def usages(body: bytes) -> list[dict[str, Any]]:
    """The `usage` objects of an answer: a JSON body's, or those of a streamed one's events."""
    text = body.decode()
    if not text.lstrip().startswith("data:"):
        return [json.loads(text).get("usage") or {}]
    events = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    return [json.loads(e).get("usage") or {} for e in events if e and e != "[DONE]"]


def proxy_handler(upstream: str, recorder: Recorder) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            target = upstream.rstrip("/") + self.path.removeprefix("/v1")
            request = urllib.request.Request(
                target, data=data, headers={"Content-Type": "application/json"}
            )
            try:
                with urllib.request.urlopen(request, timeout=600) as response:
                    status, body = response.status, response.read()
            except urllib.error.HTTPError as exc:
                status, body = exc.code, exc.read()
            recorder.record(status, body)
            send_json(self, status, body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def proxy() -> Iterator[tuple[str, Recorder]]:
    assert BASE_URL is not None
    recorder = Recorder()
    server = ThreadingHTTPServer(("127.0.0.1", 0), proxy_handler(BASE_URL, recorder))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    yield f"http://{host!s}:{port}/v1", recorder
    server.shutdown()
    server.server_close()


def run(tmp_path: Path, base_url: str, *extra: str) -> list[VerificationResult]:
    output = tmp_path / "results.jsonl"
    spec = f"openai:{MODEL}"
    args = [
        "verify",
        str(EXAMPLES),
        "--limit",
        "2",
        "--max-iterations",
        "1",
        "--judge",
        spec,
        "--planner",
        spec,
        "--base-url",
        base_url,
        "--timeout",
        "300",
        "--checkpoint",
        str(tmp_path / "checkpoints.sqlite"),
        "--output",
        str(output),
        *extra,
    ]
    outcome = runner.invoke(app, args)
    assert outcome.exit_code == 0, outcome.output
    return [
        VerificationResult.model_validate_json(line) for line in output.read_text().splitlines()
    ]


def flags_name_real_steps(result: VerificationResult) -> None:
    """With one Judge pass, every flag and removal names a step of the input plan."""
    assert result.iterations == 1
    for flag in result.history[0].critique.flags:
        assert 0 <= flag.step < len(result.original), flag
        assert flag.action == result.original[flag.step], flag
    for edit in result.history[0].edits:
        if edit.kind == "remove":
            assert edit.origin is not None and result.original[edit.origin] == edit.action


MODES = {
    "text": (),
    "structured": ("--judge-output", "structured"),
    "static": ("--static",),
    "grounding": ("--grounding",),
    "goal-infer": ("--goal", "infer"),
}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_real_server(mode: str, tmp_path: Path, proxy: tuple[str, Recorder]) -> None:
    base_url, recorder = proxy
    results = run(tmp_path, base_url, *MODES[mode])
    assert [r.status for r in results] == ["ok", "ok"], [r.error for r in results]
    for result in results:
        flags_name_real_steps(result)
    counted_in = sum(u.input_tokens for r in results for u in r.usage.values())
    counted_out = sum(u.output_tokens for r in results for u in r.usage.values())
    assert recorder.calls > 0
    assert (counted_in, counted_out) == (recorder.input_tokens, recorder.output_tokens)
    methods = {r.history[0].judge_output for r in results}
    if mode == "structured":  # that server refuses JSON schema: another method answered
        assert methods <= {"function_calling", "json_mode", "text"}, methods
    else:
        assert methods == {"text"}, methods
    if mode == "static":
        assert all(r.stop_reason == "static" for r in results)
    if mode == "goal-infer":
        assert all(
            r.goal and not r.goal.lower().startswith(("driver", "commander")) for r in results
        )

    calls = recorder.calls
    again = run(tmp_path, base_url, *MODES[mode])
    assert recorder.calls == calls, "a rerun must not call the model"
    assert [r.refined for r in again] == [r.refined for r in results]


def direct() -> ChatOpenAI:
    """The server's model, without the proxy (its stream is what is tested), with an HTTP
    client of its own: LangChain's shared one would keep connections of an earlier test's
    event loop."""
    return ChatOpenAI(
        model=MODEL,
        base_url=BASE_URL,
        api_key="not-needed",
        max_retries=0,
        temperature=0,
        http_async_client=openai.DefaultAsyncHttpxClient(),
    )


async def timed(
    model: ChatOpenAI, policy: CallPolicy, prompt: str, cap: int = 160
) -> tuple[float, Answer[Any]]:
    start = time.monotonic()
    answer: Answer[Any] = await ask(model, [HumanMessage(prompt)], policy, cap=cap)
    return time.monotonic() - start, answer


COUNT = "Request {}: write the numbers from 1 to 20, separated by commas, and nothing else."


async def test_a_timed_out_call_does_not_hold_up_the_next_one() -> None:
    assert BASE_URL is not None
    policy = CallPolicy(provider=BASE_URL, model=str(MODEL), timeout=120.0, max_retries=0)
    model = direct()
    warm = [await timed(model, policy, COUNT.format(i)) for i in range(3)]
    assert all(a.text and not a.cut_short for _, a in warm), [a.text for _, a in warm]
    # a long answer given up after 3 s: the server must stop generating it
    hasty = CallPolicy(
        provider=BASE_URL, model=str(MODEL), timeout=120.0, max_call_time=3.0, max_retries=0
    )
    story = "Write a very long story about a robot that cleans a kitchen, at least 2000 words."
    with pytest.raises(ModelCallFailed, match="took longer than 3 s"):
        await timed(model, hasty, story, 1500)
    latency, answer = await timed(model, policy, COUNT.format(3))
    median = statistics.median(t for t, _ in warm)
    print(f"warm-up {[round(t, 2) for t, _ in warm]} s, after the timeout {latency:.2f} s")
    assert answer.text and not answer.cut_short
    assert latency <= 2 * median, (latency, median)


async def test_two_calls_at_once_both_end_complete_after_an_interruption() -> None:
    assert BASE_URL is not None
    policy = CallPolicy(
        provider=BASE_URL, model=str(MODEL), timeout=120.0, max_retries=2, concurrency=2
    )
    gate = gate_for(policy.provider, policy.concurrency)
    gate.estimator.limit = 2  # both are sent at once, as a limit not yet lowered would
    model = direct()
    answers = await asyncio.gather(*(timed(model, policy, COUNT.format(i)) for i in (10, 11)))
    for _, answer in answers:
        assert answer.text and not answer.cut_short, answer.text
    assert gate.estimator.single and gate.limit == 1  # the interruption was seen
    assert sum(a.usage.unknown_calls for _, a in answers) >= 1  # and its attempt retried
