"""Nodes for graphs whose plan lives under keys of their own: `verify_node` and `plan_gate`.

Both run the verification graph (`planverify.graphs.subgraph.graph`) as a subgraph: under a
parent with a checkpointer its steps are checkpoints nested under the parent's thread, and the
parent's run context (none, a dict or `VerifierContext`) gives the settings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig
from langgraph._internal._runnable import RunnableCallable
from langgraph.types import Command
from pydantic_core import to_jsonable_python

from planverify.graphs.subgraph import GraphInput, graph

Result = dict[str, Any]  # the subgraph's output: `refined`, `verdicts`, `inserted`, `stop_reason`


def _get(state: Any, key: str | None) -> Any:
    """A value of the parent's state (a dict or an object), None when it has none."""
    if key is None:
        return None
    return state.get(key) if isinstance(state, Mapping) else getattr(state, key, None)


def refined_items(items: list[Any], result: Result, from_action: Callable[[str], Any]) -> list[Any]:
    """The refined plan in the parent's items: the parent's own item for every step kept from
    its plan, `from_action(line)` for a step the Planner added."""
    static = result["stop_reason"] == "static"  # nothing removed from the plan itself
    kept = [
        (item, verdict["action"])
        for item, verdict in zip(items, result["verdicts"], strict=True)
        if static or verdict["verdict"] == "keep"
    ]
    plan: list[Any] = []
    for line in result["refined"]:
        if kept and kept[0][1] == line:
            plan.append(kept.pop(0)[0])
        else:
            plan.append(from_action(line))
    return plan


@dataclass(frozen=True)
class PlanAt:
    """Where a parent keeps its plan, goal and scene, and how its plan's items read as actions."""

    plan_key: str  # the plan: a list of actions, or of items `to_action` reads
    goal_key: str | None  # the goal (None: no goal)
    scene_key: str | None  # the scene, `{"objects": [...]}` (None: no scene)
    to_action: Callable[[Any], str]  # an item of the plan as an action `Agent.Verb(args)`
    from_action: Callable[[str], Any]  # an action the Planner added, as an item of the plan

    def given(self, state: Any) -> tuple[list[Any], GraphInput]:
        """The parent's plan items, and the subgraph's input."""
        items = list(_get(state, self.plan_key) or [])
        values = GraphInput(
            actions=[self.to_action(item) for item in items],
            goal=_get(state, self.goal_key),
            scene=to_jsonable_python(_get(state, self.scene_key)),
        )
        return items, values

    def verify(self, state: Any, config: RunnableConfig) -> tuple[list[Any], Result]:
        """The refined plan in the parent's items, and the subgraph's output."""
        items, values = self.given(state)
        result = graph.invoke(values, config)
        return refined_items(items, result, self.from_action), result

    async def averify(self, state: Any, config: RunnableConfig) -> tuple[list[Any], Result]:
        """`verify`, from the async API."""
        items, values = self.given(state)
        result = await graph.ainvoke(values, config)
        return refined_items(items, result, self.from_action), result


