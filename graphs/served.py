"""The graph `langgraph.json` serves: the verification graph whose output is the result record.

`langgraph dev` and LangGraph servers serve `graph`: runs through the SDK return the same JSON
record as `planverify verify` writes (`VerificationResult`, with the run's settings and cost),
and the server's MCP endpoint offers it as a tool (described in `langgraph.json`; the input
fields are documented in `VerifyInput`). Settings travel in the run's context (or in an
assistant's context), never in the input.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config
from langgraph.graph.state import CompiledStateGraph

from planverify.graphs.graph import build_verifier


class ServedGraph(CompiledStateGraph[Any, Any, Any, Any]):
    """The compiled graph, minus one warning.

    A LangGraph server passes a durability mode to every run, also to runs without a thread
    (stateless runs, MCP tool calls), which have no checkpointer: there the mode means nothing,
    and LangGraph would warn about it on every call. It is dropped for those runs only.
    """

    def _durability(self, config: RunnableConfig | None, options: dict[str, Any]) -> None:
        durable = options.get("durability") is not None
        if durable and self._resolve_checkpointer(ensure_config(config)) is None:
            options["durability"] = None

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **options: Any
    ) -> Iterator[Any]:
        self._durability(config, options)
        return super().stream(input, config, **options)

    def astream(
        self, input: Any, config: RunnableConfig | None = None, **options: Any
    ) -> AsyncIterator[Any]:
        self._durability(config, options)
        return super().astream(input, config, **options)


def served_graph() -> ServedGraph:
    """The verification graph with the result record as its output, without a checkpointer
    (the server brings its own)."""
    compiled = build_verifier(output="result")
    return ServedGraph(**{k: v for k, v in compiled.__dict__.items() if k != "__orig_class__"})


graph = served_graph()
