"""The worlds a review starts from without a scene, where every state is unknown: the plan itself
shows what it takes from where nobody knows, and the goal is checked in a world where nothing it
wants is done yet, as well as in the world as known."""

from __future__ import annotations

from collections.abc import Sequence

from planverify.records.notation import Action
from planverify.world.rules import undone
from planverify.world.state import State


def possible_worlds(start: State, taken: set[str], kinds: frozenset[str]) -> list[State]:
    """Without a scene, the worlds where nothing the goal wants is done yet: vessels empty, and
    what the plan takes from nowhere known maybe in the device; or devices running and full."""
    return [
        undone(start, hopeful=taken),
        undone(start, running=True, hopeful=taken, wanted=kinds),
    ]


def taken_first(actions: Sequence[Action]) -> set[str]:
    """The objects a plan picks up before it puts them anywhere: where they stood is unknown."""
    placed: set[str] = set()
    taken: set[str] = set()
    for action in actions:
        if action.verb == "PutAOnB" and action.objects:
            placed.add(action.objects[0])
        elif action.verb == "PickUp" and action.objects and action.objects[0] not in placed:
            taken.add(action.objects[0])
    return taken
