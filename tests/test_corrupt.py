"""Error injection: exact labels, the original plan recoverable, determinism, selection rules."""

from __future__ import annotations

import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planverify.noise import CorruptSummary
from planverify.noise.common import ACTING_PLACES
from planverify.noise.injected import (
    ESSENTIAL_TOGGLES,
    FALLBACK_APPLIANCES,
    FALLBACK_PICKUPABLE,
    KINDS,
    NO_OP_REPEATS,
    ErrorKind,
    corrupt_episode,
    corrupt_many,
)
from planverify.records.episode import (
    Episode,
    Label,
    Scene,
    SceneObject,
    dump_jsonl_line,
    parse_episode,
)
from planverify.records.notation import Action, object_type, parse_action

SHARED_GAMES = Path(__file__).resolve().parents[2] / "shared" / "teach" / "games"


def obj(kind: str, **state: Any) -> SceneObject:
    return SceneObject(id=f"{kind}|+01.00|+00.90|-01.00", type=kind, **state)


KITCHEN = Scene(
    objects=[
        obj("Floor", receptacle=True),
        obj("CounterTop", receptacle=True),
        obj("DiningTable", receptacle=True),
        obj("Sink", receptacle=True),
        obj("Cabinet", receptacle=True, openable=True),
        obj("Drawer", receptacle=True, openable=True),
        obj("Fridge", receptacle=True, openable=True),
        obj("Microwave", receptacle=True, openable=True, toggleable=True),
        obj("CoffeeMachine", receptacle=True, toggleable=True),
        obj("Toaster", receptacle=True, toggleable=True),
        obj("Faucet", toggleable=True),
        obj("LightSwitch", toggleable=True, toggled=True),
        obj("Mug", pickupable=True, receptacle=True, parent=["CounterTop"]),
        obj("Bread", pickupable=True, parent=["CounterTop"]),
        obj("Knife", pickupable=True, parent=["DiningTable"]),
        obj("Spatula", pickupable=True, parent=["CounterTop"]),
        obj("SaltShaker", pickupable=True, parent=["DiningTable"]),
        obj("Apple", pickupable=True, parent=["Fridge"]),  # behind a closed door
        obj("Plate", pickupable=True, receptacle=True, parent=["DiningTable"]),
    ]
)
COFFEE = [
    "Commander.Say('Make coffee in a clean mug.')",
    "Driver.Move(1.0)",
    "Driver.TurnLeft(90.0)",
    "Driver.PickUp('Mug')",
    "Driver.Move(0.5)",
    "Driver.PutAOnB('Mug', 'Sink')",
    "Driver.ToggleOn('Faucet')",
    "Driver.ToggleOff('Faucet')",
    "Driver.PickUp('Mug')",
    "Driver.PutAOnB('Mug', 'CoffeeMachine')",
    "Driver.ToggleOn('CoffeeMachine')",
    "Driver.Say('done')",
]
TOAST = [
    "Driver.PickUp('Knife')",
    "Driver.Slice('Bread')",
    "Driver.PutAOnB('Knife', 'CounterTop')",
    "Driver.PickUp('BreadSliced')",
    "Driver.PutAOnB('BreadSliced', 'Toaster')",
    "Driver.ToggleOn('Toaster')",
    "Driver.ToggleOff('Toaster')",
    "Driver.PickUp('BreadSliced')",
    "Driver.PutAOnB('BreadSliced', 'Plate')",
]
PLANT = [
    "Commander.Say('The plant needs water.')",
    "Driver.PickUp('Cup')",
    "Driver.Move(1.5)",
    "Driver.PourFromAIntoB('Cup', 'HousePlant')",
    "Driver.PutAOnB('Cup', 'CounterTop')",
]
TALK = ["Commander.Say('hello')", "Driver.Say('hi, what should I do?')"]


