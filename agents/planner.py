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
from planverify.agents.parsing import MissingReader, canonical, missing_reader, strip_reasoning
from planverify.llm.calls import CallPolicy
from planverify.llm.params import Tuning
from planverify.prompts import PROMPT_VERSION, render
from planverify.records.critique import Dropped, Missing
from planverify.records.notation import MOTION_VERBS, NotationError, parse_action
from planverify.records.usage import TokenUsage
from planverify.world.vocabulary import words_of

_INSERT = re.compile(r"INSERT\s+AFTER\s+(?:step\s*)?(?P<n>-?\d+)\s*[:\-]\s*(?P<action>.+)", re.I)
_PROTOCOL = re.compile(r"INSERT\s+AFTER|\bNONE\b", re.I)  # a reply in the text protocol
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


def read_insertion(
    action: str, after: int, plan: Sequence[str], reason: str, reader: MissingReader
) -> Insertion | Dropped:
    """An insertion if `reader` (another domain's) reads `action` as a step in that domain's
    notation, at a real position; the step is kept as the reader writes it."""
    text = action.strip().strip("`").strip()
    read = reader(text, plan)
    if read is None:
        return Dropped(text=text, why="not a step in the domain's notation")
    if not -1 <= after < len(plan):
        return Dropped(text=text, why=f"position {after + 1} is outside the plan (0-{len(plan)})")
    return Insertion(after=after, action=read[0], reason=reason)


def drop_repeats(plan: Sequence[str], reply: PlannerReply) -> PlannerReply:
    """The reply without insertions that repeat a step right next to where they go, or an
    earlier insertion at the same place: such a copy changes nothing. Each is dropped with why.

    Motion (`Move`, `TurnLeft`, `TurnRight`) is exempt: two moves in a row go further.
    """
    kept = PlannerReply(dropped=list(reply.dropped), usage=reply.usage, output=reply.output)
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


def parse_insertions(text: str) -> list[tuple[int, str]]:
    """The `(after, action)` pairs of `INSERT AFTER <n>: <action>` lines (`after` 0-based)."""
    found = []
    for line in strip_reasoning(text).splitlines():
        m = _INSERT.search(line.replace("**", "").replace("`", ""))
        if m is not None:
            found.append((int(m["n"]) - 1, m["action"]))
    return found


def _words(text: str) -> set[str]:
    return {w for w in words_of(text) if len(w) > 2}


def _decisive(action: str, missing: Sequence[Missing]) -> int | None:
    """The missing item that clearly asks for `action`: it named this very action, or it alone
    shares the most words with it."""
    text = action.strip().strip("`").strip()
    for i, item in enumerate(missing):
        if item.action is not None and item.action == text:
            return i
    words = _words(text.removeprefix("Driver."))
    overlap = [len(words & _words(item.description)) for item in missing]
    best = max(overlap)
    return overlap.index(best) if best > 0 and overlap.count(best) == 1 else None


def reasons_for(actions: Sequence[str], missing: Sequence[Missing]) -> list[str]:
    """The description of the missing item each proposed action answers: the item that clearly
    asks for it, else the next item no action has claimed, in order (never all joined).

    >>> wanted = [Missing(description="switch the coffee machine on"),
    ...           Missing(description="put the mug in the sink")]
    >>> reasons_for(["Driver.PutAOnB('Mug', 'Sink')", "Driver.Open('Fridge')"], wanted)
    ['put the mug in the sink', 'switch the coffee machine on']
    """
    claimed = [_decisive(action, missing) for action in actions]
    free = iter([i for i in range(len(missing)) if i not in claimed])
    chosen = [i if i is not None else next(free, None) for i in claimed]
    return [missing[min(i, len(missing) - 1) if i is not None else -1].description for i in chosen]


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
        self,
        goal: str,
        plan: Sequence[str],
        missing: Sequence[Missing],
        system: str = "planner_system",
    ) -> list[BaseMessage]:
        wanted = "\n".join(f"- {m.description}" for m in missing)
        return [
            SystemMessage(render(system)),
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
        self,
        goal: str,
        plan: Sequence[str],
        missing: Sequence[Missing],
        *,
        system: str = "planner_system",
    ) -> PlannerReply:
        """Insertions for the missing steps, from the model's answer. `system` names the
        instructions' template: another domain's (e.g. VirtualHome's) has its proposed steps
        read in that domain's notation by the reader the registry gave it (`missing_reader`)."""
        if not missing:
            return PlannerReply()
        messages = self._messages(goal, plan, missing, system)
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
            proposed = parse_insertions(answer.text)
        else:
            proposed = [(step.after - 1, step.action) for step in answer.parsed.insert]
        reply = PlannerReply(output=answer.method)
        reasons = reasons_for([action for _, action in proposed], missing)
        reader = missing_reader(system)  # None: TEACh's notation
        for (after, action), reason in zip(proposed, reasons, strict=True):
            if reader is None:
                reply.add(validate_insertion(action, after, len(plan), reason))
            else:
                reply.add(read_insertion(action, after, plan, reason, reader))
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
        goal = clean_goal(m["goal"] if m else text.splitlines()[0] if text else "")
        return goal or commander_goal(dialogue), answer.usage
