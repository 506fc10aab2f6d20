"""Checking another Judge's flags and a Planner's insertions by simulation (`certify`).

Flags are completed into blocks first (a flagged pick-up goes with its put-down, an open with
its close, a switch-on with its switch-off), because removing half a block breaks the plan for
no fault of the Judge's. The largest set of blocks whose joint removal keeps the plan executable
and every goal condition it meets is accepted, greedily in plan order (a maximal set); every
other flag is vetoed with the simulator's reason. An insertion is vetoed when it cannot happen
where it is placed, or changes nothing because its effect already holds.

>>> from planverify.critique import Critique, Flag
>>> from planverify.world import ground
>>> plan = ["Driver.PickUp('Cup')", "Driver.PutAOnB('Cup', 'SinkBasin')",
...         "Driver.ToggleOn('Faucet')", "Driver.PickUp('Cup')",
...         "Driver.PourFromAIntoB('Cup', 'HousePlant')", "Driver.PutAOnB('Cup', 'CounterTop')"]
>>> grounding = ground("Water the plant.", [], None, task=None, teach_task=None)
>>> critique = Critique(flags=[Flag(step=4, action=plan[4], reason="not needed")])
>>> kept, vetoes = certify_flags(plan, critique, grounding)
>>> kept.flags, vetoes[0].reason
([], 'removing step 5 loses: a HousePlant that is filled with liquid')
"""

from __future__ import annotations

from collections.abc import Sequence

from planverify.critique import Critique, Flag, Veto
from planverify.notation import parse_action
from planverify.world import Grounding, simulate
from planverify.world.repair import Reviewer
from planverify.world.trace import Variant, rank

PARTNERS = {"PickUp": "PutAOnB", "Open": "Close", "ToggleOn": "ToggleOff"}


def _options(reviewer: Reviewer, step: int, flagged: set[int]) -> list[set[int]]:
    """The blocks a flag may go as: alone; with the object's very next step when that is
    flagged too (a wrong put-down and the pick-up that takes it back); completed with the step
    it goes with (a pick-up's put-down, an open's close); with every flagged step on the object."""
    action = reviewer.actions[step]
    options = [{step}]
    if not action.objects:
        return options
    pos = reviewer.trace.position(step)
    name = action.objects[0]
    then = reviewer._near(pos, name, forward=True)
    if then is not None and then in flagged:
        options.append({step, then})
    partner_verb = PARTNERS.get(action.verb)
    if partner_verb is not None:
        partner = reviewer._near(pos, name, {action.verb, partner_verb}, forward=True)
        if partner is not None and reviewer.actions[partner].verb == partner_verb:
            options.append({step, partner})
    same = {s for s in flagged if s != step and reviewer.actions[s].objects[:1] == (name,)}
    if len(same) > 1:
        options.append({step, *same})
    return options


def _why(reviewer: Reviewer, block: set[int], variant: Variant) -> str:
    steps = ", ".join(str(s + 1) for s in sorted(block))
    name = f"step {steps}" if len(block) == 1 else f"steps {steps}"
    new = sorted(variant.impossible - reviewer.trace.impossible)
    if new:
        problem = _problem_after(reviewer, block, new[0])
        return f"removing {name} makes step {new[0] + 1} impossible: {problem}"
    lost = [
        old.text
        for new_unit, old in zip(variant.units, reviewer.trace.units, strict=True)
        if rank(new_unit.met) < rank(old.met)
        or (old.met is not True and new_unit.progress < old.progress)
    ]
    if lost:
        return f"removing {name} loses: {lost[0]}"
    return f"removing {name} changes what the plan achieves"


def _problem_after(reviewer: Reviewer, block: set[int], step: int) -> str:
    order = [s for s in reviewer.order if s not in block]
    trace = reviewer.sim.trace(order)
    return trace.outcomes[trace.position(step)].problem or "it cannot happen"


def certify_flags(
    plan: Sequence[str], critique: Critique, grounding: Grounding
) -> tuple[Critique, list[Veto]]:
    """The critique with only the flags the simulator accepts (completed into blocks), and
    the vetoes of the others."""
    if not critique.flags:
        return critique, []
    reviewer = Reviewer(plan, grounding.scene, grounding.spec, grounding.focus)
    reasons = {flag.step: flag.reason for flag in critique.flags}
    flagged = {step for step in reasons if reviewer.judged(step)}
    accepted: set[int] = set()
    vetoes: list[Veto] = []
    for step in sorted(reasons):
        if step in accepted:
            continue
        if step not in flagged:
            vetoes.append(
                Veto(kind="flag", action=plan[step], step=step, reason="not a Driver action")
            )
            continue
        found: list[str] = []  # what the simulation says first, then the policies
        policies: list[str] = []
        for block in _options(reviewer, step, flagged):
            block -= accepted
            variant = reviewer.sim.without(reviewer.trace, accepted | block)
            policy = reviewer.kept_by_policy(block)
            if reviewer._acceptable(variant, accepted | block):
                if policy is None:
                    accepted |= block
                    break
                policies.append(policy)
            else:
                found.append(_why(reviewer, block, reviewer.sim.without(reviewer.trace, block)))
                if policy is not None:
                    policies.append(policy)
        if step not in accepted:
            why = (found + policies)[0]
            vetoes.append(Veto(kind="flag", action=plan[step], step=step, reason=why))
    flags = []
    for step in sorted(accepted):
        reason = reasons.get(step)
        if reason is None:  # the other half of a flagged block
            reason = "goes with the flagged step it completes"
        flags.append(Flag(step=step, action=plan[step], reason=reason))
    return critique.model_copy(update={"flags": flags}), vetoes


def certify_insertion(
    plan: Sequence[str], action: str, after: int, grounding: Grounding
) -> str | None:
    """Why an insertion after plan position `after` is refused, or None when it is accepted:
    it cannot happen there, or it changes nothing because its effect already holds."""
    lines = [*plan[: after + 1], action]
    _, outcomes = simulate(lines, grounding.scene)
    outcome = outcomes[-1]
    if outcome.problem:
        return f"impossible where it is placed: {outcome.problem}"
    objects = parse_action(action).objects
    if outcome.changed is False and objects:
        return f"changes nothing: {objects[-1]} is already that way"
    return None
