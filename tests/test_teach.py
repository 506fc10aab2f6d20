"""The TEACh game-file loader: real games from ../shared and each conversion rule on tiny games."""

from __future__ import annotations

import types
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from planverify.inputs.teach import (
    LoadSummary,
    convert_game,
    expand_inputs,
    game_actions,
    iter_games,
    object_type_of,
    reason_of,
    split_of,
)
from planverify.records.episode import Episode, EpisodeError, iter_jsonl
from planverify.records.notation import parse_action

TEACH = Path(__file__).resolve().parents[1].parent / "shared" / "teach"
EXPECTED = ["train/0008f3c95e006303_2053", "valid_seen/193f64286be0ba2c_0e02"]

FWD, BACK, LEFT, RIGHT, PAN, LOOK_UP = 2, 3, 4, 5, 8, 6
PICKUP, PLACE, POUR, TEXT, SPEECH = 200, 201, 211, 100, 101
COMMANDER, DRIVER = 0, 1
MUG, MUG2 = "Mug|+01.00|+00.90|-01.00", "Mug|-02.00|+00.90|+03.00"
SINK = "Sink|-00.60|+00.93|-03.39|SinkBasin"


@pytest.fixture
def teach_dir() -> Path:
    """The shared TEACh data; skips the test when absent."""
    if not (TEACH / "games").is_dir():
        pytest.skip(f"TEACh games not found at {TEACH} (shared data sits next to the repository)")
    return TEACH


def ev(action: int, *, agent: int = DRIVER, success: int = 1, **fields: Any) -> dict[str, Any]:
    """One interaction; `time_start` is filled in by `game` unless given."""
    return {"agent_id": agent, "action_id": action, "success": success, **fields}


def say(text: str, *, agent: int = DRIVER, corrected: str | None = None) -> dict[str, Any]:
    extra: dict[str, Any] = {} if corrected is None else {"corrected_utterance": corrected}
    return ev(TEXT, agent=agent, utterance=text, **extra)


def obj(action: int, oid: str, **fields: Any) -> dict[str, Any]:
    return ev(action, oid=oid, **fields)


def game(*events: dict[str, Any], **episode: Any) -> dict[str, Any]:
    """A one-task, one-episode game whose events happen at t = 0, 1, 2, ... unless timed."""
    timed = [{"time_start": float(i), **e} for i, e in enumerate(events)]
    return {
        "tasks": [
            {
                "task_name": "Coffee",
                "desc": "Prepare coffee in a clean mug.",
                "episodes": [{"episode_id": "ep1", "interactions": timed, **episode}],
            }
        ]
    }


def plan(*events: dict[str, Any]) -> list[str]:
    return game_actions(game(*events))


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else orjson.dumps(data))
    return path


# --------------------------------------------------------------------------- real games


@pytest.mark.parametrize("stem", EXPECTED)
def test_real_games_convert_exactly(teach_dir: Path, stem: str) -> None:
    expected = teach_dir / "expected" / f"{Path(stem).name}.actions.txt"
    (episode,) = iter_games([teach_dir / "games" / f"{stem}.game.json"])
    assert isinstance(episode, Episode)
    assert episode.actions == expected.read_text().splitlines()
    assert episode.id == Path(stem).name
    assert episode.model_extra is not None
    assert episode.model_extra["split"] == Path(stem).parent.name


def test_all_shared_games_load(teach_dir: Path) -> None:
    summary, ids, splits = LoadSummary(), set(), []
    for item in summary.track(iter_games([teach_dir / "games"])):
        assert isinstance(item, Episode), str(item)
        for line in item.actions:
            assert str(parse_action(line, strict=True)) == line
        named = {o.name for o in item.scene.objects if o.name} if item.scene else set()
        mentioned = {name for a in item.parsed() for name in a.objects}
        assert named <= mentioned
        ids.add(item.id)
        splits.append((item.model_extra or {})["split"])
    assert (summary.read, summary.skipped) == (478, 0)
    assert len(ids) == 478
    assert (splits.count("train"), splits.count("valid_seen")) == (297, 181)


def test_appliance_on_at_start_is_toggled_in_scene(teach_dir: Path) -> None:
    (episode,) = iter_games([teach_dir / "games/train/0008f3c95e006303_2053.game.json"])
    assert isinstance(episode, Episode) and episode.scene is not None
    machine = next(o for o in episode.scene.objects if o.type == "CoffeeMachine")
    assert (machine.name, machine.toggled, machine.parent) == (
        "CoffeeMachine",
        True,
        ["CounterTop"],
    )
    assert episode.actions[23] == "Driver.ToggleOff('CoffeeMachine')"


