"""The operator's rules for served runs, in process: which model parameters a run may set, how
long its plan may be, and which shared limits its model server's calls go by."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from planverify.graphs.context import SettingsError, VerifierContext
from planverify.graphs.policy import (
    ALLOWED_ENV,
    ALLOWED_PARAMS_ENV,
    DEFAULT_MAX_ACTIONS,
    MAX_ACTIONS_ENV,
    PolicyError,
    ServingPolicy,
)
from planverify.llm.params import SAMPLING_PARAMS

SERVER = "http://127.0.0.1:8000/v1"


def refusal(policy: ServingPolicy, **settings: Any) -> list[str]:
    """The lines of the policy's refusal of these settings ([] when it admits them)."""
    try:
        policy.admit(VerifierContext.validated(**settings))
    except PolicyError as exc:
        return str(exc).splitlines()
    return []


@pytest.mark.parametrize(
    "params",
    [
        {"vertexai": True, "project": "p", "location": "attacker.example/"},
        {"model_kwargs": {"model": "x"}},
        {"extra_body": {"max_tokens": 5}},
        {"http_client": "x"},
        {"http_async_client": "x"},
        {"client_options": {"api_endpoint": "attacker.example"}},
        {"transport": "rest"},
        {"default_headers": {"X": "1"}},
        {"default_query": {"q": "1"}},
        {"api_key": "mine"},
        {"credentials": "x"},
        {"google_api_key": "x"},
        {"base_url": SERVER},
        {"openai_api_base": SERVER},
        {"openai_proxy": SERVER},
        {"azure_endpoint": SERVER},
        {"organization": "org"},
        {"n": 50},
        {"Temperature": 1.0},
    ],
)
def test_only_sampling_parameters_are_admitted_each_refusal_names_its_parameter(
    params: dict[str, Any],
) -> None:
    policy = ServingPolicy.from_env({ALLOWED_ENV: SERVER})
    lines = refusal(policy, judge="openai:m", base_url=SERVER, model_params=params)
    assert [line.split(":")[0] for line in lines] == [f"model_params.{name}" for name in params]
    assert all(ALLOWED_PARAMS_ENV in line for line in lines)


def test_the_sampling_parameters_of_every_provider_spelling_are_admitted() -> None:
    policy = ServingPolicy.from_env({})
    sampling = {
        "temperature": 0.2,
        "top_p": 0.9,
        "top_k": 40,
        "seed": 7,
        "stop": ["\n\n"],
        "max_tokens": 256,
        "max_output_tokens": 256,
        "max_completion_tokens": 256,
        "frequency_penalty": 0.1,
        "presence_penalty": 0.1,
    }
    assert set(sampling) == SAMPLING_PARAMS
    assert refusal(policy, judge="openai:m", model_params=sampling) == []


def test_the_operator_extends_the_list() -> None:
    params = {"reasoning_effort": "low", "logit_bias": {"50256": -100}}
    assert len(refusal(ServingPolicy.from_env({}), judge="openai:m", model_params=params)) == 2
    policy = ServingPolicy.from_env({ALLOWED_PARAMS_ENV: " reasoning_effort, logit_bias ,"})
    assert policy.params == SAMPLING_PARAMS | {"reasoning_effort", "logit_bias"}
    assert refusal(policy, judge="openai:m", model_params=params) == []


def test_the_plan_size_ceiling_and_its_setting() -> None:
    assert ServingPolicy.from_env({}).max_actions == DEFAULT_MAX_ACTIONS
    policy = ServingPolicy.from_env({MAX_ACTIONS_ENV: "3"})
    policy.check_size(3)
    with pytest.raises(PolicyError) as refused:
        policy.check_size(4)
    assert str(refused.value) == (
        f"actions: 4 actions, more than this server verifies in one run (3, {MAX_ACTIONS_ENV})"
    )
    for wrong in ("0", "-5", "many", "2.5"):
        with pytest.raises(SettingsError, match=MAX_ACTIONS_ENV):
            ServingPolicy.from_env({MAX_ACTIONS_ENV: wrong})


def test_a_served_plan_over_the_ceiling_is_refused_before_the_graph_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from planverify.graphs.served import served_graph

    monkeypatch.setenv(MAX_ACTIONS_ENV, "2")
    graph = served_graph()
    with pytest.raises(PolicyError, match=MAX_ACTIONS_ENV):
        asyncio.run(graph.ainvoke({"actions": ["Driver.Move(1.0)"] * 3}))
    done = asyncio.run(graph.ainvoke({"actions": ["Driver.Move(1.0)"] * 2}))
    assert done["status"] == "ok"
