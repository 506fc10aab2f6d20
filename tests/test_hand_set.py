"""The hand-annotated test set: its file holds labels only, and they fit the episodes they name."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from planverify.metrics import plan_counts
from planverify.records.episode import Episode, Label
from planverify.records.notation import MOTION_VERBS, parse_action
from planverify.records.trim import labels_under
from planverify.world.rules import net_motion

from .conftest import benchmark_script
from .scenes import shared_games

LABEL_KEYS = {"type", "index", "after", "action", "error", "reason"}
GAME = {  # a one-task game in TEACh's format: a greeting, a pick-up and a put-down
    "tasks": [
        {
            "task_name": "Put All X On Y",
            "desc": "Put all Mug on any DiningTable.",
            "episodes": [
                {
                    "episode_id": "g1",
                    "interactions": [
                        {
                            "agent_id": 0,
                            "action_id": 100,
                            "time_start": 1.0,
                            "success": 1,
                            "utterance": "hi",
                        },
                        {
                            "agent_id": 1,
                            "action_id": 200,
                            "time_start": 2.0,
                            "success": 1,
                            "oid": "Mug|+1|+2|+3",
                        },
                        {
                            "agent_id": 1,
                            "action_id": 201,
                            "time_start": 3.0,
                            "success": 1,
                            "oid": "DiningTable|+0|+0|+0",
                        },
                    ],
                }
            ],
        }
    ]
}


@pytest.fixture(scope="module")
def hand_set() -> Iterator[ModuleType]:
    """benchmarks/hand_set.py, imported from its file (benchmarks/ is no package)."""
    with benchmark_script("hand_set") as module:
        yield module


@pytest.fixture(scope="module")
def natural_set(hand_set: ModuleType) -> Iterator[ModuleType]:
    """benchmarks/natural_set.py, which imports hand_set as the script next to it (the one
    `hand_set` holds, registered under that name while in use)."""
    with benchmark_script("natural_set") as module:
        yield module


def games_with(tmp_path: Path, game: dict[str, object]) -> Path:
    """A games directory holding one game in its `train` split, as the shared one is laid out."""
    split = tmp_path / "games" / "train"
    split.mkdir(parents=True)
    (split / "g1.game.json").write_text(json.dumps(game))
    return tmp_path / "games"


def test_the_file_holds_ids_digests_and_labels_only(hand_set: ModuleType) -> None:
    records = hand_set.read_records()
    assert len(records) >= 60
    assert len({r["id"] for r in records}) == len(records)
    for record in records:
        assert set(record) == hand_set.RECORD_KEYS, record["id"]
        assert re.fullmatch(r"[0-9a-f]{16}_[0-9a-f]{4}", record["id"])
        assert re.fullmatch(r"[0-9a-f]{64}", record["input_digest"])
        for label in record["labels"]:
            assert set(label) <= LABEL_KEYS, record["id"]
            Label.model_validate(label)
            if label["type"] == "REMOVE":
                assert "action" not in label, record["id"]  # no plan line is copied


def test_labels_name_the_error_type(hand_set: ModuleType) -> None:
    for record in hand_set.read_records():
        assert all(label.get("error") for label in record["labels"]), record["id"]


def test_without_the_games_the_loader_says_why(hand_set: ModuleType, tmp_path: Path) -> None:
    with pytest.raises(hand_set.HandSetUnavailable, match="no TEACh games at"):
        hand_set.load_hand_set(tmp_path / "absent")
    (tmp_path / "games" / "train").mkdir(parents=True)
    with pytest.raises(hand_set.HandSetUnavailable, match="in none of train, valid_seen"):
        hand_set.load_hand_set(tmp_path / "games")


def test_the_loader_rebuilds_an_episode_and_checks_its_digest(
    hand_set: ModuleType, tmp_path: Path
) -> None:
    games = games_with(tmp_path, GAME)
    episode = hand_set.load_game(games / "train" / "g1.game.json")
    assert episode.actions == [
        "Commander.Say('hi')",
        "Driver.PickUp('Mug')",
        "Driver.PutAOnB('Mug', 'DiningTable')",
    ]
    labels = [{"type": "REMOVE", "index": 1, "error": "detour"}]
    path = tmp_path / "hand.jsonl"
    path.write_text(
        json.dumps({"id": "g1", "input_digest": episode.input_digest, "labels": labels})
    )
    (loaded,) = hand_set.load_hand_set(games, path)
    assert loaded.actions == episode.actions
    assert loaded.input_digest == episode.input_digest  # annotations are not input
    assert [label.index for label in loaded.labels] == [1]
    assert loaded.model_extra["clean"] == [episode.actions[0], episode.actions[2]]

    path.write_text(json.dumps({"id": "g1", "input_digest": "0" * 64, "labels": labels}))
    with pytest.raises(ValueError, match="g1: the game converts to other content"):
        hand_set.load_hand_set(games, path)


def test_the_loader_refuses_a_label_on_dialogue(hand_set: ModuleType, tmp_path: Path) -> None:
    games = games_with(tmp_path, GAME)
    digest = hand_set.load_game(games / "train" / "g1.game.json").input_digest
    path = tmp_path / "hand.jsonl"
    path.write_text(
        json.dumps({"id": "g1", "input_digest": digest, "labels": [{"type": "REMOVE", "index": 0}]})
    )
    with pytest.raises(ValueError, match=r"g1: label 1: REMOVE on dialogue step 1 \(index 0\)"):
        hand_set.load_hand_set(games, path)


# --------------------------------------------------------------------------- on the shared games


@pytest.fixture(scope="module")
def annotated(hand_set: ModuleType) -> list[Episode]:
    """The hand set rebuilt from the shared games (digests checked, labels validated)."""
    try:
        return list(hand_set.load_hand_set())
    except hand_set.HandSetUnavailable as exc:
        pytest.skip(str(exc))


def test_every_episode_converts_to_what_was_annotated(
    hand_set: ModuleType, annotated: list[Episode]
) -> None:
    digests = {r["id"]: r["input_digest"] for r in hand_set.read_records()}
    assert {ep.id: ep.input_digest for ep in annotated} == digests


def test_labels_remove_driver_steps_only_never_dialogue_nor_motion(
    annotated: list[Episode],
) -> None:
    for episode in annotated:
        steps = episode.parsed()
        for label in episode.labels:
            if label.type == "REMOVE":
                assert 0 <= label.index < len(steps), episode.id
                step = steps[label.index]
                assert not step.is_dialogue, episode.id
                assert step.verb not in MOTION_VERBS, episode.id  # the guide never labels motion
            else:
                parse_action(label.action, strict=True)


def test_each_clean_plan_is_the_plan_without_its_errors(annotated: list[Episode]) -> None:
    for episode in annotated:
        clean = episode.model_extra["clean"]
        removed = {label.index for label in episode.labels if label.type == "REMOVE"}
        # removing exactly the labelled steps leaves no error and no false positive
        counts = plan_counts(episode.actions, clean, removed, motion=False)
        assert (counts.fp, counts.fn) == (0, 0), episode.id


def test_every_family_has_three_episodes_and_both_splits_appear(
    shared_dir: Path, annotated: list[Episode]
) -> None:
    families = {ep.task for ep in shared_games(shared_dir)}
    counts = Counter(ep.task for ep in annotated)
    assert set(counts) == families
    assert min(counts.values()) >= 3
    assert {ep.model_extra["split"] for ep in annotated} == {"train", "valid_seen"}


def test_the_episodes_are_the_seeded_draw(
    hand_set: ModuleType, shared_dir: Path, annotated: list[Episode]
) -> None:
    drawn = hand_set.draw(shared_games(shared_dir))
    assert [ep.id for ep in drawn] == [ep.id for ep in annotated]
    long = [ep for ep in drawn if hand_set.steps(ep) > hand_set.MAX_STEPS]
    assert {ep.task for ep in long} <= {"Breakfast", "Sandwich"}  # no shorter one exists
    assert all(hand_set.steps(ep, motion=False) <= hand_set.MAX_STEPS for ep in drawn)


# --------------------------------------------------------------------------- the natural files


def natural_files(natural_set: ModuleType) -> tuple[Path, ...]:
    """The natural files: the twelve test parts, the re-read of the hand set and the second
    reading of a sample of them."""
    return (
        natural_set.TEST_FILE,
        natural_set.TEST2_FILE,
        natural_set.TEST3_FILE,
        natural_set.TEST4_FILE,
        natural_set.TEST5_FILE,
        natural_set.TEST6_FILE,
        natural_set.TEST7_FILE,
        natural_set.TEST8_FILE,
        natural_set.TEST9_FILE,
        natural_set.TEST10_FILE,
        natural_set.TEST11_FILE,
        natural_set.TEST12_FILE,
        natural_set.REREAD_FILE,
        natural_set.SECOND_READING_FILE,
    )


def natural_records(natural_set: ModuleType) -> dict[str, list[dict[str, object]]]:
    """The natural files' lines, by file name."""
    return {path.name: natural_set.read_records(path) for path in natural_files(natural_set)}


