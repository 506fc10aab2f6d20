"""A loopback OpenAI-compatible chat-completions server that tests start themselves.

It speaks the wire format the real `openai` client (and so `ChatOpenAI(base_url=...)`) uses, and
serves requests the way a local model server does: `slots` requests at a time, the others queued
in arrival order. What it answers is up to the test's `respond(body)`. A request with
`"stream": true` gets server-sent events, the way llama-cpp-python sends them: the answer in
`pieces` chunks `gap` seconds apart (after a `stall` following the first), the finish reason in
the last one (an interrupted answer has none), then a usage chunk when the request asks for it
(`stream_options.include_usage`) and the reply honours that; a client that goes away stops the
answer and frees the slot.

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
    finish_reason: str | None = "stop"  # "stop", "length", "tool_calls"; None: interrupted
    usage: tuple[int, int] | None = (10, 5)  # (prompt_tokens, completion_tokens); None = absent
    headers: dict[str, str] = field(default_factory=dict)  # extra response headers
    delay: float = 0.0  # seconds spent holding a slot before answering
    error: str | None = None  # an OpenAI-shaped error body with this message
    body: Any = None  # a raw JSON body instead of the built one (other servers' error shapes)
    pieces: int = 1  # streamed answers: chunks the content is sent in
    gap: float = 0.0  # streamed answers: seconds between chunks
    stall: float = 0.0  # streamed answers: seconds of silence after the first chunk
    stream_usage: bool = True  # streamed answers: honour `stream_options.include_usage`


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


def stream_chunks(body: dict[str, Any], reply: Reply, number: int) -> list[dict[str, Any]]:
    """The chunks of a streamed answer: content pieces, the finish reason, then usage."""
    base = {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return {**base, "choices": [choice]}

    text = reply.content or ""
    size = -(-len(text) // max(reply.pieces, 1)) or 1
    parts = [text[i : i + size] for i in range(0, len(text), size)] or [""]
    chunks = [chunk({"role": "assistant", "content": part}) for part in parts]
    for i, call in enumerate(reply.tool_calls or []):
        function = {"name": call["name"], "arguments": json.dumps(call["arguments"])}
        delta = {"index": i, "id": f"call_{number}_{i}", "type": "function", "function": function}
        chunks.append(chunk({"tool_calls": [delta]}))
    if reply.finish_reason is not None:
        chunks.append(chunk({}, reply.finish_reason))
    wants = (body.get("stream_options") or {}).get("include_usage")
    if reply.usage is not None and wants and reply.stream_usage:
        prompt, completion_tokens = reply.usage
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt + completion_tokens,
        }
        chunks.append({**base, "choices": [], "usage": usage})
    return chunks


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
        self.streamed = 0  # requests answered with a stream
        self.gone = 0  # streamed answers whose client went away before the end
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

    def _answer(self, body: dict[str, Any], handler: BaseHTTPRequestHandler) -> None:
        """Queue for a slot, hold it for the reply's delay, and answer (streamed when asked)."""
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
            failed = reply.body is not None or reply.error is not None or reply.status >= 400
            if body.get("stream") and not failed:
                self._stream(handler, stream_chunks(body, reply, number), reply)
            else:
                if reply.body is not None:
                    payload = reply.body
                elif failed:
                    payload = error_body(reply)
                else:
                    payload = completion(body, reply, number)
                send_json(handler, reply.status, json.dumps(payload).encode(), reply.headers)
            with self._lock:
                self.in_service -= 1
                self.served.append(Served(arrived, started, time.monotonic()))

    def _stream(
        self, handler: BaseHTTPRequestHandler, chunks: list[dict[str, Any]], reply: Reply
    ) -> None:
        """Send the chunks as server-sent events; stop when the client goes away."""
        with self._lock:
            self.streamed += 1
        handler.close_connection = True
        events = [f"data: {json.dumps(c)}\n\n".encode() for c in chunks] + [b"data: [DONE]\n\n"]
        try:
            handler.send_response(200)
            handler.send_header("Content-Type", "text/event-stream")
            handler.send_header("Connection", "close")
            for name, value in reply.headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            for i, event in enumerate(events):
                if i:
                    time.sleep(reply.stall if i == 1 else reply.gap)
                handler.wfile.write(event)
                handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            with self._lock:
                self.gone += 1

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
                server._answer(body, self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler
