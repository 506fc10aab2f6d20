"""Opt-in: the model path against a real OpenAI-compatible server (`make test-llm`).

The server's model is far too small to judge quality, so these tests check structure only:
every episode finishes, every flag names a real step, the tokens counted are the tokens the
server reported, and a rerun makes no calls. The server is reached through a recording proxy on
loopback that this module starts, which is how "what the server reported" is known.
"""

from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from planverify.cli import app
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
            usage = json.loads(body).get("usage") or {}
            self.input_tokens += usage.get("prompt_tokens", 0)
            self.output_tokens += usage.get("completion_tokens", 0)


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
