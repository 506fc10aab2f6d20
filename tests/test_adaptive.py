"""The adaptive limit on model calls in flight against loopback OpenAI-compatible servers,
through the real `ChatOpenAI` client: one slot, four slots, timeouts, 429/503, latency that
grows with load, the cap, the timeout message and the tokens of timed-out calls."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI

from planverify.agents.base import ask
from planverify.agents.judge import ModelJudge
from planverify.api import Verifier, verify_plan
from planverify.llm.calls import CallPolicy
from planverify.llm.concurrency import gate_for
from planverify.llm.errors import ModelCallFailed
from planverify.records.episode import Episode
from tests.fake_openai import FakeOpenAI, Reply


async def no_wait(seconds: float) -> None:
    return None


def chat(server: FakeOpenAI) -> ChatOpenAI:
    return ChatOpenAI(model="m", base_url=server.base_url, api_key="x", max_retries=0)


def policy_for(server: FakeOpenAI, **options: Any) -> CallPolicy:
    settings: dict[str, Any] = {"timeout": 30.0, "max_retries": 0, "sleep": no_wait}
    return CallPolicy(provider=server.base_url, model="m", **(settings | options))


async def drive(
    server: FakeOpenAI, policy: CallPolicy, calls: int, workers: int = 8
) -> tuple[list[int], list[BaseException]]:
    """`calls` calls from `workers` episodes at once; the limit after each, and the errors."""
    model = chat(server)
    gate = gate_for(policy.provider, policy.concurrency)
    pending = iter(range(calls))
    limits: list[int] = []
    errors: list[BaseException] = []

    async def worker() -> None:
        for _ in pending:
            try:
                await policy.call(lambda: model.ainvoke("hi"))
            except ModelCallFailed as exc:
                errors.append(exc)
            limits.append(gate.limit)

    await asyncio.gather(*(worker() for _ in range(workers)))
    return limits, errors


async def test_a_one_slot_server_that_cannot_take_two_is_sent_one_call_at_a_time() -> None:
    # 0.3 s a call, 1 s timeout: two calls queued on the server would not fit well within it
    with FakeOpenAI(lambda body: Reply(content="ok", delay=0.3), slots=1) as server:
        policy = policy_for(server, timeout=1.0)
        limits, errors = await drive(server, policy, calls=10)
    assert errors == [] and set(limits) == {1}
    assert max(s.started - s.arrived for s in server.served) < 0.15  # none waited for the slot
    assert max(s.finished - s.arrived for s in server.served) < 1.0


async def test_four_slots_reach_a_limit_of_four_and_one_slot_never_queues_two() -> None:
    # throughput per slot count is a figure, printed by benchmarks/bench_concurrency.py
    def answer(body: dict[str, Any]) -> Reply:
        return Reply(content="ok", delay=0.25)

    with FakeOpenAI(answer, slots=1) as one:
        one_limits, one_errors = await drive(one, policy_for(one), calls=14)
    with FakeOpenAI(answer, slots=4) as four:
        four_limits, four_errors = await drive(four, policy_for(four), calls=72)
    assert one_errors == [] and four_errors == []
    assert max(one_limits) <= 2 and one.max_queued <= 1  # probed, at most one call ever queued
    assert max(four_limits) >= 4 and four.max_in_service == 4  # all four slots in use at once


def at_full_limit(policy: CallPolicy) -> None:
    """Start the server's gate at its cap, as after a slow start."""
    estimator = gate_for(policy.provider, policy.concurrency).estimator
    estimator.limit = estimator.parallel = estimator.cap


async def test_timeouts_lower_the_limit_and_name_the_model_the_server_and_the_seconds() -> None:
    with FakeOpenAI(lambda body: Reply(content="ok", delay=2.0), slots=8) as server:
        policy = policy_for(server, timeout=0.5)
        at_full_limit(policy)
        limits, errors = await drive(server, policy, calls=8)
    assert len(errors) == 8 and limits[-1] == 4  # halved once: all were sent at the same limit
    message = str(errors[0])
    assert message.startswith("TimeoutError: no answer from m at ")
    assert server.base_url in message and "within 0.5 s (after 1 attempt)" in message


