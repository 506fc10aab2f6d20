"""The compiled verifier inside a bigger graph: "propose a plan -> verify it".

The parent owns the checkpointer and passes `VerifierContext` as its run context; the verifier
(compiled without a checkpointer) runs as a node or is invoked inside one, its checkpoints nest
under the parent's thread, and a review pause inside it surfaces in, and resumes from, the parent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal, TypedDict

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command

from planverify.graphs.context import VerifierContext
from planverify.graphs.graph import build_verifier
from planverify.records.history import Step
from planverify.stores.serde import state_serializer

from .conftest import scripted

REQUEST = "Make a mug of coffee."
PROPOSAL = [
    "Commander.Say('Make a mug of coffee.')",
    "Driver.PickUp('Mug')",
    "Driver.Move(1.0)",
    "Driver.Move(-1.0)",
    "Driver.PutAOnB('Mug', 'CoffeeMachine')",
    "Driver.ToggleOn('CoffeeMachine')",
]
REFINED = [PROPOSAL[0], PROPOSAL[1], PROPOSAL[4], PROPOSAL[5]]


class Task(TypedDict, total=False):
    """The parent's state: a request, the proposed plan, and what the verifier made of it."""

    request: str
    episode_id: str
    goal: str | None
    actions: list[str]  # the proposal, under the verifier's input key
    plan: list[Step]  # the verifier's refined plan, taken back by key
    stop_reason: str | None
    iteration: int
    refined: list[str]  # the "call" mode's own summary


def propose(state: Task) -> dict[str, Any]:
    """A fake proposer: a plan with a detour that the baseline Judge cuts."""
    return {"episode_id": "task", "goal": state["request"], "actions": list(PROPOSAL)}


def parent_graph(
    saver: BaseCheckpointSaver[Any], mode: Literal["node", "call"]
) -> CompiledStateGraph[Any, Any, Any, Any]:
    verifier = build_verifier()  # no checkpointer of its own: it uses the parent's
    builder = StateGraph(Task, context_schema=VerifierContext)
    builder.add_node("propose", propose)
    if mode == "node":
        builder.add_node("verify", verifier)
    else:

        async def verify(state: Task, runtime: Runtime[VerifierContext]) -> dict[str, Any]:
            out = await verifier.ainvoke(
                {
                    "episode_id": state["episode_id"],
                    "goal": state["goal"],
                    "actions": state["actions"],
                },
                context=runtime.context,
            )
            return {
                "plan": out["plan"],
                "stop_reason": out["stop_reason"],
                "iteration": out["iteration"],
                "refined": [s.action for s in out["plan"]],
            }

        builder.add_node("verify", verify)
    builder.add_edge(START, "propose")
    builder.add_edge("propose", "verify")
    builder.add_edge("verify", END)
    return builder.compile(checkpointer=saver)


@pytest.fixture(params=["memory", "sqlite"])
async def saver(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    if request.param == "memory":
        yield InMemorySaver(serde=state_serializer())
        return
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "parent.sqlite")) as sqlite:
        sqlite.serde = state_serializer()
        yield sqlite


async def namespaces(saver: BaseCheckpointSaver[Any], thread: str) -> set[str]:
    return {
        c.config["configurable"]["checkpoint_ns"]
        async for c in saver.alist({"configurable": {"thread_id": thread}})
    }


def judged(plan: list[str], *remove: int) -> str:
    lines = []
    for n, action in enumerate(plan, start=1):
        note = "#REMOVE: a detour that cancels out" if n in remove else "needed"
        lines += [f"ACTION: {n}. {action}", f"ANNOTATION: {note}"]
    return "\n".join(lines)


