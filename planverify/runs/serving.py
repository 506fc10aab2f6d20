"""HTTP additions for a LangGraph server serving planverify (`langgraph.json`'s `http.app`).

- `TokenAuth`: LangGraph's authentication (`planverify.runs.auth`, `langgraph.json`'s `auth`)
  guards the API's routes (assistants, threads, runs, store, MCP); the server's other routes
  (`/docs`, `/openapi.json`, `/info`, ...) it leaves open. `TokenAuth` asks those for a caller's
  token too (`Authorization: Bearer <token>`, else 401), but for the health check (`/ok`), CORS
  preflights (they run nothing; the request that follows needs the token) and the server's own
  in-process calls (which never leave the process, as LangGraph's own authentication lets them).
- `McpJson`: a LangGraph server offers every assistant as a tool on its MCP endpoint (`/mcp`,
  streamable HTTP), but answers a tool call with the Python `repr` of the run's output: single
  quotes, `None`, `True`, which no JSON parser reads. `McpJson` rewrites those answers: the text
  content becomes the output as JSON (the `VerificationResult` record of the served graph) and
  the same value is given as MCP `structuredContent`. A failed call's answer names only the
  error's class (`InputError`); `McpJson` puts the error's message in it (which field, which
  step, what is wrong). Everything else passes through untouched.

Only the server imports this module (it needs Starlette, which the server brings).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping
from contextvars import ContextVar

from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from planverify.graphs.policy import TOKEN_ENV
from planverify.runs.auth import Caller, caller_of, callers_from_env

OPEN_PATHS = frozenset({"/ok"})  # the health check, for load balancers and the dev server
# Route prefixes LangGraph's own authentication guards (`planverify.runs.auth`).
LANGGRAPH_GUARDED = ("/assistants", "/threads", "/runs", "/store", "/mcp", "/a2a")
LOOPBACK_ROOT = "/noauth"  # root path of the server's in-process calls (set by the server only)


def _route_path(scope: Scope) -> str:
    path, root = str(scope.get("path", "")), str(scope.get("root_path", ""))
    if root and path.startswith(root):
        return path[len(root) :] or "/"
    return path


def _loopback(scope: Scope) -> bool:
    """A request the server makes to itself, in process: a client cannot set its root path."""
    root = str(scope.get("root_path", ""))
    return root == LOOPBACK_ROOT or root.startswith(LOOPBACK_ROOT + "/")


def _guarded_by_langgraph(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in LANGGRAPH_GUARDED)


class TokenAuth:
    """ASGI middleware: on the routes LangGraph's authentication leaves open, but `/ok` (and
    CORS preflights), a caller's `Authorization: Bearer <token>`."""

    def __init__(self, app: ASGIApp, callers: Mapping[bytes, Caller] | None = None) -> None:
        self.app = app
        self.callers = callers_from_env() if callers is None else callers  # empty: open

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.callers or self._open(scope) or self._carries_token(scope):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        refused = JSONResponse(
            {"detail": f"this server needs Authorization: Bearer <token> ({TOKEN_ENV})"},
            status_code=401,
            headers={"WWW-Authenticate": "Bearer"},
        )
        await refused(scope, receive, send)

    def _open(self, scope: Scope) -> bool:
        if scope["type"] not in ("http", "websocket") or _loopback(scope):
            return True
        path = _route_path(scope)
        if path in OPEN_PATHS or _guarded_by_langgraph(path):
            return True
        headers = Headers(scope=scope)
        return (
            scope.get("method") == "OPTIONS"
            and "origin" in headers
            and "access-control-request-method" in headers
        )

    def _carries_token(self, scope: Scope) -> bool:
        header = Headers(scope=scope).get("authorization")
        return caller_of(header, self.callers) is not None


# The errors of the runs an MCP tool call waits for (the server's in-process `runs/wait`
# requests made while answering it), so that its answer can give the message.
_run_errors: ContextVar[list[str] | None] = ContextVar("planverify_run_errors", default=None)


def as_json_answer(body: bytes, errors: list[str] | None = None) -> bytes | None:
    """A JSON-RPC answer to `tools/call` with its text content turned from a Python literal into
    JSON (and given as `structuredContent`), or for a failed call the last of `errors` (the
    run's `Type: message`) as its text; None when there is nothing to change."""
    try:
        answer = json.loads(body)
    except ValueError:
        return None
    result = answer.get("result") if isinstance(answer, dict) else None
    if not isinstance(result, dict):
        return None
    content = result.get("content")
    if not isinstance(content, list) or len(content) != 1 or not isinstance(content[0], dict):
        return None
    text = content[0].get("text")
    if content[0].get("type") != "text" or not isinstance(text, str):
        return None
    if result.get("isError"):
        if not errors or not errors[-1].startswith(text):
            return None
        content[0]["text"] = errors[-1]
        return json.dumps(answer, ensure_ascii=False).encode()
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
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        if path.endswith("/runs/wait") and _loopback(scope):
            await self.app(scope, receive, _noting_errors(send))
            return
        if not path.endswith(self.path):
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
            if start["status"] == 200 and (changed := as_json_answer(payload, errors)) is not None:
                payload = changed
            headers = [
                (k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"
            ]
            headers.append((b"content-length", str(len(payload)).encode()))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": payload, "more_body": False})

        errors: list[str] = []
        noted = _run_errors.set(errors)
        try:
            await self.app(scope, _replay(body, receive), capture)
        finally:
            _run_errors.reset(noted)


def _noting_errors(send: Send) -> Send:
    """A `send` that passes a `runs/wait` answer on as it is and notes the run's error, if it
    failed, for the tool call being answered (`_run_errors`)."""
    parts: list[bytes] = []

    async def noting(message: Message) -> None:
        await send(message)
        errors = _run_errors.get()
        if errors is None or message["type"] != "http.response.body":
            return
        parts.append(message.get("body", b""))
        if message.get("more_body"):
            return
        try:
            failed = json.loads(b"".join(parts)).get("__error__")
        except (ValueError, AttributeError):
            return
        if isinstance(failed, dict) and failed.get("error"):
            errors.append(": ".join(str(failed[k]) for k in ("error", "message") if failed.get(k)))

    return noting


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


app = Starlette(middleware=[Middleware(TokenAuth), Middleware(McpJson)])
"""The app `langgraph.json` names in `http.app`: no routes of its own, only the middleware
(the token first)."""
