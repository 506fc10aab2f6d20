"""Checkpoints: every pass is recorded, finished episodes are not redone, interrupted ones resume,
other settings get other threads; the verifier also runs as a subgraph. Parametrized over savers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel, Field

from planverify import averify_many, verify_many
from planverify.agents.base import JudgeReply
from planverify.api import Verifier, open_checkpointer, thread_id
from planverify.graphs.context import VerifierContext
from planverify.graphs.graph import build_verifier
from planverify.records.critique import Critique, Flag
from planverify.records.episode import Episode, Scene
from planverify.stores.checkpoints import episode_threads, load_history
from planverify.stores.serde import state_serializer

GOAL = "Make a mug of coffee."
PLAN = [
    "Driver.PickUp('Mug')",
    "Driver.Move(1.0)",
    "Driver.Move(2.0)",
    "Driver.PutAOnB('Mug', 'CoffeeMachine')",
]
EPISODE = Episode(id="ep-1", goal=GOAL, actions=PLAN)


class MoveHater:
    """A Judge that flags the first Move, and can be told to crash on a given call."""

    name = "move-hater"

    def __init__(self, crash_on: int | None = None) -> None:
        self.calls = 0
        self.crash_on = crash_on

    async def ajudge(self, goal: str, plan: Sequence[str], scene: Scene | None) -> JudgeReply:
        self.calls += 1
        if self.calls == self.crash_on:
            raise RuntimeError("the judge service went away")
        moves = [i for i, line in enumerate(plan) if ".Move(" in line]
        flags = [Flag(step=moves[0], action=plan[moves[0]], reason="not needed")] if moves else []
        return JudgeReply(Critique(flags=flags))


@pytest.fixture(params=["memory", "sqlite"])
async def saver(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    if request.param == "memory":
        yield InMemorySaver(serde=state_serializer())
        return
    async with open_checkpointer(tmp_path / "checkpoints.sqlite") as sqlite:
        assert sqlite is not None
        yield sqlite


async def test_every_judge_pass_is_in_the_state_history(saver: BaseCheckpointSaver[Any]) -> None:
    verifier = Verifier(judge=MoveHater(), checkpointer=saver)
    result = await verifier.averify(EPISODE)
    assert (result.iterations, result.refined) == (3, [PLAN[0], PLAN[3]])
    history = [s async for s in verifier.graph.aget_state_history(verifier.config(EPISODE))]
    passes = sorted({s.values.get("iteration", 0) for s in history})
    assert passes == [0, 1, 2, 3]
    plans = {len(s.values.get("plan", [])) for s in history}
    assert {4, 3, 2} <= plans, "each revision is a checkpoint of its own"


async def test_a_finished_episode_comes_from_the_checkpoint(
    saver: BaseCheckpointSaver[Any],
) -> None:
    first = await Verifier(judge=MoveHater(), checkpointer=saver).averify(EPISODE)
    again_judge = MoveHater(crash_on=1)  # would fail if asked
    again = await Verifier(judge=again_judge, checkpointer=saver).averify(EPISODE)
    assert again_judge.calls == 0
    assert again == first


async def test_an_interrupted_episode_resumes_where_it_stopped(
    saver: BaseCheckpointSaver[Any],
) -> None:
    crashing = MoveHater(crash_on=2)
    failed = await Verifier(judge=crashing, checkpointer=saver).averify(EPISODE)
    assert failed.status == "error" and "went away" in (failed.error or "")
    resumed_judge = MoveHater()
    resumed = await Verifier(judge=resumed_judge, checkpointer=saver).averify(EPISODE)
    assert resumed.status == "ok" and resumed.refined == [PLAN[0], PLAN[3]]
    assert resumed_judge.calls == 2, "pass 1 was not redone"
    assert resumed.iterations == 3


async def test_other_settings_never_reuse_a_result(saver: BaseCheckpointSaver[Any]) -> None:
    capped = await Verifier(judge=MoveHater(), max_iterations=1, checkpointer=saver).averify(
        EPISODE
    )
    full = await Verifier(judge=MoveHater(), checkpointer=saver).averify(EPISODE)
    assert capped.stop_reason == "max_iterations" and full.stop_reason == "no_objections"
    assert thread_id(EPISODE, VerifierContext(max_iterations=1).settings().key) != thread_id(
        EPISODE, VerifierContext(max_iterations=5).settings().key
    )


def test_show_reads_threads_and_history_from_a_sqlite_file(tmp_path: Path) -> None:
    path = tmp_path / "cp.sqlite"
    episodes = [EPISODE, EPISODE.model_copy(update={"id": "ep-2"})]
    results = verify_many(episodes, checkpoint=path)
    assert [r.id for r in results] == ["ep-1", "ep-2"]
    (thread,) = episode_threads(path, "ep-1")
    assert thread.startswith("ep-1#")
    stored = load_history(path, thread)
    state, checkpoints = stored.state, stored.checkpoints
    assert state.stop_reason == results[0].stop_reason
    assert [s.action for s in state.plan] == results[0].refined
    assert checkpoints >= 2 * state.iteration


async def test_many_episodes_resume_together(tmp_path: Path) -> None:
    path = tmp_path / "cp.sqlite"
    episodes = [EPISODE.model_copy(update={"id": f"e{n}"}) for n in range(5)]
    first = await averify_many(episodes, judge="rules", checkpoint=path, concurrency=3)
    second = await averify_many(episodes, judge="rules", checkpoint=path, concurrency=3)
    assert first == second


class Proposal(BaseModel):
    """The parent graph's state: a request, then a plan, then the verifier's keys."""

    request: str = ""
    episode_id: str = "proposal"
    goal: str | None = None
    actions: list[str] = Field(default_factory=list)
    plan: list[Any] = Field(default_factory=list)
    stop_reason: str | None = None


def propose(state: Proposal) -> dict[str, Any]:
    """A fake proposer: a plan with a detour the verifier should cut."""
    return {"goal": state.request, "actions": PLAN}


async def test_the_verifier_is_a_subgraph_with_nested_checkpoints(
    saver: BaseCheckpointSaver[Any],
) -> None:
    parent = StateGraph(Proposal, context_schema=VerifierContext)
    parent.add_node("propose", propose)
    parent.add_node("verify", build_verifier())
    parent.add_edge(START, "propose")
    parent.add_edge("propose", "verify")
    parent.add_edge("verify", END)
    app = parent.compile(checkpointer=saver)
    config: Any = {"configurable": {"thread_id": "parent-1"}}
    final = await app.ainvoke({"request": GOAL}, config, context=VerifierContext(judge=MoveHater()))
    assert [s.action if hasattr(s, "action") else s["action"] for s in final["plan"]] == [
        PLAN[0],
        PLAN[3],
    ]
    assert final["stop_reason"] == "no_objections"
    namespaces = {
        c.config["configurable"].get("checkpoint_ns", "")
        async for c in saver.alist({"configurable": {"thread_id": "parent-1"}})
    }
    assert "" in namespaces
    assert any(ns.startswith("verify:") for ns in namespaces), namespaces