# --------------------------------------------------------------------------- motion


def test_motion_run_continues_across_skipped_and_failed_events() -> None:
    assert plan(
        ev(FWD),
        ev(PAN),
        ev(LOOK_UP),
        ev(FWD, success=0),
        ev(LEFT, success=0),
        ev(FWD, agent=COMMANDER),
        ev(500, agent=COMMANDER),
        ev(102),
        ev(300),
        obj(PLACE, SINK),  # nothing held: emits nothing
        say("   "),  # empty: emits nothing
        ev(FWD),
    ) == ["Driver.Move(0.5)"]


def test_motion_run_ends_at_other_kind_or_emitted_line() -> None:
    assert plan(
        ev(FWD), ev(LEFT), ev(FWD), say("ok"), ev(FWD), obj(202, "Fridge|1|2|3"), ev(RIGHT)
    ) == [
        "Driver.Move(0.25)",
        "Driver.TurnLeft(90.0)",
        "Driver.Move(0.25)",
        "Driver.Say('ok')",
        "Driver.Move(0.25)",
        "Driver.Open('Fridge')",
        "Driver.TurnRight(90.0)",
    ]


def test_zero_net_run_emits_nothing_and_lines_are_not_merged() -> None:
    assert plan(ev(FWD), ev(BACK)) == []
    assert plan(ev(FWD), ev(LEFT), ev(RIGHT), ev(FWD)) == ["Driver.Move(0.25)", "Driver.Move(0.25)"]


def test_move_amounts_defaults_and_signs() -> None:
    assert plan(ev(FWD)) == ["Driver.Move(0.25)"]
    assert plan(ev(BACK)) == ["Driver.Move(-0.25)"]
    assert plan(ev(12)) == ["Driver.Move(0.5)"]
    assert plan(ev(13), ev(BACK)) == ["Driver.Move(-0.75)"]
    assert plan(ev(BACK, pose_delta=[0.5, 0, 0, 0, 0, 0])) == ["Driver.Move(-0.5)"]
    assert plan(ev(FWD, pose_delta=[-0.5, 0, 0, 0, 0, 0])) == ["Driver.Move(0.5)"]
    assert plan(*[ev(FWD, pose_delta=[0.1, 0, 0, 0, 0, 0])] * 3) == ["Driver.Move(0.3)"]
    assert plan(*[ev(FWD)] * 8) == ["Driver.Move(2.0)"]


def test_turn_signs_and_net_values() -> None:
    assert plan(ev(LEFT)) == ["Driver.TurnLeft(90.0)"]
    assert plan(ev(RIGHT), ev(RIGHT), ev(RIGHT)) == ["Driver.TurnRight(270.0)"]
    assert plan(ev(LEFT), ev(RIGHT), ev(RIGHT)) == ["Driver.TurnRight(90.0)"]
    assert plan(*[ev(LEFT)] * 4) == ["Driver.TurnLeft(360.0)"]


# --------------------------------------------------------------------------- objects


def test_object_verbs() -> None:
    verbs = {202: "Open", 203: "Close", 204: "ToggleOn", 205: "ToggleOff", 206: "Slice"}
    verbs |= {207: "Dirty", 208: "Clean", 209: "Fill", 210: "Empty", 212: "Break"}
    for action, verb in verbs.items():
        assert plan(obj(action, MUG)) == [f"Driver.{verb}('Mug')"]


def test_pickup_place_and_pour_track_the_held_object() -> None:
    assert plan(
        obj(PLACE, SINK),  # nothing held
        obj(POUR, SINK),  # nothing held
        obj(PICKUP, MUG),
        obj(POUR, SINK),
        obj(PLACE, "CounterTop|1|2|3"),
        obj(PLACE, SINK),  # nothing held any more
        obj(POUR, SINK),
    ) == [
        "Driver.PickUp('Mug')",
        "Driver.PourFromAIntoB('Mug', 'SinkBasin')",
        "Driver.PutAOnB('Mug', 'CounterTop')",
    ]


def test_failed_commander_and_oidless_interactions_are_skipped() -> None:
    assert (
        plan(
            obj(PICKUP, MUG, success=0),
            obj(PICKUP, MUG, agent=COMMANDER),
            ev(PICKUP, oid=None),
            ev(204),
            say("hi", agent=COMMANDER) | {"success": 0},
            ev(FWD, agent=COMMANDER),
            ev(RIGHT, agent=COMMANDER),
            ev(400),
            ev(501, agent=COMMANDER),
        )
        == []
    )


