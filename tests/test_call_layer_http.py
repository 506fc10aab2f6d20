"""The call layer through the real `ChatOpenAI` client against the loopback fake server: rate
limits and server errors are retried (waiting as the server asks), and token usage is the
server's own count, or zero calls' worth of tokens when it reports none."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from langchain_openai import ChatOpenAI

from planverify.agents.base import JudgeReply
from planverify.agents.judge import ModelJudge
from planverify.llm.calls import CallPolicy
from planverify.llm.errors import ModelCallFailed
from tests.conftest import COFFEE_PLAN
from tests.fake_openai import FakeOpenAI, Reply

GOAL = "Make a mug of coffee."
ANSWER = "\n".join(
    f"ACTION: {n}. {line}\nANNOTATION: needed" for n, line in enumerate(COFFEE_PLAN, start=1)
)  # every step judged: no follow-up call


class Script:
    """Answers with the given replies in order, then with the text answer."""

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        with self.lock:
            return self.replies.pop(0) if self.replies else Reply(content=ANSWER)


def judged(server: FakeOpenAI, slept: list[float]) -> JudgeReply:
    async def nap(seconds: float) -> None:
        slept.append(seconds)

    model = ChatOpenAI(model="m", base_url=server.base_url, api_key="x", max_retries=0)
    policy = CallPolicy(provider=server.base_url, timeout=10, max_retries=3, sleep=nap)
    return asyncio.run(ModelJudge(model, policy=policy).ajudge(GOAL, COFFEE_PLAN))


def test_429_waits_as_retry_after_asks() -> None:
    slept: list[float] = []
    limited = Reply(status=429, error="slow down", headers={"Retry-After": "2"})
    with FakeOpenAI(Script(limited)) as server:
        reply = judged(server, slept)
    assert len(server.requests) == 2 and slept == [2.0]
    assert reply.critique.flags == [] and reply.usage.calls == 1


def test_429_with_rate_limit_headers_waits_for_the_reset() -> None:
    slept: list[float] = []
    headers = {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1s"}
    with FakeOpenAI(Script(Reply(status=429, error="rate limit", headers=headers))) as server:
        judged(server, slept)
    assert len(server.requests) == 2 and slept == [1.0]


def test_429_waits_for_the_exhausted_budget_not_the_other() -> None:
    slept: list[float] = []
    headers = {
        "x-ratelimit-remaining-requests": "41",
        "x-ratelimit-reset-requests": "2m0s",
        "x-ratelimit-remaining-tokens": "0",
        "x-ratelimit-reset-tokens": "1m30.5s",
    }
    with FakeOpenAI(Script(Reply(status=429, error="tokens", headers=headers))) as server:
        judged(server, slept)
    assert len(server.requests) == 2 and slept == [90.5]


def test_429_with_a_reset_beyond_max_wait_gives_up() -> None:
    slept: list[float] = []
    headers = {"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "6m0s"}
    with (
        FakeOpenAI(Script(Reply(status=429, error="tokens", headers=headers))) as server,
        pytest.raises(ModelCallFailed, match="asks to wait 360 s"),
    ):
        judged(server, slept)
    assert len(server.requests) == 1 and slept == []


@pytest.mark.parametrize("status", [500, 503])
def test_server_errors_are_retried(status: int) -> None:
    slept: list[float] = []
    failing = Reply(status=status, error="the model crashed")
    with FakeOpenAI(Script(failing, failing)) as server:
        reply = judged(server, slept)
    assert len(server.requests) == 3 and len(slept) == 2
    assert reply.usage.calls == 1


def test_usage_is_the_servers_count() -> None:
    with FakeOpenAI(Script(Reply(content=ANSWER, usage=(123, 45)))) as server:
        reply = judged(server, [])
    assert (reply.usage.calls, reply.usage.input_tokens, reply.usage.output_tokens) == (1, 123, 45)


def test_usage_absent_counts_the_call_only() -> None:
    with FakeOpenAI(Script(Reply(content=ANSWER, usage=None))) as server:
        reply = judged(server, [])
    assert (reply.usage.calls, reply.usage.total) == (1, 0)