def test_the_natural_files_hold_labels_marked_per_policy(natural_set: ModuleType) -> None:
    for name, records in natural_records(natural_set).items():
        assert len({r["id"] for r in records}) == len(records), name
        for record in records:
            assert set(record) == natural_set.RECORD_KEYS, record["id"]
            assert record["part"] == natural_set.PARTS[name], record["id"]
            assert re.fullmatch(r"[0-9a-f]{64}", record["input_digest"])
            for label in record["labels"]:
                assert set(label) <= LABEL_KEYS | {"policy", "optional"}, record["id"]
                assert label.get("error"), record["id"]
                Label.model_validate(label)
                if "policy" in label or "optional" in label:
                    assert label["policy"] == "minimal", record["id"]
                    assert label["optional"] in natural_set.OPTIONAL_KINDS, record["id"]


def test_the_test_part_is_new_and_the_reread_covers_the_hand_set(
    hand_set: ModuleType, natural_set: ModuleType
) -> None:
    records = natural_records(natural_set)
    hand = {r["id"]: r for r in hand_set.read_records()}
    test_part = records[natural_set.TEST_FILE.name]
    assert len(test_part) >= 40
    assert not {r["id"] for r in test_part} & set(hand)
    second = {r["id"] for r in records[natural_set.TEST2_FILE.name]}
    assert len(second) == 40
    assert not second & (set(hand) | {r["id"] for r in test_part})
    third = {r["id"] for r in records[natural_set.TEST3_FILE.name]}
    assert len(third) == 40
    assert not third & (set(hand) | {r["id"] for r in test_part} | second)
    fourth = {r["id"] for r in records[natural_set.TEST4_FILE.name]}
    assert len(fourth) == 40
    assert not fourth & (set(hand) | {r["id"] for r in test_part} | second | third)
    fifth = {r["id"] for r in records[natural_set.TEST5_FILE.name]}
    assert len(fifth) == 40
    assert not fifth & (set(hand) | {r["id"] for r in test_part} | second | third | fourth)
    sixth = {r["id"] for r in records[natural_set.TEST6_FILE.name]}
    assert len(sixth) == 39  # only two Plate Of Toast episodes were left to draw
    earlier = set(hand) | {r["id"] for r in test_part} | second | third | fourth | fifth
    assert not sixth & earlier
    seventh = {r["id"] for r in records[natural_set.TEST7_FILE.name]}
    assert len(seventh) == 36  # no Plate Of Toast and two N Cooked Slices were left to draw
    assert not seventh & (earlier | sixth)
    eighth = {r["id"] for r in records[natural_set.TEST8_FILE.name]}
    assert len(eighth) == 29  # nine families left to draw, and a single Breakfast
    assert not eighth & (earlier | sixth | seventh)
    ninth = {r["id"] for r in records[natural_set.TEST9_FILE.name]}
    assert len(ninth) == 34  # drawn under a cap of 80 steps: one Boil X, two N Cooked Slices
    assert not ninth & (earlier | sixth | seventh | eighth)
    tenth = {r["id"] for r in records[natural_set.TEST10_FILE.name]}
    assert len(tenth) == 29  # drawn under a cap of 100 steps: ten families left, one Boil X
    assert not tenth & (earlier | sixth | seventh | eighth | ninth)
    eleventh = {r["id"] for r in records[natural_set.TEST11_FILE.name]}
    assert len(eleventh) == 20  # under a cap of 100 steps: six families left, two Coffee
    assert not eleventh & (earlier | sixth | seventh | eighth | ninth | tenth)
    twelfth = {r["id"] for r in records[natural_set.TEST12_FILE.name]}
    assert len(twelfth) == 31  # every episode left: four families, one over the cap of 100
    assert not twelfth & (earlier | sixth | seventh | eighth | ninth | tenth | eleventh)
    reread = {r["id"]: r for r in records[natural_set.REREAD_FILE.name]}
    assert {i: r["input_digest"] for i, r in reread.items()} == {
        i: r["input_digest"] for i, r in hand.items()
    }
    for episode_id, record in hand.items():
        # the re-read keeps every label of hand.jsonl, marking some as minimal-only, and adds
        # labels on motion only (which the first reading never labelled)
        again = [
            {k: v for k, v in label.items() if k not in ("policy", "optional")}
            for label in reread[episode_id]["labels"]
            if label["error"] != natural_set.MOTION_ERROR
        ]
        key = lambda label: (label["type"], label.get("index"), label.get("after"))  # noqa: E731
        assert sorted(again, key=key) == sorted(record["labels"], key=key), episode_id


