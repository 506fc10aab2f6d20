"""Model calls at scale: which provider errors are retried and for how long, one retry layer
through the graph, per-call timeouts, and requests/s and tokens/min pacing on a virtual clock."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import random
from collections.abc import Awaitable, Callable, Coroutine
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest
from langchain_core.exceptions import ModelInvalidRequestError, ModelRateLimitError
from langchain_core.messages import BaseMessage

from planverify import verify_many, verify_plan
from planverify.agents import resolve_judge, resolve_planner
from planverify.agents.judge import ModelJudge
from planverify.llm.calls import (
    CallLimits,
    CallPolicy,
    RequestRate,
    TokenWindow,
    limits_for,
    parse_duration,
    retry_after,
)
from planverify.llm.errors import ModelCallFailed, retryable

from .conftest import ScriptedChatModel

FINE = "ACTION: 1. Driver.Move(1.0)\nANNOTATION: fine"


class Headers(dict[str, str]):
    """Case-insensitive enough for the tests, like httpx.Headers."""

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key.lower(), default)


class StatusError(Exception):
    """Shaped like openai/groq errors: `status_code` and a response with headers."""

    def __init__(self, status: int, **headers: str) -> None:
        super().__init__(f"HTTP {status}")
        self.status_code = status
        self.response = type("Response", (), {"headers": Headers(headers)})()


class ClientError(Exception):
    """Shaped like google.genai's errors: `code` (int), `status` (str) and JSON `details`."""

    def __init__(self, code: int, status: str, details: Any = None) -> None:
        super().__init__(f"{code} {status}")
        self.code = code
        self.status = status
        self.details = details


def wrapped(outer: Exception, inner: Exception) -> Exception:
    """`outer` raised from `inner`, as LangChain integrations wrap SDK errors."""
    try:
        raise outer from inner
    except Exception as exc:
        return exc


class ReadTimeout(Exception):
    """Named like httpx's read timeout."""


GOOGLE_QUOTA = {
    "error": {
        "code": 429,
        "status": "RESOURCE_EXHAUSTED",
        "details": [
            {"@type": "type.googleapis.com/google.rpc.Help"},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "17s"},
        ],
    }
}


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (StatusError(429), True),
        (StatusError(500), True),
        (StatusError(503), True),
        (StatusError(400), False),
        (StatusError(401), False),
        (StatusError(404), False),
        (StatusError(422), False),
        (ClientError(429, "RESOURCE_EXHAUSTED"), True),
        (ClientError(503, "UNAVAILABLE"), True),
        (ClientError(400, "INVALID_ARGUMENT"), False),
        (TimeoutError(), True),
        (ConnectionResetError(), True),
        (ReadTimeout("read timed out"), True),
        (ModelRateLimitError("slow down"), True),
        (ModelInvalidRequestError("bad"), False),
        # langchain-google-genai: a ModelError subclass without a status, from the SDK error
        (wrapped(ModelRateLimitError("quota"), ClientError(429, "RESOURCE_EXHAUSTED")), True),
        (wrapped(RuntimeError("opaque wrapper"), StatusError(502)), True),
        (wrapped(RuntimeError("opaque wrapper"), StatusError(400)), False),
        # already retried by the call layer: never again
        (wrapped(ModelCallFailed("gave up"), StatusError(429)), False),
        (ValueError("not a provider error"), False),
    ],
)
def test_errors_are_recognised_by_shape(error: Exception, expected: bool) -> None:
    assert retryable(error) is expected


def test_a_boolean_code_is_not_a_status() -> None:
    error = ValueError("odd")
    error.code = True  # type: ignore[attr-defined]
    assert not retryable(error)


def test_the_wait_a_provider_asks_for() -> None:
    assert retry_after(StatusError(429, **{"retry-after": "7"})) == 7.0
    assert retry_after(StatusError(429, **{"retry-after-ms": "1500", "retry-after": "2"})) == 1.5
    when = datetime.now(UTC) + timedelta(seconds=120)
    asked = retry_after(StatusError(429, **{"retry-after": format_datetime(when, usegmt=True)}))
    assert asked is not None and 100 < asked <= 120
    assert retry_after(StatusError(429, **{"retry-after": "soon"})) is None
    assert retry_after(StatusError(429)) is None
    google = wrapped(ModelRateLimitError("quota"), ClientError(429, "x", GOOGLE_QUOTA))
    assert retry_after(google) == 17.0


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1s", 1.0),
        ("6m0s", 360.0),
        ("20ms", 0.02),
        ("1h2m3.5s", 3723.5),
        ("17.25s", 17.25),
        ("2", 2.0),
        ("0.5", 0.5),
        (" 3s ", 3.0),
        ("", None),
        ("soon", None),
        ("5 s", None),
        ("1x", None),
        ("1.2.3s", None),
        ("-1", None),
        ("nan", None),
        ("inf", None),
    ],
)
def test_rate_limit_durations(text: str, seconds: float | None) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


