"""The paper's rule-based baseline Judge: three surface rules, no model.

It flags a ToggleOff of an object before any ToggleOn of it, a PickUp of an object the robot is
already holding, and a motion immediately undone by the next one (Move(d) then Move(-d), or a
turn and the same turn the other way). Dialogue between two steps does not separate them.

>>> import asyncio
>>> plan = ["Driver.ToggleOff('Faucet')", "Driver.Move(1.0)", "Driver.Move(-1.0)"]
>>> reply = asyncio.run(BaselineJudge().ajudge("wash the mug", plan))
>>> [f.step for f in reply.critique.flags]
[0, 1, 2]
"""

from __future__ import annotations

from collections.abc import Sequence

from planverify.agents.base import JudgeReply
from planverify.records.critique import Critique, Flag
from planverify.records.episode import Scene
from planverify.records.notation import parse_action
from planverify.world.rules import cancels


def baseline_flags(plan: Sequence[str]) -> list[Flag]:
    """Flags of the three baseline rules, at most one per step."""
    actions = [parse_action(line) for line in plan]
    reasons: dict[int, str] = {}
    toggled_on: set[str] = set()
    held: str | None = None
    previous: int | None = None  # index of the previous non-dialogue step
    for i, action in enumerate(actions):
        if action.is_dialogue or not action.known:
            continue
        obj = action.objects[0] if action.objects else None
        if action.verb == "ToggleOn" and obj:
            toggled_on.add(obj)
        elif action.verb == "ToggleOff" and obj and obj not in toggled_on:
            reasons[i] = f"switches {obj} off before it was ever switched on"
        elif action.verb == "PickUp":
            if obj == held:
                reasons[i] = f"picks up {obj}, which is already held"
            held = obj
        elif action.verb == "PutAOnB":
            held = None
        if previous is not None and cancels(actions[previous], action):
            reason = f"{actions[previous]} and {action} cancel each other out"
            reasons.setdefault(previous, reason)
            reasons.setdefault(i, reason)
        previous = i
    return [Flag(step=i, action=plan[i], reason=r) for i, r in sorted(reasons.items())]


class BaselineJudge:
    """Rule-based Judge of the paper's baseline (low recall, no model, deterministic)."""

    name = "baseline"
    version = "1"  # bump whenever a change can alter a verdict

    async def ajudge(
        self, goal: str, plan: Sequence[str], scene: Scene | None = None
    ) -> JudgeReply:
        return JudgeReply(Critique(flags=baseline_flags(plan)))
