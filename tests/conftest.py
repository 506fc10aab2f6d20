"""Shared test helpers: fake chat models (no network) and paths to the shared data."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable, RunnableLambda
from pydantic import BaseModel

from planverify.agents import rules as rules_module
from planverify.agents.rules import RulesJudge

# Shared 2-core machines run the suite: no per-example deadline, no "slow input" failures.
settings.register_profile("planverify", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("planverify")

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


@contextmanager
def benchmark_script(name: str) -> Iterator[ModuleType]:
    """`benchmarks/NAME.py`, imported from its file (benchmarks/ is no package) with the scripts
    beside it importable, and registered under its name while in use (a dataclass in it looks
    its module up)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(ROOT / "benchmarks"))
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        patch.setitem(sys.modules, name, module)
        spec.loader.exec_module(module)
        yield module


# A coffee plan with a move undone by the next one: the offline defaults remove that pair.
COFFEE_PLAN = [
    "Driver.PickUp('Mug')",
    "Driver.Move(1.0)",
    "Driver.Move(-1.0)",
    "Driver.PutAOnB('Mug', 'CoffeeMachine')",
    "Driver.ToggleOn('CoffeeMachine')",
]
COFFEE_REFINED = [COFFEE_PLAN[0], COFFEE_PLAN[3], COFFEE_PLAN[4]]


class ScriptedChatModel(GenericFakeChatModel):
    """A fake chat model that answers with scripted texts, in order, and records every prompt.

    Each reply reports token usage (10 in, 5 out) so usage accounting can be checked.
    """

    prompts: list[list[BaseMessage]] = []

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.prompts.append(list(messages))
        result = super()._generate(messages, *args, **kwargs)
        message = result.generations[0].message
        if isinstance(message, AIMessage):
            message.usage_metadata = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
        return result


def scripted(*replies: str | AIMessage) -> ScriptedChatModel:
    """A `ScriptedChatModel` answering with `replies` in order (it fails when they run out)."""
    messages: Iterator[str | AIMessage] = iter(replies)
    return ScriptedChatModel(messages=messages, prompts=[])


class StructuredFake(ScriptedChatModel):
    """A scripted model that also supports `with_structured_output(schema, include_raw=True)`.

    Each scripted reply is either a dict (parsed into the schema) or a string (the parse fails
    and the raw text is returned, as providers do when the model ignores the schema).
    """

    structured: list[Any] = []
    answered: int = 0  # structured replies used so far, across calls

    def with_structured_output(
        self, schema: Any, *, include_raw: bool = False, **kwargs: Any
    ) -> Runnable[Any, Any]:
        def answer(messages: Sequence[BaseMessage]) -> dict[str, Any]:
            self.prompts.append(list(messages))
            reply = self.structured[self.answered]  # IndexError when the script runs out
            self.answered += 1
            raw = AIMessage(
                content=reply if isinstance(reply, str) else "",
                usage_metadata={"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
            )
            parsed: BaseModel | None = None
            if isinstance(reply, dict):
                parsed = schema.model_validate(reply)
            return {"raw": raw, "parsed": parsed, "parsing_error": None}

        return RunnableLambda(answer)


def structured(*replies: dict[str, Any] | str) -> StructuredFake:
    """A `StructuredFake` with the given structured replies."""
    return StructuredFake(messages=iter(()), prompts=[], structured=list(replies))


@pytest.fixture
def shared_dir() -> Path:
    """The shared data directory next to the repository; skips the test when absent."""
    if not SHARED.is_dir():
        pytest.skip(f"shared data not found at {SHARED} (it sits next to the repository checkout)")
    return SHARED


class ForgetfulRulesJudge(RulesJudge):
    """The rules Judge without its memo of the plans it repaired."""

    def _recall(self, key: str) -> frozenset[int] | None:
        return None


@pytest.fixture
def reviews(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per review the rules Judge runs (its simulations, not its memo's answers)."""
    calls: list[int] = []
    real = rules_module.review

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(rules_module, "review", counted)
    return calls