def test_natural_labels_are_those_without_the_minimal_marker() -> None:
    labels = [
        Label(type="REMOVE", index=1, error="detour"),
        Label.model_validate(
            {"type": "REMOVE", "index": 2, "error": "pointless_open_close"}
            | {"policy": "minimal", "optional": "search"}
        ),
    ]
    assert [label.index for label in labels_under(labels, "natural")] == [1]
    assert [label.index for label in labels_under(labels, "minimal")] == [1, 2]


def write_natural(natural_set: ModuleType, tmp_path: Path, labels: list[dict[str, object]]) -> Path:
    """A test-part file of one line for the game of `games_with`, with these labels."""
    digest = natural_set.load_game(tmp_path / "games" / "train" / "g1.game.json").input_digest
    path = tmp_path / natural_set.TEST_FILE.name
    record = {"id": "g1", "input_digest": digest, "part": "held_out_test", "labels": labels}
    path.write_text(json.dumps(record))
    return path


def test_the_natural_loader_gives_a_clean_plan_per_policy(
    natural_set: ModuleType, tmp_path: Path
) -> None:
    games = games_with(tmp_path, GAME)
    both = {"type": "REMOVE", "index": 2, "error": "detour"}
    minimal = {"type": "REMOVE", "index": 1, "error": "detour"}
    minimal |= {"policy": "minimal", "optional": "search"}
    path = write_natural(natural_set, tmp_path, [minimal, both])
    (episode,) = natural_set.load_natural(path, games)
    assert episode.model_extra["part"] == "held_out_test"
    assert episode.model_extra["clean"] == {
        "natural": episode.actions[:2],
        "minimal": episode.actions[:1],
    }
    assert [label.index for label in episode.labels] == [1, 2]  # all of them, as minimal reads


