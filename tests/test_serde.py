"""The checkpoint serializer: the state's own types restored, large values compressed."""

from __future__ import annotations

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from planverify.records.episode import Scene, SceneObject
from planverify.records.history import Step
from planverify.stores.serde import COMPRESS_FROM, state_serializer


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


def test_lists_of_models_are_dumped_whole_and_earlier_ones_still_read_back() -> None:
    serde = state_serializer()
    plan = [Step(action=f"Driver.Move({n}.0)", origin=n) for n in range(100)]
    plan.append(Step(action="Driver.ToggleOn('Faucet')", after=99, reason="never switched on"))
    kind, data = serde.dumps_typed(plan)
    assert kind == "models:Step+zstd"
    restored = serde.loads_typed((kind, data))
    assert restored == plan and all(isinstance(step, Step) for step in restored)
    earlier = JsonPlusSerializer(allowed_msgpack_modules=[Step]).dumps_typed(plan)
    assert earlier[0] == "msgpack" and serde.loads_typed(earlier) == plan
    mixed = [plan[0], {"action": "Driver.Move(1.0)"}]  # not one model type: LangGraph's way
    assert serde.dumps_typed(mixed)[0] == "msgpack"
    assert serde.loads_typed(serde.dumps_typed(mixed)) == mixed


def test_a_checkpoints_lists_of_models_are_dumped_whole() -> None:
    serde = state_serializer()
    plan = [Step(action=f"Driver.Move({n}.0)", origin=n) for n in range(100)]
    checkpoint = {"v": 4, "id": "1", "channel_values": {"plan": plan, "goal": "x", "dialogue": []}}
    kind, data = serde.dumps_typed(checkpoint)
    assert kind == "msgpack+lists+zstd"
    restored = serde.loads_typed((kind, data))
    assert restored == checkpoint and isinstance(restored["channel_values"]["plan"][0], Step)
    earlier = JsonPlusSerializer(allowed_msgpack_modules=[Step]).dumps_typed(checkpoint)
    assert serde.loads_typed(earlier) == checkpoint


def test_a_checkpoints_scene_is_encoded_once_and_exactly_as_langgraph_does() -> None:
    serde = state_serializer()
    shared = scene(100)
    plan = [Step(action="Driver.Move(1.0)", origin=0)]
    checkpoint = {"v": 4, "id": "1", "channel_values": {"plan": plan, "scene": shared}}
    first = serde.dumps_typed(checkpoint)
    again = serde.dumps_typed({**checkpoint, "id": "2"})
    fresh = state_serializer().dumps_typed({**checkpoint, "id": "2"})
    assert again == fresh  # the reused encoding is the one made afresh
    restored = serde.loads_typed(first)
    assert restored == checkpoint and isinstance(restored["channel_values"]["scene"], Scene)
    unwrapped = {**checkpoint, "channel_values": {"scene": shared, "plan": plan}}
    assert JsonPlusSerializer(allowed_msgpack_modules=[Scene, SceneObject, Step]).loads_typed(
        JsonPlusSerializer().dumps_typed(unwrapped)
    ) == serde.loads_typed(serde.dumps_typed(unwrapped))
