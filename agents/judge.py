"""The model Judge: reviews a plan with a chat model, in the text protocol or structured output."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from planverify.agents.base import Answer, JudgeReply, as_data, ask, numbered
from planverify.agents.coverage import continuation, left_out, merge
from planverify.agents.parsing import (
    MissingReader,
    StepResolver,
    add_flag,
    add_missing,
    canonical,
    missing_reader,
    read_judge_text,
)
from planverify.llm.calls import CallPolicy
from planverify.llm.params import Tuning
from planverify.prompts import PROMPT_VERSION, render
from planverify.records.critique import Critique
from planverify.records.episode import Scene
from planverify.world import Grounding
from planverify.world.facts import facts

_PROTOCOL = re.compile(r"ACTION\s*:|#\s*MISSING|#\s*REMOVE", re.I)


class StepToRemove(BaseModel):
    """A step the Judge wants removed (structured output)."""

    step: int = Field(description="1-based number of the step in the plan")
    action: str = Field(description="the step, copied exactly")
    reason: str = Field(description="why it should be removed")


class JudgeVerdict(BaseModel):
    """The Judge's whole answer (structured output)."""

    remove: list[StepToRemove] = Field(default_factory=list, description="steps to remove")
    missing: list[str] = Field(
        default_factory=list, description="missing steps, each as an action in the notation"
    )
    keep: list[int] | None = Field(
        default=None,
        description="1-based numbers of every Driver step you keep: each Driver step you judged "
        "is either here or in remove",
    )


def grounding_block(plan: Sequence[str], grounding: Grounding) -> str:
    """The simulator's facts about a plan, as a delimited data block for the Judge prompt."""
    return facts_block(facts(list(plan), grounding))


def facts_block(known: Sequence[str]) -> str:
    """Facts, one per line, as a delimited data block for the Judge prompt (empty: none)."""
    if not known:
        return ""
    body = "\n".join(f"- {as_data(line)}" for line in known)
    return f"\n<facts>\n{body}\n</facts>\n"


def vetoes_block(vetoes: Sequence[str]) -> str:
    """The simulator's refusals of the previous pass, as a delimited data block."""
    if not vetoes:
        return ""
    body = "\n".join(f"- {as_data(line)}" for line in vetoes)
    return f"\n<vetoes>\n{body}\n</vetoes>\n"


def judge_messages(
    goal: str, plan: Sequence[str], grounding: str = "", *, system: str = "judge_system"
) -> list[BaseMessage]:
    """The Judge prompt: instructions (`system`: the template, TEACh's unless a domain names
    its own), then the goal, plan and any facts as delimited data."""
    return [
        SystemMessage(render(system)),
        HumanMessage(
            render(
                "judge_user", goal=as_data(goal), plan=as_data(numbered(plan)), grounding=grounding
            )
        ),
    ]


def critique_from_verdict(verdict: JudgeVerdict, plan: Sequence[str]) -> Critique:
    """Validate a structured answer the same way as a text one."""
    return read_verdict(verdict, plan)[0]


def read_verdict(
    verdict: JudgeVerdict, plan: Sequence[str], reader: MissingReader | None = None
) -> tuple[Critique, list[int] | None]:
    """`critique_from_verdict`, and the 0-based steps the answer judged: those it removes and
    keeps (None when it gives no `keep` list: then it speaks for the whole plan). `reader`:
    another domain's reader of missing steps."""
    critique = Critique()
    resolver = StepResolver(plan)
    covered: list[int] = []
    for item in verdict.remove:
        action = canonical(item.action) if item.action.strip() else None
        index = resolver.resolve(item.step, action or item.action.strip() or None)
        if isinstance(index, int):
            covered.append(index)
        add_flag(
            critique,
            resolver.plan,
            index,
            item.reason.strip() or "no reason given",
            f"{item.step}. {item.action}",
        )
    for description in verdict.missing:
        add_missing(critique, description, plan, reader)
    critique.flags.sort(key=lambda f: f.step)
    if verdict.keep is None:
        return critique, None
    kept = [n - 1 for n in verdict.keep if 1 <= n <= len(plan)]
    return critique, sorted({*covered, *kept})


def in_protocol(text: str) -> bool:
    """Whether a reply is written in the Judge's text protocol."""
    return _PROTOCOL.search(text) is not None


class ModelJudge:
    """A Judge backed by any LangChain chat model."""

    version = PROMPT_VERSION  # the prompts are its logic
    grounded = True  # takes the episode's grounding (for --grounding facts)

    def __init__(
        self,
        model: BaseChatModel,
        *,
        output: Literal["text", "structured"] = "text",
        grounding: bool = False,
        name: str | None = None,
        policy: CallPolicy | None = None,
        tuning: Tuning | None = None,
    ) -> None:
        self.model = model
        self.tuning = tuning  # request parameters of a model made from a spec
        self.output = output
        self.grounding = grounding
        self.policy = policy or CallPolicy()
        self.name = (
            name
            or getattr(model, "model_name", None)
            or getattr(model, "model", None)
            or type(model).__name__
        )

    async def ajudge(
        self,
        goal: str,
        plan: Sequence[str],
        scene: Scene | None = None,
        *,
        grounding: Grounding | None = None,
        vetoes: Sequence[str] = (),
        facts: str | None = None,
        system: str = "judge_system",
    ) -> JudgeReply:
        """The Judge's critique of a plan; with grounding on, the prompt gets the simulator's
        facts: `facts` when given (another domain's, one per line), else TEACh's. `system`
        names the instructions' template (another domain's, e.g. VirtualHome's)."""
        if facts is not None:
            lines = [line.removeprefix("- ") for line in facts.splitlines()]
            block = facts_block(lines) if self.grounding else ""
        else:
            known = grounding if grounding is not None else Grounding(scene, None)
            block = grounding_block(plan, known) if self.grounding else ""
        block += vetoes_block(vetoes)
        messages = judge_messages(goal, plan, block, system=system)
        schema = JudgeVerdict if self.output == "structured" else None
        cap = self.tuning.cap(len(plan)) if self.tuning else None
        answer = await ask(self.model, messages, self.policy, schema, cap=cap, usable=in_protocol)
        reader = missing_reader(system)  # another domain's steps are read in its own notation
        critique, covered = read_answer(answer, plan, reader)
        left = left_out(plan, covered, cut=answer.cut_short)
        if not left:
            return JudgeReply(critique, answer.usage, output=answer.method)
        asked = [*messages, continuation(plan, left)]
        more = await ask(self.model, asked, self.policy, schema, cap=cap, usable=in_protocol)
        extra, judged = read_answer(more, plan, reader)
        return JudgeReply(
            merge(critique, extra, plan),
            answer.usage + more.usage,
            output=answer.method,
            uncovered=left_out(plan, judged, cut=more.cut_short, among=left),
        )


def read_answer(
    answer: Answer[JudgeVerdict], plan: Sequence[str], reader: MissingReader | None = None
) -> tuple[Critique, list[int] | None]:
    """The critique of an answer, structured or text, and the steps it judged (see
    `read_verdict` and `read_judge_text`)."""
    if answer.parsed is not None:
        return read_verdict(answer.parsed, plan, reader)
    critique, covered = read_judge_text(answer.text, plan, reader)
    return critique, covered