def test_rate_limit_headers_on_a_429() -> None:
    def limited(status: int = 429, **headers: str) -> StatusError:
        return StatusError(
            status, **{f"x-ratelimit-{k.replace('_', '-')}": v for k, v in headers.items()}
        )

    assert retry_after(limited(remaining_requests="0", reset_requests="1s")) == 1.0
    both = {"reset_requests": "1s", "reset_tokens": "6m0s"}
    assert retry_after(limited(remaining_tokens="0", remaining_requests="3", **both)) == 360.0
    assert retry_after(limited(remaining_requests="0", remaining_tokens="9", **both)) == 1.0
    assert retry_after(limited(remaining_requests="0", remaining_tokens="0", **both)) == 360.0
    assert retry_after(limited(**both)) == 360.0  # nothing says which ran out: the longer
    assert retry_after(limited(remaining_tokens="0", reset_tokens="later")) is None
    assert retry_after(limited(503, remaining_requests="0", reset_requests="1s")) is None
    asked = StatusError(429, **{"retry-after": "7", "x-ratelimit-reset-requests": "1s"})
    assert retry_after(asked) == 7.0  # Retry-After comes first


def test_real_openai_errors() -> None:
    openai = pytest.importorskip("openai")
    httpx = pytest.importorskip("httpx")
    request = httpx.Request("POST", "https://api.example.invalid/v1/chat/completions")

    def response(status: int, **headers: str) -> Any:
        return httpx.Response(status, headers=headers, request=request)

    limited = openai.RateLimitError(
        "slow down", response=response(429, **{"retry-after-ms": "250"}), body=None
    )
    assert retryable(limited) and retry_after(limited) == 0.25
    assert retryable(openai.InternalServerError("boom", response=response(500), body=None))
    assert retryable(openai.APITimeoutError(request=request))
    assert retryable(openai.APIConnectionError(request=request))
    assert not retryable(openai.BadRequestError("bad", response=response(400), body=None))
    assert not retryable(openai.AuthenticationError("key", response=response(401), body=None))


def test_real_groq_errors() -> None:
    groq = pytest.importorskip("groq")
    httpx = pytest.importorskip("httpx")
    request = httpx.Request("POST", "https://api.example.invalid/openai/v1/chat/completions")
    limited = groq.RateLimitError(
        "slow down",
        response=httpx.Response(429, headers={"retry-after": "3"}, request=request),
        body=None,
    )
    assert retryable(limited) and retry_after(limited) == 3.0
    assert retryable(groq.APITimeoutError(request=request))
    bad = groq.BadRequestError("bad", response=httpx.Response(400, request=request), body=None)
    assert not retryable(bad)


def test_real_google_errors() -> None:
    errors = pytest.importorskip("google.genai.errors")
    quota = errors.ClientError(429, GOOGLE_QUOTA)
    assert retryable(quota) and retry_after(quota) == 17.0
    assert retryable(errors.ServerError(503, {"error": {"code": 503, "status": "UNAVAILABLE"}}))
    assert not retryable(errors.ClientError(400, {"error": {"code": 400, "status": "INVALID"}}))
    chat_models = pytest.importorskip("langchain_google_genai.chat_models")
    wrapper = getattr(chat_models, "GoogleRateLimitError", None)
    if wrapper is None:
        pytest.skip("this langchain-google-genai does not classify rate limits")
    error = wrapped(wrapper("Error calling model 'gemini' (RESOURCE_EXHAUSTED)"), quota)
    assert status_free(error) and retryable(error) and retry_after(error) == 17.0


def status_free(error: Exception) -> bool:
    """The wrapper itself carries no HTTP status: only its type (or its cause) says 429."""
    return not any(isinstance(getattr(error, a, None), int) for a in ("status_code", "code"))


class Attempts:
    """A call that fails with the given errors in order (the string "hang" sleeps past any
    timeout), then answers."""

    def __init__(self, *errors: Exception | str) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            error = self.errors.pop(0)
            if error == "hang":
                await asyncio.sleep(30)
            else:
                assert isinstance(error, Exception)
                raise error
        return "ok"


async def no_wait(seconds: float) -> None:
    return None


