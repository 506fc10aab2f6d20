"""What every Judge and Planner implements, and helpers they share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from pydantic import BaseModel

from planverify.calls import CallPolicy, counting_unknown, estimate_tokens
from planverify.critique import Critique, Dropped, Missing
from planverify.episode import Scene
from planverify.usage import TokenUsage


@dataclass
class JudgeReply:
    """A Judge's critique and what it cost."""

    critique: Critique  # flags, missing steps and dropped fragments
    usage: TokenUsage = field(default_factory=TokenUsage)  # tokens spent
    warnings: list[str] = field(default_factory=list)  # what the result should note, if any


@dataclass
class Insertion:
    """A step the Planner adds."""

    after: int  # 0-based index in the plan given to the Planner it follows; -1 = first
    action: str  # the new step in the notation
    reason: str  # the critique it answers


@dataclass
class PlannerReply:
    """The insertions a Planner proposes for the missing steps of a critique."""

    insertions: list[Insertion] = field(default_factory=list)  # valid insertions, in order
    dropped: list[Dropped] = field(default_factory=list)  # proposals that were not valid
    usage: TokenUsage = field(default_factory=TokenUsage)  # tokens spent

    def add(self, item: Insertion | Dropped) -> None:
        """Keep a validated insertion, or record why a proposal was dropped."""
        if isinstance(item, Insertion):
            self.insertions.append(item)
        else:
            self.dropped.append(item)


@runtime_checkable
class Judge(Protocol):
    """Reviews a plan against a goal."""

    name: str  # identifies the judge in results and run settings

    async def ajudge(self, goal: str, plan: Sequence[str], scene: Scene | None) -> JudgeReply:
        """Critique a plan; `plan` lines are in the notation."""
        ...


@runtime_checkable
class Planner(Protocol):
    """Turns missing-step critiques into concrete insertions, and infers goals."""

    name: str  # identifies the planner in results and run settings
    uses_model: bool  # whether it calls a model (and can infer a goal from dialogue)

    async def ainsert(
        self, goal: str, plan: Sequence[str], missing: Sequence[Missing]
    ) -> PlannerReply:
        """Propose insertions for the missing steps."""
        ...

    async def agoal(self, dialogue: Sequence[str]) -> tuple[str, TokenUsage]:
        """A one-line goal from the dialogue."""
        ...


def usage_of(message: BaseMessage) -> TokenUsage:
    """Token usage reported on a model reply (zero when the provider reports none)."""
    meta = message.usage_metadata if isinstance(message, AIMessage) else None
    if not meta:
        return TokenUsage(calls=1)
    return TokenUsage(
        calls=1,
        input_tokens=meta.get("input_tokens", 0),
        output_tokens=meta.get("output_tokens", 0),
    )


def estimate_messages(messages: Sequence[BaseMessage]) -> int:
    """Tokens a prompt will probably cost, for rate limiting (about four characters a token)."""
    return estimate_tokens("".join(str(m.content) for m in messages))


S = TypeVar("S", bound=BaseModel)


@dataclass
class Answer(Generic[S]):
    """A model's answer: the schema object when structured output worked, and always the text."""

    parsed: S | None  # the structured answer, None for text answers and failed parses
    text: str  # the raw text, for the text protocol or the fallback parser
    usage: TokenUsage  # tokens spent


async def ask(
    model: BaseChatModel,
    messages: list[BaseMessage],
    policy: CallPolicy,
    schema: type[S] | None = None,
) -> Answer[S]:
    """Call a model under a call policy, with structured output when `schema` is given and the
    model supports it; a reply that ignores the schema comes back as text to parse instead.
    Attempts that timed out count as calls whose tokens are unknown."""
    with counting_unknown() as lost:
        answer = await _ask(model, messages, policy, schema)
    answer.usage += TokenUsage(calls=lost.calls, unknown_calls=lost.calls)
    return answer


async def _ask(
    model: BaseChatModel,
    messages: list[BaseMessage],
    policy: CallPolicy,
    schema: type[S] | None = None,
) -> Answer[S]:
    estimate = estimate_messages(messages)
    if schema is not None:
        try:
            runnable = model.with_structured_output(schema, include_raw=True)
        except NotImplementedError:
            runnable = None
        if runnable is not None:
            out: dict[str, Any] = await policy.call(
                lambda: runnable.ainvoke(messages),  # type: ignore[arg-type, return-value]
                estimate=estimate,
                spent=lambda o: usage_of(o["raw"]).total,
            )
            parsed = out.get("parsed")
            raw: BaseMessage = out["raw"]
            return Answer(parsed if isinstance(parsed, schema) else None, raw.text, usage_of(raw))
    reply = await policy.call(
        lambda: model.ainvoke(messages), estimate=estimate, spent=lambda m: usage_of(m).total
    )
    return Answer(None, reply.text, usage_of(reply))


def numbered(plan: Sequence[str]) -> str:
    """A plan as numbered lines, 1-based, as the prompts show it."""
    return "\n".join(f"{i}. {line}" for i, line in enumerate(plan, start=1))


def as_data(text: str) -> str:
    """Untrusted text made safe to place between prompt tags: it cannot close or open one."""
    return text.replace("<", "\u2039").replace(">", "\u203a")