def test_unknown_action_ids_are_counted_and_the_load_summary_warns(tmp_path: Path) -> None:
    data = game(ev(FWD), ev(999), obj(PICKUP, MUG), ev(999, success=0), ev(-7), ev(LOOK_UP))
    episode = convert_game(data)
    assert episode.actions == ["Driver.Move(0.25)", "Driver.PickUp('Mug')"]
    assert (episode.model_extra or {})["unknown_action_ids"] == {"-7": 1, "999": 2}
    known = convert_game(game(ev(FWD), ev(LOOK_UP), ev(502)))
    assert "unknown_action_ids" not in (known.model_extra or {}), "skipped on purpose"
    write(tmp_path / "a.game.json", data)
    write(tmp_path / "b.game.json", game(ev(FWD)))
    summary = LoadSummary()
    list(summary.track(iter_games([tmp_path])))
    assert summary.unknown_actions == {"999": 2, "-7": 1}
    assert str(summary) == (
        "read 2 game(s), skipped 0; left out 3 interaction(s) with an action id TEACh does "
        "not define, in 1 game(s) (id: count 999: 2, -7: 1)"
    )


def test_skipped_inputs_are_summarised_by_reason_not_by_episode(tmp_path: Path) -> None:
    path = tmp_path / "episodes.jsonl"
    path.write_text(
        '{"id": "a", "actions": [], "goal": "x\\u0000"}\n'
        '{"id": "b", "actions": [], "goal": "y\\u0000"}\n'
        '{"id": "c", "actions": [], "labels": [{"type": "REMOVE", "index": 4}]}\n'
        '{"id": "d", "actions": [], "labels": [{"type": "REMOVE", "index": 7}]}\n',
        encoding="utf-8",
    )
    errors = [e for e in iter_jsonl(path) if isinstance(e, EpisodeError)]
    assert len(errors) == 4
    assert Counter(reason_of(e) for e in errors) == {
        "goal holds a NUL character": 2,
        "REMOVE index N out of range": 2,
    }


def test_object_names() -> None:
    assert object_type_of("Sink|-00.60|+00.93|-03.39|SinkBasin") == "SinkBasin"
    assert object_type_of("Bread|-01.87|+00.99|-00.82|BreadSliced_3") == "BreadSliced"
    assert object_type_of("Bread|-01.87|+00.99|-00.82|Bread_0") == "Bread"
    assert object_type_of("Apple_2|+01|+02|+03") == "Apple_2"  # four parts or fewer: first part
    slice3, slice4 = "Bread|1|2|3|BreadSliced_3", "Bread|1|2|3|BreadSliced_4"
    assert plan(
        obj(PICKUP, MUG2, success=0),  # failed: does not take a name
        obj(PICKUP, MUG),
        obj(PLACE, SINK),
        obj(PICKUP, MUG2),
        obj(PLACE, SINK),
        obj(PICKUP, MUG),
        obj(206, "Bread|1|2|3"),
        obj(PICKUP, slice4),
        obj(PICKUP, slice3),
    ) == [
        "Driver.PickUp('Mug')",
        "Driver.PutAOnB('Mug', 'SinkBasin')",
        "Driver.PickUp('Mug2')",
        "Driver.PutAOnB('Mug2', 'SinkBasin')",
        "Driver.PickUp('Mug')",
        "Driver.Slice('Bread')",
        "Driver.PickUp('BreadSliced')",
        "Driver.PickUp('BreadSliced2')",
    ]


# --------------------------------------------------------------------------- utterances


def test_utterances() -> None:
    lines = plan(
        say("hi  there\n\tfriend ", agent=COMMANDER),
        say("it's in C:\\fridge"),
        say("teh mug", corrected="the  mug"),
        say("kept", corrected=""),
        ev(SPEECH, utterance="spoken"),
        say(""),
        say(" \n "),
        ev(TEXT),
    )
    assert lines == [
        "Commander.Say('hi there friend')",
        "Driver.Say('it\\'s in C:\\\\fridge')",
        "Driver.Say('the mug')",
        "Driver.Say('kept')",
        "Driver.Say('spoken')",
    ]
    assert parse_action(lines[1], strict=True).text == "it's in C:\\fridge"


# --------------------------------------------------------------------------- games


