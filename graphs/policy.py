"""What a served run may ask for: the operator's rules for runs of a LangGraph server.

A served run's settings come from whoever can reach the server, not from its operator, so they
never decide where the server's keys go or how hard it works (the command line and the Python
API are the operator's own process and are not held to these rules):

- **Model servers.** A run may name a model server (`base_url`, or a model parameter naming
  one: `base_url`, `api_base`, `azure_endpoint`, a proxy) only when the URL falls under a
  prefix of `PLANVERIFY_ALLOWED_BASE_URLS` (comma-separated `scheme://host:port/path`; none by
  default). Model parameters that set a key, a header, credentials or an HTTP client
  (`api_key`, `default_headers`, `http_client`, ...) are refused outright, and a preset that
  has its own key (`api_key_env`) sends it only to the preset's own URL.
- **Ceilings.** `PLANVERIFY_MAX_RPS`, `PLANVERIFY_MAX_TPM` and `PLANVERIFY_MAX_CONCURRENCY`
  (default 8) cap the model calls of each provider for all runs together; a run asking for
  more gets the ceiling, one asking for less keeps its own lower limit too. A model server
  under an allow-list entry is one provider, however the run spells its URL.
- **Deadline.** `PLANVERIFY_RUN_DEADLINE_S` (default 1800): a run still going after that many
  seconds ends as an error record (`planverify.graphs.served`).

A run that breaks a rule is refused before any model call, with one line per problem.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from planverify.graphs.context import SettingsError, VerifierContext
from planverify.llm.calls import Ceilings
from planverify.llm.models import presets
from planverify.llm.servers import Prefix, plain_url
from planverify.records.redaction import SECRET_WORDS, name_words, public_url

ALLOWED_ENV = "PLANVERIFY_ALLOWED_BASE_URLS"  # model servers runs may name
MAX_RPS_ENV = "PLANVERIFY_MAX_RPS"  # requests per second per provider, all runs together
MAX_TPM_ENV = "PLANVERIFY_MAX_TPM"  # tokens per minute per provider, all runs together
MAX_CONCURRENCY_ENV = "PLANVERIFY_MAX_CONCURRENCY"  # model calls in flight per provider
DEADLINE_ENV = "PLANVERIFY_RUN_DEADLINE_S"  # seconds a served run may take
TOKEN_ENV = (
    "PLANVERIFY_SERVER_TOKEN"  # the bearer token every request needs (planverify.runs.serving)
)
DEFAULT_MAX_CONCURRENCY = 8  # the command line's default `--concurrency`
DEFAULT_DEADLINE = 1800.0  # seconds

# Model parameters naming a server (allowed when the URL is), and those never taken from a run.
ENDPOINT_WORDS = frozenset({"url", "uri", "base", "endpoint", "host", "proxy", "proxies"})
REFUSED_WORDS = SECRET_WORDS | {"client", "organization"}


class PolicyError(SettingsError):
    """A served run asks for what the server's operator does not allow (one line per problem)."""


def _number(environ: Mapping[str, str], name: str, kind: type[float] | type[int]) -> Any:
    """A positive number from the environment, or None when unset."""
    text = environ.get(name, "").strip()
    if not text:
        return None
    try:
        value = kind(text)
    except ValueError:
        raise SettingsError(f"{name}={text!r} is not a {kind.__name__}") from None
    if not value > 0 or value == float("inf"):
        raise SettingsError(f"{name}={text!r} must be a positive number")
    return value