async def test_backoff_doubles_to_its_ceiling_with_full_jitter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    drawn: list[tuple[float, float]] = []
    waits: list[float] = []

    def uniform(low: float, high: float) -> float:
        drawn.append((low, high))
        return high / 2

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(random, "uniform", uniform)
    policy = CallPolicy(provider="backoff", base_delay=1.0, max_delay=8.0, sleep=sleep)
    call = Attempts(*[StatusError(503)] * 5)
    assert await policy.call(call) == "ok"
    assert drawn == [(0, 1.0), (0, 2.0), (0, 4.0), (0, 8.0), (0, 8.0)]
    assert waits == [0.5, 1.0, 2.0, 4.0, 4.0]


async def test_retry_after_replaces_the_jitter_and_a_long_one_gives_up() -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    policy = CallPolicy(provider="asked", max_wait=300.0, sleep=sleep)
    assert await policy.call(Attempts(StatusError(429, **{"retry-after": "42"}))) == "ok"
    assert waits == [42.0]
    daily = Attempts(StatusError(429, **{"retry-after": "86400"}))
    with pytest.raises(ModelCallFailed, match="asks to wait 86400 s"):
        await policy.call(daily)
    assert daily.calls == 1 and waits == [42.0]


async def test_giving_up_and_errors_that_are_never_retried() -> None:
    policy = CallPolicy(provider="give-up", max_retries=0, sleep=no_wait)
    once = Attempts(StatusError(429))
    with pytest.raises(ModelCallFailed, match=r"StatusError: HTTP 429 \(after 1 attempt\)"):
        await policy.call(once)
    assert once.calls == 1
    bad = Attempts(StatusError(401))
    with pytest.raises(StatusError):
        await CallPolicy(provider="give-up", sleep=no_wait).call(bad)
    assert bad.calls == 1


async def test_a_call_past_its_timeout_is_abandoned_and_retried() -> None:
    policy = CallPolicy(provider="slow", timeout=0.05, sleep=no_wait)
    call = Attempts("hang", "hang")
    assert await policy.call(call) == "ok" and call.calls == 3
    stuck = Attempts("hang")
    with pytest.raises(ModelCallFailed, match="TimeoutError"):
        await CallPolicy(provider="slow", timeout=0.05, max_retries=0).call(stuck)


class FlakyModel(ScriptedChatModel):
    """A fake chat model that fails with `failures` in order ("hang" sleeps for 30 s), then
    answers as scripted; `attempts` counts every call that reached it."""

    failures: list[Any] = []
    attempts: int = 0

    async def _agenerate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.attempts += 1
        if self.failures:
            failure = self.failures.pop(0)
            if failure == "hang":
                await asyncio.sleep(30)
            raise failure
        return self._generate(messages, *args, **kwargs)


def flaky(*failures: Any, replies: int = 1) -> FlakyModel:
    return FlakyModel(messages=iter([FINE] * replies), prompts=[], failures=list(failures))


def test_a_judge_rides_out_429_500_and_a_timeout() -> None:
    model = flaky(StatusError(429), StatusError(500), "hang")
    judge = ModelJudge(model, policy=CallPolicy(provider="ride", timeout=0.05, sleep=no_wait))
    result = verify_plan(["Driver.Move(1.0)"], "Walk.", judge=judge)
    assert result.status == "ok" and result.stop_reason == "no_objections"
    assert model.attempts == 4
    usage = result.usage["judge"]  # the timed-out attempt counts as a call, its tokens unknown
    assert (usage.calls, usage.unknown_calls, usage.total) == (2, 1, 15)


@pytest.mark.parametrize("max_retries", [0, 2])
def test_one_retry_layer_the_graph_does_not_retry_again(max_retries: int) -> None:
    model = flaky(*[StatusError(503)] * 10)
    policy = CallPolicy(provider="layer", max_retries=max_retries, sleep=no_wait)
    result = verify_plan(["Driver.Move(1.0)"], "Walk.", judge=ModelJudge(model, policy=policy))
    assert result.status == "error"
    assert model.attempts == max_retries + 1  # not multiplied by the node's RetryPolicy
    assert result.error is not None and result.error.startswith("ModelCallFailed: ")
    assert "HTTP 503" in result.error


def test_a_client_error_fails_the_episode_at_once() -> None:
    model = flaky(StatusError(400))
    result = verify_plan(
        ["Driver.Move(1.0)"], "Walk.", judge=ModelJudge(model, policy=CallPolicy(sleep=no_wait))
    )
    assert result.status == "error" and model.attempts == 1
    assert result.error == "StatusError: HTTP 400"


class PickyModel(ScriptedChatModel):
    """Rejects any plan that mentions a Fridge with a 400; approves the rest."""

    async def _agenerate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        if "Fridge" in str(messages[-1].content):
            raise StatusError(400)
        self.messages = iter([FINE])
        return self._generate(messages, *args, **kwargs)


