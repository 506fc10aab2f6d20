"""A loopback OpenAI-compatible chat-completions server that tests start themselves.

It speaks the wire format the real `openai` client (and so `ChatOpenAI(base_url=...)`) uses, and
serves requests the way a local model server does: `slots` requests at a time, the others queued
in arrival order. What it answers is up to the test's `respond(body)`.

>>> from langchain_openai import ChatOpenAI
>>> with FakeOpenAI(respond=lambda body: Reply(content="hello", usage=(7, 2))) as server:
...     model = ChatOpenAI(model="m", base_url=server.base_url, api_key="x", max_retries=0)
...     answer = model.invoke("hi")
>>> answer.content, answer.usage_metadata["input_tokens"], len(server.requests)
('hello', 7, 1)
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


@dataclass
class Reply:
    """What the server answers to one request."""

    status: int = 200  # HTTP status
    content: str | None = None  # the assistant message's text
    tool_calls: list[dict[str, Any]] | None = None  # [{"name": ..., "arguments": {...}}]
    finish_reason: str = "stop"  # "stop", "length", "tool_calls"
    usage: tuple[int, int] | None = (10, 5)  # (prompt_tokens, completion_tokens); None = absent
    headers: dict[str, str] = field(default_factory=dict)  # extra response headers
    delay: float = 0.0  # seconds spent holding a slot before answering
    error: str | None = None  # an OpenAI-shaped error body with this message
    body: Any = None  # a raw JSON body instead of the built one (other servers' error shapes)


@dataclass
class Served:
    """When one request waited and was served (monotonic seconds)."""

    arrived: float  # the request was read
    started: float  # it got a slot
    finished: float  # its answer was sent


def completion(body: dict[str, Any], reply: Reply, number: int) -> dict[str, Any]:
    """A chat-completion response body."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{number}_{i}",
                "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
            }
            for i, call in enumerate(reply.tool_calls)
        ]
    answer: dict[str, Any] = {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [
            {"index": 0, "message": message, "finish_reason": reply.finish_reason, "logprobs": None}
        ],
    }
    if reply.usage is not None:
        prompt, completion_tokens = reply.usage
        answer["usage"] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt + completion_tokens,
        }
    return answer


def error_body(reply: Reply) -> dict[str, Any]:
    """An OpenAI-shaped error body."""
    kind = "server_error" if reply.status >= 500 else "invalid_request_error"
    return {"error": {"message": reply.error or "error", "type": kind, "param": None, "code": None}}


def send_json(
    handler: BaseHTTPRequestHandler,
    status: int,
    data: bytes,
    headers: dict[str, str] | None = None,
) -> None:
    """Answer a request with a JSON body; a client that already gave up is not an error."""
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the client gave up (a timeout in the test); nothing to answer


class FakeOpenAI:
    """A chat-completions server on 127.0.0.1 with `slots` requests served at once."""

    def __init__(
        self, respond: Callable[[dict[str, Any]], Reply] | None = None, *, slots: int = 1
    ) -> None:
        self.respond = respond or (lambda body: Reply(content="ok"))  # what to answer
        self.slots = slots  # requests served at once; the rest queue
        self.requests: list[dict[str, Any]] = []  # received bodies, in arrival order
        self.arrivals: list[tuple[str, dict[str, str]]] = []  # every request: (path, headers)
        self.served: list[Served] = []  # timings of answered requests, in finishing order
        self.in_service = 0  # requests holding a slot now
        self.queued = 0  # requests waiting for a slot now
        self.max_in_service = 0  # most requests served at once
        self.max_queued = 0  # most requests waiting at once
        self._lock = threading.Lock()
        self._slots = threading.Semaphore(slots)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The `/v1` URL to give the client."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _answer(self, body: dict[str, Any]) -> tuple[Reply, bytes, int]:
        """Queue for a slot, hold it for the reply's delay, and build the answer."""
        arrived = time.monotonic()
        with self._lock:
            self.requests.append(body)
            number = len(self.requests)
            self.queued += 1
            self.max_queued = max(self.max_queued, self.queued)
        reply = self.respond(body)
        with self._slots:
            started = time.monotonic()
            with self._lock:
                self.queued -= 1
                self.in_service += 1
                self.max_in_service = max(self.max_in_service, self.in_service)
            time.sleep(reply.delay)
            if reply.body is not None:
                payload = reply.body
            elif reply.error is not None or reply.status >= 400:
                payload = error_body(reply)
            else:
                payload = completion(body, reply, number)
            with self._lock:
                self.in_service -= 1
                self.served.append(Served(arrived, started, time.monotonic()))
        return reply, json.dumps(payload).encode(), number

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                server.arrivals.append((self.path, dict(self.headers)))
                send_json(self, 404, json.dumps({"error": {"message": "not found"}}).encode())

            def do_POST(self) -> None:
                server.arrivals.append((self.path, dict(self.headers)))
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    body = {}
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    send_json(self, 404, json.dumps({"error": {"message": "not found"}}).encode())
                    return
                reply, data, _ = server._answer(body)
                send_json(self, reply.status, data, reply.headers)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler
