"""Judges and Planners, and how specs resolve to them.

May import `world`, `llm`, `prompts` and `records`.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.language_models import BaseChatModel

from planverify.agents.base import Judge, Planner
from planverify.agents.baseline import BaselineJudge
from planverify.agents.judge import ModelJudge
from planverify.agents.planner import ModelPlanner, RulesPlanner
from planverify.agents.rules import RulesJudge
from planverify.llm.calls import CallLimits
from planverify.llm.models import ModelSpec, ModelSpecError, load_chat_model, parse_spec
from planverify.llm.params import ModelOptions, init_options, tuning
from planverify.records.redaction import public_url

OFFLINE_JUDGES = ("rules", "baseline")
OFFLINE_PLANNERS = ("rules",)


def version_of_spec(spec: str, role: Literal["judge", "planner"]) -> str:
    """The version of the logic a spec resolves to: the offline agents' own, or the prompts'."""
    from planverify.prompts import PROMPT_VERSION

    offline = (
        {"rules": RulesJudge.version, "baseline": BaselineJudge.version}
        if role == "judge"
        else {"rules": RulesPlanner.version}
    )
    return offline.get(spec, PROMPT_VERSION)


def label(thing: Any) -> str:
    """The name of a Judge, Planner or chat model in settings and price lookups."""
    if isinstance(thing, str):
        return thing
    model = getattr(thing, "model", None)
    if isinstance(thing, BaseChatModel) or not isinstance(model, BaseChatModel):
        return str(
            getattr(thing, "name", None)
            or getattr(thing, "model_name", None)
            or type(thing).__name__
        )
    return label(model)


def version_of(thing: Any, role: Literal["judge", "planner"]) -> str | None:
    """The version of a Judge's or Planner's own logic (specs resolve to the built-in ones)."""
    if isinstance(thing, str):
        return version_of_spec(thing, role)
    value = getattr(thing, "version", None)
    return str(value) if value is not None else None


def provider_key(spec: ModelSpec) -> str:
    """Whose call limits a spec's calls share, as messages and progress show it: the server's
    URL (without user info) or the provider's name."""
    return public_url(spec.base_url) if spec.base_url else spec.provider


def resolve_judge(
    judge: str | BaseChatModel | Judge,
    *,
    output: Literal["text", "structured"] = "text",
    base_url: str | None = None,
    grounding: bool = False,
    limits: CallLimits | None = None,
    options: ModelOptions | None = None,
    **model_options: Any,
) -> Judge:
    """A Judge from a spec ("rules", "baseline", a preset, "provider:model"), a model or a Judge;
    `options` override the request parameters of a model made from a spec (`planverify.llm.params`)."""
    if isinstance(judge, str):
        if judge == "baseline":
            return BaselineJudge()
        if judge == "rules":
            return RulesJudge()
        spec = parse_spec(judge, base_url=base_url, offline=OFFLINE_JUDGES)
        tuned = tuning(spec, options)
        model = load_chat_model(spec, **{**init_options(spec, tuned), **model_options})
        policy = (limits or CallLimits()).policy(provider_key(spec), judge)
        return ModelJudge(
            model, output=output, grounding=grounding, name=judge, policy=policy, tuning=tuned
        )
    if isinstance(judge, BaseChatModel):
        policy = (limits or CallLimits()).policy(type(judge).__name__, label(judge))
        return ModelJudge(judge, output=output, grounding=grounding, policy=policy)
    if isinstance(judge, Judge):
        return judge
    raise ModelSpecError(f"not a judge: {judge!r}")


def resolve_planner(
    planner: str | BaseChatModel | Planner,
    *,
    output: Literal["text", "structured"] = "text",
    base_url: str | None = None,
    limits: CallLimits | None = None,
    options: ModelOptions | None = None,
    **model_options: Any,
) -> Planner:
    """A Planner from a spec ("rules", a preset, "provider:model"), a chat model or a Planner."""
    if isinstance(planner, str):
        if planner == "rules":
            return RulesPlanner()
        spec = parse_spec(planner, base_url=base_url, offline=OFFLINE_PLANNERS)
        policy = (limits or CallLimits()).policy(provider_key(spec), planner)
        tuned = tuning(spec, options)
        model = load_chat_model(spec, **{**init_options(spec, tuned), **model_options})
        return ModelPlanner(model, output=output, name=planner, policy=policy, tuning=tuned)
    if isinstance(planner, BaseChatModel):
        policy = (limits or CallLimits()).policy(type(planner).__name__, label(planner))
        return ModelPlanner(planner, output=output, policy=policy)
    if isinstance(planner, Planner):
        return planner
    raise ModelSpecError(f"not a planner: {planner!r}")


__all__ = [
    "BaselineJudge",
    "Judge",
    "ModelJudge",
    "ModelPlanner",
    "Planner",
    "RulesJudge",
    "RulesPlanner",
    "label",
    "resolve_judge",
    "resolve_planner",
    "version_of",
    "version_of_spec",
]
