"""The offline `rules` Judge: verdicts proved by simulating the plan against its goal.

It asks the world model (`planverify.world.repair`) for the minimal repair of the plan: the
blocks of steps the plan can do without (every goal condition it meets still holds, and it can
still be carried out), the steps that cannot happen and what caused them, and the steps it lacks,
each placed where it works. No model, deterministic.

>>> import asyncio
>>> from planverify.records.episode import Scene
>>> from planverify.world import ground
>>> kitchen = Scene.model_validate({"objects": [
...     {"id": "m", "type": "Mug", "name": "Mug", "pickupable": True, "receptacle": True,
...      "parent": ["CounterTop"]},
...     {"id": "a", "type": "Apple", "name": "Apple", "pickupable": True, "parent": ["CounterTop"]},
...     {"id": "c", "type": "CoffeeMachine", "name": "CoffeeMachine", "receptacle": True,
...      "toggleable": True, "toggled": False},
...     {"id": "t", "type": "DiningTable", "receptacle": True}]})
>>> plan = ["Driver.PickUp('Apple')", "Driver.PutAOnB('Apple', 'DiningTable')",
...         "Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'CoffeeMachine')"]
>>> goal = "Prepare coffee in a clean mug."
>>> grounding = ground(goal, [], kitchen, task=None, teach_task=None)
>>> critique = asyncio.run(RulesJudge().ajudge(goal, plan, kitchen, grounding=grounding)).critique
>>> [f.step for f in critique.flags], [m.action for m in critique.missing]
([0, 1], ["Driver.ToggleOn('CoffeeMachine')"])
>>> print(critique.flags[0].reason)
without steps 1-2 (picks up Apple; puts Apple on DiningTable) every goal condition the plan
meets still holds: a Mug that is clean and filled with coffee, by step
Driver.ToggleOn('CoffeeMachine') (to be inserted)
"""

from __future__ import annotations

from collections.abc import Sequence

from planverify.agents.base import JudgeReply
from planverify.records.critique import Critique, Flag, Missing
from planverify.records.episode import Scene
from planverify.records.notation import dialogue_lines, parse_action
from planverify.world import WORLD_VERSION, Grounding, ground
from planverify.world.repair import Review, review


class RulesJudge:
    """Grounded, simulation-based Judge (offline, deterministic)."""

    name = "rules"
    version = WORLD_VERSION  # its verdicts are the world model's
    grounded = True  # takes the episode's grounding (goal spec, scene)

    async def ajudge(
        self,
        goal: str,
        plan: Sequence[str],
        scene: Scene | None = None,
        *,
        grounding: Grounding | None = None,
    ) -> JudgeReply:
        grounding = grounding or _grounding(goal, plan, scene)
        verdicts = review(plan, scene=grounding.scene, spec=grounding.spec, focus=grounding.focus)
        warnings = [CUT_SHORT] if verdicts.cut_short else []
        return JudgeReply(critique_of(plan, verdicts), warnings=warnings)


def _grounding(goal: str, plan: Sequence[str], scene: Scene | None) -> Grounding:
    said = dialogue_lines(parse_action(line) for line in plan)
    return ground(goal, said, scene, task=None, teach_task=None)


CUT_SHORT = (
    "the rules Judge stopped its search at its work budget (a very long plan): the steps it "
    "did not reach are kept unjudged"
)


def judge_plan(goal: str, plan: Sequence[str], grounding: Grounding) -> Critique:
    """One pass of the world model's review over a plan, as a critique."""
    verdicts = review(plan, scene=grounding.scene, spec=grounding.spec, focus=grounding.focus)
    return critique_of(plan, verdicts)


def critique_of(plan: Sequence[str], verdicts: Review) -> Critique:
    """The critique a review of a plan amounts to."""
    flags = [
        Flag(step=step, action=plan[step], reason=removal.reason)
        for removal in verdicts.removals
        for step in removal.steps
    ]
    missing = [
        Missing(description=p.reason, action=p.action, after=p.after) for p in verdicts.proposals
    ]
    return Critique(flags=sorted(flags, key=lambda f: f.step), missing=missing)
