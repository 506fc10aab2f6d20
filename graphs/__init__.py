"""The verification loop as a LangGraph graph: state, context, nodes, the served graph and what a
served run may ask for; the graph and nodes for other graphs (`subgraph`, `adapters`).

`verify_node`, `plan_gate` and `reasons` are exported here. The graph for other graphs is
`planverify.graph` (`planverify.graphs.subgraph.graph`), not exported here, where
`planverify.graphs.graph` is the module that builds the loop.

May import `agents` and the layers below (`world`, `llm`, `prompts`, `records`).
"""

from planverify.graphs.adapters import plan_gate, reasons, verify_node

__all__ = ["plan_gate", "reasons", "verify_node"]