@pytest.mark.parametrize(
    ("labels", "problem"),
    [
        # without its pick-up, the put-down cannot happen: the simulator refuses that plan
        ([{"type": "REMOVE", "index": 1, "error": "detour"}], "natural labels fails: .* cannot"),
        (
            [{"type": "REMOVE", "index": 2, "error": "detour", "policy": "minimal"}],
            "needs both policy and optional",
        ),
        ([{"type": "REMOVE", "index": 2}], "without an error type"),
        ([{"type": "REMOVE", "index": 0, "error": "detour"}], "REMOVE on dialogue"),
    ],
)
def test_the_natural_loader_refuses_what_does_not_fit(
    natural_set: ModuleType, tmp_path: Path, labels: list[dict[str, object]], problem: str
) -> None:
    games = games_with(tmp_path, GAME)
    with pytest.raises(ValueError, match=f"g1: .*{problem}"):
        natural_set.load_natural(write_natural(natural_set, tmp_path, labels), games)


@pytest.fixture(scope="module")
def natural_sets(natural_set: ModuleType) -> dict[str, list[Episode]]:
    """The natural files rebuilt from the shared games, every check passed."""
    try:
        return {path.name: natural_set.load_natural(path) for path in natural_files(natural_set)}
    except natural_set.HandSetUnavailable as exc:
        pytest.skip(str(exc))