def synthetic() -> list[Episode]:
    return [
        Episode(id="coffee", actions=COFFEE, goal="Prepare coffee in a clean mug.", scene=KITCHEN),
        Episode(id="toast", actions=TOAST, goal="Make a slice of toast.", scene=KITCHEN),
        Episode(id="plant", actions=PLANT, goal="Water the plant.", task="Water Plant"),
        Episode(id="empty", actions=[], scene=KITCHEN),
        Episode(id="talk", actions=TALK),
    ]


def notes(ep: Episode) -> list[dict[str, Any]]:
    return list((ep.model_extra or {}).get("injected", []))


def restore(ep: Episode) -> list[str]:
    """Undo the injection: drop REMOVE-labelled lines and injected utterances, put MISSING back."""
    labels = ep.labels or []
    drop = {lab.index for lab in labels if lab.type == "REMOVE"}
    drop |= {
        i
        for note in notes(ep)
        for i in note.get("lines", [])
        if parse_action(ep.actions[i]).is_dialogue
    }
    added: dict[int, list[str]] = {}
    for lab in labels:
        if lab.type == "MISSING":
            assert lab.after is not None and lab.action is not None
            added.setdefault(lab.after, []).append(lab.action)
    out = list(added.get(-1, []))
    for i, line in enumerate(ep.actions):
        if i not in drop:
            out.append(line)
        out += added.get(i, [])
    return out


def check(original: Episode, ep: Episode) -> None:
    """Everything a corrupted episode must satisfy."""
    assert ep.id == original.id and ep.goal == original.goal and ep.scene == original.scene
    assert ep.labels is not None
    ep.validate_labels()
    assert parse_episode(orjson.loads(dump_jsonl_line(ep))) == ep
    assert restore(ep) == original.actions
    assert (ep.model_extra or {})["clean"] == original.actions  # the plan before the errors
    labelled = {lab.index: lab for lab in ep.labels if lab.type == "REMOVE"}
    injected_lines: dict[int, str] = {}
    for note in notes(ep):
        for i in note.get("lines", []):
            assert i not in injected_lines
            injected_lines[i] = note["error"]
    # every REMOVE label points at an injected line of its own kind, every injected step is labelled
    for i, lab in labelled.items():
        assert injected_lines.get(i) == lab.error
        assert lab.reason
    for i, kind in injected_lines.items():
        if parse_action(ep.actions[i]).is_dialogue:
            assert kind == "misplacement" and i not in labelled
        else:
            assert i in labelled
    missing_notes = [n for n in notes(ep) if n["error"] == "missing_step"]
    missing_labels = [lab for lab in ep.labels if lab.type == "MISSING"]
    assert len(missing_notes) == len(missing_labels)
    for lab in missing_labels:
        assert lab.error == "missing_step" and lab.reason
        assert {"error": "missing_step", "after": lab.after, "action": lab.action} in missing_notes
    # labels come in plan order
    keys = [(lab.index, 0) if lab.type == "REMOVE" else (lab.after, 1) for lab in ep.labels]
    assert keys == sorted(keys)  # type: ignore[type-var]


def dumps(episodes: Iterable[Episode]) -> list[bytes]:
    return [dump_jsonl_line(ep) for ep in episodes]


# --------------------------------------------------------------------------- the key property


@pytest.mark.parametrize("seed", range(40))
def test_injected_errors_can_be_undone_exactly(seed: int) -> None:
    rng = random.Random(seed)
    for original in synthetic():
        ep = corrupt_episode(original, rng=rng, errors=rng.randint(0, 6))
        check(original, ep)


