"""benchmarks/annotator_agreement.py: two readings scored against each other as a Judge is."""

from __future__ import annotations

import doctest
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from planverify.records.episode import Episode

from .conftest import benchmark_script

PLAN = [
    "Driver.PickUp('Apple')",
    "Driver.PutAOnB('Apple', 'CounterTop')",
    "Driver.Open('Cabinet')",
    "Driver.Close('Cabinet')",
    "Driver.PickUp('Mug')",
    "Driver.PutAOnB('Mug', 'SinkBasin')",
]
DETOUR = [{"type": "REMOVE", "index": i, "error": "detour", "reason": "apple"} for i in (0, 1)]
SEARCH = [
    {"type": "REMOVE", "index": i, "error": "pointless_open_close", "reason": "looking"}
    | {"policy": "minimal", "optional": "search"}
    for i in (2, 3)
]


@pytest.fixture(scope="module")
def agreement() -> Iterator[ModuleType]:
    """The script, imported with its sibling scripts importable (benchmarks/ is no package)."""
    with benchmark_script("annotator_agreement") as module:
        yield module


def reading(labels: list[dict[str, Any]]) -> Episode:
    """An episode read with these labels, its clean plan per policy as `load_natural` makes it."""
    natural = [label["index"] for label in labels if "policy" not in label]
    every = [label["index"] for label in labels]
    return Episode.model_validate(
        {
            "id": "e",
            "actions": PLAN,
            "labels": labels,
            "clean": {
                "natural": [s for i, s in enumerate(PLAN) if i not in natural],
                "minimal": [s for i, s in enumerate(PLAN) if i not in every],
            },
        }
    )


def test_its_examples_hold(agreement: ModuleType) -> None:
    result = doctest.testmod(agreement)
    assert result.attempted >= 2 and result.failed == 0


def test_the_sample_depends_on_ids_alone(agreement: ModuleType) -> None:
    episodes = [Episode(id=f"g{i}", actions=[]) for i in range(9)]
    drawn = [ep.id for ep in agreement.draw_sample(episodes)]
    assert len(drawn) == agreement.SAMPLE_PER_SET
    assert [ep.id for ep in agreement.draw_sample(list(reversed(episodes)))] == drawn
    relabelled = [ep.model_copy(update={"actions": PLAN}) for ep in episodes]
    assert [ep.id for ep in agreement.draw_sample(relabelled)] == drawn


def test_a_reading_scored_against_itself_agrees_fully(agreement: ModuleType) -> None:
    first = reading(DETOUR + SEARCH)
    for trim in ("natural", "minimal"):
        counts = agreement.score(first, agreement.removed(first, trim), trim, motion=False)
        assert (counts.fp, counts.fn) == (0, 0)
        assert counts.tp == (2 if trim == "natural" else 4)


def test_a_reading_that_misses_a_detour_is_short_of_recall_and_the_other_of_precision(
    agreement: ModuleType,
) -> None:
    first, second = reading(DETOUR + SEARCH), reading(SEARCH)
    for trim in ("natural", "minimal"):
        against_first = agreement.score(first, agreement.removed(second, trim), trim, motion=False)
        against_second = agreement.score(second, agreement.removed(first, trim), trim, motion=False)
        assert (against_first.fn, against_first.fp) == (2, 0)
        assert (against_second.fp, against_second.fn) == (2, 0)


def test_a_search_only_minimal_removes_counts_under_minimal_alone(agreement: ModuleType) -> None:
    first = reading(DETOUR + SEARCH)
    assert agreement.removed(first, "natural") == {0, 1}
    assert agreement.removed(first, "minimal") == {0, 1, 2, 3}
    marked_as_both = reading(
        DETOUR + [{k: v for k, v in s.items() if k not in ("policy", "optional")} for s in SEARCH]
    )
    counts = agreement.score(
        first, agreement.removed(marked_as_both, "natural"), "natural", motion=False
    )
    assert (counts.tp, counts.fp, counts.fn) == (2, 2, 0)


def test_the_second_reading_is_the_drawn_sample_of_every_development_set(
    agreement: ModuleType, shared_dir: Path
) -> None:
    games = shared_dir / "teach" / "games"
    if not games.is_dir():
        pytest.skip(f"no TEACh games under {shared_dir}")
    sets = agreement.development_sets(games)
    pairs = agreement.read_pairs(games, sets)
    drawn = {ep.id for episodes in sets.values() for ep in agreement.draw_sample(episodes)}
    assert {first.id for first, _ in pairs} == drawn
    for first, second in pairs:
        assert first.input_digest == second.input_digest
        assert (second.model_extra or {})["part"] == "second_reading"


def test_a_dispute_is_won_by_the_side_the_adjudicator_took(agreement: ModuleType) -> None:
    items = [
        {"id": "e", "removed_by": "judge", "decision": {"1": "REMOVE", "2": "KEEP"}},
        {"id": "e", "removed_by": "reading", "decision": {"5": "REMOVE", "6": "UNCLEAR"}},
    ]
    sides = agreement.adjudicated_sides(items, {"e": {1, 2}})
    assert sides[("judge", "judge")] == sides[("judge", "reading")] == 1
    assert sides[("reading", "reading")] == 1 and sides[("reading", "judge")] == 0
    assert sides[("reading", "unclear")] == 1
    assert sides[("judge", "today: disagrees")] == 1  # step 2 is still removed
    assert sides[("reading", "today: disagrees")] == 1  # step 5 is still kept


def test_every_adjudicated_dispute_names_steps_of_a_development_episode(
    agreement: ModuleType, shared_dir: Path
) -> None:
    natural_set = sys.modules["natural_set"]
    lines = natural_set.ADJUDICATION_FILE.read_text().splitlines()
    items = [json.loads(line) for line in lines]
    assert [item["item"] for item in items] == list(range(1, len(items) + 1))
    for item in items:
        assert item["removed_by"] in ("judge", "reading")
        assert sorted(int(step) for step in item["decision"]) == item["steps"]
        assert set(item["decision"].values()) <= {"REMOVE", "KEEP", "UNCLEAR"}
        assert item["why"]
    games = shared_dir / "teach" / "games"
    if not games.is_dir():
        pytest.skip(f"no TEACh games under {shared_dir}")
    for name in {item["set"] for item in items}:
        episodes = {
            ep.id: ep for ep in natural_set.load_natural(natural_set.DEVELOPMENT_SETS[name], games)
        }
        for item in (i for i in items if i["set"] == name):
            episode = episodes[item["id"]]
            labelled = {label.index for label in episode.labels or [] if label.type == "REMOVE"}
            for step in item["steps"]:
                assert episode.parsed()[step].verb not in ("Move", "TurnLeft", "TurnRight", "Say")
                if item["removed_by"] == "reading":  # a miss: the first reading removes it
                    assert step in labelled, (item["item"], step)
