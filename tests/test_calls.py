"""Model calls: retries with backoff on transient errors only, Retry-After, timeouts, shared
rate limits and the tokens-per-minute window."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from planverify import verify_plan
from planverify.llm.calls import CallPolicy, TokenWindow, limits_for
from planverify.llm.errors import ModelCallFailed, retryable

from .conftest import ScriptedChatModel


class StatusError(Exception):
    """Shaped like provider SDK errors: an HTTP status and maybe a response with headers."""

    def __init__(self, status: int, retry_after: str | None = None) -> None:
        super().__init__(f"HTTP {status}")
        self.status_code = status
        self.response = type(
            "Response", (), {"headers": {"retry-after": retry_after} if retry_after else {}}
        )()


class RateLimitError(Exception):
    """Named like openai/groq's rate-limit error, without a status attribute."""


def test_which_errors_are_retried() -> None:
    assert retryable(StatusError(429)) and retryable(StatusError(503))
    assert retryable(TimeoutError()) and retryable(ConnectionResetError())
    assert retryable(RateLimitError())
    assert not retryable(StatusError(400)) and not retryable(StatusError(401))
    assert not retryable(ValueError("bad"))


class Flaky:
    """Fails with the given errors, in order, then answers."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


async def test_transient_errors_are_retried_with_growing_jittered_waits() -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    policy = CallPolicy(provider="t1", base_delay=1.0, max_delay=3.0, sleep=sleep)
    call = Flaky(StatusError(429), StatusError(500), TimeoutError(), StatusError(502))
    assert await policy.call(call) == "ok"
    assert call.calls == 5
    assert len(waits) == 3  # the timed-out attempt is retried at once, keeping its slot
    assert all(0 <= w <= ceiling for w, ceiling in zip(waits, [1, 2, 3], strict=True))


async def test_retry_after_is_honoured_and_client_errors_are_not_retried() -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    policy = CallPolicy(provider="t2", sleep=sleep)
    assert await policy.call(Flaky(StatusError(429, retry_after="7"))) == "ok"
    assert waits == [7.0]
    bad = Flaky(StatusError(400))
    with pytest.raises(StatusError):
        await policy.call(bad)
    assert bad.calls == 1


async def test_giving_up_says_how_often_it_tried() -> None:
    async def sleep(seconds: float) -> None:
        return None

    policy = CallPolicy(provider="t3", max_retries=2, sleep=sleep)
    with pytest.raises(ModelCallFailed, match="after 3 attempts"):
        await policy.call(Flaky(*[StatusError(503)] * 5))


async def test_a_slow_call_times_out_and_is_retried() -> None:
    attempts = 0

    async def slow_then_fast() -> str:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            await asyncio.sleep(5)
        return "fast"

    async def no_wait(seconds: float) -> None:
        return None

    policy = CallPolicy(provider="t4", timeout=0.05, sleep=no_wait)
    assert await policy.call(slow_then_fast) == "fast"
    assert attempts == 2


def test_limits_are_shared_per_provider_and_settings() -> None:
    assert limits_for("p", 5.0, None) is limits_for("p", 5.0, None)
    assert limits_for("p", 5.0, None) is not limits_for("q", 5.0, None)
    assert limits_for("p", None, None).requests is None


def test_the_token_window_waits_until_a_call_fits() -> None:
    now = [1000.0]
    window = TokenWindow(per_minute=1000, clock=lambda: now[0])
    assert window.wait_for(600) == 0.0
    window.add(600)
    now[0] += 10
    window.add(300)
    assert window.wait_for(200) == pytest.approx(50.0)  # the first 600 leave at t=1060
    now[0] += 50
    assert window.wait_for(200) == 0.0 and window.used() == 300


async def test_tokens_per_minute_pace_calls_and_use_the_real_counts() -> None:
    now = [0.0]
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    policy = CallPolicy(provider="t5", tpm=1000, sleep=sleep)
    limits_for("t5", None, 1000).tokens.clock = lambda: now[0]  # type: ignore[union-attr]
    for _ in range(3):
        await policy.call(Flaky(), estimate=400, spent=lambda _: 500)
    # two calls of 500 real tokens fill the minute; the third waits for the first to leave
    assert len(waits) == 1 and waits[0] == pytest.approx(60.0)


class Overloaded(ScriptedChatModel):
    """Fails twice with a 503, then answers as scripted."""

    failures: list[int] = []

    async def _agenerate(self, *args: Any, **kwargs: Any) -> Any:
        if len(self.failures) < 2:
            self.failures.append(503)
            raise StatusError(503)
        return await super()._agenerate(*args, **kwargs)


def test_a_judge_rides_out_a_provider_outage() -> None:
    from planverify.agents.judge import ModelJudge

    async def no_wait(seconds: float) -> None:
        return None

    model = Overloaded(
        messages=iter(["ACTION: 1. Driver.Move(1.0)\nANNOTATION: fine"]), prompts=[], failures=[]
    )
    judge = ModelJudge(model, policy=CallPolicy(provider="t6", sleep=no_wait))
    result = verify_plan(["Driver.Move(1.0)"], "Walk.", judge=judge)
    assert result.status == "ok" and model.failures == [503, 503]
    assert result.usage["judge"].calls == 1


def test_cost_per_episode_and_unknown_prices(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from planverify.llm.costs import Spend, prices
    from planverify.records.usage import TokenUsage

    from .conftest import scripted

    plan = ["Driver.Move(1.0)"]
    answer = "ACTION: 1. Driver.Move(1.0)\nANNOTATION: fine"
    unknown = verify_plan(plan, "Walk.", judge=scripted(answer))
    assert unknown.usage["judge"].total == 15 and unknown.cost_usd is None
    assert verify_plan(plan, "Walk.").cost_usd == 0.0  # offline: no tokens, nothing to pay

    table = tmp_path / "prices.toml"
    table.write_text("[prices.ScriptedChatModel]\ninput = 2.0\noutput = 10.0\n", encoding="utf-8")
    monkeypatch.setenv("PLANVERIFY_PRICES", str(table))
    prices.cache_clear()
    try:
        priced = verify_plan(plan, "Walk.", judge=scripted(answer))
        assert priced.cost_usd == pytest.approx((10 * 2.0 + 5 * 10.0) / 1e6)
        spend = Spend({"judge": "ScriptedChatModel", "planner": "mystery"})
        spend.add(
            {
                "judge": TokenUsage(input_tokens=10, output_tokens=5),
                "planner": TokenUsage(input_tokens=1),
            }
        )
        assert spend.tokens == 16 and spend.unpriced == {"mystery"}
        assert spend.describe() == "$0.00 + unpriced (mystery)"
    finally:
        prices.cache_clear()


async def test_rate_ceilings_hold_over_policies_that_ask_for_different_rates() -> None:
    """Runs of a served process asking for their own rates (each its own limiter) all pass the
    operator's ceiling too (planverify.graphs.policy)."""
    from planverify.llm.calls import Ceilings

    waits: list[float] = []

    async def note(seconds: float) -> None:
        waits.append(seconds)

    async def ok() -> str:
        return "ok"

    top = Ceilings(rps=2.0)
    policies = [
        CallPolicy(provider="ceiling-rate", rps=rps, ceilings=top, sleep=note) for rps in (50, 40)
    ]
    for i in range(4):
        assert await policies[i % 2].call(ok) == "ok"
    # the fourth call books the ceiling's fourth slot, 3 / 2.0 s after the first
    assert max(waits) > 1.4


def test_the_shared_tables_stay_bounded() -> None:
    """A served process meets every rate and cap its runs send: the tables keep only so many."""
    from planverify.llm.calls import _LIMITS
    from planverify.llm.concurrency import _GATES, gate_for
    from planverify.llm.tables import TABLE_SIZE

    for i in range(3 * TABLE_SIZE):
        limits_for("bounded", 1.0 + i, None)
        gate_for("bounded", 1000 + i)
    assert len(_LIMITS) <= TABLE_SIZE and len(_GATES) <= TABLE_SIZE


def test_a_shared_table_never_drops_an_entry_in_use() -> None:
    from planverify.llm.tables import SharedTable

    table: SharedTable[str, list[str]] = SharedTable(
        lambda key: [key], size=1, idle=lambda value: value != ["busy"]
    )
    busy = table.get("busy")
    for key in "abc":
        table.get(key)
    assert table.get("busy") is busy and len(table) == 2
