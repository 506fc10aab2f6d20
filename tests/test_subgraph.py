"""The verifier inside a bigger graph: "propose a plan -> verify it".

`planverify.graph` as a node of any parent: all four call styles, with no context, a dict or
`VerifierContext`, with or without a checkpointer (LangGraph's default serializer, strict or
not); only the result's fields reach the parent. And `build_verifier()`, which has typed state:
the parent owns the checkpointer and passes `VerifierContext` as its run context; the verifier
runs as a node or is invoked inside one, its checkpoints nest under the parent's thread, and a
review pause inside it surfaces in, and resumes from, the parent.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypedDict

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.event_hooks import register_serde_event_listener
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command

from planverify import graph
from planverify.graphs.context import SettingsError, VerifierContext
from planverify.graphs.graph import build_verifier
from planverify.records.history import Step
from planverify.stores.serde import state_serializer

from .conftest import ROOT, scripted

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
    judged_at = {  # the last pass also ends the loop, in the same step: nothing is pending
        s.values["iteration"]: [step.action for step in s.values["plan"]]
        for s in sub_history
        if s.values.get("pending") is not None or s.values.get("stop_reason")
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


# `planverify.graph` under a parent with keys of its own


class Parent(TypedDict, total=False):
    """A parent with its own `history`, `plan`, `iteration`, `usage` and `warnings`."""

    request: str
    goal: str
    actions: list[str]
    history: list[str]
    plan: str
    iteration: int
    usage: dict[str, int]
    warnings: list[str]
    refined: list[str]
    verdicts: list[dict[str, Any]]
    inserted: list[dict[str, Any]]
    stop_reason: str | None


OWN = {
    "history": ["asked the user"],
    "plan": "the parent's own plan",
    "iteration": 7,
    "usage": {"parent": 3},
    "warnings": ["the parent's own warning"],
}
CONTEXTS: dict[str, tuple[Any, str, list[str]]] = {  # context, its stop reason and plan
    "none": (None, "no_objections", REFINED),
    "dict": ({"static": True, "user": "someone"}, "static", PROPOSAL),
    "VerifierContext": (VerifierContext(max_iterations=1), "max_iterations", REFINED),
}
STYLES = ["invoke", "ainvoke", "stream", "astream"]
JSON_TYPES = (dict, list, str, int, float, bool, type(None))


def gate_parent(saver: BaseCheckpointSaver[Any] | None) -> CompiledStateGraph[Any, Any, Any, Any]:
    builder = StateGraph(Parent)
    builder.add_node("propose", lambda state: {"goal": state["request"], "actions": PROPOSAL})
    builder.add_node("verify", graph)
    builder.add_edge(START, "propose")
    builder.add_edge("propose", "verify")
    builder.add_edge("verify", END)
    return builder.compile(checkpointer=saver)


def run(app: Any, style: str, values: Any, config: Any, context: Any) -> dict[str, Any]:
    """The parent's final state, by one of the four call styles."""
    if style == "invoke":
        return dict(app.invoke(values, config, context=context))
    if style == "stream":
        return dict(list(app.stream(values, config, context=context, stream_mode="values"))[-1])
    if style == "ainvoke":
        return dict(asyncio.run(app.ainvoke(values, config, context=context)))

    async def last() -> dict[str, Any]:
        chunks = [
            c async for c in app.astream(values, config, context=context, stream_mode="values")
        ]
        return dict(chunks[-1])

    return asyncio.run(last())


@pytest.fixture
def serde_events() -> Iterator[list[Any]]:
    """What LangGraph's serializer reports: an unregistered type read, or one it blocked."""
    events: list[Any] = []
    remove = register_serde_event_listener(events.append)
    yield events
    remove()


def only_json(value: Any) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and only_json(v) for k, v in value.items())
    if isinstance(value, list):
        return all(only_json(v) for v in value)
    return isinstance(value, JSON_TYPES)


@pytest.mark.parametrize("saved", [False, True], ids=["no-checkpointer", "InMemorySaver"])
@pytest.mark.parametrize("context_name", list(CONTEXTS))
@pytest.mark.parametrize("style", STYLES)
def test_the_graph_as_a_node_gives_the_parent_only_the_result(
    style: str, context_name: str, saved: bool, serde_events: list[Any]
) -> None:
    context, stop_reason, refined = CONTEXTS[context_name]
    saver = InMemorySaver() if saved else None  # LangGraph's default serializer
    app = gate_parent(saver)
    config: Any = {"configurable": {"thread_id": f"{style}-{context_name}"}} if saved else None
    final = run(app, style, {"request": REQUEST, **OWN}, config, context)

    assert {k: final[k] for k in OWN} == OWN, "the parent's own keys are untouched"
    assert (final["refined"], final["stop_reason"]) == (refined, stop_reason)
    assert [v["index"] for v in final["verdicts"] if v["verdict"] == "remove"] == [2, 3]
    assert final["inserted"] == [] and final["actions"] == PROPOSAL
    assert set(final) == {"request", "goal", "actions", *OWN, *graph.output_schema.__annotations__}
    if saver is None:
        return
    assert app.get_state(config).values == final
    spaces = {c.config["configurable"]["checkpoint_ns"] for c in saver.list(config)}
    (nested,) = spaces - {""}
    inner = list(
        app.get_state_history({"configurable": {**config["configurable"], "checkpoint_ns": nested}})
    )
    assert inner[0].values["stop_reason"] == stop_reason and len(inner) > 3
    assert all(only_json(snapshot.values) for snapshot in inner), "plain JSON in every channel"
    assert serde_events == [], "every checkpoint reads back with no type to allow or block"


