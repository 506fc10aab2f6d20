"""Streamed answers from OpenAI-compatible servers, against a loopback fake server through the
real `ChatOpenAI` client: the timeout is on progress, a stalled stream is closed, an answer that
ends without a finish reason is retried (and never cached), usage comes with or without
`stream_options.include_usage`, and a server refusing `stream` or `stream_options` is asked
without them."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.caches import InMemoryCache
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI

from planverify.agents.base import ask
from planverify.llm.calls import CallPolicy
from planverify.llm.capability import forget, learned, model_key
from planverify.llm.concurrency import gate_for
from planverify.llm.errors import ModelCallFailed
from tests.fake_openai import FakeOpenAI, Reply

TEXT = "ACTION: 1. Driver.Move(1.0)\nANNOTATION: needed to reach the plant."


async def no_wait(seconds: float) -> None:
    return None


@pytest.fixture(autouse=True)
def fresh_capabilities() -> Iterator[None]:
    forget()
    yield
    forget()


def chat(server: FakeOpenAI, **options: Any) -> ChatOpenAI:
    return ChatOpenAI(model="m", base_url=server.base_url, api_key="x", max_retries=0, **options)


def policy_for(server: FakeOpenAI, **options: Any) -> CallPolicy:
    settings: dict[str, Any] = {"timeout": 30.0, "max_retries": 0, "sleep": no_wait}
    return CallPolicy(provider=server.base_url, model="m", **(settings | options))


def settled(server: FakeOpenAI, requests: int) -> None:
    """Wait until the server has finished `requests` requests (it may still be writing)."""
    import time

    for _ in range(200):
        if len(server.served) >= requests:
            return
        time.sleep(0.05)
    raise AssertionError(f"the server finished {len(server.served)} of {requests} requests")


async def test_a_slow_but_steady_stream_does_not_time_out() -> None:
    # 16 chunks 0.25 s apart: 4 s in all, twice the timeout, but never 2 s without one
    reply = Reply(content=TEXT, pieces=16, gap=0.25, usage=(30, 12))
    with FakeOpenAI(lambda body: reply) as server:
        answer = await ask(chat(server), [HumanMessage("hi")], policy_for(server, timeout=2.0))
    assert answer.text == TEXT
    assert (answer.usage.calls, answer.usage.unknown_calls, answer.usage.total) == (1, 0, 42)
    assert server.streamed == 1 and len(server.requests) == 1
    assert server.requests[0]["stream"] is True


async def test_a_stalled_stream_times_out_and_is_closed() -> None:
    # the first chunk comes at once, then nothing for 3 s: the call gives up after 0.5 s
    reply = Reply(content=TEXT, pieces=4, stall=3.0, gap=0.05)
    with FakeOpenAI(lambda body: reply) as server:
        with pytest.raises(ModelCallFailed) as failed:
            await ask(chat(server), [HumanMessage("hi")], policy_for(server, timeout=0.5))
        settled(server, 1)
    assert "stalled for 0.5 s (after 1 attempt)" in str(failed.value)
    assert failed.value.unknown_calls == 1
    assert server.gone == 1  # the client closed the stream: a real server stops generating


async def test_the_whole_call_is_bounded_by_the_max_call_time() -> None:
    reply = Reply(content=TEXT, pieces=30, gap=0.1)  # steady, but 3 s in all
    with FakeOpenAI(lambda body: reply) as server:
        policy = policy_for(server, timeout=1.0, max_call_time=1.0)
        with pytest.raises(ModelCallFailed, match="took longer than 1 s"):
            await ask(chat(server), [HumanMessage("hi")], policy)


async def test_a_stream_without_a_finish_reason_is_retried_and_never_cached() -> None:
    replies = iter([Reply(content="ACTION: 1. Dri", finish_reason=None, usage=None)])

    def respond(body: dict[str, Any]) -> Reply:
        return next(replies, Reply(content=TEXT, usage=(30, 12)))

    with FakeOpenAI(respond) as server:
        policy = policy_for(server, max_retries=1, concurrency=4)
        gate = gate_for(policy.provider, policy.concurrency)
        gate.estimator.limit = 4
        model = chat(server, cache=InMemoryCache())
        answer = await ask(model, [HumanMessage("hi")], policy)
        again = await ask(model, [HumanMessage("hi")], policy)  # from the cache
    assert answer.text == TEXT and again.text == TEXT
    assert len(server.requests) == 2  # the interrupted attempt and its retry; then the cache
    assert (answer.usage.calls, answer.usage.unknown_calls, answer.usage.total) == (2, 1, 42)
    assert gate.limit == 1 and gate.estimator.single  # one at a time at this server from now on


async def test_an_interrupted_stream_leaves_no_callback_error_in_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """LangChain logs what a callback raises; `Watch` raises `Interrupted` on purpose, and
    that raw line (`Error in Watch.on_llm_new_token callback: Interrupted(...)`) must not leak."""
    replies = iter([Reply(content="ACTION: 1. Dri", finish_reason=None, usage=None)])

    def respond(body: dict[str, Any]) -> Reply:
        return next(replies, Reply(content=TEXT, usage=(30, 12)))

    with caplog.at_level(logging.DEBUG), FakeOpenAI(respond) as server:
        answer = await ask(chat(server), [HumanMessage("hi")], policy_for(server, max_retries=1))
    assert answer.text == TEXT and len(server.requests) == 2
    assert not [r for r in caplog.records if "callback" in r.getMessage()], caplog.text


async def test_usage_comes_with_include_usage_and_is_unknown_without_it() -> None:
    with FakeOpenAI(lambda body: Reply(content=TEXT, usage=(30, 12))) as server:
        counted = await ask(chat(server), [HumanMessage("hi")], policy_for(server))
    assert server.requests[0]["stream_options"] == {"include_usage": True}
    assert (counted.usage.input_tokens, counted.usage.output_tokens) == (30, 12)
    assert counted.usage.unknown_calls == 0
    ignoring = Reply(content=TEXT, usage=(30, 12), stream_usage=False)
    with FakeOpenAI(lambda body: ignoring) as server:
        unknown = await ask(chat(server), [HumanMessage("hi")], policy_for(server))
    assert unknown.text == TEXT
    assert (unknown.usage.calls, unknown.usage.unknown_calls, unknown.usage.total) == (1, 1, 0)


@pytest.mark.parametrize(
    ("refused", "streamed"), [("stream_options", True), ("stream", False)], ids=str
)
async def test_a_server_refusing_streaming_parameters_is_asked_without_them(
    refused: str, streamed: bool
) -> None:
    def respond(body: dict[str, Any]) -> Reply:
        if body.get(refused):
            return Reply(status=400, error=f"Unrecognized request argument supplied: {refused}")
        return Reply(content=TEXT, usage=(30, 12))

    with FakeOpenAI(respond) as server:
        model = chat(server)
        answer = await ask(model, [HumanMessage("hi")], policy_for(server))
        later = await ask(model, [HumanMessage("hi")], policy_for(server))
    assert answer.text == TEXT and later.text == TEXT
    assert [bool(body.get(refused)) for body in server.requests] == [True, False, False]
    assert server.streamed == (2 if streamed else 0)
    assert refused in learned(model_key(model)).dropped


async def test_an_answer_cut_at_the_token_limit_is_marked_when_streamed() -> None:
    reply = Reply(content="ACTION: 1. Driver.Mo", finish_reason="length", usage=(30, 512))
    with FakeOpenAI(lambda body: reply) as server:
        answer = await ask(chat(server), [HumanMessage("hi")], policy_for(server), cap=512)
    assert answer.cut_short and server.streamed == 1
    assert server.requests[0]["max_tokens"] == 512


async def test_a_timed_out_call_is_retried_before_the_calls_that_wait() -> None:
    # the server has just read the prompt of the call that timed out (a real one may still hold
    # it in its cache): the retry keeps the slot, ahead of the call waiting in this process
    first = {"a": True}

    def respond(body: dict[str, Any]) -> Reply:
        who = body["messages"][0]["content"]
        if who == "a" and first.pop("a", False):
            return Reply(content=TEXT, delay=4.0)  # no first token within the timeout
        return Reply(content=TEXT)

    with FakeOpenAI(respond, slots=2) as server:
        policy = policy_for(server, timeout=1.5, max_retries=1, concurrency=6)
        gate = gate_for(policy.provider, policy.concurrency)
        a = asyncio.create_task(ask(chat(server), [HumanMessage("a")], policy))
        while gate.inflight == 0:
            await asyncio.sleep(0.01)
        b = asyncio.create_task(ask(chat(server), [HumanMessage("b")], policy))
        answers = await asyncio.gather(a, b)
    assert [answer.text for answer in answers] == [TEXT, TEXT]
    assert [body["messages"][0]["content"] for body in server.requests] == ["a", "a", "b"]


def test_a_run_against_a_local_server_counts_the_tokens_of_streamed_answers(
    tmp_path: Any,
) -> None:
    """llama-cpp-python leaves usage out of a streamed answer unless the request asks for it
    (`stream_options.include_usage`): the run's summary must not read `model tokens 0`."""
    from typer.testing import CliRunner

    from planverify.cli import app

    source = tmp_path / "one.jsonl"
    source.write_text(
        '{"id": "one", "goal": "Water the plant.", "actions": ["Driver.Move(1.0)"]}\n',
        encoding="utf-8",
    )
    with FakeOpenAI(lambda body: Reply(content=TEXT, usage=(30, 12))) as server:
        model = ["--judge", "openai:m", "--base-url", server.base_url]
        output = ["--no-checkpoint", "-o", str(tmp_path / "r.jsonl")]
        done = CliRunner().invoke(app, ["verify", str(source), *model, *output])
    assert done.exit_code == 0, done.output
    assert all(body.get("stream_options") == {"include_usage": True} for body in server.requests)
    shown = " ".join(done.stdout.split())
    assert "model tokens │ 42" in shown, shown


def test_a_server_that_reports_no_usage_is_never_summed_up_as_zero_tokens(tmp_path: Any) -> None:
    """llama-cpp-python ignores `stream_options` and sends no usage in streamed answers: the
    summary says the tokens are unknown, not `model tokens 0`."""
    from typer.testing import CliRunner

    from planverify.cli import app

    source = tmp_path / "one.jsonl"
    source.write_text(
        '{"id": "one", "goal": "Water the plant.", "actions": ["Driver.Move(1.0)"]}\n',
        encoding="utf-8",
    )
    silent = Reply(content=TEXT, usage=(30, 12), stream_usage=False)
    with FakeOpenAI(lambda body: silent) as server:
        model = ["--judge", "openai:m", "--base-url", server.base_url]
        done = CliRunner().invoke(app, ["verify", str(source), *model, "--no-checkpoint"])
    assert done.exit_code == 0, done.output
    shown = " ".join(done.stdout.split())
    assert "model tokens │ 0" not in shown
    assert "model tokens │ unknown: no usage reported for 1 call" in shown, shown
