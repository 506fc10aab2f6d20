"""The bundled sample: valid, matching plain and annotated files, covering the task families."""

from __future__ import annotations

from typing import get_args

import orjson

from planverify import verify_many
from planverify.records.episode import InjectedError, read_episodes

from .conftest import ROOT

PLAIN = ROOT / "examples" / "episodes.jsonl"
ANNOTATED = ROOT / "examples" / "annotated.jsonl"
FAMILIES = {
    "Coffee",
    "Water Plant",
    "Clean All X",
    "Plate Of Toast",
    "Salad",
    "Boil X",
    "Put All X On Y",
}


def test_both_files_are_valid_and_hold_the_same_episodes() -> None:
    plain, errors = read_episodes([PLAIN])
    annotated, more_errors = read_episodes([ANNOTATED])
    assert errors == more_errors == []
    assert 8 <= len(plain) <= 15
    assert len({e.id for e in plain}) == len(plain)
    for p, a in zip(plain, annotated, strict=True):
        assert p.labels is None and a.labels is not None
        assert p == a.model_copy(update={"labels": None})


def test_the_sample_covers_the_task_families_and_error_types() -> None:
    annotated, _ = read_episodes([ANNOTATED])
    assert {e.task for e in annotated} >= FAMILIES
    kinds = {label.error for e in annotated for label in e.labels or []}
    assert kinds >= set(get_args(InjectedError))
    assert any(e.labels == [] for e in annotated), "a clean episode keeps precision honest"


def test_scene_names_are_only_set_for_objects_the_plan_mentions() -> None:
    for line in PLAIN.read_bytes().splitlines():
        record = orjson.loads(line)
        mentioned = " ".join(record["actions"])
        for obj in record["scene"]["objects"]:
            if obj["name"] is not None:
                assert f"'{obj['name']}'" in mentioned


def test_the_demo_episode_is_verified_offline() -> None:
    plain, _ = read_episodes([PLAIN])
    results = {r.id: r for r in verify_many(plain)}
    demo = results["coffee-detour"]
    assert demo.status == "ok" and demo.stop_reason == "no_objections"
    assert "Driver.Move(0.5)" not in demo.refined
    assert all(r.status == "ok" for r in results.values())