def test_a_failing_episode_never_stops_the_batch() -> None:
    episodes = [{"id": f"e{n}", "goal": "Walk.", "actions": ["Driver.Move(1.0)"]} for n in range(6)]
    episodes[2]["actions"] = ["Driver.Open('Fridge')"]
    judge = ModelJudge(PickyModel(messages=iter(()), prompts=[]), policy=CallPolicy(sleep=no_wait))
    results = verify_many(episodes, judge=judge, concurrency=3)
    assert [r.status for r in results] == ["ok", "ok", "error", "ok", "ok", "ok"]
    assert results[2].error == "StatusError: HTTP 400"


class VirtualTime:
    """A clock and a `sleep` for it: `run` lets every task go as far as it can, then jumps the
    clock to the earliest sleeper. Pacing is asserted on this clock, never on real time."""

    def __init__(self) -> None:
        self.now = 0.0
        self.timers: list[tuple[float, int, asyncio.Future[None]]] = []
        self.order = itertools.count()

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self.timers, (self.now + seconds, next(self.order), future))
        await future

    async def run(self, *jobs: Coroutine[Any, Any, Any]) -> list[Any]:
        tasks = [asyncio.ensure_future(job) for job in jobs]
        while True:
            for _ in range(20):
                await asyncio.sleep(0)
            if all(task.done() for task in tasks):
                return [task.result() for task in tasks]
            assert self.timers, "blocked on something other than the virtual clock"
            self.now, _, future = heapq.heappop(self.timers)
            future.set_result(None)


def paced(time: VirtualTime, provider: str, **settings: Any) -> CallPolicy:
    """A policy on the virtual clock, with fresh shared limits."""
    policy = CallPolicy(provider=provider, sleep=time.sleep, **settings)
    shared = limits_for(provider, policy.rps, policy.tpm)
    if shared.requests is not None:
        shared.requests.clock = time.clock
        shared.requests.next_free = float("-inf")
    if shared.tokens is not None:
        shared.tokens.clock = time.clock
        shared.tokens.spent.clear()
    return policy


def sent_at(time: VirtualTime, log: list[float]) -> Callable[[], Awaitable[str]]:
    async def send() -> str:
        log.append(time.now)
        return "ok"

    return send


async def test_requests_per_second_book_evenly_spaced_slots_in_arrival_order() -> None:
    time = VirtualTime()
    policy = paced(time, "rps-virtual", rps=4.0)
    log: list[float] = []
    order: list[int] = []

    async def one(n: int) -> None:
        await policy.call(sent_at(time, log))
        order.append(n)

    await time.run(*(one(n) for n in range(6)))
    assert log == [0.0, 0.25, 0.5, 0.75, 1.0, 1.25]
    assert order == list(range(6))
    time.now = 10.0  # idle time builds no burst credit
    await time.run(*(one(n) for n in range(2)))
    assert log[-2:] == [10.0, 10.25]


def test_a_request_slot_is_never_booked_twice() -> None:
    now = [5.0]
    rate = RequestRate(2.0, clock=lambda: now[0])
    assert [rate.reserve() for _ in range(4)] == [0.0, 0.5, 1.0, 1.5]
    now[0] += 1.0
    assert rate.reserve() == 1.0  # slots at 5.0-6.5 are taken; the next one opens at 7.0


async def test_tokens_per_minute_pace_calls_on_their_real_counts() -> None:
    time = VirtualTime()
    policy = paced(time, "tpm-virtual", tpm=1000)
    log: list[float] = []
    send = sent_at(time, log)
    await time.run(*(policy.call(send, estimate=400, spent=lambda _: 500) for _ in range(3)))
    # two calls of 500 real tokens fill the minute; the third goes when the first leaves it
    assert log == [0.0, 0.0, 60.0]


async def test_a_reply_without_a_token_count_keeps_the_estimate() -> None:
    time = VirtualTime()
    policy = paced(time, "tpm-unreported", tpm=1000)
    log: list[float] = []
    send = sent_at(time, log)
    await time.run(*(policy.call(send, estimate=400, spent=lambda _: 0) for _ in range(3)))
    assert log == [0.0, 0.0, 60.0]  # 400 + 400 counted; a third 400 would exceed 1000


def test_a_corrected_estimate_leaves_the_window_with_its_call() -> None:
    now = [0.0]
    window = TokenWindow(per_minute=1000, clock=lambda: now[0])
    entry = window.add(400)
    window.settle(entry, 100)
    now[0] = 30.0
    window.add(200)
    assert window.used() == 300
    now[0] = 61.0
    assert window.used() == 200  # no stray correction outlives the call it corrected
    assert window.wait_for(5000) == pytest.approx(29.0)  # too big for any minute: waits for empty


