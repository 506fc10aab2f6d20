"""Reading JSON records: a key given twice in one object is refused, never taken silently."""

from __future__ import annotations

from pathlib import Path

import pytest

from planverify.records.episode import EpisodeError, read_episodes
from planverify.records.jsonl import load_json, loads

TWICE = [
    b'{"id": "a", "actions": [], "id": "b"}',
    b'{"id":"a","actions":[],"scene":{"objects":[{"type":"Mug","type":"Cup"}]}}',
    b'{"id" : "a" , "actions" : [] , "goal" : "x" , "goal"\t: "x"}',
    b'{"id": "a", "actions": [], "go\\u0061l": "x", "goal": "x:y"}',
]
ONCE = [
    b'{"id": "a:b", "actions": ["Commander.Say(\'at 10:30\')"], "goal": "\\"x\\": y"}',
    b'{"id": "a", "actions": [], "goal": "\\u003a\\u003A", "note": {"k": "::"}}',
    b'[{"a": 1}, {"a": 2}]',
]


@pytest.mark.parametrize("raw", TWICE)
def test_a_key_given_twice_in_one_object_is_refused(raw: bytes) -> None:
    with pytest.raises(ValueError, match="appears twice in one object"):
        loads(raw)


@pytest.mark.parametrize("raw", ONCE)
def test_colons_and_escapes_in_text_are_not_taken_for_a_repeated_key(raw: bytes) -> None:
    assert loads(raw) is not None


def test_an_episode_line_with_a_repeated_key_is_skipped_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "episodes.jsonl"
    path.write_bytes(
        b'{"id": "good", "actions": ["Driver.Move(1.0)"]}\n'
        b'{"id": "x", "actions": ["Driver.Move(1.0)"], "actions": []}\n'
    )
    episodes, errors = read_episodes([path])
    assert [e.id for e in episodes] == ["good"]
    (error,) = errors
    assert isinstance(error, EpisodeError) and ":2" in str(error)
    assert "'actions' appears twice" in str(error)


def test_a_whole_file_with_a_repeated_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    path.write_text('{\n  "tasks": [],\n  "tasks": [{"episodes": []}]\n}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="'tasks' appears twice"):
        load_json(path)