@dataclass(frozen=True)
class ServingPolicy:
    """The operator's rules for served runs (read from the server's environment)."""

    allowed: tuple[Prefix, ...] = ()  # model servers runs may name
    ceilings: Ceilings = field(
        default_factory=lambda: Ceilings(concurrency=DEFAULT_MAX_CONCURRENCY)
    )
    deadline: float = DEFAULT_DEADLINE  # seconds a run may take

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ServingPolicy:
        """The rules the environment sets; `SettingsError` naming the variable when one of them
        cannot be read (every run is then refused: the server never runs without its limits)."""
        env = os.environ if environ is None else environ
        allowed = []
        for entry in (e.strip() for e in env.get(ALLOWED_ENV, "").split(",")):
            if not entry:
                continue
            try:
                allowed.append(Prefix.parse(entry))
            except ValueError as exc:
                raise SettingsError(f"{ALLOWED_ENV}: {public_url(entry)!r}: {exc}") from None
        concurrency = _number(env, MAX_CONCURRENCY_ENV, int)
        return cls(
            allowed=tuple(allowed),
            ceilings=Ceilings(
                rps=_number(env, MAX_RPS_ENV, float),
                tpm=_number(env, MAX_TPM_ENV, int),
                concurrency=DEFAULT_MAX_CONCURRENCY if concurrency is None else concurrency,
                servers=tuple(allowed),
            ),
            deadline=_number(env, DEADLINE_ENV, float) or DEFAULT_DEADLINE,
        )

    def allows(self, url: str) -> str | None:
        """Why a run may not name this model server (None when it may)."""
        try:
            parsed = plain_url(url)
        except ValueError as exc:
            return f"{public_url(url)} is refused: {exc}"
        if not any(prefix.covers(parsed) for prefix in self.allowed):
            return (
                f"{public_url(url)} is not an allowed model server on this server ({ALLOWED_ENV})"
            )
        return None

    def admit(self, context: VerifierContext) -> VerifierContext:
        """The run's settings under these rules; `PolicyError` (one line per problem) when they
        break one, before any model is called."""
        problems = [
            f"{role}: a served run takes a spec string (a preset or provider:model)"
            for role in ("judge", "planner")
            if not isinstance(getattr(context, role), str)
        ]
        named: list[tuple[str, str]] = []  # (where, URL) of every model server the run names
        if context.base_url is not None:
            named.append(("base_url", context.base_url))
        refused: list[str] = []
        for where, value in _parameters(context.model_params, "model_params"):
            words = name_words(where.rsplit(".", 1)[-1])
            if any(where.startswith(f"{parent}.") for parent in refused):
                continue  # inside a parameter already refused
            if words & REFUSED_WORDS:
                refused.append(where)
                problems.append(
                    f"{where}: a served run cannot set keys, headers, credentials or clients"
                )
            elif words & ENDPOINT_WORDS:
                if isinstance(value, str):
                    named.append((where, value))
                else:
                    problems.append(f"{where}: give a model server as an http(s) URL")
        problems += [f"{where}: {why}" for where, url in named if (why := self.allows(url))]
        problems += _keyed_presets(context, [url for _, url in named])
        if problems:
            raise PolicyError("\n".join(problems))
        return context.with_ceilings(self.ceilings)


def _parameters(params: Mapping[str, Any], where: str) -> Iterator[tuple[str, Any]]:
    """Every (dotted name, value) of the model parameters, nested mappings included."""
    for name, value in params.items():
        path = f"{where}.{name}"
        yield path, value
        if isinstance(value, Mapping):
            yield from _parameters(value, path)


def _keyed_presets(context: VerifierContext, urls: list[str]) -> list[str]:
    """Problems of presets with their own key (`api_key_env`) that would follow a model server
    the run names: such a key goes only to the preset's own URL."""
    problems = []
    for role in ("judge", "planner"):
        spec = getattr(context, role)
        entry = presets().get(spec) if isinstance(spec, str) else None
        if not entry or not entry.get("api_key_env"):
            continue
        own = str(entry.get("base_url") or "")
        where = f" ({own})" if own else ""
        problems += [
            f"{role}: preset {spec!r} sends its key ({entry['api_key_env']}) only to its own "
            f"server{where}, not to {public_url(url)}"
            for url in urls
            if url.rstrip("/") != own.rstrip("/")
        ]
    return problems
