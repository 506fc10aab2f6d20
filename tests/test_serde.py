"""The checkpoint serializer: the state's own types restored, large values compressed."""

from __future__ import annotations

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from planverify.episode import Scene, SceneObject
from planverify.graphs.state import Step
from planverify.serde import COMPRESS_FROM, state_serializer


def scene(objects: int) -> Scene:
    return Scene(
        objects=[
            SceneObject(id=f"Mug|{n}", type="Mug", name=f"Mug{n}", pickupable=True)
            for n in range(objects)
        ]
    )


def test_large_values_are_compressed_and_read_back() -> None:
    serde = state_serializer()
    value = {"scene": scene(200), "plan": [Step(action="Driver.PickUp('Mug')", origin=0)]}
    kind, data = serde.dumps_typed(value)
    plain_kind, plain = JsonPlusSerializer().dumps_typed(value)
    assert kind == plain_kind + "+zstd"
    assert len(data) * 4 < len(plain), (len(data), len(plain))
    restored = serde.loads_typed((kind, data))
    assert restored == value and isinstance(restored["scene"], Scene)


def test_small_values_and_earlier_uncompressed_ones_are_left_as_they_are() -> None:
    serde = state_serializer()
    small = [Step(action="Driver.Move(1.0)", origin=3)]
    kind, data = serde.dumps_typed(small)
    assert not kind.endswith("+zstd") and len(data) < COMPRESS_FROM
    assert serde.loads_typed((kind, data)) == small
    earlier = JsonPlusSerializer(allowed_msgpack_modules=[Scene, SceneObject])
    stored = earlier.dumps_typed(scene(50))
    assert len(stored[1]) >= COMPRESS_FROM
    assert serde.loads_typed(stored) == scene(50)