def test_interactions_of_all_tasks_and_episodes_sorted_by_time() -> None:
    data = game(say("b", agent=COMMANDER) | {"time_start": 2.0}, say("a") | {"time_start": 1.0})
    data["tasks"].append(
        {
            "task_name": "Other",
            "episodes": [{"episode_id": "ep2", "interactions": [say("c") | {"time_start": 1.5}]}],
        }
    )
    assert game_actions(data) == [
        "Driver.Say('a')",
        "Driver.Say('c')",
        "Commander.Say('b')",
    ]
    ties = game(say("first") | {"time_start": 1.0}, say("second") | {"time_start": 1.0})
    assert game_actions(ties) == ["Driver.Say('first')", "Driver.Say('second')"]


def test_an_episode_repeated_in_a_game_is_converted_once() -> None:
    data = game(ev(FWD), say("hi"), ev(FWD))
    episode = data["tasks"][0]["episodes"][0]
    copy = [{k: v for k, v in e.items() if k != "utterance"} for e in episode["interactions"]]
    data["tasks"][0]["episodes"].append({**episode, "interactions": copy})
    assert game_actions(data) == ["Driver.Move(0.25)", "Driver.Say('hi')", "Driver.Move(0.25)"]


def test_convert_game_fields_and_scene() -> None:
    state = {
        "objects": [
            {"objectId": MUG, "objectType": "Mug", "pickupable": True, "isDirty": True,
             "parentReceptacles": [SINK, "CounterTop|1|2|3"]},
            {"objectId": "CoffeeMachine|1|2|3", "objectType": "CoffeeMachine",
             "toggleable": True, "isToggled": True, "receptacle": True},
            {"objectId": "Fridge|1|2|3", "objectType": "Fridge", "openable": True,
             "isOpen": True, "parentReceptacles": None},
            {"objectId": MUG2, "objectType": "Mug", "isFilledWithLiquid": False,
             "isCooked": False},
        ],
        "custom_object_metadata": {MUG2: {"simbotIsFilledWithCoffee": True}},
    }  # fmt: skip
    data = game(obj(PICKUP, MUG), obj(205, "CoffeeMachine|1|2|3"), initial_state=state)
    data["tasks"][0]["components"] = {
        "mug": {"determiner": "a", "task": {"components": {
            "sink": {"determiner": "a", "conditions": {"objectType": "Sink", "receptacle": 1}},
            "Mug": {"determiner": "a", "conditions": {"simbotObjectClass": "Mug"}}}}},
        "potato": {"determiner": "0", "conditions": {"objectType": "Potato"}},
    }  # fmt: skip
    episode = convert_game(data, source="g.json", split="train")
    assert (episode.id, episode.task, episode.goal) == (
        "ep1",
        "Coffee",
        "Prepare coffee in a clean mug.",
    )
    assert episode.actions == ["Driver.PickUp('Mug')", "Driver.ToggleOff('CoffeeMachine')"]
    extra = episode.model_extra or {}
    assert (extra["split"], extra["source"], extra["task_objects"]) == (
        "train",
        "g.json",
        ["Sink", "Mug"],
    )
    assert episode.scene is not None
    mug, machine, fridge, mug2 = episode.scene.objects
    assert (mug.name, mug.type, mug.pickupable, mug.dirty, mug.parent) == (
        "Mug", "Mug", True, True, ["SinkBasin", "CounterTop"]
    )  # fmt: skip
    assert mug.within == [SINK, "CounterTop|1|2|3"]  # which sink and counter, by id
    assert (machine.name, machine.toggleable, machine.toggled, machine.receptacle) == (
        "CoffeeMachine", True, True, True
    )  # fmt: skip
    assert (fridge.name, fridge.open, fridge.parent) == (None, True, [])
    # TEACh's simbot states in the initial state are the end-of-game values: not read
    assert (mug2.name, mug2.filled) == (None, False)
    assert convert_game(game(say("hi"))).scene is None