VOCABULARY = [
    "Driver.PickUp('Mug')",
    "Driver.PutAOnB('Mug', 'CounterTop')",
    "Driver.PickUp('BreadSliced2')",
    "Driver.PutAOnB('BreadSliced2', 'Toaster')",
    "Driver.ToggleOn('Toaster')",
    "Driver.ToggleOn('CoffeeMachine')",
    "Driver.ToggleOff('CoffeeMachine')",
    "Driver.Slice('Tomato')",
    "Driver.PourFromAIntoB('Mug', 'Sink')",
    "Driver.Open('Fridge')",
    "Driver.Close('Fridge')",
    "Driver.Move(0.25)",
    "Driver.Move(-0.5)",
    "Driver.TurnLeft(90.0)",
    "Driver.TurnRight(180.0)",
    "Commander.Say('go on')",
    "Driver.Say('it\\'s done')",
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    plan=st.lists(st.sampled_from(VOCABULARY), max_size=14),
    with_scene=st.booleans(),
    errors=st.integers(min_value=0, max_value=7),
    seed=st.integers(min_value=0, max_value=10_000),
    kinds=st.lists(st.sampled_from(KINDS), min_size=1, unique=True),
)
def test_any_plan_any_kinds(
    plan: list[str], with_scene: bool, errors: int, seed: int, kinds: list[ErrorKind]
) -> None:
    original = Episode(id="h", actions=plan, scene=KITCHEN if with_scene else None)
    ep = corrupt_episode(original, rng=random.Random(seed), errors=errors, kinds=kinds)
    check(original, ep)
    assert len(notes(ep)) <= errors
    assert {n["error"] for n in notes(ep)} <= set(kinds)
    if "cancelling_navigation" in kinds:  # always possible, so exactly `errors` are injected
        assert len(notes(ep)) == errors


# --------------------------------------------------------------------------- each kind


def many(kinds: list[ErrorKind], errors: int = 3, seeds: int = 30) -> list[tuple[Episode, Episode]]:
    out = []
    for seed in range(seeds):
        for original in synthetic():
            ep = corrupt_episode(original, rng=random.Random(seed), errors=errors, kinds=kinds)
            check(original, ep)
            out.append((original, ep))
    return out


def lines_of(ep: Episode, kind: str) -> list[list[int]]:
    return [n["lines"] for n in notes(ep) if n["error"] == kind]


def holding_before(actions: list[str]) -> list[str | None]:
    held: str | None = None
    out = []
    for line in actions:
        out.append(held)
        step = parse_action(line)
        if step.verb == "PickUp":
            held = step.objects[0]
        elif step.verb == "PutAOnB":
            held = None
    return out


def plan_types(original: Episode) -> set[str]:
    return {object_type(o) for a in original.parsed() for o in a.objects}


def test_detour_picks_up_an_unneeded_object_with_empty_hands() -> None:
    seen = set()
    for original, ep in many(["detour"]):
        held = holding_before(ep.actions)
        for first, second in lines_of(ep, "detour"):
            assert second == first + 1
            pick, put = parse_action(ep.actions[first]), parse_action(ep.actions[second])
            assert pick.verb == "PickUp" and put.verb == "PutAOnB"
            thing = pick.objects[0]
            assert put.objects[0] == thing and held[first] is None
            assert thing not in plan_types(original)
            assert thing != "Apple"  # shut in the fridge
            if original.scene is None:
                assert thing in FALLBACK_PICKUPABLE
            seen.add(thing)
    assert {"Spatula", "SaltShaker"} <= seen


def test_detour_respects_goal_and_task_objects() -> None:
    original = Episode(
        id="g",
        actions=[
            "Driver.PickUp('Mug')",
            "Driver.PutAOnB('Mug', 'Plate')",
            "Driver.PickUp('Knife')",
            "Driver.PickUp('BreadSliced')",  # Bread is needed too
        ],
        goal="Put the spatula away.",
        scene=KITCHEN,
        task_objects=["SaltShaker"],  # type: ignore[call-arg]
    )
    for seed in range(30):
        ep = corrupt_episode(original, rng=random.Random(seed), errors=1, kinds=["detour"])
        check(original, ep)
        # Spatula is in the goal, SaltShaker in the task, the rest in the plan or the fridge
        assert notes(ep) == []


