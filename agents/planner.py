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
from planverify.agents.parsing import canonical, strip_reasoning
from planverify.calls import CallPolicy
from planverify.critique import Dropped, Missing
from planverify.notation import MOTION_VERBS, NotationError, parse_action
from planverify.prompts import PROMPT_VERSION, render
from planverify.usage import TokenUsage

_INSERT = re.compile(r"INSERT\s+AFTER\s+(?:step\s*)?(?P<n>-?\d+)\s*[:\-]\s*(?P<action>.+)", re.I)
_GOAL = re.compile(r"GOAL\s*:\s*(?P<goal>.+)", re.I)
_GOAL_WORD = re.compile(r"^goal\s*:\s*", re.I)
_SPEAKER = re.compile(
    r"^(?:the\s+)?(?:driver|commander|user|robot|assistant)(?:\s+(?:says|said|asks|asked))?"
    r"\s*(?::|[-\u2013\u2014](?=\s))\s*",
    re.I,
)  # `Driver: ...`, `commander - ...`: a speaker's label copied from the dialogue
_MARKS = re.compile(r"^(?:#+|>+|[-+*\u2022](?=\s))\s*")  # heading, quote and bullet marks
_WRAP = " \"'`*_\u201c\u201d\u2018\u2019\u00ab\u00bb"  # quotes and emphasis around a goal


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


def drop_repeats(plan: Sequence[str], reply: PlannerReply) -> PlannerReply:
    """The reply without insertions that repeat a step right next to where they go, or an
    earlier insertion at the same place: such a copy changes nothing. Each is dropped with why.

    Motion (`Move`, `TurnLeft`, `TurnRight`) is exempt: two moves in a row go further.
    """
    kept = PlannerReply(dropped=list(reply.dropped), usage=reply.usage)
    placed: set[tuple[int, str]] = set()  # (position, action) of the insertions kept so far
    for insertion in reply.insertions:
        why = _repeat(plan, insertion, placed)
        if why is None:
            kept.insertions.append(insertion)
            placed.add((insertion.after, insertion.action))
        else:
            kept.dropped.append(
                Dropped(text=f"after {insertion.after + 1}: {insertion.action}", why=why)
            )
    return kept


def _repeat(plan: Sequence[str], insertion: Insertion, placed: set[tuple[int, str]]) -> str | None:
    """Why an insertion is a repeat (see `drop_repeats`), or None."""
    action = canonical(insertion.action) or insertion.action
    if parse_action(action).verb in MOTION_VERBS:
        return None
    if (insertion.after, insertion.action) in placed:
        return "repeats another insertion at the same place"
    for index, side in ((insertion.after + 1, "after"), (insertion.after, "before")):
        if 0 <= index < len(plan) and (canonical(plan[index]) or plan[index]) == action:
            return (
                f"step {index + 1}, right {side} the insertion point, is already {action}: "
                "a second copy in a row changes nothing"
            )
    return None


def clean_goal(text: str) -> str:
    """A goal line without the wrapping a model may add: markdown, quotes, a repeated `GOAL:`
    label and a speaker's label (`Driver: Please make coffee.` -> `Please make coffee.`).

    >>> clean_goal('**GOAL:** "Commander: Make a mug of coffee."')
    'Make a mug of coffee.'
    """
    previous = None
    while text != previous:
        previous = text
        text = _MARKS.sub("", text.strip()).strip(_WRAP)
        text = _SPEAKER.sub("", _GOAL_WORD.sub("", text))
    return text


def commander_goal(dialogue: Sequence[str]) -> str:
    """The model-free goal: the Commander's utterances, joined."""
    said = [line.removeprefix("Commander: ") for line in dialogue if line.startswith("Commander: ")]
    return " ".join(said)


class RulesPlanner:
    """Applies critiques without a model: inserts only the concrete actions the Judge named."""

    name = "rules"
    version = "2"  # bump whenever a change can alter an insertion (2: repeats are dropped)
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
    ) -> None:
        self.model = model
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
        answer = await ask(self.model, messages, self.policy, schema)
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
        answer: Answer[BaseModel] = await ask(self.model, messages, self.policy)
        text = strip_reasoning(answer.text).strip()
        m = _GOAL.search(text)
        goal = clean_goal(m["goal"] if m else text.splitlines()[0] if text else "")
        return goal or commander_goal(dialogue), answer.usage
