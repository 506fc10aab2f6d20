"""Request parameters that make model calls reproducible: temperature, seed and an output cap.

Defaults: temperature 0 and a fixed seed (for providers whose LangChain integration takes one:
OpenAI and OpenAI-compatible servers, Groq, Google). Each call's output is capped by the size of
what it answers about: `answer_cap(n) = CAP_BASE + CAP_PER_STEP * n` tokens for a plan of n
steps (n dialogue lines when inferring a goal), about twice what a full answer in the text
protocol takes. Reasoning models are different: they take only their default temperature, and
their hidden reasoning counts against the cap, so neither is sent to them. `--temperature` and
`--model-param KEY=VALUE` override all of this; a `max_tokens` given there replaces the cap.

A server that refuses a parameter (a 400 naming it) gets the request again without it, and the
refusal is remembered (`planverify.llm.capability`).

OpenAI-compatible servers (a chat model with a base URL) are asked to stream their answers, with
token usage in the last chunk (`stream`, `stream_options.include_usage`): `planverify.llm.calls`
then times a call by its progress, and can close a stream it gives up on. Both are parameters
like the others: a server that refuses one gets the request without it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel

from planverify.llm.models import ModelSpec, presets

TEMPERATURE = 0.0  # default sampling temperature
SEED = 1234  # default seed
CAP_BASE = 512  # output tokens every call may use
CAP_PER_STEP = 96  # and per step of the plan it answers about
CAP_RULE = f"{CAP_BASE}+{CAP_PER_STEP}/step"  # the cap's formula, as the run settings show it
SEEDED = frozenset({"openai", "groq", "google_genai"})  # integrations that send a seed
# Parameters that only shape how the answer is sampled, in the spellings of the integrations
# planverify uses (OpenAI and compatible servers, Groq, Google): whatever their value, they
# name no server, key, header or client, and cost at most the tokens of one answer. What a
# served run may set unless its operator allows more (`planverify.graphs.policy`).
SAMPLING_PARAMS = frozenset(
    {
        "temperature",
        "top_p",
        "top_k",
        "seed",
        "stop",
        "max_tokens",
        "max_output_tokens",
        "max_completion_tokens",
        "frequency_penalty",
        "presence_penalty",
    }
)
# o1, o3, o4-mini, gpt-5 (not gpt-5-chat), DeepSeek-R1 and its reasoner successors, QwQ,
# thinking Gemini models (2.5 and later), anything named "thinking" or "reasoner"
_REASONING = re.compile(
    r"^o\d+(?:-|$)|^gpt-5(?!.*chat)|deepseek-(?:r1|reasoner|v4)|qwq|thinking|reason|"
    r"gemini-(?:2\.5|[3-9])",
    re.I,
)


def reasoning(spec: ModelSpec) -> bool:
    """Whether a model reasons before it answers (a preset's `reasoning` entry, else its id)."""
    for entry in presets().values():
        if entry.get("spec") == spec.name and "reasoning" in entry:
            return bool(entry["reasoning"])
    return _REASONING.search(spec.model.rsplit("/", 1)[-1]) is not None


def parse_param(text: str) -> tuple[str, Any]:
    """`KEY=VALUE` from `--model-param`: the value as JSON when it parses, else as a string."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"--model-param takes KEY=VALUE, not {text!r}")
    try:
        return key.strip(), json.loads(value)
    except json.JSONDecodeError:
        return key.strip(), value


def parse_params(items: Iterable[str] | None) -> dict[str, Any]:
    """The `--model-param` options of a command, by name (a repeated name: the last value)."""
    return dict(parse_param(item) for item in items or ())


@dataclass(frozen=True)
class ModelOptions:
    """The user's overrides of the request parameters (hashable: it keys cached agents)."""

    temperature: float | None = None  # None: the default (0; the model's own when reasoning)
    params: tuple[tuple[str, str], ...] = ()  # extra parameters, (name, value as JSON)

    @classmethod
    def of(cls, temperature: float | None, params: Mapping[str, Any] | None) -> ModelOptions:
        """Options from a temperature and a parameter mapping."""
        pairs = tuple(sorted((str(k), json.dumps(v)) for k, v in (params or {}).items()))
        return cls(temperature, pairs)

    def extra(self) -> dict[str, Any]:
        """The extra parameters."""
        return {k: json.loads(v) for k, v in self.params}


@dataclass(frozen=True)
class Tuning:
    """The request parameters of one model: what it is created with, and its per-call cap."""

    sent: dict[str, Any]  # parameters the model is created with
    capped: bool  # whether each call's output is capped by `answer_cap`

    def settings(self) -> dict[str, Any]:
        """The parameters as run settings record them."""
        return {**self.sent, "max_tokens": CAP_RULE} if self.capped else dict(self.sent)

    def cap(self, steps: int) -> int | None:
        """The output cap of a call about `steps` steps (None: no cap)."""
        return CAP_BASE + CAP_PER_STEP * max(steps, 0) if self.capped else None


def tuning(spec: ModelSpec, options: ModelOptions | None = None) -> Tuning:
    """The request parameters of a spec under the user's options."""
    options = options or ModelOptions()
    thinks = reasoning(spec)
    sent: dict[str, Any] = {}
    if options.temperature is not None:
        sent["temperature"] = options.temperature
    elif not thinks:
        sent["temperature"] = TEMPERATURE
    if spec.provider in SEEDED:
        sent["seed"] = SEED
    extra = options.extra()
    sent.update(extra)
    return Tuning(sent, capped=not thinks and "max_tokens" not in extra)


def init_options(spec: ModelSpec, tuned: Tuning) -> dict[str, Any]:
    """`tuned.sent` as keyword arguments of the spec's chat-model class."""
    options = dict(tuned.sent)
    if spec.provider == "groq" and "seed" in options:  # ChatGroq has no seed field
        options["model_kwargs"] = {**options.get("model_kwargs", {}), "seed": options.pop("seed")}
    return options


def _fields(model: BaseChatModel) -> dict[str, Any]:
    return type(model).model_fields


def with_cap(model: BaseChatModel, tokens: int | None) -> BaseChatModel:
    """The model with its output capped at `tokens` for one call (unchanged for None).

    An OpenAI-compatible server gets `max_tokens` (what llama.cpp, vLLM and Ollama read), OpenAI
    itself `max_completion_tokens` (what ChatOpenAI sends for `max_tokens`)."""
    if tokens is None:
        return model
    fields = _fields(model)
    if getattr(model, "openai_api_base", None) and "extra_body" in fields:
        body = {**(getattr(model, "extra_body", None) or {}), "max_tokens": tokens}
        return model.model_copy(update={"extra_body": body})
    for name in ("max_tokens", "max_output_tokens"):
        if name in fields:
            return model.model_copy(update={name: tokens})
    return model


# request parameters that are switches of the chat-model class: (field, value that drops it)
_SWITCHES = {"stream": ("streaming", False), "stream_options": ("stream_usage", False)}


def streaming(model: BaseChatModel) -> BaseChatModel:
    """The model asking for streamed answers with token usage, when it talks to an
    OpenAI-compatible server (unchanged otherwise); `planverify.llm.calls` times the stream, so the
    class's own chunk timeout is switched off."""
    fields = _fields(model)
    if not getattr(model, "openai_api_base", None) or not {"streaming", "stream_usage"} <= set(
        fields
    ):
        return model
    update: dict[str, Any] = {"streaming": True, "stream_usage": True}
    if "stream_chunk_timeout" in fields:
        update["stream_chunk_timeout"] = None
    return model.model_copy(update=update)


def streams(model: BaseChatModel) -> bool:
    """Whether the model streams its answers (`streaming` above)."""
    return getattr(model, "streaming", None) is True


def sent_parameters(model: BaseChatModel) -> list[str]:
    """The parameters a model sends that a server might refuse (and could do without)."""
    names = [name for name, (field, _) in _SWITCHES.items() if getattr(model, field, None)]
    names += [
        name
        for name in ("temperature", "seed", "max_tokens", "max_output_tokens", "top_p")
        if name in _fields(model) and getattr(model, name, None) is not None
    ]
    for attr in ("model_kwargs", "extra_body"):
        names += list(getattr(model, attr, None) or {})
    return [("max_tokens" if n == "max_output_tokens" else n) for n in dict.fromkeys(names)]


def without(model: BaseChatModel, names: Iterable[str]) -> BaseChatModel | None:
    """The model without the named parameters; None when one cannot be left out."""
    update: dict[str, Any] = {}
    fields = _fields(model)
    for name in names:
        if name in _SWITCHES:
            switch, off = _SWITCHES[name]
            if switch in fields:
                update[switch] = off
            continue
        for attr in ("model_kwargs", "extra_body"):
            table = update.get(attr, getattr(model, attr, None)) or {}
            if name in table:
                update[attr] = {k: v for k, v in table.items() if k != name}
        for field_name in (name, "max_output_tokens") if name == "max_tokens" else (name,):
            if field_name in fields and getattr(model, field_name, None) is not None:
                if fields[field_name].default is not None:
                    return None  # the class would send its own default instead
                update[field_name] = None
    return model.model_copy(update=update) if update else model