@pytest.mark.parametrize("mode", ["node", "call"])
async def test_a_parent_graph_proposes_then_verifies(
    saver: BaseCheckpointSaver[Any], mode: Literal["node", "call"]
) -> None:
    app = parent_graph(saver, mode)
    judge = scripted(judged(PROPOSAL, 3, 4), judged(REFINED))
    config: Any = {"configurable": {"thread_id": f"parent-{mode}"}}
    final = await app.ainvoke({"request": REQUEST}, config, context=VerifierContext(judge=judge))

    assert [s.action for s in final["plan"]] == REFINED
    assert (final["stop_reason"], final["iteration"]) == ("no_objections", 2)
    assert final["actions"] == PROPOSAL, "the proposal is kept beside the refined plan"
    if mode == "call":
        assert final["refined"] == REFINED
    assert len(judge.prompts) == 2, "the parent's run context reached the subgraph"
    assert f"<goal>\n{REQUEST}\n</goal>" in str(judge.prompts[0][-1].content)

    spaces = await namespaces(saver, f"parent-{mode}")
    nested = sorted(ns for ns in spaces if ns)
    assert "" in spaces and len(nested) == 1 and nested[0].startswith("verify:"), spaces

    sub_config: Any = {"configurable": {"thread_id": f"parent-{mode}", "checkpoint_ns": nested[0]}}
    sub_history = [s async for s in app.aget_state_history(sub_config)]
    assert sub_history[0].values["stop_reason"] == "no_objections"
    judged_at = {
        s.values["iteration"]: [step.action for step in s.values["plan"]]
        for s in sub_history
        if s.values.get("pending") is not None
    }
    assert judged_at == {1: PROPOSAL, 2: REFINED}, "each Judge pass is a nested checkpoint"

    parent_state = await app.aget_state(config)
    assert parent_state.next == () and [s.action for s in parent_state.values["plan"]] == REFINED


async def test_a_review_pause_inside_the_subgraph_surfaces_in_the_parent(
    saver: BaseCheckpointSaver[Any],
) -> None:
    app = parent_graph(saver, "node")
    config: Any = {"configurable": {"thread_id": "parent-review"}}
    context = VerifierContext(judge="baseline", review=True)
    paused = await app.ainvoke({"request": REQUEST}, config, context=context)
    (pause,) = paused["__interrupt__"]
    assert pause.value["iteration"] == 1 and pause.value["plan"] == PROPOSAL
    assert [f["step"] for f in pause.value["critique"]["flags"]] == [2, 3]
    assert "plan" not in paused, "the verifier has not finished"

    state = await app.aget_state(config, subgraphs=True)
    assert state.next == ("verify",)
    (task,) = state.tasks
    assert task.name == "verify" and task.state is not None
    inner: Any = task.state
    assert inner.next == ("review",)
    assert inner.values["iteration"] == 1 and inner.values["pending"].objections
    assert inner.config["configurable"]["checkpoint_ns"].startswith("verify:")

    final = await app.ainvoke(
        Command(resume={"flags": [{"step": 3, "reason": "only the way out"}]}),
        config,
        context=context,
    )
    assert "__interrupt__" not in final
    # the reviewer kept Move(-1.0); the baseline no longer sees a cancelling pair, so no pause
    assert [s.action for s in final["plan"]] == [*PROPOSAL[:2], *PROPOSAL[3:]]
    assert final["stop_reason"] == "no_objections"


async def test_parent_threads_do_not_share_verifier_state(saver: BaseCheckpointSaver[Any]) -> None:
    app = parent_graph(saver, "node")
    first: Any = {"configurable": {"thread_id": "one"}}
    second: Any = {"configurable": {"thread_id": "two"}}
    done = await app.ainvoke({"request": REQUEST}, first, context=VerifierContext(judge="baseline"))
    static = await app.ainvoke(
        {"request": REQUEST}, second, context=VerifierContext(judge="baseline", static=True)
    )
    assert [s.action for s in done["plan"]] == REFINED
    assert ([s.action for s in static["plan"]], static["stop_reason"]) == (PROPOSAL, "static")
    assert len(await namespaces(saver, "one")) == len(await namespaces(saver, "two")) == 2
