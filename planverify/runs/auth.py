"""Who is calling a served graph, and what each caller may touch (`langgraph.json`'s `auth`).

LangGraph's own authentication and authorization (`langgraph_sdk.Auth`) run on every route of
the API (assistants, threads, runs, store, MCP); `planverify.runs.serving.TokenAuth` guards the
few routes it leaves open (`/docs`, `/openapi.json`, `/info`) with the same tokens.

- **Callers.** The operator sets tokens in the server's environment: `PLANVERIFY_SERVER_TOKEN`
  is the operator's own, and `PLANVERIFY_CLIENT_TOKENS` lists other callers as comma-separated
  `NAME:TOKEN` pairs. A request must carry one of them as `Authorization: Bearer <token>`, else
  401; the token names the caller. With no token set the server is open: every request is the
  operator's, as before.
- **Threads are their owner's.** A thread, and a run that creates one, is stamped with the
  caller's name (metadata `owner`, which a caller cannot set to another name), and every read,
  search, update, deletion or run on a thread is filtered by it: another caller's thread is not
  found (404), and its id cannot be taken (409).
- **Assistants are the operator's.** Every caller may read, search and run them; only the
  operator may create, change or delete one (an assistant is a tool on the MCP endpoint, for
  every caller). Cron jobs and the store, which planverify does not use, are the operator's.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langgraph_sdk import Auth

from planverify.graphs.policy import TOKEN_ENV
from planverify.records.redaction import CLIENT_TOKENS_ENV

OPERATOR = "operator"  # the caller name of PLANVERIFY_SERVER_TOKEN (and of everyone, without it)
OPERATOR_PERMISSION = "planverify:operator"  # may manage assistants, crons and the store
OWNER = "owner"  # thread metadata key naming the caller that owns the thread


class CallerConfigError(ValueError):
    """The operator's token settings cannot be used (the server does not start)."""


@dataclass(frozen=True)
class Caller:
    """One configured caller."""

    name: str  # the identity threads are stamped with
    operator: bool  # may manage assistants, crons and the store


def callers_from_env(environ: Mapping[str, str] | None = None) -> dict[bytes, Caller]:
    """The configured tokens and whom each names; empty when none is set (an open server)."""
    env = os.environ if environ is None else environ
    table: dict[bytes, Caller] = {}
    if operator := env.get(TOKEN_ENV, "").strip():
        table[operator.encode()] = Caller(OPERATOR, operator=True)
    for entry in filter(None, (part.strip() for part in env.get(CLIENT_TOKENS_ENV, "").split(","))):
        name, _, token = (piece.strip() for piece in entry.partition(":"))
        if not name or not token:
            raise CallerConfigError(f"{CLIENT_TOKENS_ENV}: expected NAME:TOKEN, got {name!r}:…")
        if name == OPERATOR or any(c.name == name for c in table.values()):
            raise CallerConfigError(f"{CLIENT_TOKENS_ENV}: the caller name {name!r} is taken")
        if token.encode() in table:
            raise CallerConfigError(f"{CLIENT_TOKENS_ENV}: {name!r} shares another's token")
        table[token.encode()] = Caller(name, operator=False)
    if table and not operator:
        raise CallerConfigError(f"{CLIENT_TOKENS_ENV} needs {TOKEN_ENV} (the operator's token)")
    return table


def caller_of(authorization: str | None, table: Mapping[bytes, Caller]) -> Caller | None:
    """The caller whose token an `Authorization: Bearer <token>` header carries, if any
    (compared in constant time with every token)."""
    scheme, _, value = (authorization or "").partition(" ")
    if scheme.lower() != "bearer":
        return None
    given = value.strip().encode()
    found = None
    for token, caller in table.items():
        if hmac.compare_digest(given, token):
            found = caller
    return found


CALLERS = callers_from_env()  # read once, when the server loads this module
auth = Auth()
"""The object `langgraph.json` names in `auth.path`."""


@auth.authenticate
async def authenticate(authorization: str | None) -> Auth.types.MinimalUserDict:
    """The caller the request's bearer token names; 401 without a known token."""
    if not CALLERS:
        return {"identity": OPERATOR, "permissions": [OPERATOR_PERMISSION]}
    caller = caller_of(authorization, CALLERS)
    if caller is None:
        raise Auth.exceptions.HTTPException(
            status_code=401,
            detail=f"this server needs Authorization: Bearer <token> ({TOKEN_ENV})",
            headers={"WWW-Authenticate": "Bearer"},
        )
    permissions = [OPERATOR_PERMISSION] if caller.operator else []
    return {"identity": caller.name, "permissions": permissions}


def _is_operator(ctx: Auth.types.AuthContext) -> bool:
    return OPERATOR_PERMISSION in ctx.permissions


@auth.on.threads
async def own_threads(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """Stamp what a caller creates or changes with its name; show it only its own threads."""
    if isinstance(value, dict) and "metadata" in value:
        if not isinstance(value["metadata"], dict):
            value["metadata"] = {}
        value["metadata"][OWNER] = ctx.user.identity  # in place: the server holds this dict
    return {OWNER: ctx.user.identity}


@auth.on.assistants
async def operator_manages_assistants(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """Everyone reads, searches and runs assistants; only the operator changes them."""
    if ctx.action in ("read", "search") or _is_operator(ctx):
        return True
    raise Auth.exceptions.HTTPException(
        status_code=403,
        detail="only the server's operator may create, change or delete assistants",
    )


@auth.on
async def operator_only(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """Everything else (cron jobs, the store) is the operator's."""
    if _is_operator(ctx):
        return True
    raise Auth.exceptions.HTTPException(
        status_code=403, detail=f"only the server's operator may use {ctx.resource}"
    )