def test_misplacement_pair_is_labelled_and_the_utterance_is_not() -> None:
    count = 0
    for _original, ep in many(["misplacement"]):
        labelled = {lab.index for lab in ep.labels or []}
        for put, say, pick in lines_of(ep, "misplacement"):
            count += 1
            wrong, oops, again = (parse_action(ep.actions[i]) for i in (put, say, pick))
            assert (put, pick) == (say - 1, say + 1)
            assert put in labelled and pick in labelled and say not in labelled
            assert oops.is_dialogue and oops.agent == "Driver"
            assert wrong.verb == "PutAOnB" and again.verb == "PickUp"
            assert wrong.objects[0] == again.objects[0]
            assert holding_before(ep.actions)[put] == wrong.objects[0]
            # the plan's own put-down of the same object follows
            later = next(
                parse_action(line)
                for line in ep.actions[pick + 1 :]
                if parse_action(line).verb == "PutAOnB"
            )
            assert later.objects[0] == wrong.objects[0]
            assert object_type(later.objects[1]) != object_type(wrong.objects[1])
            assert object_type(wrong.objects[1]) not in {"Floor", "Toaster", "CoffeeMachine"}
            assert object_type(wrong.objects[1]) not in ACTING_PLACES  # a sink washes, fills
    assert count > 20


def test_premature_toggle_turns_off_an_unused_appliance_that_is_off() -> None:
    off = {o.type for o in KITCHEN.objects if o.toggleable and not o.toggled}
    for original, ep in many(["premature_toggle"]):
        for (i,) in lines_of(ep, "premature_toggle"):
            step = parse_action(ep.actions[i])
            assert step.verb == "ToggleOff"
            assert step.objects[0] not in plan_types(original)
            assert step.objects[0] in (off if original.scene else set(FALLBACK_APPLIANCES))
            assert step.objects[0] != "LightSwitch"  # it starts on


def test_cancelling_navigation_undoes_itself() -> None:
    kinds = set()
    for _original, ep in many(["cancelling_navigation"]):
        for first, second in lines_of(ep, "cancelling_navigation"):
            a, b = parse_action(ep.actions[first]), parse_action(ep.actions[second])
            assert second == first + 1
            assert a.value is not None and b.value is not None
            if a.verb == "Move":
                assert b.verb == "Move" and a.value == -b.value != 0
            else:
                assert {a.verb, b.verb} == {"TurnLeft", "TurnRight"}
                assert a.value == b.value > 0
            kinds.add(a.verb)
    assert kinds == {"Move", "TurnLeft", "TurnRight"}


def test_pointless_open_close_uses_a_closed_unused_container() -> None:
    closed = {o.type for o in KITCHEN.objects if o.openable and not o.open}
    for original, ep in many(["pointless_open_close"]):
        for first, second in lines_of(ep, "pointless_open_close"):
            a, b = parse_action(ep.actions[first]), parse_action(ep.actions[second])
            assert (a.verb, b.verb, second) == ("Open", "Close", first + 1)
            assert a.objects == b.objects
            assert a.objects[0] not in plan_types(original)
            if original.scene:
                assert a.objects[0] in closed


def test_duplicate_repeats_a_no_op_step_right_after_it() -> None:
    count = 0
    # crowd the gaps: other insertions compete for the same positions
    for _original, ep in many(["duplicate", "premature_toggle", "cancelling_navigation"], errors=6):
        injected = {i for n in notes(ep) for i in n.get("lines", [])}
        for (i,) in lines_of(ep, "duplicate"):
            count += 1
            assert ep.actions[i] == ep.actions[i - 1] and i - 1 not in injected
            assert parse_action(ep.actions[i]).verb in NO_OP_REPEATS
    assert count > 20


def essential(step: Action) -> bool:
    if step.verb == "ToggleOn":
        return object_type(step.objects[0]) in ESSENTIAL_TOGGLES
    return step.verb in {"Slice", "PourFromAIntoB"}


