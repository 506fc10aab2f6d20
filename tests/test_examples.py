"""The bundled sample: valid, matching plain and annotated files, covering the task families;
the example agent graphs run offline with a scripted model."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType
from typing import get_args

import orjson

from planverify import verify_many
from planverify.records.episode import InjectedError, read_episodes

from .conftest import ROOT, scripted

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


def load_example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # where typing looks up the names its annotations use
    spec.loader.exec_module(module)
    return module


GATE_REQUEST = "Make a mug of coffee."
DETOUR_PLAN = [
    "Driver.PickUp('Mug')",
    "Driver.Move(1.0)",
    "Driver.Move(-1.0)",
    "Driver.PutAOnB('Mug', 'CoffeeMachine')",
    "Driver.ToggleOn('CoffeeMachine')",
]
CLEAN_PLAN = [DETOUR_PLAN[0], *DETOUR_PLAN[3:]]


def test_the_plan_gate_sends_a_plan_back_with_the_judges_reasons() -> None:
    gate = load_example("plan_gate")
    model = scripted("\n".join(DETOUR_PLAN), "\n".join(CLEAN_PLAN))
    final = gate.build(model).invoke({"request": GATE_REQUEST})

    assert final["executed"] == CLEAN_PLAN
    (sent_back,) = final["feedback"]
    assert len(model.prompts) == 2, "one round back to the planner"
    second = str(model.prompts[1][-1].content)
    assert "Your last plan:\n" + "\n".join(DETOUR_PLAN) in second
    assert all(reason in second for reason in sent_back)
    assert [r.split(" (")[0] for r in sent_back] == ["step 2", "step 3"]


async def test_the_plan_gate_runs_the_refined_plan_after_its_rounds() -> None:
    gate = load_example("plan_gate")
    model = scripted(*["\n".join(DETOUR_PLAN)] * 2)
    final = await gate.build(model, max_rounds=1).ainvoke({"request": GATE_REQUEST})
    assert len(model.prompts) == 2 and len(final["feedback"]) == 1
    assert final["executed"] == CLEAN_PLAN
