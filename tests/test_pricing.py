"""Prices: the shipped table, user overrides merged key by key, unknown models as unpriced (never
free), cost per episode and the running totals the progress bar shows."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest

from planverify import verify_many
from planverify.llm.costs import PRICES_ENV, Price, Spend, cost_of, price_of, prices
from planverify.llm.models import ModelSpecError
from planverify.records.usage import TokenUsage

from .conftest import scripted

FINE = "ACTION: 1. Driver.Move(1.0)\nANNOTATION: fine"


@pytest.fixture(autouse=True)
def fresh_prices(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(PRICES_ENV, raising=False)
    prices.cache_clear()
    yield
    prices.cache_clear()


def override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> Path:
    path = tmp_path / "prices.toml"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setenv(PRICES_ENV, str(path))
    prices.cache_clear()
    return path


def test_the_shipped_table_is_dated_and_well_formed() -> None:
    text = resources.files("planverify.llm").joinpath("prices.toml").read_text(encoding="utf-8")
    assert "2026-11-22" in text
    table = tomllib.loads(text)["prices"]
    assert table and prices().keys() == table.keys()
    for price in prices().values():
        assert price.input > 0 and price.output > 0


def test_presets_specs_and_model_ids_find_the_same_price() -> None:
    expected = Price(2.50, 15.00)
    assert price_of("o4-mini") == price_of("openai:gpt-5.6-terra") == price_of("gpt-5.6-terra")
    assert price_of("gpt-5.6-terra") == expected
    usage = TokenUsage(calls=2, input_tokens=2_000_000, output_tokens=100_000)
    assert cost_of(usage, "o4-mini") == pytest.approx(2 * 2.50 + 0.1 * 15.00)


def test_unknown_models_cost_unknown_not_zero() -> None:
    assert price_of("openai:some-new-model") is None
    assert cost_of(TokenUsage(calls=1, input_tokens=10), "openai:some-new-model") is None
    assert cost_of(TokenUsage(), "rules") is None  # no price, even for nothing


def test_an_override_merges_key_by_key_and_adds_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    override(
        tmp_path,
        monkeypatch,
        '[prices."gpt-5.6-terra"]\noutput = 12.0\n\n[prices."qwen2.5-7b"]\ninput = 0\noutput = 0\n',
    )
    assert price_of("o4-mini") == Price(2.50, 12.0)  # input kept from the shipped table
    assert cost_of(TokenUsage(calls=1, input_tokens=10**6), "openai:qwen2.5-7b") == 0.0
    assert price_of("llama-4-scout") == Price(0.11, 0.34)  # untouched


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[prices."m"]\ninput = 1.0\n', "'m' needs output"),
        ('[prices."m"]\ninput = "cheap"\noutput = 1.0\n', "'m' needs input"),
        ('[prices."m"]\ninput = -1.0\noutput = 1.0\n', "'m' needs input"),
        ("[prices]\nm = 3\n", "entries must be tables"),
        ("[prices.m\n", "price table"),
    ],
)
def test_a_bad_override_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, message: str
) -> None:
    path = override(tmp_path, monkeypatch, text)
    with pytest.raises(ModelSpecError, match=message) as caught:
        prices()
    assert str(path) in str(caught.value)


def test_a_missing_override_file_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PRICES_ENV, str(tmp_path / "nowhere.toml"))
    with pytest.raises(ModelSpecError, match="price table not found"):
        prices()


def test_spend_totals_tokens_and_cost_and_names_what_has_no_price() -> None:
    spend = Spend({"judge": "o4-mini", "planner": "openai:mystery", "goal": "openai:mystery"})
    assert spend.describe() == "$0.00"
    for _ in range(3):
        spend.add(
            {
                "judge": TokenUsage(calls=2, input_tokens=100_000, output_tokens=10_000),
                "goal": TokenUsage(),  # no tokens spent: nothing to price
            }
        )
    assert spend.tokens == 330_000 and not spend.unpriced
    assert spend.cost == pytest.approx(3 * (0.1 * 2.50 + 0.01 * 15.00))
    assert spend.describe() == "$1.20"
    spend.add({"planner": TokenUsage(calls=1, input_tokens=500, output_tokens=50)})
    assert spend.tokens == 330_550 and spend.unpriced == {"openai:mystery"}
    assert spend.describe() == "$1.20 + unpriced (openai:mystery)"


def test_cost_per_episode_adds_up_to_the_batch_total(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    override(tmp_path, monkeypatch, "[prices.ScriptedChatModel]\ninput = 3.0\noutput = 20.0\n")
    episodes = [{"id": f"e{n}", "goal": "Walk.", "actions": ["Driver.Move(1.0)"]} for n in range(4)]
    results = verify_many(episodes, judge=scripted(*[FINE] * 4), concurrency=2)
    per_episode = (10 * 3.0 + 5 * 20.0) / 1e6  # the fake reports 10 tokens in, 5 out
    assert [r.cost_usd for r in results] == [pytest.approx(per_episode)] * 4
    total = Spend({"judge": "ScriptedChatModel"})
    for result in results:
        total.add(result.usage)
    assert total.tokens == 4 * 15 and total.cost == pytest.approx(4 * per_episode)