async def test_a_finished_call_returns_while_others_wait_for_tokens() -> None:
    blocked: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def forever(seconds: float) -> None:
        await blocked  # a pacing wait that never ends during the test

    policy = CallPolicy(provider="tpm-hostage", tpm=1000, sleep=forever)
    limits_for("tpm-hostage", None, 1000).tokens.spent.clear()  # type: ignore[union-attr]
    answer = asyncio.Event()

    async def slow() -> str:
        await answer.wait()
        return "first"

    first = asyncio.create_task(policy.call(slow, estimate=900, spent=lambda _: 900))
    await asyncio.sleep(0)
    waiting = asyncio.create_task(policy.call(slow, estimate=500, spent=lambda _: 500))
    for _ in range(5):
        await asyncio.sleep(0)
    answer.set()
    assert await asyncio.wait_for(first, timeout=5) == "first"
    assert not waiting.done()
    waiting.cancel()


def test_limits_work_from_one_event_loop_after_another() -> None:
    policy = CallPolicy(provider="loops", rps=1000.0, tpm=10_000)

    async def batch() -> list[str]:
        async def quick() -> str:
            await asyncio.sleep(0)
            return "ok"

        return await asyncio.gather(*(policy.call(quick, estimate=10) for _ in range(20)))

    assert asyncio.run(batch()) == ["ok"] * 20
    assert asyncio.run(batch()) == ["ok"] * 20


def test_specs_share_limits_per_provider_or_server() -> None:
    pytest.importorskip("langchain_openai")
    limits = CallLimits(rps=2.0, tpm=50_000, timeout=30.0, max_retries=3)
    local = "http://127.0.0.1:9/v1"
    judge = resolve_judge("openai:qwen2.5-7b", base_url=local, limits=limits)
    planner = resolve_planner("openai:qwen2.5-7b", base_url=local, limits=limits)
    other = resolve_judge("openai:qwen2.5-7b", base_url="http://127.0.0.1:10/v1", limits=limits)
    assert isinstance(judge, ModelJudge)
    policy = judge.policy
    assert (policy.provider, policy.rps, policy.tpm, policy.timeout, policy.max_retries) == (
        local,
        2.0,
        50_000,
        30.0,
        3,
    )
    assert getattr(judge.model, "max_retries", None) == 0  # the client does not retry again
    shared = limits_for(local, 2.0, 50_000)
    assert limits_for(planner.policy.provider, 2.0, 50_000) is shared  # type: ignore[attr-defined]
    assert limits_for(other.policy.provider, 2.0, 50_000) is not shared  # type: ignore[attr-defined]


def test_limits_travel_in_the_context_to_specs_resolved_by_the_graph() -> None:
    """A server resolves Judge and Planner specs from the run's context: the limits go along."""
    pytest.importorskip("langchain_openai")
    from planverify.graphs.context import VerifierContext
    from planverify.graphs.graph import judge_of, planner_of
    from planverify.runs.remote import RemoteVerifier

    limits = CallLimits(rps=3.0, tpm=40_000, timeout=20.0, max_retries=2)
    remote = RemoteVerifier(
        "http://127.0.0.1:9",
        judge="openai:qwen2.5-7b",
        planner="openai:qwen2.5-7b",
        base_url="http://127.0.0.1:9/v1",
        api_key="",
        limits=limits,
    )
    sent = remote.context.model_dump(mode="json")  # what a run carries to the server, as JSON
    assert (sent["rps"], sent["tpm"], sent["timeout"], sent["max_retries"]) == (
        3.0,
        40_000,
        20.0,
        2,
    )
    context = VerifierContext(**sent)
    for agent in (judge_of(context), planner_of(context)):
        policy = agent.policy  # type: ignore[attr-defined]
        assert (policy.rps, policy.tpm, policy.timeout, policy.max_retries) == (
            3.0,
            40_000,
            20.0,
            2,
        )
    unlimited = VerifierContext(**{**sent, "rps": None, "tpm": None})
    assert judge_of(unlimited).policy.rps is None  # type: ignore[attr-defined]
    plain = RemoteVerifier(
        "http://127.0.0.1:9",
        judge="openai:qwen2.5-7b",
        planner="openai:qwen2.5-7b",
        base_url="http://127.0.0.1:9/v1",
        api_key="",
    )
    assert plain.key == remote.key, "limits do not change results, so not the settings key"
