"""A plan gate: a planner proposes, planverify verifies, and only a plan the Judge has nothing to
change runs; otherwise the planner tries again with the Judge's reasons, up to `max_rounds`
times, and then the refined plan runs.

    plan -> gate -> execute
      ^       |
      +-------+  (the Judge's reasons, one line per step)

The gate is one line, `plan_gate(replan="plan", execute="execute", ...)`; the rest is a toy
planner and executor. Run it with a chat model (and its key in the environment):

    python examples/plan_gate.py openai:gpt-4.1-mini "Make a mug of coffee."

`tests/test_examples.py` runs it offline with a scripted fake model.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from planverify.graphs import plan_gate

INSTRUCTIONS = (
    "You plan for a household robot. Answer with the plan only, one action a line, in the "
    "notation Driver.Verb(args), e.g. Driver.PickUp('Mug'), Driver.PutAOnB('Mug', "
    "'CoffeeMachine'), Driver.ToggleOn('CoffeeMachine'), Driver.Move(1.0)."
)


class Task(TypedDict, total=False):
    """The agent's state."""

    request: str  # what the user asked for
    plan: list[str]  # the planner's plan; the refined plan once the gate lets it through
    feedback: list[list[str]]  # the Judge's reasons, one list per round sent back
    verification: dict[str, Any]  # the last verification (refined, verdicts, inserted, ...)
    executed: list[str]  # what the executor ran


def planner(model: BaseChatModel) -> Callable[[Task], dict[str, Any]]:
    """A node that asks `model` for a plan, showing it its last plan and the Judge's reasons."""

    def plan(state: Task) -> dict[str, Any]:
        ask = f"Task: {state['request']}"
        if state.get("feedback"):
            previous = "\n".join(state["plan"])
            reasons = "\n".join(state["feedback"][-1])
            ask += f"\n\nYour last plan:\n{previous}\n\nA verifier objected:\n{reasons}"
        reply = model.invoke([SystemMessage(INSTRUCTIONS), HumanMessage(ask)])
        return {"plan": [line.strip() for line in reply.text.splitlines() if line.strip()]}

    return plan


def execute(state: Task) -> dict[str, Any]:
    """A stand-in executor: a real one would send each step to the robot."""
    return {"executed": list(state["plan"])}


def build(model: BaseChatModel, *, max_rounds: int = 2) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The agent: planner, gate, executor."""
    builder = StateGraph(Task)
    builder.add_node("plan", planner(model))
    builder.add_node(
        "gate",
        plan_gate(replan="plan", execute="execute", goal_key="request", max_rounds=max_rounds),
        destinations=("plan", "execute"),
    )
    builder.add_node("execute", execute)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "gate")
    builder.add_edge("execute", END)
    return builder.compile()


if __name__ == "__main__":
    from langchain.chat_models import init_chat_model

    spec, request = sys.argv[1], " ".join(sys.argv[2:]) or "Make a mug of coffee."
    final = build(init_chat_model(spec)).invoke({"request": request})
    for n, reasons in enumerate(final.get("feedback", []), start=1):
        print(f"round {n}, sent back:", *reasons, sep="\n  ")
    print("executed:", *final["executed"], sep="\n  ")
