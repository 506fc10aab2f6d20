"""Verifying on a LangGraph server (`planverify verify --server URL`).

Each episode gets its own thread on the server, with an id derived from the episode id and the
run settings, so a rerun finds the threads of the first run: finished episodes are read back
without a new run, unfinished ones continue from their last checkpoint on the server, and a run
still queued or running there (left by a client that was stopped) is waited for, not repeated.
Runs queue on the server and are awaited concurrently; `planverify.runs.batch.run_batch` drives a
`RemoteVerifier` exactly as it drives a local `Verifier`, so the output and resume guarantees
are the same.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import uuid
from collections import Counter
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Literal

import httpx
from langgraph_sdk import __version__ as SDK_VERSION
from langgraph_sdk.client import LangGraphClient

from planverify.api import graph_input, thread_id
from planverify.graphs.context import VerifierContext
from planverify.graphs.graph import recursion_limit
from planverify.graphs.policy import TOKEN_ENV
from planverify.graphs.state import PlanState
from planverify.llm.calls import CallLimits
from planverify.llm.costs import Spend
from planverify.llm.errors import ProviderUnreachable
from planverify.records.episode import Episode
from planverify.records.result import GoalSource, VerificationResult
from planverify.records.trim import DEFAULT_TRIM, TrimPolicy

GRAPH_ID = "planverify"  # the graph's name in langgraph.json
NAMESPACE = uuid.UUID("5b1f0f1e-8a55-4d0c-9a8a-6c3c1f7d2e10")  # thread ids are uuid5 in it
KEY_VARIABLES = ("LANGGRAPH_API_KEY", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY")  # in this order
ACTIVE = frozenset({"pending", "running"})  # run states that will still change the thread
MAX_RUNS = 3  # runs one `averify` call starts on a thread before it gives the episode up
CONNECT_RETRIES = 3  # refused connections retried (about 1.5 s in all): a restarting server


class RemoteError(RuntimeError):
    """The server cannot be used (unreachable, refusing the key, or without the graph)."""


class RemoteRunError(RuntimeError):
    """A run on the server ended without a result; the message is the server's error."""


def api_key_from_env() -> str | None:
    """The first of LANGGRAPH_API_KEY, LANGSMITH_API_KEY, LANGCHAIN_API_KEY that is set."""
    for name in KEY_VARIABLES:
        if value := os.environ.get(name, "").strip():
            return value
    return None


def connect(url: str, api_key: str | None = None, *, timeout: float = 300.0) -> LangGraphClient:
    """An SDK client for `url` whose connection pool never makes requests wait.

    `langgraph_sdk.get_client` caps the pool at 100 connections and fails a request that waits
    5 s for one; with one long-polling join per episode in flight, a batch wider than that would
    fail episodes for no reason. Here the pool is unbounded (the batch's `concurrency` bounds
    it), a refused connection is retried briefly, `api_key` (or the first key variable set)
    is sent as `x-api-key`, and `PLANVERIFY_SERVER_TOKEN`, when set, as `Authorization: Bearer`
    (`planverify.runs.serving`). `timeout` is the read timeout; a join that outlives it is renewed.
    """
    headers = {"User-Agent": f"planverify langgraph-sdk-py/{SDK_VERSION}"}
    key = api_key if api_key is not None else api_key_from_env()
    if key:
        headers["x-api-key"] = key
    if token := os.environ.get(TOKEN_ENV, "").strip():
        headers["Authorization"] = f"Bearer {token}"
    transport = httpx.AsyncHTTPTransport(
        retries=CONNECT_RETRIES,
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=64),
    )
    http = httpx.AsyncClient(
        base_url=url,
        transport=transport,
        timeout=httpx.Timeout(30.0, read=timeout),
        headers=headers,
    )
    return LangGraphClient(http)