def test_with_strict_msgpack_the_checkpoints_read_back_too() -> None:
    """The same tests under `LANGGRAPH_STRICT_MSGPACK=true`, read when LangGraph is imported."""
    if os.environ.get("LANGGRAPH_STRICT_MSGPACK") == "true":
        pytest.skip("this run is the strict one")
    env = {**os.environ, "LANGGRAPH_STRICT_MSGPACK": "true"}
    test = "tests/test_subgraph.py::test_the_graph_as_a_node_gives_the_parent_only_the_result"
    command = [sys.executable, "-m", "pytest", test, "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "24 passed" in done.stdout


async def test_sync_invoke_works_inside_a_running_event_loop(serde_events: list[Any]) -> None:
    asyncio.get_running_loop()  # as in a notebook, or sync code an async parent calls
    app = gate_parent(InMemorySaver())
    config: Any = {"configurable": {"thread_id": "in-a-loop"}}
    final = app.invoke({"request": REQUEST, **OWN}, config, context={"judge": "baseline"})
    assert final["refined"] == REFINED and final["history"] == OWN["history"]
    streamed = list(app.stream({"request": REQUEST}, {"configurable": {"thread_id": "s"}}))
    (written,) = streamed[-1].values()  # the updates the verify node wrote to the parent
    assert written["refined"] == REFINED
    assert set(written) == {"refined", "verdicts", "inserted", "stop_reason"}

    review: Any = {"configurable": {"thread_id": "review-in-a-loop"}}
    context = {"judge": "baseline", "review": True}
    paused = app.invoke({"request": REQUEST}, review, context=context)
    assert paused["__interrupt__"][0].value["iteration"] == 1, "a pause from another thread"
    resumed = app.invoke(Command(resume="accept"), review, context=context)
    assert resumed["refined"] == REFINED
    assert serde_events == []


@pytest.mark.parametrize("style", ["invoke", "ainvoke"])
def test_a_review_pause_inside_the_graph_resumes_from_json_checkpoints(
    style: str, serde_events: list[Any]
) -> None:
    app = gate_parent(InMemorySaver())
    config: Any = {"configurable": {"thread_id": f"review-{style}"}}
    context = {"judge": "baseline", "review": True}
    paused = run(app, style, {"request": REQUEST, **OWN}, config, context)
    (pause,) = paused["__interrupt__"]
    assert [f["step"] for f in pause.value["critique"]["flags"]] == [2, 3]
    answer = Command(resume={"flags": [{"step": 3, "reason": "only the way out"}]})
    final = run(app, style, answer, config, context)
    assert final["refined"] == [*PROPOSAL[:2], *PROPOSAL[3:]]
    assert {k: final[k] for k in OWN} == OWN
    assert serde_events == []


def test_the_graph_reads_and_writes_only_its_own_fields() -> None:
    assert set(graph.get_input_jsonschema()["properties"]) == {
        "actions",
        "goal",
        "scene",
        "task",
        "teach_task",
        "episode_id",
        "domain",
        "program",
    }
    assert list(graph.get_output_jsonschema()["properties"]) == [
        "refined",
        "verdicts",
        "inserted",
        "stop_reason",
    ]
    assert graph.checkpointer is None


def test_a_parent_context_of_its_own_gives_the_settings_it_names() -> None:
    @dataclass
    class Settings:  # a parent's own context schema, with one verifier setting among its own
        user: str
        static: bool

    builder = StateGraph(Parent, context_schema=Settings)
    builder.add_node("verify", graph)
    builder.add_edge(START, "verify")
    out = builder.compile().invoke({"actions": PROPOSAL}, context=Settings("me", static=True))
    assert (out["refined"], out["stop_reason"]) == (PROPOSAL, "static")


def test_a_bad_setting_in_a_dict_context_is_named() -> None:
    with pytest.raises(SettingsError, match="max_iterations"):
        gate_parent(None).invoke({"request": REQUEST}, context={"max_iterations": 0})


@pytest.mark.parametrize("context", [None, {"judge": "baseline"}], ids=["none", "dict"])
def test_build_verifier_as_a_node_runs_from_invoke_without_its_context_schema(context: Any) -> None:
    builder = StateGraph(Task)
    builder.add_node("propose", propose)
    builder.add_node("verify", build_verifier())
    builder.add_edge(START, "propose")
    builder.add_edge("propose", "verify")
    final = builder.compile().invoke({"request": REQUEST}, context=context)
    assert [s.action for s in final["plan"]] == REFINED


def test_every_channel_of_the_typed_state_is_a_json_channel_of_the_graph() -> None:
    from planverify.graphs.state import PlanState
    from planverify.graphs.subgraph import GraphState

    assert set(PlanState.model_fields) <= set(GraphState.__annotations__)
