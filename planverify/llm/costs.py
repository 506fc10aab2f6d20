"""What model tokens cost: a price table by model id (shipped, overridable) and running totals.

>>> price_of("llama-4-scout").input
0.11
>>> round(cost_of(TokenUsage(input_tokens=1_000_000, output_tokens=100_000), "openai:gpt-5.6-terra"), 2)
4.0
>>> cost_of(TokenUsage(input_tokens=5), "openai:some-new-model") is None
True
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path

from planverify.llm.models import ModelSpecError, presets
from planverify.records.usage import TokenUsage, unknown_note

PRICES_ENV = "PLANVERIFY_PRICES"


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float  # prompt tokens
    output: float  # completion tokens


def _read(text: str, where: str) -> dict[str, dict[str, object]]:
    try:
        table = tomllib.loads(text).get("prices", {})
    except tomllib.TOMLDecodeError as exc:
        raise ModelSpecError(f"price table {where}: {exc}") from None
    if not isinstance(table, dict) or not all(isinstance(v, dict) for v in table.values()):
        raise ModelSpecError(f"price table {where}: [prices.MODEL] entries must be tables")
    return table


def _price(name: str, entry: dict[str, object], where: str) -> Price:
    values = []
    for key in ("input", "output"):
        value = entry.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ModelSpecError(
                f"price table {where}: {name!r} needs {key} = USD per million tokens (>= 0)"
            )
        values.append(float(value))
    return Price(*values)


@cache
def prices(user_file: str | None = None) -> dict[str, Price]:
    """The shipped price table with the user's file (or $PLANVERIFY_PRICES) over it, merged
    entry by entry and key by key (an override may give only `output`)."""
    shipped = resources.files("planverify.llm").joinpath("prices.toml").read_text(encoding="utf-8")
    table = _read(shipped, "prices.toml")
    where = dict.fromkeys(table, "prices.toml")
    user = user_file or os.environ.get(PRICES_ENV)
    if user:
        path = Path(user)
        if not path.is_file():
            raise ModelSpecError(f"price table not found: {path}")
        for name, entry in _read(path.read_text(encoding="utf-8"), str(path)).items():
            table[name] = {**table.get(name, {}), **entry}
            where[name] = str(path)
    return {name: _price(name, entry, where[name]) for name, entry in table.items()}


def model_id(name: str) -> str:
    """The provider's model id behind a preset name, a `provider:model` spec or a bare id."""
    entry = presets().get(name)
    if entry and "spec" in entry:
        name = str(entry["spec"])
    return name.split(":", 1)[1] if ":" in name else name


def price_of(name: str) -> Price | None:
    """The price of a model, or None when the table does not know it."""
    table = prices()
    return table.get(name) or table.get(model_id(name))


def cost_of(usage: TokenUsage, name: str) -> float | None:
    """USD for the tokens, or None for an unknown model."""
    price = price_of(name)
    if price is None:
        return None
    return (usage.input_tokens * price.input + usage.output_tokens * price.output) / 1e6


@dataclass
class Spend:
    """Tokens and cost so far, across a batch; roles map to the models that played them."""

    models: dict[str, str]  # role ("judge", "planner", "goal") -> model name
    tokens: int = 0  # all tokens so far
    cost: float = 0.0  # USD for the tokens of known models
    unpriced: set[str] = field(default_factory=set)  # models without a price
    unknown_calls: int = 0  # calls that timed out: tokens and cost are lower bounds

    def add(self, usage: dict[str, TokenUsage]) -> None:
        """Count one episode's usage."""
        for role, spent in usage.items():
            self.tokens += spent.total
            self.unknown_calls += spent.unknown_calls
            name = self.models.get(role, role)
            value = cost_of(spent, name)
            if value is None and spent.total:
                self.unpriced.add(name)
            self.cost += value or 0.0

    def describe(self) -> str:
        """`$1.23`, with a note when some tokens have no price."""
        text = f"${self.cost:.2f}"
        if self.unpriced:
            text += f" + unpriced ({', '.join(sorted(self.unpriced))})"
        if note := unknown_note(self.unknown_calls):
            text += f" ({note})"
        return text
