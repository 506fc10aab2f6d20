"""Episodes take turns on the event loop: CPU work runs uninterrupted, waits overlap."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver

from planverify.agents.base import JudgeReply
from planverify.api import Verifier, averify_many, open_checkpointer
from planverify.eventloop.turns import Turns, waiting
from planverify.llm.concurrency import gate_for
from planverify.records.critique import Critique
from planverify.records.episode import Episode, Scene

from .conftest import COFFEE_PLAN, ScriptedChatModel


async def test_work_between_waits_is_not_interleaved() -> None:
    turns = Turns()
    events: list[str] = []

    async def episode(name: str) -> None:
        async with turns.hold():
            events.append(f"{name} start")
            await asyncio.sleep(0)  # a yield that is not a wait: the turn is kept
            events.append(f"{name} before wait")
            async with waiting():
                await asyncio.sleep(0.01)
            events.append(f"{name} end")

    await asyncio.gather(episode("a"), episode("b"))
    assert events[:3] == ["a start", "a before wait", "b start"]
    assert events.index("b before wait") == events.index("b start") + 1
    assert sorted(events) == sorted(
        f"{n} {e}" for n in "ab" for e in ("start", "before wait", "end")
    )


async def test_turns_are_handed_out_first_come_first_served() -> None:
    turns = Turns()
    order: list[int] = []

    async def episode(n: int) -> None:
        async with turns.hold():
            async with waiting():
                await asyncio.sleep(0.002 * n)  # waits end in the order 0, 1, 2, ...
            order.append(n)

    await asyncio.gather(*(episode(n) for n in reversed(range(6))))
    assert order == list(range(6))


async def test_an_error_gives_the_turn_back() -> None:
    turns = Turns()

    async def failing() -> None:
        async with turns.hold():
            raise ValueError("boom")

    with pytest.raises(ValueError):
        await failing()
    async with asyncio.timeout(1):
        async with turns.hold():
            pass
    assert not turns.lock.locked()


async def test_waiting_outside_a_turn_does_nothing() -> None:
    async with waiting():
        await asyncio.sleep(0)


class SlowJudge(ScriptedChatModel):
    """Answers "nothing to remove" after a pause, and records how many calls overlapped."""

    in_flight: int = 0
    most: int = 0

    async def _agenerate(self, messages: list[BaseMessage], *args: Any, **kw: Any) -> ChatResult:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        # long enough that the few milliseconds an episode computes before its call never
        # end the first calls before the last start, even on a busy machine
        await asyncio.sleep(0.3)
        self.in_flight -= 1
        return ChatResult(generations=[ChatGeneration(message=AIMessage("ANNOTATION: needed"))])


async def test_model_calls_overlap_while_episodes_take_turns() -> None:
    judge = SlowJudge(messages=iter(()), prompts=[])
    # the adaptive limit on calls in flight starts at its cap here (tests/test_adaptive.py
    # covers how it gets there)
    gate_for("SlowJudge", 8).estimator.limit = 8
    episodes = [Episode(id=f"e{n}", goal="Coffee.", actions=COFFEE_PLAN) for n in range(8)]
    results = await averify_many(episodes, judge=judge, concurrency=8)
    assert [r.status for r in results] == ["ok"] * 8
    assert judge.most == 8, "a model call gives the turn up, so every episode's call overlaps"


class NetworkSaver(InMemorySaver):
    """Stands for a saver whose puts wait on a server (PostgreSQL)."""


class CustomJudge:
    name = "custom"

    async def ajudge(self, goal: str, plan: Sequence[str], scene: Scene | None) -> JudgeReply:
        return JudgeReply(Critique())


def test_only_known_agents_and_quiet_savers_take_turns() -> None:
    assert Verifier().takes_turns
    assert Verifier(checkpointer=InMemorySaver()).takes_turns
    assert not Verifier(judge=CustomJudge()).takes_turns  # its waits may keep the turn
    assert not Verifier(reviewer=lambda _: True).takes_turns  # waits on a person
    assert not Verifier(checkpointer=NetworkSaver()).takes_turns  # its puts wait on I/O


async def test_the_savers_opened_for_a_path_or_url_take_turns(tmp_path: Path) -> None:
    async with open_checkpointer(tmp_path / "cp.sqlite") as saver:
        assert Verifier(checkpointer=saver).takes_turns
    postgres = pytest.importorskip("planverify.stores.postgres")
    assert postgres.BatchedPostgresSaver.takes_turns
