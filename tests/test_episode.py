"""Episode records: validation, line-numbered errors, labels, JSONL round trip."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from planverify.records.episode import (
    EpisodeError,
    dump_jsonl_line,
    iter_jsonl,
    parse_episode,
    read_episodes,
)

PLAN = ["Commander.Say('Make coffee.')", "Driver.PickUp('Mug')", "Driver.ToggleOn('CoffeeMachine')"]


def write(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_plain_record_keeps_extra_keys_and_integer_ids() -> None:
    episode = parse_episode({"id": 7, "actions": PLAN, "split": "train"})
    assert episode.id == "7"
    assert episode.goal is None
    assert episode.model_extra == {"split": "train"}
    assert [a.verb for a in episode.parsed()] == ["Say", "PickUp", "ToggleOn"]


def test_errors_name_the_source_the_line_and_the_problem(tmp_path: Path) -> None:
    path = write(
        tmp_path / "in.jsonl",
        orjson.dumps({"id": "ok", "actions": PLAN}).decode(),
        "{not json",
        "",
        orjson.dumps({"id": "bad", "actions": ["pick up the mug"]}).decode(),
        orjson.dumps(["a", "list"]).decode(),
        orjson.dumps({"actions": PLAN}).decode(),
    )
    items = list(iter_jsonl(path))
    assert [type(i).__name__ for i in items] == [
        "Episode",
        "EpisodeError",
        "EpisodeError",
        "EpisodeError",
        "EpisodeError",
    ]
    errors = [i for i in items if isinstance(i, EpisodeError)]
    assert [e.line for e in errors] == [2, 4, 5, 6]
    assert "malformed JSON" in str(errors[0])
    assert str(errors[1]).startswith(f"{path}:4: actions: action 1: not an action")
    assert "must be a JSON object" in str(errors[2])
    assert "id: Field required" in str(errors[3])
    assert all("\n" not in str(e) for e in errors)


def test_unknown_verbs_are_valid_input() -> None:
    episode = parse_episode({"id": "x", "actions": ["Driver.Teleport('Kitchen')"]})
    assert not episode.parsed()[0].known


@pytest.mark.parametrize(
    ("label", "message"),
    [
        ({"type": "REMOVE", "index": 3}, r"label 1: REMOVE index 3 out of range \(step 4 of "),
        ({"type": "REMOVE", "index": 0}, r"label 1: REMOVE on dialogue step 1 \(index 0\)"),
        (
            {"type": "MISSING", "after": 5, "action": "Driver.Slice('Bread')"},
            r"MISSING after 5 out of range \(after step 6 of ",
        ),
        ({"type": "MISSING", "after": 0}, "MISSING needs an action"),
        ({"type": "MISSING", "after": -1, "action": "Driver.Fly('Mug')"}, "unknown verb"),
        ({"type": "REMOVE", "index": 1, "error": "typo"}, "label 1, error: Input should be"),
    ],
)
def test_bad_labels_are_rejected(label: dict[str, object], message: str) -> None:
    with pytest.raises(EpisodeError, match=message):
        parse_episode({"id": "x", "actions": PLAN, "labels": [label]}, source="a.jsonl", line=9)


def test_good_labels_and_round_trip(tmp_path: Path) -> None:
    record = {
        "id": "x",
        "goal": "Make coffee.",
        "actions": PLAN,
        "labels": [
            {"type": "REMOVE", "index": 1, "error": "detour"},
            {"type": "MISSING", "after": -1, "action": "Driver.Move(0.5)"},
        ],
        "scene": {"objects": [{"id": "Mug|1|2|3", "type": "Mug", "name": "Mug", "toggled": False}]},
    }
    episode = parse_episode(record)
    path = tmp_path / "out.jsonl"
    path.write_bytes(dump_jsonl_line(episode))
    (again,), errors = read_episodes([path])
    assert errors == []
    assert again == episode
    assert again.scene is not None and again.scene.objects[0].type == "Mug"


def test_multiline_actions_are_rejected() -> None:
    with pytest.raises(EpisodeError, match="spans several lines"):
        parse_episode({"id": "x", "actions": ["Driver.PickUp('Mug')\nDriver.Move(1.0)"]})


@pytest.mark.parametrize("brk", ["\r", "\r\n", "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1e"])
def test_every_line_break_inside_an_action_is_refused(brk: str) -> None:
    with pytest.raises(EpisodeError, match="spans several lines"):
        parse_episode({"id": "x", "actions": [f"Driver.PickUp('Mug'){brk}Driver.Move(1.0)"]})
    said = f"Commander.Say('first{brk}second')"
    with pytest.raises(EpisodeError, match="spans several lines"):
        parse_episode({"id": "x", "actions": [said]})


def test_line_breaks_around_an_action_are_stripped_as_before() -> None:
    episode = parse_episode({"id": "x", "actions": ["\r\nDriver.PickUp('Mug')\u2028\r\n"]})
    assert episode.actions == ["Driver.PickUp('Mug')"]


@pytest.mark.parametrize("flag", [True, False])
def test_a_boolean_id_is_refused_not_turned_into_text(flag: bool) -> None:
    with pytest.raises(EpisodeError, match="boolean"):
        parse_episode({"id": flag, "actions": PLAN})


def test_history_merges_iterations_sent_as_json_objects() -> None:
    from planverify.records.critique import Critique
    from planverify.records.history import Iteration, merge_history

    first = Iteration(iteration=1, critique=Critique())
    sent = [{"iteration": 2, "critique": {}}, {"iteration": 1, "critique": {}, "edits": []}]
    merged = merge_history([first], sent)  # type: ignore[arg-type]
    assert [(type(i), i.iteration) for i in merged] == [(Iteration, 1), (Iteration, 2)]


def test_an_input_digest_follows_every_field_when_the_scene_object_is_the_same() -> None:
    from planverify.records.episode import Scene, input_digest

    scene = Scene.model_validate({"objects": [{"id": "Mug|1", "type": "Mug"}]})
    given = {"goal": "Make coffee.", "actions": PLAN, "task": "Coffee", "teach_task": None}
    first = input_digest(scene=scene, **given)
    assert input_digest(scene=scene, **given) == first
    assert input_digest(scene=scene.model_dump(mode="json"), **given) == first  # as a record
    for field, other in [("goal", "Make tea."), ("actions", PLAN[:2]), ("task", "Tea")]:
        changed = {**given, field: other}
        assert input_digest(scene=scene, **changed) != first, field
        assert input_digest(scene=scene, **changed) == input_digest(
            scene=scene.model_copy(deep=True), **changed
        )
    assert input_digest(scene=scene, **{**given, "teach_task": {"task_name": "Coffee"}}) != first
