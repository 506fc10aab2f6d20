"""Planners: apply a critique to a plan.

Removals are always applied deterministically by `revise`. A Planner only turns `#MISSING`
critiques into concrete insertions: the `rules` planner uses the actions the Judge named, a model
planner asks its model (`INSERT AFTER <n>: <action>` lines, or structured output).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from planverify.agents.base import Answer, Insertion, PlannerReply, as_data, ask, numbered
from planverify.agents.parsing import strip_reasoning
from planverify.calls import CallPolicy
from planverify.critique import Dropped, Missing
from planverify.notation import NotationError, parse_action
from planverify.params import Tuning
from planverify.prompts import PROMPT_VERSION, render
from planverify.usage import TokenUsage

_INSERT = re.compile(r"INSERT\s+AFTER\s+(?:step\s*)?(?P<n>-?\d+)\s*[:\-]\s*(?P<action>.+)", re.I)
_PROTOCOL = re.compile(r"INSERT\s+AFTER|\bNONE\b", re.I)  # a reply in the text protocol
_GOAL = re.compile(r"GOAL\s*:\s*(?P<goal>.+)", re.I)


def validate_insertion(
    action: str, after: int, plan_length: int, reason: str
) -> Insertion | Dropped:
    """An insertion if `action` is a Driver action in the notation at a real position."""
    text = action.strip().strip("`").strip()
    try:
        parsed = parse_action(text, strict=True)
    except NotationError as exc:
        return Dropped(text=text, why=f"not a valid action: {exc}")
    if parsed.agent != "Driver" or parsed.is_dialogue:
        return Dropped(text=text, why="only Driver actions can be inserted, never dialogue")
    if not -1 <= after < plan_length:
        return Dropped(text=text, why=f"position {after + 1} is outside the plan (0-{plan_length})")
    return Insertion(after=after, action=str(parsed), reason=reason)


def commander_goal(dialogue: Sequence[str]) -> str:
    """The model-free goal: the Commander's utterances, joined."""
    said = [line.removeprefix("Commander: ") for line in dialogue if line.startswith("Commander: ")]
    return " ".join(said)


class RulesPlanner:
    """Applies critiques without a model: inserts only the concrete actions the Judge named."""

    name = "rules"
    version = "1"  # bump whenever a change can alter an insertion
    uses_model = False

    async def ainsert(
        self, goal: str, plan: Sequence[str], missing: Sequence[Missing]
    ) -> PlannerReply:
        reply = PlannerReply()
        for item in missing:
            if item.action is None:
                reply.dropped.append(
                    Dropped(
                        text=item.description,
                        why="names no concrete action; a model planner can turn it into one",
                    )
                )
                continue
            after = len(plan) - 1 if item.after is None else item.after
            result = validate_insertion(item.action, after, len(plan), item.description)
            reply.add(result)
        return reply

    async def agoal(self, dialogue: Sequence[str]) -> tuple[str, TokenUsage]:
        return commander_goal(dialogue), TokenUsage()


class InsertStep(BaseModel):
    """One step to add (structured output)."""

    after: int = Field(description="number of the plan step it follows; 0 = before step 1")
    action: str = Field(description="the action in the notation")


class Insertions(BaseModel):
    """The Planner's whole answer (structured output)."""

    insert: list[InsertStep] = Field(default_factory=list, description="steps to add, in order")


def parse_insertions(text: str, plan_length: int, reason: str) -> PlannerReply:
    """Parse `INSERT AFTER <n>: <action>` lines; anything invalid is dropped with why."""
    reply = PlannerReply()
    for line in strip_reasoning(text).splitlines():
        m = _INSERT.search(line.replace("**", "").replace("`", ""))
        if m is None:
            continue
        result = validate_insertion(m["action"], int(m["n"]) - 1, plan_length, reason)
        reply.add(result)
    return reply


class ModelPlanner:
    """A Planner backed by any LangChain chat model."""

    version = PROMPT_VERSION  # the prompts are its logic

    uses_model = True

    def __init__(
        self,
        model: BaseChatModel,
        *,
        output: Literal["text", "structured"] = "text",
        name: str | None = None,
        policy: CallPolicy | None = None,
        tuning: Tuning | None = None,
    ) -> None:
        self.model = model
        self.tuning = tuning  # request parameters of a model made from a spec
        self.output = output
        self.policy = policy or CallPolicy()
        self.name = (
            name
            or getattr(model, "model_name", None)
            or getattr(model, "model", None)
            or type(model).__name__
        )

    def _messages(
        self, goal: str, plan: Sequence[str], missing: Sequence[Missing]
    ) -> list[BaseMessage]:
        wanted = "\n".join(f"- {m.description}" for m in missing)
        return [
            SystemMessage(render("planner_system")),
            HumanMessage(
                render(
                    "planner_user",
                    goal=as_data(goal),
                    plan=as_data(numbered(plan)),
                    missing=as_data(wanted),
                )
            ),
        ]

    async def ainsert(
        self, goal: str, plan: Sequence[str], missing: Sequence[Missing]
    ) -> PlannerReply:
        if not missing:
            return PlannerReply()
        reason = "; ".join(m.description for m in missing)
        messages = self._messages(goal, plan, missing)
        schema = Insertions if self.output == "structured" else None
        cap = self.tuning.cap(len(plan)) if self.tuning else None
        answer = await ask(
            self.model,
            messages,
            self.policy,
            schema,
            cap=cap,
            usable=lambda t: _PROTOCOL.search(t) is not None,
        )
        if answer.parsed is None:
            reply = parse_insertions(answer.text, len(plan), reason)
        else:
            reply = PlannerReply()
            for step in answer.parsed.insert:
                reply.add(validate_insertion(step.action, step.after - 1, len(plan), reason))
        reply.usage = answer.usage
        return reply

    async def agoal(self, dialogue: Sequence[str]) -> tuple[str, TokenUsage]:
        messages = [
            SystemMessage(render("goal_system")),
            HumanMessage(render("goal_user", dialogue=as_data("\n".join(dialogue)))),
        ]
        cap = self.tuning.cap(len(dialogue)) if self.tuning else None
        answer: Answer[BaseModel] = await ask(self.model, messages, self.policy, cap=cap)
        text = strip_reasoning(answer.text).strip()
        m = _GOAL.search(text)
        goal = (m["goal"] if m else text.splitlines()[0] if text else "").strip()
        return goal or commander_goal(dialogue), answer.usage
