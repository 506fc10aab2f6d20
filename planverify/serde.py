"""The checkpoint serializer: LangGraph's, allowed to restore exactly this package's state types,
with large values compressed.

Every checkpoint holds the whole state (the scene of a TEACh episode alone is several kB), so a
dataset's checkpoints grow by hundreds of kB an episode. Values of `COMPRESS_FROM` bytes or more
are stored zstd-compressed (level 1: about 6x smaller at some 30 microseconds a checkpoint), with
"+zstd" added to their type tag, the way LangGraph's encrypted serializer tags its values. Values
stored uncompressed, by earlier versions or other savers, read back as they are.
"""

from __future__ import annotations

from typing import Any

import zstandard
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from planverify.graphs.state import checkpoint_types

COMPRESS_FROM = 1024  # bytes; smaller values gain little and cost a frame header
_TAG = "+zstd"


class StateSerializer(JsonPlusSerializer):
    """`JsonPlusSerializer` that compresses large values."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._compress = zstandard.ZstdCompressor(level=1).compress
        self._decompress = zstandard.ZstdDecompressor().decompress

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        kind, data = super().dumps_typed(obj)
        if len(data) < COMPRESS_FROM:
            return kind, data
        return kind + _TAG, self._compress(data)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        kind, payload = data
        if kind.endswith(_TAG):
            return super().loads_typed((kind[: -len(_TAG)], self._decompress(payload)))
        return super().loads_typed(data)


def state_serializer() -> StateSerializer:
    """A serializer that restores the verification state and refuses other custom types."""
    return StateSerializer(allowed_msgpack_modules=list(checkpoint_types()))