def test_missing_step_removes_an_essential_step() -> None:
    removed = set()
    for original, ep in many(["missing_step", "detour", "misplacement"], errors=4):
        for lab in ep.labels or []:
            if lab.type != "MISSING":
                continue
            assert lab.action is not None and lab.after is not None
            assert essential(parse_action(lab.action))
            assert lab.action in original.actions
            removed.add(lab.action)
    assert {
        "Driver.ToggleOn('CoffeeMachine')",
        "Driver.ToggleOn('Faucet')",
        "Driver.ToggleOn('Toaster')",
        "Driver.Slice('Bread')",
        "Driver.PourFromAIntoB('Cup', 'HousePlant')",
    } <= removed


def test_indices_are_final_positions_hand_checked() -> None:
    toggle, cut, move = "Driver.ToggleOn('Toaster')", "Driver.Slice('Bread')", "Driver.Move(1.0)"
    original = Episode(id="x", actions=[toggle, cut, move])
    ep = corrupt_episode(
        original,
        rng=random.Random(1),
        errors=4,
        kinds=["missing_step", "duplicate", "cancelling_navigation"],
    )
    # step 0 removed; a motion pair before where it was; step 1 repeated right after itself,
    # then a turn pair in the same gap (after the repeat); step 2 last
    assert ep.actions == [
        "Driver.Move(-1.0)",
        "Driver.Move(1.0)",
        cut,
        cut,
        "Driver.TurnRight(90.0)",
        "Driver.TurnLeft(90.0)",
        move,
    ]
    assert [(lab.type, lab.index, lab.after, lab.action, lab.error) for lab in ep.labels or []] == [
        ("REMOVE", 0, None, None, "cancelling_navigation"),
        ("REMOVE", 1, None, None, "cancelling_navigation"),
        ("MISSING", None, 1, toggle, "missing_step"),
        ("REMOVE", 3, None, None, "duplicate"),
        ("REMOVE", 4, None, None, "cancelling_navigation"),
        ("REMOVE", 5, None, None, "cancelling_navigation"),
    ]
    assert notes(ep) == [
        {"error": "missing_step", "after": 1, "action": toggle},
        {"error": "duplicate", "lines": [3]},
        {"error": "cancelling_navigation", "lines": [0, 1]},
        {"error": "cancelling_navigation", "lines": [4, 5]},
    ]
    check(original, ep)


def test_missing_after_minus_one_when_the_first_step_is_removed() -> None:
    original = Episode(id="x", actions=["Driver.ToggleOn('CoffeeMachine')", "Driver.Move(1.0)"])
    ep = corrupt_episode(original, rng=random.Random(0), errors=1, kinds=["missing_step"])
    assert ep.actions == ["Driver.Move(1.0)"]
    assert ep.labels == [
        Label(
            type="MISSING",
            after=-1,
            action="Driver.ToggleOn('CoffeeMachine')",
            reason="the plan needs Driver.ToggleOn('CoffeeMachine')",
            error="missing_step",
        )
    ]
    check(original, ep)


def test_adjacent_essential_steps_are_not_both_removed() -> None:
    plan = ["Driver.ToggleOn('Toaster')", "Driver.ToggleOn('CoffeeMachine')"]
    original = Episode(id="x", actions=plan)
    for seed in range(20):
        ep = corrupt_episode(original, rng=random.Random(seed), errors=2, kinds=["missing_step"])
        assert len(ep.labels or []) == 1
        check(original, ep)


def test_kinds_that_do_not_fit_are_skipped() -> None:
    talk = Episode(id="t", actions=TALK)
    ep = corrupt_episode(
        talk, rng=random.Random(0), errors=3, kinds=["duplicate", "missing_step", "misplacement"]
    )
    assert ep.labels == [] and ep.actions == TALK and notes(ep) == []
    ep = corrupt_episode(talk, rng=random.Random(0), errors=2)
    assert len(notes(ep)) == 2
    check(talk, ep)


def test_no_errors_leaves_the_plan_alone() -> None:
    original = synthetic()[0]
    ep = corrupt_episode(original, rng=random.Random(0), errors=0)
    assert ep.actions == original.actions and ep.labels == []


