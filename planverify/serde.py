"""The checkpoint serializer: LangGraph's, allowed to restore exactly this package's state types."""

from __future__ import annotations

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from planverify.graphs.state import checkpoint_types


def state_serializer() -> JsonPlusSerializer:
    """A serializer that restores the verification state and refuses other custom types."""
    return JsonPlusSerializer(allowed_msgpack_modules=list(checkpoint_types()))
