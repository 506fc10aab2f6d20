"""What a served run may ask for: the operator's rules for runs of a LangGraph server.

A served run's settings come from whoever can reach the server, not from its operator, so they
never decide where the server's keys go or how hard it works (the command line and the Python
API are the operator's own process and are not held to these rules):

- **Model parameters.** A run may set only the model parameters (`model_params`) the operator
  allows: the sampling parameters of `planverify.llm.params.SAMPLING_PARAMS` (temperature,
  top_p, top_k, seed, stop, the output caps, the penalties), and the names listed in
  `PLANVERIFY_ALLOWED_MODEL_PARAMS` (comma-separated). Any other name is refused: whatever it
  looks like, a parameter may choose where a client sends the server's credentials
  (`vertexai` with `location`), set a key or a header, or replace the HTTP client.
- **Model servers.** A run may name a model server (`base_url`) only when the URL falls under a
  prefix of `PLANVERIFY_ALLOWED_BASE_URLS` (comma-separated `scheme://host:port/path`; none by
  default), and a preset that has its own key (`api_key_env`) sends it only to the preset's own
  URL.
- **Plan size.** `PLANVERIFY_MAX_ACTIONS` (default 2000): a run's plan may have at most this many
  actions.
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
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from planverify.graphs.context import SettingsError, VerifierContext
from planverify.llm.calls import Ceilings
from planverify.llm.models import presets
from planverify.llm.params import SAMPLING_PARAMS
from planverify.llm.servers import Prefix, plain_url
from planverify.records.redaction import SERVER_TOKEN_ENV, public_url

ALLOWED_ENV = "PLANVERIFY_ALLOWED_BASE_URLS"  # model servers runs may name
ALLOWED_PARAMS_ENV = "PLANVERIFY_ALLOWED_MODEL_PARAMS"  # model parameters beyond sampling ones
MAX_ACTIONS_ENV = "PLANVERIFY_MAX_ACTIONS"  # most actions in a run's plan
MAX_RPS_ENV = "PLANVERIFY_MAX_RPS"  # requests per second per provider, all runs together
MAX_TPM_ENV = "PLANVERIFY_MAX_TPM"  # tokens per minute per provider, all runs together
MAX_CONCURRENCY_ENV = "PLANVERIFY_MAX_CONCURRENCY"  # model calls in flight per provider
DEADLINE_ENV = "PLANVERIFY_RUN_DEADLINE_S"  # seconds a served run may take
TOKEN_ENV = SERVER_TOKEN_ENV  # the bearer token every request needs (planverify.runs.serving)
DEFAULT_MAX_CONCURRENCY = 8  # the command line's default `--concurrency`
DEFAULT_DEADLINE = 1800.0  # seconds
# The rules Judge and Planner take about a second on a plan of this many actions (up to 3 s on
# a plan shaped to take 5 passes): the longest plans of real data sets have a few hundred
DEFAULT_MAX_ACTIONS = 2000


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
    params: frozenset[str] = SAMPLING_PARAMS  # model parameters runs may set
    max_actions: int = DEFAULT_MAX_ACTIONS  # most actions in a run's plan
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
        extra = {name.strip() for name in env.get(ALLOWED_PARAMS_ENV, "").split(",")}
        return cls(
            allowed=tuple(allowed),
            params=SAMPLING_PARAMS | (extra - {""}),
            max_actions=_number(env, MAX_ACTIONS_ENV, int) or DEFAULT_MAX_ACTIONS,
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
        problems += [
            f"model_params.{name}: a served run sets only the model parameters this server "
            f"allows ({', '.join(sorted(self.params))}; the operator adds more with "
            f"{ALLOWED_PARAMS_ENV})"
            for name in context.model_params
            if name not in self.params
        ]
        if context.base_url is not None:
            if why := self.allows(context.base_url):
                problems.append(f"base_url: {why}")
            problems += _keyed_presets(context, context.base_url)
        if problems:
            raise PolicyError("\n".join(problems))
        return context.with_ceilings(self.ceilings)

    def check_size(self, actions: int) -> None:
        """`PolicyError` when a plan of this many actions is longer than a run may verify."""
        if actions > self.max_actions:
            raise PolicyError(
                f"actions: {actions} actions, more than this server verifies in one run "
                f"({self.max_actions}, {MAX_ACTIONS_ENV})"
            )


def _keyed_presets(context: VerifierContext, url: str) -> list[str]:
    """Problems of presets with their own key (`api_key_env`) that would follow the model server
    the run names: such a key goes only to the preset's own URL."""
    problems = []
    for role in ("judge", "planner"):
        spec = getattr(context, role)
        entry = presets().get(spec) if isinstance(spec, str) else None
        if not entry or not entry.get("api_key_env"):
            continue
        own = str(entry.get("base_url") or "")
        if url.rstrip("/") != own.rstrip("/"):
            where = f" ({own})" if own else ""
            problems.append(
                f"{role}: preset {spec!r} sends its key ({entry['api_key_env']}) only to its own "
                f"server{where}, not to {public_url(url)}"
            )
    return problems