def test_the_test_part_is_the_seeded_draw_over_every_family(
    hand_set: ModuleType,
    natural_set: ModuleType,
    shared_dir: Path,
    natural_sets: dict[str, list[Episode]],
) -> None:
    games = shared_games(shared_dir)
    hand = [r["id"] for r in hand_set.read_records()]
    drawn = natural_set.draw_test(games, hand)
    assert [ep.id for ep in natural_set.draw_part(1, games)] == [ep.id for ep in drawn]
    excluded = set(hand)
    for part, (path, _, max_steps) in enumerate(natural_set.TEST_PARTS, start=1):
        test_part = natural_sets[path.name]
        assert [ep.id for ep in test_part] == [ep.id for ep in natural_set.draw_part(part, games)]
        assert {ep.model_extra["part"] for ep in test_part} == {natural_set.PARTS[path.name]}
        counts = Counter(ep.task for ep in test_part)
        # every family with episodes left to draw, three a family or all that are left (part 6
        # has two Plate Of Toast; part 7 none, and two N Cooked Slices Of X In Y; part 8 no
        # Boil X nor N Cooked Slices Of X In Y either, and one Breakfast; part 9, drawn under a
        # cap of 80 steps, no Plate Of Toast, one Boil X and two N Cooked Slices Of X In Y;
        # part 10, under a cap of 100, no Plate Of Toast nor N Cooked Slices Of X In Y, one
        # Boil X, one Water Plant and two Sandwich; part 11, under the same cap, only six
        # families, two of them Coffee)
        left = Counter(
            ep.task
            for ep in games
            if ep.id not in excluded and hand_set.steps(ep, motion=False) <= max_steps
        )
        assert set(counts) == set(left)
        assert all(n >= min(natural_set.PER_FAMILY, left[task]) for task, n in counts.items())
        excluded |= {ep.id for ep in test_part}
    last = natural_sets[natural_set.TEST12_FILE.name]  # every episode left, at any length
    assert [ep.id for ep in last] == [ep.id for ep in natural_set.draw_part(12, games)]
    assert {ep.id for ep in last} == {ep.id for ep in games} - excluded


def test_labels_keep_the_goal_and_motion_labels_keep_the_net_motion(
    natural_set: ModuleType, natural_sets: dict[str, list[Episode]]
) -> None:
    for episodes in natural_sets.values():
        for episode in episodes:
            for policy in ("natural", "minimal"):
                clean = episode.model_extra["clean"][policy]
                assert natural_set.runs_and_meets_goal(episode, clean) is None, episode.id
            kept = [
                a
                for i, a in enumerate(episode.parsed())
                if i not in {label.index for label in episode.labels if label.type == "REMOVE"}
            ]
            assert net_motion(kept) == net_motion(episode.parsed()), episode.id


def test_the_goal_check_sees_a_step_the_goal_needs(
    natural_set: ModuleType, natural_sets: dict[str, list[Episode]]
) -> None:
    episode = next(ep for ep in natural_sets[natural_set.TEST_FILE.name] if ep.task == "Boil X")
    last = max(i for i, a in enumerate(episode.parsed()) if a.verb == "PutAOnB")
    plan = episode.actions[:last] + episode.actions[last + 1 :]
    assert natural_set.runs_and_meets_goal(episode, plan) == (
        "it meets the goal less well than the whole plan"
    )
