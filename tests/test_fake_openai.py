"""The loopback fake OpenAI server behaves like the servers it stands in for."""

from __future__ import annotations

import asyncio
import doctest

import openai
import pytest
from langchain_openai import ChatOpenAI

from tests import fake_openai
from tests.fake_openai import FakeOpenAI, Reply


def client(server: FakeOpenAI) -> ChatOpenAI:
    return ChatOpenAI(model="m", base_url=server.base_url, api_key="x", max_retries=0)


def test_docstring_example() -> None:
    assert doctest.testmod(fake_openai).failed == 0


def test_answers_with_usage_and_tool_calls() -> None:
    def respond(body: dict[str, object]) -> Reply:
        return Reply(tool_calls=[{"name": "f", "arguments": {"a": 1}}], usage=None)

    with FakeOpenAI(respond) as server:
        answer = client(server).invoke("hi")
    assert answer.tool_calls[0]["name"] == "f"
    assert answer.tool_calls[0]["args"] == {"a": 1}
    assert answer.usage_metadata is None
    assert server.requests[0]["messages"][0]["content"] == "hi"


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (429, openai.RateLimitError),
        (500, openai.InternalServerError),
        (400, openai.BadRequestError),
    ],
)
def test_errors_reach_the_client_as_the_sdk_raises_them(
    status: int, error: type[Exception]
) -> None:
    with (
        FakeOpenAI(
            lambda body: Reply(status=status, error="nope", headers={"Retry-After": "3"})
        ) as server,
        pytest.raises(error, match="nope") as raised,
    ):
        client(server).invoke("hi")
    assert raised.value.response.headers["retry-after"] == "3"  # type: ignore[attr-defined]


@pytest.mark.parametrize("slots", [1, 3])
async def test_requests_beyond_the_slots_queue(slots: int) -> None:
    with FakeOpenAI(lambda body: Reply(content="ok", delay=0.2), slots=slots) as server:
        model = client(server)
        await asyncio.gather(*(model.ainvoke("hi") for _ in range(4)))
    assert server.max_in_service == slots
    assert server.max_queued >= 4 - slots
    assert len(server.served) == 4
