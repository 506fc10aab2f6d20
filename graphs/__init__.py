"""The verification loop as a LangGraph graph: state, context, nodes, the served graph and what a
served run may ask for; the graph and nodes for other graphs (`subgraph`, `adapters`).

May import `agents` and the layers below (`world`, `llm`, `prompts`, `records`).
"""

from planverify.graphs.adapters import plan_gate, reasons, verify_node
from planverify.graphs.subgraph import graph

__all__ = ["graph", "plan_gate", "reasons", "verify_node"]
