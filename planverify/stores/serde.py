"""The checkpoint serializer: LangGraph's, allowed to restore exactly this package's state types,
with large values compressed.

Every checkpoint holds the whole state (the scene of a TEACh episode alone is several kB), so a
dataset's checkpoints grow by hundreds of kB an episode. Values of `COMPRESS_FROM` bytes or more
are stored zstd-compressed (level 1: about 6x smaller at some 30 microseconds a checkpoint), with
"+zstd" added to their type tag, the way LangGraph's encrypted serializer tags its values. Values
stored uncompressed, by earlier versions or other savers, read back as they are.

A list of one of the state's own models (the plan's steps, the history) is dumped in one
pydantic call and tagged "models:" + the type's name: LangGraph's msgpack dumps each model on
its own (the plan's steps alone were some 800,000 calls in a 1,500-episode run). Inside a
checkpoint, such a list among the channel values goes as one `ModelList` of plain dicts, and
"+lists" is added to the type tag. Lists stored the other way, by earlier versions, read back as
they are.

A scene is the same object in every checkpoint of an episode and most of a checkpoint's bytes, so
its msgpack encoding is made once (`_encoded`) and reused, byte for byte what LangGraph writes;
like the simulator's scene cache (`planverify.world.start`), this assumes a scene is not changed
in place while it is being verified.

A stored model names its type by module and class. The state's own types are restored by that
name, and a name written before a type moved is read through `MOVED`, one explicit table: stores
written by earlier versions keep restoring models, not dicts.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import ormsgpack
import zstandard
from langgraph.checkpoint.serde.jsonplus import (
    EXT_PYDANTIC_V2,
    JsonPlusSerializer,
    _msgpack_default,
)
from pydantic import BaseModel, TypeAdapter

from planverify.graphs.state import checkpoint_types
from planverify.records.episode import Scene

COMPRESS_FROM = 1024  # bytes; smaller values gain little and cost a frame header
_TAG = "+zstd"
_MODELS = "models:"  # type tag prefix of a list of one model type, dumped as a whole
_LISTS = "+lists"  # type tag suffix of a checkpoint whose lists of models are `ModelList`s
_ENCODED_SCENES = 256  # scenes whose encoding is kept (the episodes in flight, and more)
MOVED = {
    "planverify.serde": "planverify.stores.serde",
    "planverify.episode": "planverify.records.episode",
    "planverify.critique": "planverify.records.critique",
    "planverify.usage": "planverify.records.usage",
    "planverify.graphs.state": "planverify.records.history",  # Step, Edit, Iteration
}  # module of a stored type -> where the types it named live now (the state's own stay put)


class ModelList(BaseModel):
    """A checkpoint's list of one of the state's models, as plain dicts."""

    model: str  # the model type's name
    items: list[dict[str, Any]]


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
        self._scenes: dict[int, tuple[Scene, ormsgpack.Ext]] = {}  # by identity
        restorable: list[type[BaseModel]] = [*self._types, ModelList]
        self._restorable = {(m.__module__, m.__name__): m for m in restorable}
        self._langgraph_hook = self._unpack_ext_hook
        self._unpack_ext_hook = self._ext_hook

    def _ext_hook(self, code: int, data: bytes) -> Any:
        """LangGraph's msgpack extension hook, with the state's own types found by name
        (through `MOVED` for a name from before a move)."""
        if code != EXT_PYDANTIC_V2:
            return self._langgraph_hook(code, data)
        module, name, fields, *_ = ormsgpack.unpackb(
            data, ext_hook=self._ext_hook, option=ormsgpack.OPT_NON_STR_KEYS
        )
        model = self._restorable.get((module, name)) or self._restorable.get(
            (MOVED.get(module, module), name)
        )
        if model is None:
            return self._langgraph_hook(code, data)
        try:
            return model(**fields)
        except Exception:  # as LangGraph does: a value that no longer validates is kept as it is
            return model.model_construct(**fields)

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        wrapped = self._wrap_lists(obj)
        if wrapped is not None:
            kind, data = super().dumps_typed(wrapped)
            if any(isinstance(v, ModelList) for v in wrapped["channel_values"].values()):
                kind += _LISTS
        elif type(obj) is Scene:  # the input's write of its scene
            kind, data = super().dumps_typed(self._encoded(obj))
        else:
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
        if kind.endswith(_LISTS):
            return self._unwrap_lists(super().loads_typed((kind[: -len(_LISTS)], payload)))
        return super().loads_typed((kind, payload))

    def _model_of(self, obj: Any) -> str | None:
        """The name of the model a non-empty list holds only instances of, or None."""
        if type(obj) is not list or not obj:
            return None
        name = self._types.get(type(obj[0]))
        if name is None or any(type(item) is not type(obj[0]) for item in obj):
            return None
        return name

    def _wrap_lists(self, obj: Any) -> dict[str, Any] | None:
        """A checkpoint with its channels' lists of models as `ModelList`s and its scene as its
        encoding (`_encoded`); None when it is not a checkpoint."""
        values = obj.get("channel_values") if isinstance(obj, dict) else None
        if not isinstance(values, dict):
            return None
        wrapped = {channel: self._wrapped(value) for channel, value in values.items()}
        return {**obj, "channel_values": wrapped}

    def _wrapped(self, value: Any) -> Any:
        if type(value) is Scene:
            return self._encoded(value)
        if type(value) is dict and any(type(v) is Scene for v in value.values()):  # the input
            return {k: self._encoded(v) if type(v) is Scene else v for k, v in value.items()}
        return self._as_model_list(value) or value

    def _encoded(self, scene: Scene) -> ormsgpack.Ext:
        """The msgpack extension LangGraph encodes a scene as, made once per scene object."""
        cached = self._scenes.get(id(scene))
        if cached is not None and cached[0] is scene:
            return cached[1]
        encoded = _msgpack_default(scene)
        assert isinstance(encoded, ormsgpack.Ext)  # a pydantic model always is one
        if len(self._scenes) >= _ENCODED_SCENES:
            self._scenes.clear()
        self._scenes[id(scene)] = (scene, encoded)
        return encoded

    def _as_model_list(self, value: Any) -> ModelList | None:
        name = self._model_of(value)
        if name is None:
            return None
        # the items are plain dicts pydantic just made: validating them again would copy them
        return ModelList.model_construct(model=name, items=self._lists[name].dump_python(value))

    def _unwrap_lists(self, checkpoint: dict[str, Any]) -> dict[str, Any]:
        values = checkpoint["channel_values"]
        for channel, value in values.items():
            if isinstance(value, ModelList):
                values[channel] = self._lists[value.model].validate_python(value.items)
        return checkpoint

    def _dumps_models(self, obj: Any) -> tuple[str, bytes] | None:
        """A non-empty list of one of the models, dumped as a whole; None for anything else."""
        name = self._model_of(obj)
        if name is None:
            return None
        try:
            return _MODELS + name, ormsgpack.packb(self._lists[name].dump_python(obj))
        except (TypeError, ormsgpack.MsgpackEncodeError):
            return None  # something msgpack cannot hold as it is: LangGraph's way


def state_serializer() -> StateSerializer:
    """A serializer that restores the verification state and refuses other custom types."""
    types = checkpoint_types()
    return StateSerializer(models=types, allowed_msgpack_modules=[*types, ModelList])
