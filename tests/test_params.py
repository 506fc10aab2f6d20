"""Reproducible calls: temperature 0, a seed and an output cap by default; reasoning models get
neither temperature nor cap; a refused parameter is dropped and remembered; user overrides reach
the request and the settings key. Through `ChatOpenAI` against the loopback fake server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from planverify.agents import ModelJudge, resolve_judge
from planverify.agents.base import JudgeReply
from planverify.cli import app
from planverify.graphs.context import VerifierContext
from planverify.llm.calls import CallLimits
from planverify.llm.capability import forget
from planverify.llm.models import parse_spec
from planverify.llm.params import CAP_BASE, CAP_PER_STEP, ModelOptions, parse_param, reasoning
from planverify.records.result import VerificationResult
from tests.conftest import COFFEE_PLAN
from tests.fake_openai import FakeOpenAI, Reply

GOAL = "Make a mug of coffee."
ANSWER = Reply(
    content="\n".join(
        f"ACTION: {n}. {line}\nANNOTATION: needed" for n, line in enumerate(COFFEE_PLAN, start=1)
    )
)  # every step of the longest plan judged: no follow-up call


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    forget()
    yield
    forget()


def judge_for(
    server: FakeOpenAI, spec: str = "openai:m", options: ModelOptions | None = None
) -> ModelJudge:
    judge = resolve_judge(
        spec,
        base_url=server.base_url,
        limits=CallLimits(timeout=10, max_retries=0),
        options=options,
    )
    assert isinstance(judge, ModelJudge)
    return judge


def passes(judge: ModelJudge, *plans: list[str]) -> list[JudgeReply]:
    async def run() -> list[JudgeReply]:
        return [await judge.ajudge(GOAL, plan) for plan in plans]

    return asyncio.run(run())


def test_default_temperature_zero_and_a_seed() -> None:
    with FakeOpenAI(lambda body: ANSWER) as server:
        passes(judge_for(server), COFFEE_PLAN)
    body = server.requests[0]
    assert body["temperature"] == 0 and isinstance(body["seed"], int)


def test_max_tokens_grows_with_the_plan() -> None:
    with FakeOpenAI(lambda body: ANSWER) as server:
        passes(judge_for(server), COFFEE_PLAN[:2], COFFEE_PLAN)
    short, long = (body["max_tokens"] for body in server.requests)
    assert short == CAP_BASE + 2 * CAP_PER_STEP and long == CAP_BASE + 5 * CAP_PER_STEP


def test_a_reasoning_model_gets_no_temperature_and_no_cap() -> None:
    with FakeOpenAI(lambda body: ANSWER) as server:
        passes(judge_for(server, "openai:o4-mini"), COFFEE_PLAN)
    body = server.requests[0]
    assert "temperature" not in body
    assert "max_tokens" not in body and "max_completion_tokens" not in body


@pytest.mark.parametrize(
    ("model", "thinks"),
    [
        ("o3", True),
        ("o4-mini", True),
        ("gpt-5.6-terra", True),
        ("gpt-5-chat-latest", False),
        ("deepseek-reasoner", True),
        ("gpt-4o-mini", False),
        ("qwen2.5-0.5b-instruct", False),
    ],
)
def test_reasoning_models_are_recognised(model: str, thinks: bool) -> None:
    assert reasoning(parse_spec(f"openai:{model}")) is thinks


def test_the_presets_reasoning_models() -> None:
    assert reasoning(parse_spec("o4-mini")) and reasoning(parse_spec("deepseek-r1"))
    assert reasoning(parse_spec("gemini-2.5")) and not reasoning(parse_spec("llama-4-scout"))


def test_a_refused_temperature_is_dropped_and_remembered() -> None:
    def respond(body: dict[str, Any]) -> Reply:
        if "temperature" in body:
            return Reply(
                status=400,
                error="Unsupported parameter: 'temperature' is not supported with this model.",
            )
        return ANSWER

    with FakeOpenAI(respond) as server:
        first, second = passes(judge_for(server), COFFEE_PLAN, COFFEE_PLAN)
    assert ["temperature" in body for body in server.requests] == [True, False, False]
    assert all("seed" in body for body in server.requests)  # only the refused one is left out
    assert first.usage.calls == second.usage.calls == 1


def test_a_refusal_of_a_parameter_never_sent_is_raised() -> None:
    refused = Reply(status=400, error="Unsupported parameter: 'logit_bias'")
    with FakeOpenAI(lambda body: refused) as server, pytest.raises(Exception, match="logit_bias"):
        passes(judge_for(server), COFFEE_PLAN)
    assert len(server.requests) == 1


def test_options_override_the_defaults() -> None:
    options = ModelOptions.of(0.7, {"seed": 7, "max_tokens": 100, "top_p": 0.5})
    with FakeOpenAI(lambda body: ANSWER) as server:
        passes(judge_for(server, options=options), COFFEE_PLAN, COFFEE_PLAN + COFFEE_PLAN)
    for body in server.requests:
        assert (body["temperature"], body["seed"], body["top_p"]) == (0.7, 7, 0.5)
        assert body.get("max_tokens", body.get("max_completion_tokens")) == 100


@pytest.mark.parametrize(
    ("text", "pair"),
    [
        ("seed=7", ("seed", 7)),
        ("top_p=0.5", ("top_p", 0.5)),
        ('stop=["END"]', ("stop", ["END"])),
        ("reasoning_effort=low", ("reasoning_effort", "low")),
        ("note= a b", ("note", " a b")),
    ],
)
def test_model_param_values_are_json_when_they_parse(text: str, pair: tuple[str, Any]) -> None:
    assert parse_param(text) == pair


def test_the_settings_key_follows_the_parameters() -> None:
    base = VerifierContext(judge="openai:m", planner="rules", base_url="http://127.0.0.1:1/v1")
    keys = {
        base.settings().key,
        VerifierContext(**{**base.__dict__, "temperature": 0.5}).settings().key,
        VerifierContext(**{**base.__dict__, "model_params": {"seed": 2}}).settings().key,
    }
    assert len(keys) == 3
    assert base.settings().models["judge"]["temperature"] == 0


def test_cli_temperature_and_model_param_reach_the_request_and_the_key(tmp_path: Path) -> None:
    episodes = tmp_path / "in.jsonl"
    episodes.write_bytes(orjson.dumps({"id": "a", "goal": GOAL, "actions": COFFEE_PLAN}) + b"\n")
    keys = []
    with FakeOpenAI(lambda body: ANSWER) as server:
        for extra in ([], ["--temperature", "0.3", "--model-param", "seed=11"]):
            out = tmp_path / f"out{len(keys)}.jsonl"
            args = ["verify", str(episodes), "--no-checkpoint", "--static", "-o", str(out)]
            args += ["--judge", "openai:m", "--base-url", server.base_url, *extra]
            result = CliRunner().invoke(app, args)
            assert result.exit_code == 0, result.stderr
            record = VerificationResult.model_validate_json(out.read_bytes())
            assert record.settings is not None
            keys.append(record.settings.key)
    assert keys[0] != keys[1]
    assert [(b["temperature"], b["seed"]) for b in server.requests][-1] == (0.3, 11)


def test_cli_rejects_a_model_param_without_a_value(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["verify", "x.jsonl", "--model-param", "seed"])
    assert result.exit_code == 2 and "KEY=VALUE" in result.stderr
