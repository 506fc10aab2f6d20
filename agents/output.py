"""Structured output with a fallback: JSON schema, then tool calling, then JSON mode, then the
text protocol.

A method the server refuses (an error naming it, whatever the status code) is not retried: the
next one is tried at once. An answer that ignores the method (prose where JSON or a tool call
was asked for) counts as a refusal too, but its text is still used when it follows the text
protocol (`usable`), so the call is not wasted; otherwise the next method is asked. An answer in
the right form that fails the schema is a bad answer, not a refusal: its text goes to the text
parser, as it always did. What worked is remembered per model and base URL
(`planverify.llm.capability`), so later calls go straight to it.

JSON mode sends no schema, so the schema goes into the prompt, which also says "JSON" (some
providers refuse JSON mode unless the messages do).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel, ValidationError

from planverify.llm.calls import CallPolicy
from planverify.llm.capability import learn, learned, model_key
from planverify.llm.errors import refused_parameter, refuses_method
from planverify.llm.params import sent_parameters, streaming, streams, with_cap, without
from planverify.records.usage import TokenUsage

S = TypeVar("S", bound=BaseModel)
T = TypeVar("T")


def usage_of(message: BaseMessage) -> TokenUsage:
    """Token usage reported on a model reply; a reply without it (a server that ignored
    `stream_options.include_usage`) is a call whose tokens are unknown."""
    meta = message.usage_metadata if isinstance(message, AIMessage) else None
    if not meta:
        return TokenUsage(calls=1, unknown_calls=1)
    return TokenUsage(
        calls=1,
        input_tokens=meta.get("input_tokens", 0),
        output_tokens=meta.get("output_tokens", 0),
    )


@dataclass
class Outcome(Generic[S]):
    """What the calls of one question brought back."""

    parsed: S | None = None  # the structured answer, when there is one
    replies: list[BaseMessage] = field(default_factory=list)  # every reply (all cost tokens)
    method: str = "text"  # the output method of the answer used

    @property
    def text(self) -> str:
        """The text of the answer used."""
        return self.replies[-1].text if self.replies else ""


class MethodUnavailable(Exception):
    """The model's class cannot ask for this output method at all (no call was made)."""


def json_mode_messages(
    messages: Sequence[BaseMessage], schema: type[BaseModel]
) -> list[BaseMessage]:
    """The messages with the schema spelled out at the end of the last one, for JSON mode."""
    shape = json.dumps(schema.model_json_schema(), separators=(",", ":"))
    note = (
        "\n\nAnswer with one JSON object and nothing else (no ACTION lines, no prose), "
        f"valid against this JSON schema:\n{shape}"
    )
    last = messages[-1]
    return [*messages[:-1], HumanMessage(f"{last.text}{note}")]


def _wire_schema(model: BaseChatModel, schema: type[BaseModel], method: str) -> Any:
    """The schema as `with_structured_output` should get it. ChatOpenAI gets JSON schema as a
    dict: given a class it lets the SDK parse the reply, which raises on prose or a cut answer
    and loses the reply's text."""
    if method == "json_schema" and type(model).__module__.startswith("langchain_openai"):
        return schema.model_json_schema()
    return schema


def _runnable(model: BaseChatModel, schema: type[BaseModel], method: str) -> Any:
    try:
        wire = _wire_schema(model, schema, method)
        return model.with_structured_output(wire, method=method, include_raw=True)
    except (NotImplementedError, ValueError, TypeError) as exc:
        if method == "function_calling":  # LangChain's generic implementation is tool calling
            try:
                return model.with_structured_output(schema, include_raw=True)
            except (NotImplementedError, ValueError, TypeError):
                pass
        raise MethodUnavailable(method) from exc


def ignored(method: str, raw: BaseMessage) -> bool:
    """Whether a reply ignores the output method: no tool call, or no JSON object at all."""
    if method == "function_calling":
        return not getattr(raw, "tool_calls", None) and "{" not in raw.text
    return "{" not in raw.text


async def send(
    model: BaseChatModel,
    method: str,
    policy: CallPolicy,
    call: Callable[[BaseChatModel], Awaitable[T]],
    *,
    estimate: int,
    spent: Callable[[T], int],
) -> T:
    """One request under the call policy; a parameter the server refuses is left out (and
    remembered) and the request sent again without it, never the same request twice. A refused
    output method is raised for the caller to fall back."""
    key = model_key(model)
    current = without(model, learned(key).dropped) or model
    while True:
        try:
            return await policy.call(
                partial(call, current), estimate=estimate, spent=spent, streamed=streams(current)
            )
        except Exception as exc:
            if method != "text" and refuses_method(exc, method):
                raise
            name = refused_parameter(exc, sent_parameters(current))
            if name is None:
                raise
            learn(key, dropped=name)
            smaller = without(current, [name])
            if smaller is None or smaller is current:
                raise
            current = smaller


async def _structured_once(
    model: BaseChatModel,
    messages: list[BaseMessage],
    policy: CallPolicy,
    schema: type[S],
    method: str,
    estimate: int,
) -> tuple[BaseMessage, S | None]:
    runnable = _runnable(model, schema, method)
    if method == "json_mode":
        messages = json_mode_messages(messages, schema)
    out: dict[str, Any] = await send(
        model,
        method,
        policy,
        lambda m: (runnable if m is model else _runnable(m, schema, method)).ainvoke(messages),
        estimate=estimate,
        spent=lambda o: usage_of(o["raw"]).total,
    )
    parsed = out.get("parsed")
    if isinstance(parsed, dict):
        try:
            parsed = schema.model_validate(parsed)
        except ValidationError:
            parsed = None
    return out["raw"], parsed if isinstance(parsed, schema) else None


async def answer(
    model: BaseChatModel,
    messages: list[BaseMessage],
    policy: CallPolicy,
    schema: type[S] | None,
    *,
    estimate: int,
    cap: int | None = None,
    usable: Callable[[str], bool] | None = None,
) -> Outcome[S]:
    """Ask a model, with structured output when `schema` is given (falling back as above);
    an OpenAI-compatible server is asked to stream (`planverify.llm.params.streaming`)."""
    model = streaming(with_cap(model, cap))
    outcome: Outcome[S] = Outcome()
    key = model_key(model)
    methods = learned(key).methods() if schema is not None else ["text"]
    for method in methods:
        if method == "text":
            reply = await send(
                model,
                "text",
                policy,
                lambda m: m.ainvoke(messages),
                estimate=estimate,
                spent=lambda r: usage_of(r).total,
            )
            outcome.replies.append(reply)
            if schema is not None:
                learn(key, worked="text")
            return outcome
        assert schema is not None
        try:
            raw, parsed = await _structured_once(model, messages, policy, schema, method, estimate)
        except MethodUnavailable:
            learn(key, failed=method)
            continue
        except Exception as exc:
            if not refuses_method(exc, method):
                raise
            learn(key, failed=method)
            continue
        outcome.replies.append(raw)
        if parsed is not None or not ignored(method, raw):
            learn(key, worked=method)
            outcome.parsed, outcome.method = parsed, method
            return outcome
        learn(key, failed=method)
        if usable is None or usable(raw.text):
            return outcome  # the text protocol, from a reply that ignored the method
    raise AssertionError("the text protocol is always tried")  # pragma: no cover