def test_the_scene_says_which_whole_each_slice_the_plan_names_is_cut_from() -> None:
    tomato, tomato2 = "Tomato|1|2|3", "Tomato|4|5|6"
    state = {"objects": [{"objectId": t, "objectType": "Tomato"} for t in (tomato, tomato2)]}
    data = game(
        obj(206, tomato),
        obj(206, tomato2),
        obj(PICKUP, f"{tomato2}|TomatoSliced_1"),
        obj(PICKUP, f"{tomato}|TomatoSliced_4"),
        initial_state=state,
    )
    episode = convert_game(data)
    assert episode.actions[2:] == [
        "Driver.PickUp('TomatoSliced')",
        "Driver.PickUp('TomatoSliced2')",
    ]
    assert episode.scene is not None
    assert episode.scene.made_from == {"TomatoSliced": "Tomato2", "TomatoSliced2": "Tomato"}


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ([1, 2], "not a JSON object"),
        ({}, "missing key: tasks"),
        ({"tasks": {}}, "wrong type: tasks is dict"),
        ({"tasks": [{"episodes": []}]}, "no episodes"),
        (
            {"tasks": [{"episodes": [{"episode_id": "e"}]}]},
            "missing key: tasks[0].episodes[0].interactions",
        ),
        (
            game(ev(FWD) | {"time_start": "soon"}),
            "wrong type: tasks[0].episodes[0].interactions[0].time_start",
        ),
        (game(ev(FWD) | {"pose_delta": ["far"]}), "wrong type: pose_delta"),
        (game(obj(PICKUP, "mug|1|2|3")), "bad object id"),
    ],
)
def test_malformed_game_raises_one_line_error(data: Any, problem: str) -> None:
    with pytest.raises(EpisodeError) as info:
        convert_game(data, source="bad.game.json")
    assert (info.value.source, info.value.line) == ("bad.game.json", 0)
    assert info.value.message.startswith(problem)
    assert "\n" not in str(info.value) and str(info.value).startswith("bad.game.json: ")


# --------------------------------------------------------------------------- files


def test_bad_files_yield_errors_and_the_others_load(tmp_path: Path) -> None:
    good = write(tmp_path / "train" / "good.game.json", game(say("hi")))
    write(tmp_path / "train" / "json.game.json", b"{not json")
    write(tmp_path / "train" / "list.game.json", [game()])
    write(tmp_path / "train" / "keys.game.json", {"tasks": [{}]})
    missing = tmp_path / "nowhere.game.json"
    summary = LoadSummary()
    items = list(summary.track(iter_games([tmp_path, missing])))
    assert [Path(i.source if isinstance(i, EpisodeError) else "?").name for i in items] == [
        "nowhere.game.json",  # sorted paths: tmp/nowhere... < tmp/train/...
        "?",
        "json.game.json",
        "keys.game.json",
        "list.game.json",
    ]
    errors = {Path(e.source).name: e.message for e in items if isinstance(e, EpisodeError)}
    assert errors["json.game.json"].startswith("malformed JSON: ")
    assert errors["list.game.json"] == "not a JSON object: the game is list"
    assert errors["keys.game.json"] == "missing key: tasks[0].episodes"
    assert errors["nowhere.game.json"] == "no such file or directory"
    assert all("\n" not in str(e) for e in items if isinstance(e, EpisodeError))
    episode = items[1]
    assert isinstance(episode, Episode) and (episode.model_extra or {})["source"] == str(good)
    assert (summary.read, summary.skipped) == (1, 4)
    assert summary.reasons["malformed JSON"] == 1
    assert str(summary).startswith("read 1 game(s), skipped 4 (")


def test_iter_games_streams(tmp_path: Path) -> None:
    first = write(tmp_path / "a.game.json", game(say("a")))
    second = write(tmp_path / "b.game.json", game(say("b")))
    stream = iter_games([tmp_path])
    assert isinstance(stream, types.GeneratorType)
    assert isinstance(next(stream), Episode)
    second.write_bytes(b"[")  # read only when reached
    assert isinstance(next(stream), EpisodeError)
    assert first.exists()


def test_expand_inputs_directories_globs_and_splits(tmp_path: Path) -> None:
    train = write(tmp_path / "games" / "train" / "t.game.json", game())
    seen = write(tmp_path / "games" / "valid_seen" / "deep" / "v.game.json", game())
    other = write(tmp_path / "other" / "x.json", game())
    write(tmp_path / "games" / "train" / "notes.txt", b"")
    assert expand_inputs([tmp_path / "games"]) == [train, seen]
    assert expand_inputs([tmp_path / "games"], split="valid_seen") == [seen]
    assert expand_inputs([str(tmp_path / "games" / "*" / "*.game.json")], split="train") == [train]
    assert expand_inputs([str(tmp_path / "*")]) == [train, seen]  # matched directories expand
    assert expand_inputs([other, str(tmp_path / "games" / "**" / "*.game.json"), train]) == sorted(
        [train, seen, other]
    )
    missing = tmp_path / "gone" / "*.game.json"
    assert expand_inputs([missing, train], split="valid_seen") == [missing]
    assert (split_of(train), split_of(seen), split_of(other)) == ("train", None, None)
