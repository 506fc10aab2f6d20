"""The checkpoint serializer: LangGraph's, allowed to restore exactly this package's state types,
with large values compressed.

Every checkpoint holds the whole state (the scene of a TEACh episode alone is several kB), so a
dataset's checkpoints grow by hundreds of kB an episode. Values of `COMPRESS_FROM` bytes or more
are stored zstd-compressed (level 1: about 6x smaller at some 30 microseconds a checkpoint), with
"+zstd" added to their type tag, the way LangGraph's encrypted serializer tags its values. Values
stored uncompressed, by earlier versions or other savers, read back as they are.

A list of one of the state's own models (the plan's steps, the history) is dumped in one
pydantic call and tagged "models:" + the type's name: LangGraph's msgpack dumps each model on
its own (the plan's steps alone were some 800,000 calls in a 1,500-episode run). Lists stored
the other way, by earlier versions, read back as they are.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import ormsgpack
import zstandard
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from pydantic import BaseModel, TypeAdapter

from planverify.graphs.state import checkpoint_types

COMPRESS_FROM = 1024  # bytes; smaller values gain little and cost a frame header
_TAG = "+zstd"
_MODELS = "models:"  # type tag prefix of a list of one model type, dumped as a whole


class StateSerializer(JsonPlusSerializer):
    """`JsonPlusSerializer` that compresses large values."""

    def __init__(self, *, models: Iterable[type[BaseModel]] = (), **options: Any) -> None:
        super().__init__(**options)
        self._compress = zstandard.ZstdCompressor(level=1).compress
        self._decompress = zstandard.ZstdDecompressor().decompress
        self._types = {model: model.__name__ for model in models}
        self._lists: dict[str, TypeAdapter[list[BaseModel]]] = {
            model.__name__: TypeAdapter(list[model])  # type: ignore[valid-type]
            for model in models
        }

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        kind, data = self._dumps_models(obj) or super().dumps_typed(obj)
        if len(data) < COMPRESS_FROM:
            return kind, data
        return kind + _TAG, self._compress(data)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        kind, payload = data
        if kind.endswith(_TAG):
            kind, payload = kind[: -len(_TAG)], self._decompress(payload)
        if kind.startswith(_MODELS):
            adapter = self._lists[kind.removeprefix(_MODELS)]
            return adapter.validate_python(ormsgpack.unpackb(payload))
        return super().loads_typed((kind, payload))

    def _dumps_models(self, obj: Any) -> tuple[str, bytes] | None:
        """A non-empty list of one of the models, dumped as a whole; None for anything else."""
        if type(obj) is not list or not obj:
            return None
        name = self._types.get(type(obj[0]))
        if name is None or any(type(item) is not type(obj[0]) for item in obj):
            return None
        try:
            return _MODELS + name, ormsgpack.packb(self._lists[name].dump_python(obj))
        except (TypeError, ormsgpack.MsgpackEncodeError):
            return None  # something msgpack cannot hold as it is: LangGraph's way


def state_serializer() -> StateSerializer:
    """A serializer that restores the verification state and refuses other custom types."""
    types = checkpoint_types()
    return StateSerializer(models=types, allowed_msgpack_modules=list(types))
