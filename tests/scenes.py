"""Small hand-built TEACh scenes for the world-model tests, and the shared games, loaded once."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from planverify.records.episode import Episode, Scene
from planverify.records.notation import parse_action
from planverify.world.rules import Outcome, apply
from planverify.world.start import initial_state
from planverify.world.state import State

OFF = {"toggleable": True, "toggled": False}
ON = {"toggleable": True, "toggled": True}
CLOSED = {"openable": True, "open": False}
OPEN = {"openable": True, "open": True}


def item(
    kind: str, name: str | None = None, *, on: Sequence[str] = ("CounterTop",), **states: Any
) -> dict[str, Any]:
    """An object the Driver can pick up; `on`: the types of the receptacles it starts in
    (TEACh lists them all, the innermost among them)."""
    return {"type": kind, "name": name, "pickupable": True, "parent": list(on)} | states


def fixture(
    kind: str, name: str | None = None, *, on: Sequence[str] = (), **states: Any
) -> dict[str, Any]:
    """A receptacle or appliance that stays where it is (a counter, a basin, a coffee machine)."""
    return {"type": kind, "name": name, "receptacle": True, "parent": list(on)} | states


def part(
    conditions: dict[str, Any], determiner: str = "a", *, shareable: bool = False
) -> dict[str, Any]:
    """One component of a task definition; its primary condition is the class when it has one."""
    primary = "simbotObjectClass" if "simbotObjectClass" in conditions else "objectType"
    return {
        "determiner": determiner,
        "primary_condition": primary,
        "instance_shareable": shareable,
        "conditions": conditions,
        "condition_failure_descs": {},
    }


def scene(*objects: dict[str, Any]) -> Scene:
    """A scene of these objects; ids are made up (`Mug|3`)."""
    return Scene.model_validate(
        {"objects": [{"id": f"{o['type']}|{i}", **o} for i, o in enumerate(objects)]}
    )


def run(plan: Sequence[str], where: Scene | None = None) -> tuple[State, list[Outcome]]:
    """Simulate a plan from the scene's initial state: the final state and one outcome a step."""
    actions = [parse_action(line) for line in plan]
    state = initial_state(where, names=[o for a in actions for o in a.objects])
    return state, [apply(state, action) for action in actions]


def problems(outcomes: Sequence[Outcome]) -> list[str | None]:
    return [o.problem for o in outcomes]


@cache
def _load(games: Path) -> tuple[Episode, ...]:
    from planverify.inputs.sources import load_episodes

    return tuple(load_episodes([games]))


def shared_games(shared_dir: Path) -> tuple[Episode, ...]:
    """Every shared TEACh game (train and valid_seen), converted once per test session."""
    games = shared_dir / "teach" / "games"
    if not games.is_dir():
        pytest.skip(f"no TEACh games under {shared_dir}")
    return _load(games)
