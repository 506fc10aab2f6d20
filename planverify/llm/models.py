"""Chat-model specs: `provider:model` strings and named presets, resolved with `init_chat_model`.

>>> parse_spec("openai:gpt-5.6-terra").provider
'openai'
>>> parse_spec("llama-4-scout").model
'meta-llama/llama-4-scout-17b-16e-instruct'
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from pydantic import SecretStr, ValidationError

from planverify.records.redaction import secret_variables

API_KEY_ENV: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "google_genai": ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
    "groq": ("GROQ_API_KEY",),
}
PRESETS_ENV = "PLANVERIFY_PRESETS"
secret_variables(*(name for names in API_KEY_ENV.values() for name in names))


class ModelSpecError(ValueError):
    """A model spec that cannot be used; the message says what to do."""


@dataclass(frozen=True)
class ModelSpec:
    """A resolved model spec."""

    provider: str  # LangChain provider name, e.g. "openai", "google_genai", "groq"
    model: str  # the provider's model id
    base_url: str | None = None  # OpenAI-compatible endpoint (vLLM, llama.cpp, Ollama, ...)
    api_key_env: str | None = None  # environment variable holding the key, if not the default
    preset: str | None = field(default=None, compare=False)  # the preset name it came from

    @property
    def name(self) -> str:
        """The `provider:model` string."""
        return f"{self.provider}:{self.model}"

    @property
    def described(self) -> str:
        """What the user typed and what it resolves to, for messages.

        >>> ModelSpec("openai", "gpt-x", preset="fast").described
        "preset 'fast' (openai:gpt-x)"
        """
        return f"preset {self.preset!r} ({self.name})" if self.preset else self.name


def _read_presets(path: Path | None) -> dict[str, dict[str, Any]]:
    text = (
        path.read_text(encoding="utf-8")
        if path is not None
        else resources.files("planverify.llm").joinpath("presets.toml").read_text(encoding="utf-8")
    )
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ModelSpecError(f"presets file {path}: {exc}") from None
    presets = data.get("presets", {})
    if not isinstance(presets, dict):
        raise ModelSpecError(f"presets file {path}: [presets] must be a table")
    return presets


@cache
def presets(user_file: str | None = None) -> dict[str, dict[str, Any]]:
    """The preset table: the shipped one, with the user's file (or $PLANVERIFY_PRESETS) over it."""
    table = _read_presets(None)
    user = user_file or os.environ.get(PRESETS_ENV)
    if user:
        path = Path(user)
        if not path.is_file():
            raise ModelSpecError(f"presets file not found: {path}")
        for name, entry in _read_presets(path).items():
            table[name] = {**table.get(name, {}), **entry}
    secret_variables(*(str(e["api_key_env"]) for e in table.values() if e.get("api_key_env")))
    return table


def parse_spec(
    spec: str,
    *,
    base_url: str | None = None,
    presets_file: str | None = None,
    offline: Sequence[str] = (),
) -> ModelSpec:
    """Resolve a preset name or a `provider:model` string into a `ModelSpec`; `offline` names
    the model-free agents the caller also accepts, for the message about a spec that is none
    of these."""
    table = presets(presets_file)
    entry = table.get(spec)
    if entry is not None:
        if "spec" not in entry:
            raise ModelSpecError(f"preset {spec!r} has no 'spec' entry")
        resolved = parse_spec(str(entry["spec"]), base_url=base_url or entry.get("base_url"))
        return ModelSpec(
            resolved.provider, resolved.model, resolved.base_url, entry.get("api_key_env"), spec
        )
    provider, sep, model = spec.partition(":")
    if not sep or not provider or not model:
        raise ModelSpecError(_unknown_spec(spec, sorted(table), offline))
    if provider not in API_KEY_ENV:
        raise ModelSpecError(
            f"unknown provider {provider!r} in {spec!r}: use one of "
            f"{', '.join(sorted(API_KEY_ENV))}, or openai with --base-url for an "
            "OpenAI-compatible server"
        )
    if base_url and provider != "openai":
        raise ModelSpecError(f"--base-url works with openai:... specs only, not {spec!r}")
    return ModelSpec(provider, model, base_url)


def _unknown_spec(spec: str, preset_names: list[str], offline: Sequence[str]) -> str:
    """The message for a spec that is no agent, preset or `provider:model`: the closest
    known name first, when one is close (`rule` for `rules`).

    >>> _unknown_spec("rule", ["o4-mini"], ("rules", "baseline"))
    "unknown model spec 'rule': did you mean 'rules'? Use rules or baseline (offline), a preset (o4-mini) or 'provider:model' (providers: google_genai, groq, openai)"
    """
    known = [*offline, *preset_names, *API_KEY_ENV]
    close = difflib.get_close_matches(spec.lower(), known, n=1, cutoff=0.6)
    guess = f"did you mean {close[0]!r}? " if close else ""
    options = [f"{' or '.join(offline)} (offline)"] if offline else []
    options.append(f"a preset ({', '.join(preset_names)})")
    options.append(f"'provider:model' (providers: {', '.join(sorted(API_KEY_ENV))})")
    return f"unknown model spec {spec!r}: {guess}Use {', '.join(options[:-1])} or {options[-1]}"


def api_key(spec: ModelSpec) -> str | None:
    """The API key for a spec; raise `ModelSpecError` naming the variable when it is unset.

    A local OpenAI-compatible server (a base URL without a key variable) needs no key.
    """
    names = (spec.api_key_env,) if spec.api_key_env else API_KEY_ENV[spec.provider]
    for name in names:
        if os.environ.get(name):
            return os.environ[name]
    if spec.base_url and not spec.api_key_env:
        return None
    raise ModelSpecError(f"{spec.described} needs an API key: set {' or '.join(names)}")


def load_chat_model(spec: ModelSpec, **kwargs: Any) -> BaseChatModel:
    """Create the chat model of a spec (checks the API key first); `ModelSpecError` with one
    line when the chat-model class refuses its parameters.

    The key goes in as a `SecretStr`: a validator that quotes the arguments (pydantic shows the
    input of a failed check) then shows `**********`, never the key."""
    from langchain.chat_models import init_chat_model

    key = api_key(spec)
    # planverify.llm.calls retries and times out every call; the client must not do it again
    options: dict[str, Any] = {"max_retries": 0, **kwargs}
    if spec.base_url:
        options["base_url"] = spec.base_url
        options["api_key"] = SecretStr(key or "not-needed")
    elif key is not None and spec.api_key_env:
        options["api_key"] = SecretStr(key)
    try:
        model: BaseChatModel = init_chat_model(spec.name, **options)
        return model
    except ImportError as exc:
        extra = {"openai": "openai", "google_genai": "google", "groq": "groq"}[spec.provider]
        raise ModelSpecError(
            f"{spec.name} needs its LangChain integration: pip install 'planverify[{extra}]' ({exc})"
        ) from None
    except (ValidationError, TypeError, ValueError) as exc:
        raise ModelSpecError(f"{spec.name} refuses its model parameters: {_refusal(exc)}") from None


def _refusal(exc: Exception) -> str:
    """What a chat-model class said about its parameters, in one line and without the values
    it was given (pydantic quotes them)."""
    if isinstance(exc, ValidationError):
        said = [
            ".".join(str(part) for part in error["loc"]) + ": " + error["msg"]
            if error["loc"]
            else error["msg"]
            for error in exc.errors(include_url=False, include_input=False)
        ]
    else:
        said = [str(exc)]
    return "; ".join(" ".join(text.split()) for text in said)
