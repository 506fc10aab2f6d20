"""HTTP additions for a LangGraph server serving planverify (`langgraph.json`'s `http.app`).

A LangGraph server offers every assistant as a tool on its MCP endpoint (`/mcp`, streamable
HTTP), but answers a tool call with the Python `repr` of the run's output: single quotes,
`None`, `True`, which no JSON parser reads. `McpJson` rewrites those answers: the text content
becomes the output as JSON (the `VerificationResult` record of the served graph) and the same
value is given as MCP `structuredContent`. Everything else passes through untouched.

Only the server imports this module (it needs Starlette, which the server brings).
"""

from __future__ import annotations

import ast
import json

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send


def as_json_answer(body: bytes) -> bytes | None:
    """A JSON-RPC answer to `tools/call` with its text content turned from a Python literal into
    JSON (and given as `structuredContent`); None when there is nothing to change."""
    try:
        answer = json.loads(body)
    except ValueError:
        return None
    result = answer.get("result") if isinstance(answer, dict) else None
    if not isinstance(result, dict) or result.get("isError"):
        return None
    content = result.get("content")
    if not isinstance(content, list) or len(content) != 1 or not isinstance(content[0], dict):
        return None
    text = content[0].get("text")
    if content[0].get("type") != "text" or not isinstance(text, str):
        return None
    try:
        value = ast.literal_eval(text)  # literals only: never runs code
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None  # not a Python literal (JSON with true/null already, or plain text)
    if not isinstance(value, dict):
        return None
    try:
        encoded = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return None
    content[0]["text"] = encoded
    result["structuredContent"] = value
    return json.dumps(answer, ensure_ascii=False).encode()


class McpJson:
    """ASGI middleware: MCP `tools/call` answers in JSON rather than Python's `repr`."""

    def __init__(self, app: ASGIApp, path: str = "/mcp") -> None:
        self.app = app
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope.get("method") != "POST"
            or not str(scope.get("path", "")).endswith(self.path)
        ):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay(b"".join(chunks), receive, message), send)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        if not _is_tool_call(body):
            await self.app(scope, _replay(body, receive), send)
            return
        start: Message | None = None
        parts: list[bytes] = []

        async def capture(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                return
            if message["type"] != "http.response.body" or start is None:
                await send(message)
                return
            parts.append(message.get("body", b""))
            if message.get("more_body"):
                return
            payload = b"".join(parts)
            if start["status"] == 200 and (changed := as_json_answer(payload)) is not None:
                payload = changed
            headers = [
                (k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"
            ]
            headers.append((b"content-length", str(len(payload)).encode()))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": payload, "more_body": False})

        await self.app(scope, _replay(body, receive), capture)


def _is_tool_call(body: bytes) -> bool:
    try:
        message = json.loads(body)
    except ValueError:
        return False
    return isinstance(message, dict) and message.get("method") == "tools/call"


def _replay(body: bytes, receive: Receive, first: Message | None = None) -> Receive:
    """A `receive` that gives the request body already read, then whatever comes next."""
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]
    if first is not None:
        pending.append(first)

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed


app = Starlette(middleware=[Middleware(McpJson)])
"""The app `langgraph.json` names in `http.app`: no routes of its own, only the middleware."""
