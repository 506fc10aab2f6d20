"""How model calls go out: per-provider request and token rates, a timeout, and retries with
exponential backoff and full jitter on rate limits, server errors, timeouts and lost connections.
A provider that says how long to wait is waited for instead: `Retry-After`, `retry-after-ms`,
Google's `RetryInfo`, or on a 429 the reset of the exhausted OpenAI-style `x-ratelimit-*` budget.

Limits are shared by every episode of a process that talks to the same provider (or the same
OpenAI-compatible server), so `--concurrency 64` never means 64 requests at once against a
30-requests-per-second quota. They hold no asyncio objects, so one process can use them from
several event loops (`verify_plan` called again and again, a thread per run).

What a failed call means (retry, give up, a refusal) is `planverify.llm.errors`.

Calls to one provider (one base URL) also pass an adaptive limit on how many are in flight at
once (`planverify.llm.concurrency`), never above `--concurrency`; a call's timeout starts when it is
sent, not while it waits for that limit. A timed-out attempt is counted (`unknown_calls`): the
server may still have spent its tokens, which nobody reports.

The timeout (`--timeout`) is on progress: the time to the first streamed chunk, then between
chunks (an answer that is not streamed shows progress only when it is complete); a separate cap
(`--max-call-time`) bounds the whole call. Progress is seen through LangChain's callbacks
(`Watch`), so a timed-out call is cancelled inside the model's stream, which closes the
connection: a server that stops generating when its client goes away (llama-cpp-python does,
for streamed requests) frees its slot instead of finishing an answer nobody waits for, which
would make the retry and every later call queue behind it and time out too.

A streamed answer that ends without a finish reason was interrupted, never complete:
llama-cpp-python stops a streamed answer when another request arrives, and ends the stream
with `[DONE]` alone. That attempt raises `Interrupted` before LangChain's response cache can
keep it; it is retried, and the provider's limit stays at 1 from then on. An attempt that
timed out or was interrupted is retried at once, keeping its slot where the limit allows: the
server has just read its prompt (llama-cpp-python keeps the last prompt in its cache), so the
retry should come next, not after the calls that wait.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, fields
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.outputs import ChatGenerationChunk, GenerationChunk
from langchain_core.tracers.context import register_configure_hook

from planverify.eventloop.turns import waiting
from planverify.llm.concurrency import Budget, CallGate, Ticket, gate_for
from planverify.llm.errors import (
    Interrupted,
    ModelCallFailed,
    ProviderUnreachable,
    causes,
    interrupted,
    overloaded,
    retryable,
    status_of,
    timed_out,
    unreachable,
)
from planverify.llm.servers import Prefix, entry_key, plain_url, server_key
from planverify.llm.tables import SharedTable

T = TypeVar("T")


def output_tokens(result: Any) -> int | None:
    """Output tokens a reply reports: an `AIMessage`, or the `raw` one of structured output."""
    if isinstance(result, Mapping):
        result = result.get("raw")
    meta = getattr(result, "usage_metadata", None)
    value = meta.get("output_tokens") if isinstance(meta, Mapping) else None
    return value if isinstance(value, int) and value > 0 else None


@dataclass
class Unknown:
    """Attempts that timed out inside `counting_unknown()`."""

    calls: int = 0  # how many


_unknown: ContextVar[Unknown | None] = ContextVar("planverify_unknown", default=None)


@contextmanager
def counting_unknown() -> Iterator[Unknown]:
    """Count the attempts of model calls in the body that timed out (tokens unknown)."""
    tally = Unknown()
    token = _unknown.set(tally)
    try:
        yield tally
    finally:
        _unknown.reset(token)


class Watch(AsyncCallbackHandler):
    """Sees the progress of one attempt through LangChain's callbacks: every streamed chunk
    pushes the no-progress deadline back, and a stream that ends without a finish reason raises
    `Interrupted` (from inside the model's run, before the response cache keeps the answer)."""

    run_inline = True  # called in the attempt's own task, in order
    raise_error = True  # `Interrupted` must reach the caller

    def __init__(self, idle: float | None, streamed: bool) -> None:
        self.idle = idle  # seconds allowed without progress
        self.streamed = streamed  # the model streams: its stream must end with a finish reason
        self.scope: asyncio.Timeout | None = None  # the no-progress deadline, once sent
        self.chunks = 0  # chunks seen
        self.finished = False  # a chunk carried a finish reason

    async def on_llm_new_token(
        self,
        token: str | list[str | dict[str, Any]],
        *,
        chunk: GenerationChunk | ChatGenerationChunk | None = None,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        """Progress: push the deadline back; at the stream's end, check it was complete."""
        self.chunks += 1
        if self.scope is not None and self.idle is not None:
            self.scope.reschedule(asyncio.get_running_loop().time() + self.idle)
        message = getattr(chunk, "message", None)
        meta = getattr(message, "response_metadata", None) or {}
        info = getattr(chunk, "generation_info", None) or {}
        if meta.get("finish_reason") or info.get("finish_reason"):
            self.finished = True
        last = getattr(message, "chunk_position", None) == "last"
        if last and self.streamed and not self.finished:
            raise Interrupted("the server ended the streamed answer without a finish reason")


class _WatchRaisesOnPurpose(logging.Filter):
    """LangChain logs `Error in Watch.on_llm_new_token callback: Interrupted(...)` before it
    re-raises what a callback raised; `Watch` raises on purpose, and the call layer retries and
    reports the attempt, so that line would only reach the user's terminal raw."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        return not (isinstance(args, tuple) and args and args[0] == Watch.__name__)


logging.getLogger("langchain_core.callbacks.manager").addFilter(_WatchRaisesOnPurpose())

_watch: ContextVar[Watch | None] = ContextVar("planverify_watch", default=None)
register_configure_hook(_watch, inheritable=True)  # every model run of an attempt reports to it


_DELAY = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def _header(headers: Any, name: str) -> str | None:
    try:
        value = headers.get(name)
        if value is None:
            value = headers.get(name.title())
    except (AttributeError, TypeError):
        return None
    return value if isinstance(value, str) else None


def _from_headers(headers: Any) -> float | None:
    millis = _header(headers, "retry-after-ms")  # OpenAI sends this next to Retry-After
    if millis is not None:
        try:
            return max(float(millis) / 1000, 0.0)
        except ValueError:
            pass
    value = _header(headers, "retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:  # an HTTP date
        return max(parsedate_to_datetime(value).timestamp() - time.time(), 0.0)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


_SPAN = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s)")
_UNIT = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def parse_duration(text: str) -> float | None:
    """Seconds in a duration as OpenAI's rate-limit headers give it (`1s`, `6m0s`, `20ms`,
    `1h2m3.5s`) or in plain seconds (`2.5`); None when it is neither."""
    text = text.strip()
    try:
        seconds = float(text)
    except ValueError:
        spans = list(_SPAN.finditer(text))
        if not spans or "".join(m[0] for m in spans) != text:
            return None
        seconds = sum(float(m[1]) * _UNIT[m[2]] for m in spans)
    return seconds if seconds >= 0 and seconds != float("inf") else None


def _budget(headers: Any, kind: str) -> tuple[float | None, float | None]:
    """(remaining, seconds until reset) of the `requests` or `tokens` budget, as far as given."""
    remaining = _header(headers, f"x-ratelimit-remaining-{kind}")
    reset = _header(headers, f"x-ratelimit-reset-{kind}")
    try:
        left = float(remaining) if remaining is not None else None
    except ValueError:
        left = None
    return left, parse_duration(reset) if reset is not None else None


def _reset_wait(headers: Any) -> float | None:
    """Seconds until the exhausted budget resets (the longer reset when it is not clear which
    one ran out), from OpenAI-style `x-ratelimit-*` headers."""
    budgets = [_budget(headers, kind) for kind in ("requests", "tokens")]
    resets = [reset for _, reset in budgets if reset is not None]
    spent = [
        reset for left, reset in budgets if reset is not None and left is not None and left <= 0
    ]
    return max(spent or resets, default=None)


def _retry_delay(details: Any) -> float | None:
    """Google's `RetryInfo` (`"retryDelay": "17s"`) anywhere in an error's JSON details."""
    if isinstance(details, Mapping):
        value = details.get("retryDelay")
        if isinstance(value, str) and (m := _DELAY.match(value)):
            return float(m[1])
        items: Any = details.values()
    elif isinstance(details, list | tuple):
        items = details
    else:
        return None
    for item in items:
        if (found := _retry_delay(item)) is not None:
            return found
    return None


def retry_after(exc: BaseException) -> float | None:
    """Seconds a provider asked us to wait (`Retry-After`, `retry-after-ms`, Google's
    `RetryInfo`; on a 429 without them, the reset of the exhausted `x-ratelimit-*` budget),
    if it said."""
    for error in causes(exc):
        if (seconds := _asked(error)) is not None:
            return seconds
    return None


def _asked(error: BaseException) -> float | None:
    """The wait one error of the chain asks for."""
    headers = getattr(getattr(error, "response", None), "headers", None)
    if headers is not None and (seconds := _from_headers(headers)) is not None:
        return seconds
    if (seconds := _retry_delay(getattr(error, "details", None))) is not None:
        return seconds
    if headers is not None and status_of(error) == 429:
        return _reset_wait(headers)
    return None


@dataclass
class RequestRate:
    """Requests per second: each request books the next free slot, first come first served.

    Nothing polls: a request that must wait sleeps exactly until its slot. A request cancelled
    while it waits leaves its slot unused, which only ever slows the rate down.
    """

    per_second: float  # the limit
    clock: Callable[[], float] = time.monotonic  # replaced in tests
    next_free: float = float("-inf")  # when the next slot opens

    def reserve(self) -> float:
        """Book the next slot; seconds to wait before sending (0 when it is open now)."""
        now = self.clock()
        start = max(now, self.next_free)
        self.next_free = start + 1.0 / self.per_second
        return start - now


@dataclass
class TokenWindow:
    """Tokens spent in the last minute, against a tokens-per-minute budget.

    A call counts its estimate when it is let through; `settle` replaces the estimate with the
    real count once the provider reports it, at the call's own place in the window.
    """

    per_minute: int  # the budget
    spent: deque[list[float]] = field(default_factory=deque)  # [time, tokens], oldest first
    clock: Callable[[], float] = time.monotonic  # replaced in tests

    def used(self) -> int:
        """Tokens counted in the last 60 seconds."""
        horizon = self.clock() - 60.0
        while self.spent and self.spent[0][0] <= horizon:
            self.spent.popleft()
        return int(sum(n for _, n in self.spent))

    def wait_for(self, tokens: int) -> float:
        """Seconds until `tokens` more fit in the budget (0 when they fit now); a call larger
        than the whole budget waits for an empty window."""
        need = min(tokens, self.per_minute)
        running = self.used()
        if running + need <= self.per_minute:
            return 0.0
        now = self.clock()
        for stamp, n in self.spent:
            running -= int(n)
            if running + need <= self.per_minute:
                return max(stamp + 60.0 - now, 0.0)
        return 60.0

    def add(self, tokens: int) -> list[float]:
        """Count tokens now; returns the entry to `settle` later."""
        entry = [self.clock(), float(tokens)]
        self.spent.append(entry)
        return entry

    def settle(self, entry: list[float], tokens: int) -> None:
        """Replace an entry's estimate with the real count."""
        entry[1] = float(tokens)


@dataclass
class Limits:
    """The shared limits of one provider."""

    requests: RequestRate | None = None  # requests per second
    tokens: TokenWindow | None = None  # tokens per minute
    down: ProviderUnreachable | None = None  # the last failure to reach the provider at all
    down_until: float = float("-inf")  # until when calls fail at once with `down`

    def mark_down(self, error: ProviderUnreachable, now: float) -> ProviderUnreachable:
        """Fail calls at once for `DOWN_FOR` seconds: the provider could not be reached."""
        self.down, self.down_until = error, now + DOWN_FOR
        return error


DOWN_FOR = 30.0  # seconds an unreachable provider is not tried again


def _new_limits(key: tuple[str, float | None, int | None]) -> Limits:
    _, rps, tpm = key
    return Limits(
        requests=RequestRate(rps) if rps else None, tokens=TokenWindow(tpm) if tpm else None
    )


def _limits_idle(limits: Limits) -> bool:
    """Whether dropping the limits loses nothing: no slot booked ahead, no tokens counted."""
    rate, window = limits.requests, limits.tokens
    return (rate is None or rate.next_free <= rate.clock()) and (
        window is None or not window.used()
    )


_LIMITS: SharedTable[tuple[str, float | None, int | None], Limits] = SharedTable(
    _new_limits, idle=_limits_idle
)


def limits_for(key: str, rps: float | None, tpm: int | None) -> Limits:
    """The limits shared by every caller of the same provider with the same settings (a bounded
    table: limits with nothing booked are dropped once there are many)."""
    return _LIMITS.get((key, rps, tpm))


@dataclass(frozen=True)
class Ceilings:
    """The operator's limits on a served process (`planverify.graphs.policy`): per provider, the
    model calls of all runs together keep to them, whatever each run asks for itself."""

    rps: float | None = None  # requests per second, None = no limit
    tpm: int | None = None  # tokens per minute, None = no limit
    concurrency: int | None = None  # calls in flight (the adaptive limit's cap), None = no cap
    servers: tuple[Prefix, ...] = ()  # the allow-list: each entry's servers are one provider

    def key(self, provider: str) -> str:
        """The name of a provider's limits: the widest allow-list entry covering its URL (the
        first listed among equals), else `server_key`."""
        try:
            url = plain_url(provider)
        except ValueError:
            return server_key(provider)
        covering = [prefix for prefix in self.servers if prefix.covers(url)]
        if not covering:
            return server_key(provider)
        return entry_key(min(covering, key=lambda prefix: len(prefix.path)))


@dataclass
class Layer:
    """One level of limits a call passes: a rate limit and a gate on calls in flight."""

    limits: Limits | None  # request and token rates (None: this level has none)
    gate: CallGate | None  # calls in flight (None: this level has none)


def _attempts(n: int) -> str:
    return f"{n} attempt" if n == 1 else f"{n} attempts"


async def _enter(gates: list[CallGate]) -> list[Ticket]:
    """A slot in each gate, in order (every caller takes them in the same order, so none
    holds one while another holds the next); nothing is held when this is cancelled."""
    tickets: list[Ticket] = []
    try:
        for gate in gates:
            tickets.append(await gate.enter())
    except BaseException:
        for ticket in tickets:
            ticket.release()
        raise
    return tickets


@dataclass(frozen=True)
class CallPolicy:
    """Rate limits, timeout and retries for the model calls of one Judge or Planner.

    The only retry layer for model errors: it retries rate limits, server errors, timeouts and
    lost connections, and whatever it gives up on is raised as `ModelCallFailed`, which the
    graph's node retry policy leaves alone. Other errors (a bad request, a wrong key) are raised
    as they are, at once.
    """

    provider: str = "default"  # whose limits apply (provider name, or the server's base URL)
    model: str = ""  # the model's name, for messages
    concurrency: int = 8  # most calls in flight to this provider; the adaptive limit stays below
    rps: float | None = None  # requests per second, None = no limit
    tpm: int | None = None  # tokens per minute, None = no limit
    timeout: float | None = 120.0  # seconds without progress in a call, None = none
    max_call_time: float | None = 600.0  # seconds for a whole call, None = none
    max_retries: int = 5  # retries after the first attempt
    base_delay: float = 1.0  # first backoff ceiling, doubled each retry
    max_delay: float = 60.0  # backoff ceiling
    max_wait: float = 300.0  # a provider asking for a longer pause (a daily quota) fails the call
    ceilings: Ceilings | None = None  # the operator's limits over all runs (served processes)
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep  # replaced in tests

    async def call(
        self,
        make: Callable[[], Awaitable[T]],
        *,
        estimate: int = 0,
        spent: Callable[[T], int] | None = None,
        streamed: bool = False,
    ) -> T:
        """Run `make()` under the limits; `estimate` is the call's expected tokens, and
        `spent(result)` its real count, used to correct the tokens-per-minute window (a reply
        without a count keeps the estimate); `streamed`: the model streams its answer, which
        must then end with a finish reason."""
        async with waiting():  # other episodes compute while this one waits on the provider
            return await self._call(make, estimate=estimate, spent=spent, streamed=streamed)

    @property
    def key(self) -> str:
        """The name its provider's shared limits go by (`Ceilings.key`, or `server_key`)."""
        return self.ceilings.key(self.provider) if self.ceilings else server_key(self.provider)

    def layers(self) -> list[Layer]:
        """The limits a call passes: its own, then the operator's ceilings where they differ
        (so that all runs of a served process together keep to them)."""
        key = self.key
        own = Layer(limits_for(key, self.rps, self.tpm), gate_for(key, self.concurrency))
        top = self.ceilings
        if top is None:
            return [own]
        rates = (top.rps, top.tpm)
        outer = Layer(
            limits_for(key, *rates) if any(rates) and rates != (self.rps, self.tpm) else None,
            gate_for(key, top.concurrency)
            if top.concurrency is not None and top.concurrency != self.concurrency
            else None,
        )
        return [own] if outer.limits is None and outer.gate is None else [own, outer]

    async def _call(
        self,
        make: Callable[[], Awaitable[T]],
        *,
        estimate: int,
        spent: Callable[[T], int] | None,
        streamed: bool,
    ) -> T:
        layers = self.layers()
        shared = layers[0].limits
        assert shared is not None
        attempt, lost = 0, 0
        held: list[Ticket] = []  # slots kept for a retry at once
        while True:
            if shared.down is not None and time.monotonic() < shared.down_until:
                for ticket in held:
                    ticket.release()
                raise shared.down
            # waits here, in this process, before the timeout starts
            tickets = held or await _enter([layer.gate for layer in layers if layer.gate])
            held = []
            try:
                entries = [
                    (limits, await self._admit(limits, estimate))
                    for limits in (layer.limits for layer in layers)
                    if limits is not None
                ]
                result = await self._send(make, tickets, streamed)
            except Exception as exc:
                if timed_out(exc) or interrupted(exc):
                    lost += 1
                    if (tally := _unknown.get()) is not None:
                        tally.calls += 1
                asked = retry_after(exc)
                again = retryable(exc) and attempt < self.max_retries
                again = again and (asked is None or asked <= self.max_wait)
                held = self._settle_all(tickets, exc, keep=again)
                if not retryable(exc):
                    raise
                if not again:
                    raise self._given_up(exc, attempt, asked, lost, shared) from exc
                attempt += 1
                if not held:  # a retry that keeps its slot goes at once
                    ceiling = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
                    await self.sleep(asked or random.uniform(0, ceiling))
                continue
            except BaseException:
                for ticket in tickets:
                    ticket.release()
                raise
            budget = Budget(self.timeout, self.max_call_time, streamed)
            for ticket in tickets:
                ticket.answered(output_tokens(result), budget)
            real = spent(result) if spent is not None else 0
            for limits, entry in entries:
                if entry is not None and real > 0 and limits.tokens is not None:
                    limits.tokens.settle(entry, real)
            return result

    def _given_up(
        self, exc: Exception, attempt: int, asked: float | None, lost: int, shared: Limits
    ) -> ModelCallFailed:
        """What a call that gives up on a retryable error raises: `ModelCallFailed` (or
        `ProviderUnreachable`) saying how often it tried."""
        if asked is not None and asked > self.max_wait:
            failed: ModelCallFailed = self._failed(
                f"{type(exc).__name__}: {exc} (the provider asks to wait {asked:.0f} s; "
                f"gave up after {_attempts(attempt + 1)})",
                lost,
            )
        else:
            text = f"{type(exc).__name__}: {exc} (after {_attempts(attempt + 1)})"
            if unreachable(exc):
                down = ProviderUnreachable(self.provider, text)
                failed = shared.mark_down(down, time.monotonic())
            else:
                failed = self._failed(text, lost)
        return failed

    async def _send(
        self, make: Callable[[], Awaitable[T]], tickets: list[Ticket], streamed: bool
    ) -> T:
        """One attempt, timed from when it is sent: `timeout` without progress (`Watch`), and
        `max_call_time` in all."""
        for ticket in tickets:
            ticket.sent()
        watch = Watch(self.timeout, streamed)
        token = _watch.set(watch)
        whole = None
        try:
            async with asyncio.timeout(self.max_call_time) as whole:
                async with asyncio.timeout(self.timeout) as watch.scope:
                    return await make()
        except TimeoutError as exc:
            raise TimeoutError(self._late(watch, whole is not None and whole.expired())) from exc
        finally:
            _watch.reset(token)

    def _late(self, watch: Watch, whole: bool) -> str:
        """What a timed-out attempt is reported as."""
        who = self.model or self.provider
        where = f" at {self.provider}" if "://" in self.provider else ""
        if whole:
            return f"the answer of {who}{where} took longer than {self.max_call_time:g} s"
        if watch.chunks:
            return f"the answer of {who}{where} stalled for {self.timeout:g} s"
        return f"no answer from {who}{where} within {self.timeout:g} s"

    def _settle_all(self, tickets: list[Ticket], exc: BaseException, keep: bool) -> list[Ticket]:
        """Tell the limits how an attempt failed. A call retried after a timeout or an
        interruption keeps its slots where the limits still allow it (the tickets for the retry
        are returned, else none): the server has just read its prompt, and may still hold it in
        its cache for a retry that comes next, not after the calls that wait."""
        keep = keep and (timed_out(exc) or interrupted(exc))
        kept = [self._settle(ticket, exc, keep) for ticket in tickets]
        if all(ticket is not None for ticket in kept):
            return [ticket for ticket in kept if ticket is not None]
        for ticket in kept:
            if ticket is not None:
                ticket.release()
        return []

    def _settle(self, ticket: Ticket, exc: BaseException, keep: bool) -> Ticket | None:
        """Free the call's slot (or keep it, when `keep` and the limit allows: the ticket for
        the retry), telling the limit whether the server was overloaded or interrupted."""
        if interrupted(exc):
            return ticket.interrupted(keep)
        if overloaded(exc):
            return ticket.overloaded(timed_out(exc), keep)
        ticket.release()
        return None

    def _failed(self, text: str, lost: int) -> ModelCallFailed:
        failed = ModelCallFailed(text)
        failed.model, failed.unknown_calls = self.model, lost
        return failed

    async def _admit(self, shared: Limits, estimate: int) -> list[float] | None:
        """Wait until the call fits the token budget, then for its request slot."""
        entry = None
        if shared.tokens is not None:
            # check and count with no await in between: nothing else runs in the meantime
            while (delay := shared.tokens.wait_for(estimate)) > 0:
                await self.sleep(delay)
            entry = shared.tokens.add(estimate)
        if shared.requests is not None and (delay := shared.requests.reserve()) > 0:
            await self.sleep(delay)
        return entry


@dataclass(frozen=True)
class CallLimits:
    """User settings for model calls (`--rps`, `--tpm`, `--timeout`, `--max-call-time`,
    `--max-retries`, `--concurrency`)."""

    rps: float | None = None  # requests per second per provider, None = no limit
    tpm: int | None = None  # tokens per minute per provider, None = no limit
    timeout: float | None = 120.0  # seconds without progress in a call
    max_retries: int = 5  # retries on rate limits, server errors and timeouts
    concurrency: int = 8  # cap on the adaptive limit of calls in flight per provider
    ceilings: Ceilings | None = None  # the operator's limits over all runs (served processes)
    max_call_time: float | None = 600.0  # seconds for a whole call

    def policy(self, provider: str, model: str = "") -> CallPolicy:
        """The call policy of one provider (and model, for messages) under these settings: every
        setting goes to the policy field of the same name."""
        settings = {f.name: getattr(self, f.name) for f in fields(self)}
        return CallPolicy(provider=provider, model=model, **settings)


def estimate_tokens(text: str, expected_output: int = 400) -> int:
    """A rough count for rate limiting: about four characters a token, plus the answer."""
    return len(text) // 4 + expected_output
