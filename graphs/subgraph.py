"""The verification graph to run inside other graphs: `graph`, also `from planverify import graph`.

    parent.add_node("verify", graph)

Its input is the parent's `actions` and `goal` (and `scene`, `task`, `teach_task`, `domain`,
`program` and `episode_id` when the parent has them); its output is only `refined`, `verdicts`, `inserted` and
`stop_reason`, as plain JSON data (the fields of `VerificationResult` of those names), so the
loop's own channels (`plan`, `history`, `iteration`, `usage`, `warnings`, ...) never reach the
parent. It has no checkpointer of its own: under a parent with one, its steps are checkpoints
nested under the parent's thread. Every channel holds plain JSON data, so those checkpoints
restore with LangGraph's default serializer, strict (`LANGGRAPH_STRICT_MSGPACK=true`) or not,
without knowing this package's types. It runs from the sync and the async API, and with any run
context: none (the offline defaults), a dict, or `VerifierContext` (`settings_of`).

`build_verifier()` is the same loop over typed state, with all of it as output.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import replace
from functools import wraps
from typing import Annotated, Any, Required, TypeVar

from langgraph.graph import StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import TypeAdapter
from pydantic_core import to_jsonable_python
from typing_extensions import TypedDict

from planverify.graphs.context import VerifierContext
from planverify.graphs.graph import Node, add_loop
from planverify.graphs.state import PlanState
from planverify.records.history import Iteration, merge_history
from planverify.records.result import VerificationResult
from planverify.records.usage import TokenUsage, add_usage

T = TypeVar("T")
JSON = dict[str, Any]


def on_json(reducer: Callable[[T, T], T], adapter: TypeAdapter[T]) -> Callable[[Any, Any], Any]:
    """A reducer of typed values as a reducer of their JSON data."""

    def reduce(left: Any, right: Any) -> Any:
        merged = reducer(adapter.validate_python(left), adapter.validate_python(right))
        return adapter.dump_python(merged, mode="json")

    return reduce


class GraphInput(TypedDict, total=False):
    """A plan to verify, as `VerifyInput` describes it, in plain JSON data."""

    actions: Required[list[str]]  # the plan, one action per item, `Agent.Verb(args)`
    goal: str | None  # what the plan should achieve; else the Commander's words
    scene: JSON | None  # initial state of every object, `{"objects": [...]}`
    task: str | None  # the task family, e.g. TEACh's 'Coffee'
    teach_task: JSON | None  # TEACh's task definition
    episode_id: str  # names the plan
    domain: str | None  # the household: 'teach' (when missing) or 'virtualhome'
    program: str | None  # VirtualHome: the installed program the plan's ids refer to


class GraphOutput(TypedDict, total=False):
    """What a parent receives: the `VerificationResult` fields of these names, as JSON."""

    refined: list[str]  # the cleaned plan
    verdicts: list[JSON]  # keep or remove, with the reason, for every input step
    inserted: list[JSON]  # the steps added, with why
    stop_reason: str | None  # why the loop ended


class GraphState(GraphInput, GraphOutput, total=False):
    """`PlanState` as JSON channels (the nodes read it as `PlanState`)."""

    input_digest: str | None
    plan: list[JSON]
    dialogue: list[str]
    iteration: int
    pending: JSON | None
    history: Annotated[list[JSON], on_json(merge_history, TypeAdapter(list[Iteration]))]
    warnings: Annotated[list[str], operator.add]
    usage: Annotated[dict[str, JSON], on_json(add_usage, TypeAdapter(dict[str, TokenUsage]))]


OUTPUT = frozenset(GraphOutput.__annotations__)


def over_json(node: Node) -> Node:
    """The node over JSON channels: it reads them as `PlanState` and writes JSON data."""

    @wraps(node)
    async def step(state: Any, runtime: Runtime[VerifierContext]) -> Any:
        update = await node(PlanState.model_validate(state), runtime)
        if isinstance(update, Command):
            return replace(update, update=to_jsonable_python(update.update))
        return to_jsonable_python(update)

    return step


async def summary(state: PlanState, runtime: Runtime[VerifierContext]) -> dict[str, Any]:
    """The output: the fields of the result record a parent receives."""
    return VerificationResult.from_state(state).model_dump(mode="json", include=set(OUTPUT))


def build_subgraph(
    name: str = "planverify",
) -> CompiledStateGraph[GraphState, VerifierContext, GraphInput, GraphOutput]:
    """The verification graph for other graphs (see the module's docstring), compiled without a
    checkpointer: a parent's is used."""
    builder = StateGraph(
        GraphState,
        context_schema=VerifierContext,
        input_schema=GraphInput,
        output_schema=GraphOutput,
    )
    add_loop(builder, last=("summary", summary), wrap=over_json)
    return builder.compile(name=name)


graph = build_subgraph()