def verify_node(
    *,
    plan_key: str = "plan",
    goal_key: str | None = "goal",
    scene_key: str | None = None,
    result_key: str | None = "verification",
    to_action: Callable[[Any], str] = str,
    from_action: Callable[[str], Any] = str,
) -> Runnable[Any, dict[str, Any]]:
    """A node that verifies the plan under `plan_key` and writes the refined plan back there.

    The plan is a list of actions in the notation `Agent.Verb(args)`, or of anything
    `to_action` turns into one (tool calls, an agent's own steps); the refined plan keeps the
    parent's own items for the steps it keeps, and makes the steps the Planner added with
    `from_action`. `goal_key` and `scene_key` name the goal and the scene (None: none). The
    subgraph's output (`refined`, `verdicts`, `inserted`, `stop_reason`, as plain JSON) goes
    under `result_key` (None: not kept). It runs from the sync and the async API:

    >>> from typing import Any, TypedDict
    >>> from langgraph.graph import StateGraph
    >>> from planverify.records.notation import parse_action
    >>> class Agent(TypedDict, total=False):
    ...     task: str
    ...     steps: list[dict[str, Any]]
    ...     verification: dict[str, Any]
    >>> def as_action(call: dict[str, Any]) -> str:
    ...     return f"Driver.{call['name']}({', '.join(map(repr, call['args']))})"
    >>> def as_call(action: str) -> dict[str, Any]:
    ...     step = parse_action(action)
    ...     return {"name": step.verb, "args": list(step.objects)}
    >>> builder = StateGraph(Agent)
    >>> _ = builder.add_node("verify", verify_node(
    ...     plan_key="steps", goal_key="task", to_action=as_action, from_action=as_call))
    >>> _ = builder.set_entry_point("verify")
    >>> out = builder.compile().invoke({"task": "Make a mug of coffee.", "steps": [
    ...     {"name": "PickUp", "args": ["Mug"]},
    ...     {"name": "Move", "args": [1.0]},
    ...     {"name": "Move", "args": [-1.0]},
    ...     {"name": "PutAOnB", "args": ["Mug", "CoffeeMachine"]},
    ... ]})
    >>> for call in out["steps"]:
    ...     print(call)
    {'name': 'PickUp', 'args': ['Mug']}
    {'name': 'PutAOnB', 'args': ['Mug', 'CoffeeMachine']}
    >>> [v["index"] for v in out["verification"]["verdicts"] if v["verdict"] == "remove"]
    [1, 2]
    """
    at = PlanAt(plan_key, goal_key, scene_key, to_action, from_action)

    def written(plan: list[Any], result: Result) -> dict[str, Any]:
        return {plan_key: plan} | ({} if result_key is None else {result_key: result})

    def verify(state: Any, config: RunnableConfig) -> dict[str, Any]:
        return written(*at.verify(state, config))

    async def averify(state: Any, config: RunnableConfig) -> dict[str, Any]:
        return written(*await at.averify(state, config))

    return RunnableCallable(verify, averify, name="verify", trace=False)


def reasons(result: Result) -> list[str]:
    """The Judge's reasons in a verification result, one line each, steps counted from 1."""
    lines = [
        f"step {v['index'] + 1} ({v['action']}): {v['reason']}"
        for v in result["verdicts"]
        if v["verdict"] == "remove"
    ]
    for step in result["inserted"]:
        where = f"after step {step['after_index'] + 1}" if step["after_index"] >= 0 else "first"
        lines.append(f"missing {where}: {step['action']} ({step['reason']})")
    return lines


def plan_gate(
    *,
    replan: str,
    execute: str,
    max_rounds: int = 2,
    plan_key: str = "plan",
    goal_key: str | None = "goal",
    scene_key: str | None = None,
    feedback_key: str = "feedback",
    result_key: str | None = "verification",
    to_action: Callable[[Any], str] = str,
    from_action: Callable[[str], Any] = str,
) -> Runnable[Any, Command[str]]:
    """A node between a planner and an executor: `parent.add_node("gate", plan_gate(
    replan="plan", execute="execute"))`.

    It verifies the plan under `plan_key` (the keys and converters are `verify_node`'s). When
    the Judge has nothing to remove or add, or it has sent the plan back `max_rounds` times
    already, it goes on to `execute` with the refined plan under `plan_key`. Otherwise it goes
    back to `replan`, the plan left as the planner made it, with the Judge's reasons
    (`reasons`, one line per step) appended as one round to the list under `feedback_key`: a
    planner reads the last round, its step numbers count from 1 in the plan it proposed.
    """
    at = PlanAt(plan_key, goal_key, scene_key, to_action, from_action)

    def route(state: Any, plan: list[Any], result: Result) -> Command[str]:
        kept = {} if result_key is None else {result_key: result}
        rounds = list(_get(state, feedback_key) or [])
        objections = reasons(result)
        if not objections or len(rounds) >= max_rounds:
            return Command(goto=execute, update={plan_key: plan, **kept})
        return Command(goto=replan, update={feedback_key: [*rounds, objections], **kept})

    def gate(state: Any, config: RunnableConfig) -> Command[str]:
        return route(state, *at.verify(state, config))

    async def agate(state: Any, config: RunnableConfig) -> Command[str]:
        return route(state, *await at.averify(state, config))

    return RunnableCallable(gate, agate, name="gate", trace=False)
