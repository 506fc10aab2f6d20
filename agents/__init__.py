"""Judges and Planners, and how specs resolve to them."""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.language_models import BaseChatModel

from planverify.agents.base import Judge, Planner
from planverify.agents.baseline import BaselineJudge
from planverify.agents.judge import ModelJudge
from planverify.agents.planner import ModelPlanner, RulesPlanner
from planverify.agents.rules import RulesJudge
from planverify.models import ModelSpecError, load_chat_model, parse_spec

OFFLINE_JUDGES = ("rules", "baseline")
OFFLINE_PLANNERS = ("rules",)


def resolve_judge(
    judge: str | BaseChatModel | Judge,
    *,
    output: Literal["text", "structured"] = "text",
    base_url: str | None = None,
    grounding: bool = False,
    **model_options: Any,
) -> Judge:
    """A Judge from a spec ("rules", "baseline", a preset, "provider:model"), a model or a Judge."""
    if isinstance(judge, str):
        if judge == "baseline":
            return BaselineJudge()
        if judge == "rules":
            return RulesJudge()
        spec = parse_spec(judge, base_url=base_url)
        model = load_chat_model(spec, **model_options)
        return ModelJudge(model, output=output, grounding=grounding, name=judge)
    if isinstance(judge, BaseChatModel):
        return ModelJudge(judge, output=output, grounding=grounding)
    if isinstance(judge, Judge):
        return judge
    raise ModelSpecError(f"not a judge: {judge!r}")


def resolve_planner(
    planner: str | BaseChatModel | Planner,
    *,
    output: Literal["text", "structured"] = "text",
    base_url: str | None = None,
    **model_options: Any,
) -> Planner:
    """A Planner from a spec ("rules", a preset, "provider:model"), a chat model or a Planner."""
    if isinstance(planner, str):
        if planner == "rules":
            return RulesPlanner()
        spec = parse_spec(planner, base_url=base_url)
        return ModelPlanner(load_chat_model(spec, **model_options), output=output, name=planner)
    if isinstance(planner, BaseChatModel):
        return ModelPlanner(planner, output=output)
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
    "resolve_judge",
    "resolve_planner",
]
