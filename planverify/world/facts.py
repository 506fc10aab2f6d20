"""What the simulator knows about a plan, as plain facts for a model Judge's prompt (`--grounding`):
how the objects the plan touches start, the goal conditions and which of them the plan meets,
and the steps that change nothing or cannot happen.

>>> from planverify.world import Grounding
>>> facts(["Driver.ToggleOn('Faucet')", "Driver.ToggleOn('Faucet')"], Grounding(None, None))
["step 2 (Driver.ToggleOn('Faucet')) changes nothing: Faucet is already that way"]
"""

from __future__ import annotations

from collections.abc import Sequence

from planverify.records.notation import parse_action
from planverify.world import Grounding
from planverify.world.goals import evaluate
from planverify.world.rules import apply
from planverify.world.start import initial_state


def _starts(grounding: Grounding) -> list[str]:
    lines: list[str] = []
    for obj in grounding.scene.objects if grounding.scene is not None else []:
        if obj.name is None:
            continue
        states = [
            label
            for label, value in (
                ("switched on", obj.toggleable and obj.toggled),
                ("switched off", obj.toggleable and not obj.toggled),
                ("open", obj.openable and obj.open),
                ("closed", obj.openable and not obj.open),
                ("dirty", obj.dirty),
                ("filled", obj.filled),
                ("sliced", obj.sliced),
                ("cooked", obj.cooked),
            )
            if value
        ]
        where = f" in/on {', '.join(obj.parent)}" if obj.parent else ""
        if states or where:
            lines.append(f"{obj.name} starts {' and '.join(states) or 'as is'}{where}")
    return lines


def facts(plan: Sequence[str], grounding: Grounding) -> list[str]:
    """The simulator's facts about a plan, one line each."""
    lines = _starts(grounding)
    actions = [parse_action(line) for line in plan]
    state = initial_state(grounding.scene, names=[o for a in actions for o in a.objects])
    met_at: dict[str, int] = {}
    spec = grounding.spec
    before = {u.text: u.met for u in evaluate(spec, state)} if spec is not None else {}
    for number, (line, action) in enumerate(zip(plan, actions, strict=True), start=1):
        outcome = apply(state, action)
        if outcome.problem:
            lines.append(f"step {number} ({line}) cannot happen: {outcome.problem}")
        elif outcome.changed is False and action.objects:
            lines.append(
                f"step {number} ({line}) changes nothing: {action.objects[-1]} is already that way"
            )
        if spec is not None and outcome.changed is not False:
            for unit in evaluate(spec, state):
                if unit.met is True and before.get(unit.text) is not True:
                    met_at[unit.text] = number
                before[unit.text] = unit.met
    if spec is not None:
        for unit in evaluate(spec, state):
            status = {True: "met", False: "NOT met", None: "not known to be met"}[unit.met]
            by = (
                f" (by step {met_at[unit.text]})"
                if unit.met is True and unit.text in met_at
                else ""
            )
            lines.append(f"goal condition: {unit.text}: {status}{by}")
    return lines
