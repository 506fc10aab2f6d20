"""What every Judge and Planner implements, and helpers they share."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar, runtime_checkable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from pydantic import BaseModel

from planverify.agents.output import answer, usage_of
from planverify.llm.calls import CallPolicy, counting_unknown, estimate_tokens
from planverify.records.critique import Critique, Dropped, Missing
from planverify.records.episode import Scene
from planverify.records.evidence import WEAKEST, Evidence
from planverify.records.usage import TokenUsage


@dataclass
class JudgeReply:
    """A Judge's critique and what it cost."""

    critique: Critique  # flags, missing steps and dropped fragments
    usage: TokenUsage = field(default_factory=TokenUsage)  # tokens spent
    warnings: list[str] = field(default_factory=list)  # what the result should note, if any
    output: str | None = (
        None  # model Judges: the output method of the answer (text, json_schema...)
    )
    uncovered: list[int] = field(default_factory=list)  # 0-based steps its answer never judged


@dataclass
class Insertion:
    """A step the Planner adds."""

    after: int  # 0-based index in the plan given to the Planner it follows; -1 = first
    action: str  # the new step in the notation
    reason: str  # the critique it answers
    evidence: Evidence = WEAKEST  # how sure it is the plan needs it (`graphs.edits.grade`)


@dataclass
class PlannerReply:
    """The insertions a Planner proposes for the missing steps of a critique."""

    insertions: list[Insertion] = field(default_factory=list)  # valid insertions, in order
    dropped: list[Dropped] = field(default_factory=list)  # proposals that were not valid
    usage: TokenUsage = field(default_factory=TokenUsage)  # tokens spent
    output: str | None = None  # model Planners: the output method of the answer (text, ...)

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
    method: str = "text"  # output method of the answer: json_schema, function_calling, ...
    cut_short: bool = False  # the provider stopped it at the output-token limit


_CUT = {"length", "max_tokens", "MAX_TOKENS"}  # finish or stop reasons of a token-limit stop


def cut_short(message: BaseMessage) -> bool:
    """Whether a reply was stopped by the output-token limit (OpenAI, Anthropic, Gemini names)."""
    meta = message.response_metadata or {}
    return meta.get("finish_reason") in _CUT or meta.get("stop_reason") in _CUT


async def ask(
    model: BaseChatModel,
    messages: list[BaseMessage],
    policy: CallPolicy,
    schema: type[S] | None = None,
    *,
    cap: int | None = None,
    usable: Callable[[str], bool] | None = None,
) -> Answer[S]:
    """Call a model under a call policy, with structured output when `schema` is given: the
    output methods the server takes are tried in turn (`planverify.agents.output`), and a reply
    that ignores them comes back as text to parse instead. `cap` bounds the output tokens;
    `usable(text)` says whether a reply that ignored the method follows the text protocol.
    Attempts that timed out count as calls whose tokens are unknown."""
    with counting_unknown() as lost:
        outcome = await answer(
            model,
            messages,
            policy,
            schema,
            estimate=estimate_messages(messages),
            cap=cap,
            usable=usable,
        )
    usage = sum((usage_of(r) for r in outcome.replies), TokenUsage())
    usage += TokenUsage(calls=lost.calls, unknown_calls=lost.calls)
    cut = bool(outcome.replies) and cut_short(outcome.replies[-1])
    return Answer(outcome.parsed, outcome.text, usage, outcome.method, cut)


def numbered(plan: Sequence[str]) -> str:
    """A plan as numbered lines, 1-based, as the prompts show it."""
    return "\n".join(f"{i}. {line}" for i, line in enumerate(plan, start=1))


def as_data(text: str) -> str:
    """Untrusted text made safe to place between prompt tags: it cannot close or open one."""
    return text.replace("<", "\u2039").replace(">", "\u203a")
