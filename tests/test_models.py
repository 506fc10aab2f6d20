"""Model specs, presets and API keys: failures are immediate and name what to fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from planverify.agents import resolve_judge, resolve_planner
from planverify.llm.models import ModelSpecError, api_key, load_chat_model, parse_spec, presets

PAPER_JUDGES = {"o4-mini", "deepseek-r1", "gemini-2.5", "llama-4-scout"}


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY", "GROQ_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    monkeypatch.delenv("PLANVERIFY_PRESETS", raising=False)
    presets.cache_clear()


def test_the_paper_judges_are_presets_with_provider_specs() -> None:
    table = presets()
    assert set(table) >= PAPER_JUDGES
    for name in PAPER_JUDGES:
        spec = parse_spec(name)
        assert spec.provider in {"openai", "google_genai", "groq"}
        assert spec.model


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gpt-4o", "unknown model spec 'gpt-4o'"),
        ("anthropic:claude", "unknown provider 'anthropic'"),
        ("openai:", "unknown model spec"),
    ],
)
def test_bad_specs_say_what_to_use(spec: str, message: str) -> None:
    with pytest.raises(ModelSpecError, match=message):
        parse_spec(spec)


def test_base_url_only_with_openai() -> None:
    with pytest.raises(ModelSpecError, match=r"openai:\.\.\. specs only"):
        parse_spec("groq:llama", base_url="http://127.0.0.1:9/v1")


@pytest.mark.parametrize(
    ("spec", "variable"),
    [
        ("openai:gpt-x", "OPENAI_API_KEY"),
        ("google_genai:gemini-x", "GOOGLE_API_KEY or GEMINI_API_KEY"),
        ("groq:llama-x", "GROQ_API_KEY"),
        ("deepseek-r1", "DEEPSEEK_API_KEY"),
    ],
)
def test_a_missing_key_fails_at_once_naming_the_variable(spec: str, variable: str) -> None:
    with pytest.raises(ModelSpecError, match=f"needs an API key: set {variable}"):
        resolve_judge(spec)
    with pytest.raises(ModelSpecError, match=variable):
        resolve_planner(spec)


def test_a_local_openai_compatible_server_needs_no_key() -> None:
    spec = parse_spec("openai:qwen2.5-7b", base_url="http://127.0.0.1:9/v1")
    assert api_key(spec) is None
    model = load_chat_model(spec)  # constructing the client makes no request
    assert getattr(model, "openai_api_base", None) == "http://127.0.0.1:9/v1"


def test_keys_are_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    assert api_key(parse_spec("google_genai:gemini-x")) == "k"


def test_user_presets_override_and_extend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "presets.toml"
    path.write_text(
        '[presets.local]\nspec = "openai:qwen"\nbase_url = "http://127.0.0.1:9/v1"\n'
        '[presets.o4-mini]\nspec = "openai:o4-mini"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("PLANVERIFY_PRESETS", str(path))
    presets.cache_clear()
    assert parse_spec("local").base_url == "http://127.0.0.1:9/v1"
    assert parse_spec("o4-mini").model == "o4-mini"
    assert "gemini-2.5" in presets()


def test_a_missing_presets_file_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANVERIFY_PRESETS", "/nonexistent/presets.toml")
    presets.cache_clear()
    with pytest.raises(ModelSpecError, match="presets file not found"):
        parse_spec("o4-mini")


def test_offline_defaults_never_depend_on_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    from planverify.agents.baseline import BaselineJudge
    from planverify.agents.planner import RulesPlanner

    assert isinstance(resolve_judge("baseline"), BaselineJudge)
    assert isinstance(resolve_planner("rules"), RulesPlanner)
