"""The rules Judge's verdicts do not depend on the order Python happens to iterate sets of
strings in (`PYTHONHASHSEED`): its reasons name goal conditions in the spec's order."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from .scenes import OFF, fixture, item, part, scene

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ("0", "1", "2", "3")

KITCHEN = scene(
    fixture("CounterTop", "CounterTop"),
    fixture("DiningTable", "DiningTable"),
    fixture("CoffeeMachine", "CoffeeMachine", on=["CounterTop"], **OFF),
    item("Mug", "Mug", receptacle=True),
    item("Cup", "Cup", receptacle=True),
    item("Apple", "Apple"),
)
TASK = {  # three conditions that the one switch-on makes hold together
    "task_name": "Drinks",
    "components": {
        "mug": part({"objectType": "Mug", "simbotIsFilledWithCoffee": 1}),
        "cup": part({"objectType": "Cup", "simbotIsFilledWithCoffee": 1}),
        "clean": part({"objectType": "Mug", "isDirty": 0, "simbotIsFilledWithCoffee": 1}),
    },
    "relations": [],
}
PLAN = [
    "Driver.PickUp('Apple')",  # a detour: the reason cites what still holds, and by which step
    "Driver.PutAOnB('Apple', 'DiningTable')",
    "Driver.PickUp('Mug')",
    "Driver.PutAOnB('Mug', 'CoffeeMachine')",
    "Driver.ToggleOn('CoffeeMachine')",
    "Driver.ToggleOff('CoffeeMachine')",
    "Driver.PickUp('Mug')",
    "Driver.PutAOnB('Mug', 'CounterTop')",
    "Driver.PickUp('Cup')",
    "Driver.PutAOnB('Cup', 'CoffeeMachine')",
    "Driver.ToggleOn('CoffeeMachine')",
]
JUDGE = """
import json, sys
from planverify.records.episode import Scene
from planverify.world.goals import parse_teach_task
from planverify.world.repair import review
given = json.load(sys.stdin)
verdicts = review(given["plan"], scene=Scene.model_validate(given["scene"]),
                  spec=parse_teach_task(given["task"]))
print(json.dumps([[list(r.steps), r.reason] for r in verdicts.removals]
                 + [[p.action, p.after, p.reason] for p in verdicts.proposals]))
"""


def judged_under(seed: str) -> str:
    """The verdicts on the plan, judged in a fresh interpreter under this hash seed."""
    given = {"plan": PLAN, "scene": KITCHEN.model_dump(mode="json"), "task": TASK}
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run(
        [sys.executable, "-c", JUDGE],
        input=json.dumps(given),
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=True,
    )
    return done.stdout


def test_reasons_are_the_same_under_every_hash_seed() -> None:
    outputs = {seed: judged_under(seed) for seed in SEEDS}
    first = outputs[SEEDS[0]]
    assert "still holds: " in first  # the reason cites conditions and the steps that meet them
    assert all(out == first for out in outputs.values()), outputs