def test_refuses_annotated_episodes_and_unknown_kinds() -> None:
    labelled = Episode(id="a", actions=COFFEE, labels=[Label(type="REMOVE", index=1)])
    with pytest.raises(ValueError, match="already annotated"):
        corrupt_episode(labelled, rng=random.Random(0), errors=1)
    with pytest.raises(ValueError, match="unknown error kind"):
        corrupt_episode(synthetic()[0], rng=random.Random(0), errors=1, kinds=["typo"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="errors_per_episode"):
        list(corrupt_many(synthetic(), errors_per_episode=(3, 1)))


# --------------------------------------------------------------------------- corrupt_many


def population(n: int) -> list[Episode]:
    return [
        Episode(id=f"ep{i}", actions=COFFEE if i % 2 else TOAST, scene=KITCHEN) for i in range(n)
    ]


def test_same_seed_same_output_other_seed_other_output() -> None:
    eps = population(30)
    first = dumps(corrupt_many(eps, seed=5))
    assert first == dumps(corrupt_many(eps, seed=5))
    assert first != dumps(corrupt_many(eps, seed=6))
    # an episode's output does not depend on the others or their order
    backwards = dumps(corrupt_many(list(reversed(eps)), seed=5))
    assert sorted(backwards) == sorted(first)
    alone = dumps(corrupt_many(eps[7:8], seed=5))
    assert alone[0] in first


def test_clean_fraction_and_error_counts() -> None:
    eps = population(400)
    summary = CorruptSummary()
    out = list(corrupt_many(eps, seed=1, clean_fraction=0.2, summary=summary))
    clean = sum(1 for ep in out if ep.labels == [])
    assert 0.14 < clean / len(out) < 0.26
    assert (summary.read, summary.clean, summary.corrupted) == (400, clean, 400 - clean)
    assert sum(summary.kinds.values()) == sum(len(notes(ep)) for ep in out)
    assert set(summary.kinds) == set(KINDS)
    counts = {len(notes(ep)) for ep in out if ep.labels}
    assert counts == {1, 2, 3}
    assert "400" in str(summary)
    assert all(ep.labels for ep in corrupt_many(eps[:50], clean_fraction=0.0))
    assert all(ep.labels == [] for ep in corrupt_many(eps[:50], clean_fraction=1.0))
    two = list(corrupt_many(eps[:50], clean_fraction=0.0, errors_per_episode=(2, 2)))
    assert all(len(notes(ep)) == 2 for ep in two)


def test_max_steps_counts_non_dialogue_steps_only() -> None:
    steps = ["Driver.Move(0.25)", "Driver.TurnLeft(90.0)"] * 13  # 26 steps
    long = Episode(id="long", actions=steps)
    chatty = Episode(id="chatty", actions=steps[:25] + ["Commander.Say('hi')"] * 10)
    summary = CorruptSummary()
    out = list(corrupt_many([long, chatty], max_steps=25, summary=summary))
    assert [ep.id for ep in out] == ["chatty"]
    assert summary.too_long == 1
    assert [ep.id for ep in corrupt_many([long, chatty], max_steps=26)] == ["long", "chatty"]
    assert len(list(corrupt_many([long, chatty], max_steps=None))) == 2


# --------------------------------------------------------------------------- real TEACh episodes


def test_real_teach_episodes() -> None:
    teach = pytest.importorskip("planverify.inputs.teach")
    if not SHARED_GAMES.is_dir():
        pytest.skip("no TEACh games in ../shared")
    games = [g for g in teach.iter_games([SHARED_GAMES / "valid_seen"]) if isinstance(g, Episode)]
    assert games
    originals = {ep.id: ep for ep in games}
    for seed in (0, 1):
        summary = CorruptSummary()
        out = list(corrupt_many(games, seed=seed, summary=summary))
        assert out and summary.too_long > 0
        for ep in out:
            check(originals[ep.id], ep)
        assert set(summary.kinds) == set(KINDS)
    # every kind alone, on every episode
    for kind in KINDS:
        for original in games[:60]:
            ep = corrupt_episode(original, rng=random.Random(original.id), errors=2, kinds=[kind])
            check(original, ep)
