"""The verification loop as a LangGraph graph: state, context, nodes, the served graph and what a
served run may ask for.

May import `agents` and the layers below (`world`, `llm`, `prompts`, `records`).
"""
