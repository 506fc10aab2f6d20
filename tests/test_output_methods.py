"""Structured output against real servers' answers: a refused or ignored output method falls back
(JSON schema, tool calling, JSON mode, text protocol) without resending the refused request, and
the method that worked is remembered and recorded. Through the real `ChatOpenAI` client against
the loopback fake server, and with a LangChain fake for the logic."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import Runnable, RunnableLambda
from langchain_openai import ChatOpenAI
from typer.testing import CliRunner

from planverify.agents.base import JudgeReply
from planverify.agents.judge import JudgeVerdict, ModelJudge
from planverify.cli import app
from planverify.graphs.context import VerifierContext
from planverify.llm.calls import CallPolicy
from planverify.llm.capability import forget
from planverify.llm.errors import refusal, retryable
from planverify.records.result import VerificationResult
from tests.conftest import COFFEE_PLAN, ScriptedChatModel
from tests.fake_openai import FakeOpenAI, Reply

GOAL = "Make a mug of coffee."
LLAMA_CPP = (
    "1 validation error for CreateChatCompletionRequest\nresponse_format.type\n"
    "  Input should be 'text' or 'json_object' [type=literal_error, input_value='json_schema']"
)
VERDICT = {"remove": [{"step": 2, "action": COFFEE_PLAN[1], "reason": "undone"}], "missing": []}
TEXT_ANSWER = "\n".join(
    f"ACTION: {n}. {line}\nANNOTATION: "
    + ("undone by the next step #REMOVE: undone" if n == 2 else "needed")
    for n, line in enumerate(COFFEE_PLAN, start=1)
)  # every step judged: no follow-up call


@pytest.fixture(autouse=True)
def fresh() -> Iterator[None]:
    forget()
    yield
    forget()


async def no_sleep(seconds: float) -> None:
    pass


def judged(judge: ModelJudge, times: int = 1) -> list[JudgeReply]:
    """`times` Judge passes over the coffee plan, in one event loop (the client is bound to it)."""

    async def run() -> list[JudgeReply]:
        return [await judge.ajudge(GOAL, COFFEE_PLAN) for _ in range(times)]

    return asyncio.run(run())


def judge_at(server: FakeOpenAI, output: str = "structured", **options: Any) -> ModelJudge:
    model = ChatOpenAI(model="m", base_url=server.base_url, api_key="x", max_retries=0, **options)
    policy = CallPolicy(provider=server.base_url, timeout=10, max_retries=5, sleep=no_sleep)
    return ModelJudge(model, output=output, policy=policy)  # type: ignore[arg-type]


def kind(body: dict[str, Any]) -> str:
    """The output method a request asks for."""
    if body.get("tools"):
        return "function_calling"
    return str((body.get("response_format") or {}).get("type", "text"))


def server_taking(*methods: str, answer: Callable[[str], Reply] | None = None) -> FakeOpenAI:
    """A fake server that refuses any other method with HTTP 500 (llama-cpp-python's words for
    `response_format`)."""

    def respond(body: dict[str, Any]) -> Reply:
        method = kind(body)
        if method not in methods:
            refused = "tools are not supported" if method == "function_calling" else LLAMA_CPP
            return Reply(status=500, error=refused)
        if answer is not None:
            return answer(method)
        if method == "function_calling":
            return Reply(tool_calls=[{"name": "JudgeVerdict", "arguments": VERDICT}])
        return Reply(content=json.dumps(VERDICT))

    return FakeOpenAI(respond)


def test_json_schema_refused_with_500_falls_back_without_repeating() -> None:
    with server_taking("function_calling") as server:
        first, second = judged(judge_at(server), 2)
    methods = [kind(b) for b in server.requests]
    assert methods == ["json_schema", "function_calling", "function_calling"]  # remembered
    assert [f.step for f in first.critique.flags] == [1]
    assert first.output == second.output == "function_calling"
    assert first.usage.calls == 1  # the refused request returned no answer


@pytest.mark.parametrize(
    "message",
    [
        "response_format type json_schema is not supported by this model",  # vLLM-like
        "Unsupported value: 'response_format.type' does not support 'json_schema'",  # OpenAI
    ],
)
def test_json_schema_refused_with_400_falls_back(message: str) -> None:
    def respond(body: dict[str, Any]) -> Reply:
        if kind(body) == "json_schema":
            return Reply(status=400, error=message)
        return Reply(tool_calls=[{"name": "JudgeVerdict", "arguments": VERDICT}])

    with FakeOpenAI(respond) as server:
        reply = judged(judge_at(server))[0]
    assert [kind(b) for b in server.requests] == ["json_schema", "function_calling"]
    assert reply.output == "function_calling"


def test_tools_refused_falls_back_to_json_mode_with_the_schema_in_the_prompt() -> None:
    def respond(body: dict[str, Any]) -> Reply:
        method = kind(body)
        if method == "json_schema":
            return Reply(status=500, error=LLAMA_CPP)
        if method == "function_calling":
            return Reply(status=400, error="registry.ollama.ai/library/m does not support tools")
        return Reply(content=json.dumps(VERDICT))

    with FakeOpenAI(respond) as server:
        reply = judged(judge_at(server))[0]
    assert [kind(b) for b in server.requests] == ["json_schema", "function_calling", "json_object"]
    last = server.requests[-1]
    assert "json_schema" not in last["response_format"]
    prompt = last["messages"][-1]["content"]
    assert "JSON" in prompt and '"remove"' in prompt and '"missing"' in prompt
    assert reply.output == "json_mode" and [f.step for f in reply.critique.flags] == [1]


def test_every_method_refused_ends_in_the_text_protocol_and_stays_there() -> None:
    with server_taking("text", answer=lambda method: Reply(content=TEXT_ANSWER)) as server:
        first, second = judged(judge_at(server), 2)
    methods = [kind(b) for b in server.requests]
    assert methods == ["json_schema", "function_calling", "json_object", "text", "text"]
    assert first.output == second.output == "text"
    assert [f.step for f in first.critique.flags] == [1]


def test_an_answer_ignoring_the_method_is_used_and_the_method_given_up() -> None:
    # the server drops response_format silently and answers in the prompt's text protocol
    with FakeOpenAI(lambda body: Reply(content=TEXT_ANSWER)) as server:
        first, _ = judged(judge_at(server), 2)
    assert [kind(b) for b in server.requests] == ["json_schema", "function_calling"]
    assert first.output == "text" and [f.step for f in first.critique.flags] == [1]
    assert first.usage.calls == 1


def test_an_ignoring_answer_that_is_not_the_text_protocol_asks_the_next_method() -> None:
    def respond(body: dict[str, Any]) -> Reply:
        if kind(body) == "json_schema":
            return Reply(content="Sure! The plan looks fine to me.")
        return Reply(tool_calls=[{"name": "JudgeVerdict", "arguments": VERDICT}])

    with FakeOpenAI(respond) as server:
        reply = judged(judge_at(server))[0]
    assert [kind(b) for b in server.requests] == ["json_schema", "function_calling"]
    assert reply.output == "function_calling" and reply.usage.calls == 2


def test_text_mode_is_unchanged() -> None:
    with FakeOpenAI(lambda body: Reply(content=TEXT_ANSWER)) as server:
        reply = judged(judge_at(server, output="text"))[0]
    assert [kind(b) for b in server.requests] == ["text"]
    assert reply.output == "text" and [f.step for f in reply.critique.flags] == [1]


def test_the_method_is_recorded_in_the_result() -> None:
    from planverify.api import verify_plan

    with server_taking("json_object") as server:
        judge = judge_at(server)
        result = verify_plan(COFFEE_PLAN, GOAL, judge=judge, static=True)
    assert result.status == "ok", result.error
    assert result.history[0].judge_output == "json_mode"
    assert result.verdicts[1].verdict == "remove"


TOGGLE_OFF = "Driver.ToggleOff('CoffeeMachine')"


def judge_or_planner(body: dict[str, Any]) -> Reply:
    """A server that refuses `json_schema` as llama-cpp-python does and answers tool calls: the
    Judge's asks for one missing step, the Planner's inserts it at the end."""
    if kind(body) == "json_schema":
        return Reply(status=500, error=LLAMA_CPP)
    if body["model"] == "judge":
        verdict = {"remove": [], "missing": [TOGGLE_OFF], "keep": [1, 2, 3, 4, 5]}
        return Reply(tool_calls=[{"name": "JudgeVerdict", "arguments": verdict}])
    insert = {"insert": [{"after": 5, "action": TOGGLE_OFF}]}
    return Reply(tool_calls=[{"name": "Insertions", "arguments": insert}])


def test_the_planners_method_is_recorded_in_the_result(tmp_path: Path) -> None:
    episodes, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    episodes.write_text(json.dumps({"id": "a", "goal": GOAL, "actions": COFFEE_PLAN}) + "\n")
    with FakeOpenAI(judge_or_planner) as server:
        args = ["verify", str(episodes), "--no-checkpoint", "-o", str(out), "--max-iterations"]
        args += ["1", "--judge-output", "structured", "--base-url", server.base_url]
        run = CliRunner().invoke(
            app, [*args, "--judge", "openai:judge", "--planner", "openai:planner"]
        )
    assert run.exit_code == 0, run.stderr
    planner_asked = [kind(b) for b in server.requests if b["model"] == "planner"]
    assert planner_asked == ["json_schema", "function_calling"]
    result = VerificationResult.model_validate_json(out.read_text())
    assert result.refined == [*COFFEE_PLAN, TOGGLE_OFF]
    (record,) = result.history
    assert (record.judge_output, record.planner_output) == ("function_calling", "function_calling")


def test_no_planner_method_without_a_model_planner() -> None:
    from planverify.api import verify_plan

    with FakeOpenAI(judge_or_planner) as server:
        model = ChatOpenAI(model="judge", base_url=server.base_url, api_key="x", max_retries=0)
        judge = ModelJudge(model, output="structured", policy=CallPolicy(sleep=no_sleep))
        result = verify_plan(COFFEE_PLAN, GOAL, judge=judge, max_iterations=1)
    (record,) = result.history
    assert [e.kind for e in record.edits] == ["insert"]  # the rules planner filled the gap
    assert (record.judge_output, record.planner_output) == ("function_calling", None)


def test_a_method_refusal_is_not_retried_but_a_plain_500_is() -> None:
    assert not retryable(_status_error(500, LLAMA_CPP))
    assert refusal(_status_error(400, "tools are not supported"))
    assert retryable(_status_error(500, "internal error"))
    assert not refusal(_status_error(503, "model not supported while loading"))


def _status_error(status: int, message: str) -> Exception:
    error = RuntimeError(f"Error code: {status} - {message}")
    error.status_code = status  # type: ignore[attr-defined]
    return error


class MethodFake(ScriptedChatModel):
    """A LangChain fake whose structured output refuses or answers per method."""

    refuse: list[str] = []  # methods that raise a refusal
    asked: list[str] = []  # methods asked, in order

    def with_structured_output(
        self, schema: Any, *, include_raw: bool = False, method: str = "", **kwargs: Any
    ) -> Runnable[Any, Any]:
        def run(messages: Sequence[BaseMessage]) -> dict[str, Any]:
            self.asked.append(method)
            if method in self.refuse:
                raise _status_error(400, f"{method}: response_format and tools are not supported")
            raw = AIMessage(content=json.dumps(VERDICT))
            return {"raw": raw, "parsed": schema.model_validate(VERDICT), "parsing_error": None}

        return RunnableLambda(run)


def test_fallback_logic_with_a_langchain_fake() -> None:
    model = MethodFake(messages=iter(()), prompts=[], refuse=["json_schema"], asked=[])
    judge = ModelJudge(model, output="structured", policy=CallPolicy(sleep=no_sleep))
    for _ in range(2):
        reply = asyncio.run(judge.ajudge(GOAL, COFFEE_PLAN))
        assert reply.output == "function_calling"
    assert model.asked == ["json_schema", "function_calling", "function_calling"]


def test_json_mode_messages_mention_json_and_the_schema() -> None:
    from planverify.agents.output import json_mode_messages

    messages = json_mode_messages([HumanMessage("judge this")], JudgeVerdict)
    assert messages[-1].text.startswith("judge this") and "JSON" in messages[-1].text
    assert "StepToRemove" in messages[-1].text


def test_model_objects_keep_their_own_settings_key() -> None:
    context = VerifierContext(judge="rules", planner="rules")
    assert context.settings().models == {}