@pytest.mark.parametrize("status", [429, 503])
async def test_429_and_503_lower_the_limit(status: int) -> None:
    with FakeOpenAI(lambda body: Reply(status=status, error="busy"), slots=8) as server:
        policy = policy_for(server)
        at_full_limit(policy)
        limits, errors = await drive(server, policy, calls=8)
        assert len(errors) == 8 and limits[-1] == 4
        more, _ = await drive(server, policy, calls=4)  # sent after the first halving
    assert more[-1] == 2


async def test_latency_that_grows_with_calls_in_flight_keeps_the_limit_low() -> None:
    server = FakeOpenAI(slots=8)  # eight slots, but each call is slower the more are in the server

    def answer(body: dict[str, Any]) -> Reply:
        return Reply(content="ok", delay=0.08 * (server.in_service + server.queued))

    server.respond = answer
    with server:
        limits, errors = await drive(server, policy_for(server), calls=30)
    assert errors == [] and 2 <= max(limits) <= 3  # probed upward ...
    assert sum(limit <= 2 for limit in limits[-10:]) >= 7  # ... and came back down


async def test_the_limit_never_exceeds_the_concurrency_cap() -> None:
    with FakeOpenAI(lambda body: Reply(content="ok", delay=0.1), slots=16) as server:
        limits, errors = await drive(server, policy_for(server, concurrency=3), 40, workers=12)
    assert errors == [] and max(limits) == 3 and server.max_in_service == 3


async def test_timed_out_attempts_count_as_calls_whose_tokens_are_unknown() -> None:
    replies = iter([2.0, 2.0, 0.0])

    def answer(body: dict[str, Any]) -> Reply:
        return Reply(content="ok", delay=next(replies, 0.0), usage=(10, 5))

    with FakeOpenAI(answer, slots=3) as server:  # the server goes on with abandoned requests
        policy = policy_for(server, timeout=0.3, max_retries=2)
        result = await ask(chat(server), [HumanMessage("hi")], policy)
    usage = result.usage
    assert (usage.calls, usage.unknown_calls, usage.input_tokens, usage.output_tokens) == (
        3,
        2,
        10,
        5,
    )


def test_an_episode_that_failed_on_timeouts_reports_them_as_unknown_tokens() -> None:
    with FakeOpenAI(lambda body: Reply(content="ok", delay=1.0), slots=2) as server:
        model = chat(server)
        judge = ModelJudge(model, policy=policy_for(server, timeout=0.2, max_retries=1))
        result = verify_plan(["Driver.Move(1.0)"], "Walk.", judge=judge)
    assert result.status == "error" and "within 0.2 s (after 2 attempts)" in (result.error or "")
    assert result.usage["judge"].unknown_calls == 2 and result.usage["judge"].total == 0


def test_the_progress_line_shows_the_limit_of_the_model_server() -> None:
    text = "ACTION: 1. Driver.Move(1.0)\nANNOTATION: needed to reach the plant."
    with FakeOpenAI(lambda body: Reply(content=text), slots=1) as server:
        verifier = Verifier(
            judge=ModelJudge(chat(server), policy=policy_for(server, concurrency=5))
        )
        shown: Callable[[], str] = verifier.describe_limits
        assert shown() == "limit 1/5"
        episode = Episode.model_validate(
            {"id": "a", "goal": "Walk.", "actions": ["Driver.Move(1.0)"]}
        )
        result = asyncio.run(verifier.averify(episode))
    assert result.status == "ok" and shown() == "limit 1/5"


async def test_server_runs_send_the_cap_with_the_other_call_limits() -> None:
    from planverify.graphs.context import VerifierContext
    from planverify.llm.calls import CallLimits
    from planverify.runs.remote import RemoteVerifier

    limits = CallLimits(timeout=30.0, concurrency=3)
    async with RemoteVerifier("http://127.0.0.1:9", limits=limits) as remote:
        sent = remote.context.model_dump(mode="json")
    assert sent["concurrency"] == 3
    assert VerifierContext(**sent).limits() == limits  # what the server's workers rebuild
    assert remote.key == Verifier(limits=CallLimits()).key  # the cap is not part of the results