def _error_text(outcome: object) -> str | None:
    """The `Type: message` of a failed run from its join answer, when it carries one, or the
    error of an error record (a run stopped by the server's deadline)."""
    if isinstance(outcome, dict) and outcome.get("status") == "error" and outcome.get("error"):
        return str(outcome["error"])
    if not isinstance(outcome, dict) or not isinstance(outcome.get("__error__"), dict):
        return None
    error = outcome["__error__"]
    kind, message = error.get("error"), error.get("message")
    return ": ".join(str(part) for part in (kind, message) if part) or None


GONE_STATUSES = frozenset({502, 503, 504})  # a proxy or balancer whose server is gone


def _server_gone(exc: httpx.HTTPError) -> bool:
    """Whether an error says the server itself cannot be reached (not one request's fault)."""
    if isinstance(exc, httpx.HTTPStatusError):
        return exc.response.status_code in GONE_STATUSES
    if isinstance(exc, httpx.TimeoutException):
        return isinstance(exc, httpx.ConnectTimeout)  # a slow answer is not a gone server
    return isinstance(exc, (httpx.NetworkError, httpx.RemoteProtocolError))


def disagreement(result: VerificationResult, episode: Episode) -> str | None:
    """What in a record read back from a server thread does not agree with the episode sent
    (its id, content, plan) or with itself (a refined plan its history does not produce);
    None when it agrees."""
    if (result.id, result.input_digest) != (episode.id, episode.input_digest):
        return "a run on other content"
    if result.original != list(episode.actions):
        return "a run on another plan"
    if len(result.history) != result.iterations:
        return f"a history of {len(result.history)} Judge passes for {result.iterations}"
    if result.stop_reason == "static":
        return None if result.refined == result.original else "a static run that changed the plan"
    removed = {
        edit.origin: edit.action
        for record in result.history
        for edit in record.edits
        if edit.kind == "remove" and edit.origin is not None
    }
    plan = result.original
    if any(not 0 <= i < len(plan) or plan[i] != action for i, action in removed.items()):
        return "removals of steps the plan does not have"
    made = Counter(
        (edit.action, record.iteration)
        for record in result.history
        for edit in record.edits
        if edit.kind == "insert"
    )
    if Counter((step.action, step.iteration) for step in result.inserted) - made:
        return "insertions its history does not make"
    kept = [action for i, action in enumerate(result.original) if i not in removed]
    if not _interleaves(result.refined, kept, [step.action for step in result.inserted]):
        return "a refined plan its history does not produce"
    return None


def _interleaves(whole: list[str], first: list[str], second: list[str]) -> bool:
    """Whether `whole` is `first` and `second` merged, each kept in its own order."""
    if len(whole) != len(first) + len(second):
        return False
    taken = {0}  # the counts of `second` a prefix of `whole` may have used
    for position, item in enumerate(whole):
        following: set[int] = set()
        for used in taken:
            if used < len(second) and second[used] == item:
                following.add(used + 1)
            if position - used < len(first) and first[position - used] == item:
                following.add(used)
        if not following:
            return False
        taken = following
    return True


