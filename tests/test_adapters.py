"""`verify_node` and `plan_gate`: the verification graph for a parent whose plan lives under keys
of its own, as actions or as items of its own (tool calls)."""

from __future__ import annotations

import asyncio
from typing import Any, TypedDict

import orjson
import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel

from planverify.graphs import plan_gate, reasons, verify_node
from planverify.records.notation import parse_action

from .conftest import ROOT

TOAST = next(
    record
    for line in (ROOT / "examples" / "episodes.jsonl").read_bytes().splitlines()
    if (record := orjson.loads(line))["id"] == "toast-no-power"
)  # the toaster is never switched on: the rules Judge adds that step after step 6
DETOUR = ["Driver.PickUp('Mug')", "Driver.Move(1.0)", "Driver.Move(-1.0)"]


class ToolCall(BaseModel):
    """An agent's own step: a tool and its arguments."""

    name: str
    args: list[str]
    note: str = ""  # the agent's own data, kept for the steps that stay


def as_action(call: ToolCall) -> str:
    return f"Driver.{call.name}({', '.join(map(repr, call.args))})"


def as_call(action: str) -> ToolCall:
    step = parse_action(action)
    return ToolCall(name=step.verb, args=list(step.objects), note="added by planverify")


class Agent(TypedDict, total=False):
    objective: str
    room: dict[str, Any]
    calls: list[ToolCall]
    checked: dict[str, Any]
    history: list[str]  # the agent's own


def agent(node: Any) -> Any:
    builder = StateGraph(Agent)
    builder.add_node("verify", node)
    builder.add_edge(START, "verify")
    builder.add_edge("verify", END)
    return builder.compile(checkpointer=InMemorySaver())


@pytest.mark.parametrize("style", ["invoke", "ainvoke"])
def test_verify_node_refines_a_plan_of_tool_calls_in_place(style: str) -> None:
    calls = [
        as_call(a).model_copy(update={"note": f"mine {i}"}) for i, a in enumerate(TOAST["actions"])
    ]
    node = verify_node(
        plan_key="calls",
        goal_key="objective",
        scene_key="room",
        result_key="checked",
        to_action=as_action,
        from_action=as_call,
    )
    state = {"objective": TOAST["goal"], "room": TOAST["scene"], "calls": calls, "history": ["x"]}
    config: Any = {"configurable": {"thread_id": style}}
    app = agent(node)
    final = (
        app.invoke(state, config) if style == "invoke" else asyncio.run(app.ainvoke(state, config))
    )

    assert final["calls"][:6] == calls[:6], "kept steps are the agent's own items"
    assert final["calls"][6] == ToolCall(
        name="ToggleOn", args=["Toaster"], note="added by planverify"
    )
    assert final["calls"][7:] == calls[6:]
    assert [as_action(c) for c in final["calls"]] == final["checked"]["refined"]
    assert set(final["checked"]) == {"refined", "verdicts", "inserted", "stop_reason"}
    assert final["history"] == ["x"]


def test_verify_node_defaults_read_plan_and_goal_and_keep_the_result_under_verification() -> None:
    class Plain(TypedDict, total=False):
        goal: str
        plan: list[str]
        verification: dict[str, Any]

    builder = StateGraph(Plain)
    builder.add_node("verify", verify_node())
    builder.add_edge(START, "verify")
    final = builder.compile().invoke({"goal": "Make a mug of coffee.", "plan": DETOUR})
    assert final["plan"] == DETOUR[:1]
    assert final["verification"]["stop_reason"] == "no_objections"


def test_verify_node_reads_an_object_state_and_may_keep_no_result() -> None:
    class State(BaseModel):
        goal: str
        plan: list[str]

    builder = StateGraph(State)
    builder.add_node("verify", verify_node(result_key=None))
    builder.add_edge(START, "verify")
    final = builder.compile().invoke(State(goal="Make a mug of coffee.", plan=DETOUR))
    assert final == {"goal": "Make a mug of coffee.", "plan": DETOUR[:1]}


def test_reasons_count_steps_from_one() -> None:
    result = {
        "verdicts": [
            {"index": 0, "action": "Driver.PickUp('Mug')", "verdict": "keep", "reason": None},
            {"index": 1, "action": "Driver.Move(1.0)", "verdict": "remove", "reason": "a detour"},
        ],
        "inserted": [{"after_index": -1, "action": "Driver.Open('Fridge')", "reason": "shut"}],
    }
    assert reasons(result) == [
        "step 2 (Driver.Move(1.0)): a detour",
        "missing first: Driver.Open('Fridge') (shut)",
    ]


class Loop(TypedDict, total=False):
    goal: str
    plan: list[str]
    proposals: list[list[str]]
    feedback: list[list[str]]
    verification: dict[str, Any]
    executed: list[str]


def gate_loop(proposals: list[list[str]], max_rounds: int) -> Any:
    """A planner that proposes the given plans in turn, the gate, and an executor."""

    def plan(state: Loop) -> dict[str, Any]:
        done = state.get("proposals", [])
        return {"plan": proposals[len(done)], "proposals": [*done, proposals[len(done)]]}

    builder = StateGraph(Loop)
    builder.add_node("plan", plan)
    builder.add_node("gate", plan_gate(replan="plan", execute="run", max_rounds=max_rounds))
    builder.add_node("run", lambda state: {"executed": state["plan"]})
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "gate")
    builder.add_edge("run", END)
    return builder.compile()


def test_the_gate_sends_a_plan_back_with_reasons_then_executes_a_clean_one() -> None:
    clean = DETOUR[:1]
    final = gate_loop([DETOUR, clean], max_rounds=2).invoke({"goal": "Make a mug of coffee."})
    assert final["proposals"] == [DETOUR, clean] and final["executed"] == clean
    (sent_back,) = final["feedback"]
    assert [line.split(":")[0] for line in sent_back] == [
        "step 2 (Driver.Move(1.0))",
        "step 3 (Driver.Move(-1.0))",
    ]


def test_the_gate_executes_the_refined_plan_after_max_rounds() -> None:
    app = gate_loop([DETOUR, DETOUR, DETOUR], max_rounds=2)
    final = asyncio.run(app.ainvoke({"goal": "Make a mug of coffee."}))
    assert len(final["proposals"]) == 3 and len(final["feedback"]) == 2
    assert final["executed"] == DETOUR[:1]


def test_the_docstring_example_runs() -> None:
    """`tests/test_doctests.py` walks `planverify/` only, not the mapped `graphs/`."""
    import doctest

    from planverify.graphs import adapters

    result = doctest.testmod(adapters, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 5 and result.failed == 0