class RemoteVerifier:
    """Runs the verification graph on a LangGraph server; same `averify` as `Verifier`.

    Settings are those of `Verifier`, but Judge and Planner must be specs (strings): they are
    resolved on the server, whose environment holds the provider keys. `api_key` is sent to the
    server; when None the first of LANGGRAPH_API_KEY, LANGSMITH_API_KEY and LANGCHAIN_API_KEY
    that is set is used (pass "" to send none). `timeout` is the HTTP timeout of one request;
    `limits` (rates, timeout and retries of model calls) travel with each run and hold in each
    server worker process. Call `check` once before a batch, and close the verifier (`aclose`,
    or `async with`) when done.
    """

    def __init__(
        self,
        url: str,
        *,
        judge: str = "rules",
        planner: str = "rules",
        max_iterations: int = 5,
        static: bool = False,
        judge_output: Literal["text", "structured"] = "text",
        grounding: bool = False,
        base_url: str | None = None,
        goal_source: GoalSource = "given",
        certify: bool | None = None,
        trim: TrimPolicy = DEFAULT_TRIM,
        api_key: str | None = None,
        timeout: float = 300.0,
        limits: CallLimits | None = None,
        temperature: float | None = None,
        model_params: Mapping[str, Any] | None = None,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"the server must be an http:// or https:// URL, not {url!r}")
        if not isinstance(judge, str) or not isinstance(planner, str):
            raise TypeError(
                "a server run takes Judge and Planner specs (strings such as 'rules' or "
                "'openai:gpt-4o-mini'), not model or Judge objects: those cannot be sent"
            )
        self.url = url.rstrip("/")
        self.context = VerifierContext.validated(  # SettingsError: one line per bad value
            judge=judge,
            planner=planner,
            max_iterations=max_iterations,
            static=static,
            judge_output=judge_output,
            grounding=grounding,
            base_url=base_url,
            goal_source=goal_source,
            certify=certify,
            trim=trim,
            temperature=temperature,
            model_params=dict(model_params or {}),
        )
        # limits travel with every run: the server's model calls obey them
        self.context = self.context.with_limits(limits)
        self.settings = self.context.settings()
        self.key = self.settings.key  # same settings, same key as a local run
        self.unreachable: str | None = None  # the server reports model servers it cannot reach
        self.models = {"judge": judge, "planner": planner, "goal": planner}  # for prices
        self.client = connect(self.url, api_key, timeout=timeout)
        token = os.environ.get(TOKEN_ENV, "").strip()
        self.caller_salt = hashlib.sha256(token.encode()).hexdigest()[:32] if token else ""

    async def __aenter__(self) -> RemoteVerifier:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self.client.aclose()

    async def check(self) -> None:
        """Fail with `RemoteError` unless the server answers and serves the graph.

        One request, meant to run before any work so a wrong URL or key is one clear error.
        """
        try:
            found = await self.client.assistants.search(graph_id=GRAPH_ID, limit=1)
        except httpx.HTTPStatusError as exc:
            code = exc.response.status_code
            if code in (401, 403):
                raise RemoteError(
                    f"the LangGraph server at {self.url} refused the request ({code}): set "
                    f"{TOKEN_ENV} to its token, or LANGGRAPH_API_KEY (or LANGSMITH_API_KEY) "
                    "to a key it accepts"
                ) from None
            raise RemoteError(
                f"the server at {self.url} answered {code} to a LangGraph API request"
            ) from None
        except httpx.HTTPError as exc:
            raise RemoteError(
                f"no LangGraph server at {self.url} ({type(exc).__name__}: {exc})"
            ) from None
        except ValueError:  # some other web server: its answer is not the API's JSON
            raise RemoteError(f"{self.url} does not answer like a LangGraph server") from None
        if not isinstance(found, list):
            raise RemoteError(f"{self.url} does not answer like a LangGraph server")
        if not found:
            raise RemoteError(f"the server at {self.url} does not serve the {GRAPH_ID!r} graph")

    def thread_of(self, episode: Episode) -> str:
        """The server thread of an episode (id, content) under these settings (servers want
        UUIDs); with a token, derived from the token too, so that no other caller can compute
        it (and take the id first)."""
        name = thread_id(episode, self.key)
        if self.caller_salt:
            name = f"{name}#{self.caller_salt}"
        return str(uuid.uuid5(NAMESPACE, name))

    async def averify(self, episode: Episode) -> VerificationResult:
        """Verify one episode on the server; failures become a result with status "error".

        TEACh records only: the settings of a result of another domain record its package's
        version, which is the server's (a served run's own record says it; `verify --server`
        cannot), so such an episode is refused with one line, and runs locally instead."""
        if episode.domain not in (None, "teach"):
            why = (
                f"verify --server takes TEACh records only, not {episode.domain}: verify it locally"
            )
            return VerificationResult.failed(episode, why, self.settings)
        try:
            result = await self._run(episode)
        except RemoteRunError as exc:
            if str(exc).startswith(ProviderUnreachable.__name__):
                self.unreachable = str(exc)  # the server's model calls cannot get through
            return VerificationResult.failed(episode, str(exc), self.settings)
        except (httpx.TransportError, httpx.HTTPStatusError) as exc:
            if _server_gone(exc):  # no further episode can get through either
                self.unreachable = (
                    self.unreachable
                    or (
                        f"the LangGraph server at {self.url} stopped answering "
                        f"({type(exc).__name__}: {exc})".splitlines()[0]
                    )
                )
            return VerificationResult.from_exception(episode, exc, self.settings)
        except Exception as exc:  # one bad episode must not stop a batch
            return VerificationResult.from_exception(episode, exc, self.settings)
        result.settings = self.settings
        spend = Spend(dict(self.models))
        spend.add(result.usage)
        result.cost_usd = None if spend.unpriced else spend.cost
        return result

    async def _run(self, episode: Episode) -> VerificationResult:
        """Read the episode's thread back, wait for its run, or start one, until it is done."""
        thread = self.thread_of(episode)
        await self.client.threads.create(
            thread_id=thread,
            if_exists="do_nothing",
            metadata={"episode_id": episode.id, "settings": self.key},
        )
        started = 0
        while True:
            state = await self.client.threads.get_state(thread)
            values = state.get("values")
            values = dict(values) if isinstance(values, dict) else {}
            if values.get("stop_reason") and not state.get("next"):
                result = VerificationResult.from_state(PlanState.model_validate(values))
                if (problem := disagreement(result, episode)) is not None:
                    raise RemoteRunError(f"the server's thread holds {problem}")
                return result
            active = [
                run["run_id"]
                for run in await self.client.runs.list(thread)
                if run["status"] in ACTIVE
            ]
            if active:  # queued by an earlier client, or by another one just now: wait for it
                for run_id in active:
                    await self._join(thread, run_id)
                continue
            if started == MAX_RUNS:
                raise RemoteRunError(f"the episode did not finish after {MAX_RUNS} server runs")
            started += 1
            # a thread with values stopped part way (error, restart): continue from its
            # last checkpoint rather than start the episode again
            payload = None if values else self._input(episode)
            new_run = await self._start(thread, episode.id, payload)
            if new_run is None:
                continue
            status, error = await self._join(thread, new_run)
            if status in ("error", "timeout") or error is not None:
                raise RemoteRunError(error or f"the server run ended with status {status}")

    def _input(self, episode: Episode) -> dict[str, Any]:
        payload = graph_input(episode)
        payload["scene"] = episode.scene.model_dump(mode="json") if episode.scene else None
        return payload

    async def _start(
        self, thread: str, episode_id: str, payload: dict[str, Any] | None
    ) -> str | None:
        """Queue a run on the thread; None when another run got there first."""
        try:
            run = await self.client.runs.create(
                thread,
                GRAPH_ID,
                input=payload,
                context=self.context.model_dump(mode="json"),
                config={"recursion_limit": recursion_limit(self.context.max_iterations)},
                metadata={"episode_id": episode_id, "settings": self.key},
                multitask_strategy="reject",  # never two runs of one episode at once
            )
        except httpx.HTTPStatusError as exc:
            if exc.response.status_code == 409:  # the thread is busy: join that run instead
                return None
            raise
        return str(run["run_id"])

    async def _join(self, thread: str, run_id: str) -> tuple[str, str | None]:
        """Wait for a run to end; its final status and, when it failed, the server's error."""
        while True:
            try:
                outcome: object = await self.client.runs.join(thread, run_id)
            except httpx.TimeoutException:
                continue  # a long or long-queued run: it goes on on the server, wait again
            run = await self.client.runs.get(thread, run_id)
            status = str(run["status"])
            if status not in ACTIVE:
                return status, _error_text(outcome)
            await asyncio.sleep(1.0)
