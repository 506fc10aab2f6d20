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

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Collection, Sequence

from planverify.agents.base import JudgeReply
from planverify.agents.offload import world_work
from planverify.records.critique import Critique, Flag, Missing
from planverify.records.episode import Scene
from planverify.records.evidence import Evidence, simulated
from planverify.records.notation import dialogue_lines, parse_action
from planverify.records.trim import DEFAULT_TRIM, OptionalNote, TrimPolicy
from planverify.world import WORLD_VERSION, Grounding, ground
from planverify.world.repair import Review, review


class RulesJudge:
    """Grounded, simulation-based Judge (offline, deterministic)."""

    name = "rules"
    version = WORLD_VERSION  # its verdicts are the world model's
    grounded = True  # takes the episode's grounding (goal spec, scene)

    def __init__(self) -> None:
        # the plans this Judge repaired itself, by fingerprint, each with the positions of the
        # optional steps it kept (`natural`): a review finds nothing to remove or add in them
        # (the repair is idempotent, all but always: `Review.repaired`), so the loop's next
        # pass, which holds the notes on those steps, needs no simulation
        self._settled: OrderedDict[str, frozenset[int]] = OrderedDict()
        self._settled_lock = threading.Lock()  # a server's reviews run in threads (`offload`)

    async def ajudge(
        self,
        goal: str,
        plan: Sequence[str],
        scene: Scene | None = None,
        *,
        grounding: Grounding | None = None,
        trim: TrimPolicy = DEFAULT_TRIM,
        noted: Collection[int] = (),
    ) -> JudgeReply:
        """`noted`: the plan's steps an earlier pass of the loop noted as optional. A plan this
        Judge repaired is answered from memory only where those notes cover its optional steps;
        a caller without them (another run that starts from the repaired plan) gets a review,
        whose notes count its own steps."""
        return await world_work(self._judge, goal, plan, scene, grounding, trim, frozenset(noted))

    def _judge(
        self,
        goal: str,
        plan: Sequence[str],
        scene: Scene | None,
        grounding: Grounding | None,
        trim: TrimPolicy,
        noted: frozenset[int],
    ) -> JudgeReply:
        grounding = grounding or _grounding(goal, plan, scene)
        optional = self._recall(fingerprint(plan, grounding, trim))
        if optional is not None and optional <= noted:
            return JudgeReply(Critique())
        verdicts = review(plan, scene=grounding.scene, spec=grounding.spec, focus=grounding.focus)
        critique = critique_of(plan, verdicts, grounding, trim=trim)
        if not verdicts.cut_short:
            repaired = verdicts.repaired_from(plan, natural=trim == "natural")
            key = fingerprint([line for line, _ in repaired], grounding, trim)
            self._remember(key, kept_in(repaired, critique))
        warnings = [CUT_SHORT] if verdicts.cut_short else []
        return JudgeReply(critique, warnings=warnings)

    def _recall(self, key: str) -> frozenset[int] | None:
        with self._settled_lock:
            if key not in self._settled:
                return None
            self._settled.move_to_end(key)
            return self._settled[key]

    def _remember(self, key: str, optional: frozenset[int]) -> None:
        with self._settled_lock:
            self._settled[key] = optional
            self._settled.move_to_end(key)
            while len(self._settled) > SETTLED_KEPT:
                self._settled.popitem(last=False)


SETTLED_KEPT = 4096  # repaired plans remembered (a fingerprint and the optional positions)
_SCENE_DIGESTS: dict[int, tuple[Scene, str]] = {}  # the last scenes' digests, by identity


def kept_in(repaired: Sequence[tuple[str, int | None]], critique: Critique) -> frozenset[int]:
    """Where the optional steps of `critique` stand in the plan repaired from it
    (`Review.repaired_from`: each step with the position it comes from)."""
    where = {origin: k for k, (_, origin) in enumerate(repaired) if origin is not None}
    return frozenset(where[flag.step] for flag in critique.optional if flag.step in where)


def _scene_digest(scene: Scene | None) -> str:
    if scene is None:
        return "-"
    known = _SCENE_DIGESTS.get(id(scene))
    if known is not None and known[0] is scene:
        return known[1]
    digest = hashlib.blake2b(scene.model_dump_json().encode(), digest_size=16).hexdigest()
    if len(_SCENE_DIGESTS) >= 256:
        _SCENE_DIGESTS.clear()
    _SCENE_DIGESTS[id(scene)] = (scene, digest)
    return digest


def fingerprint(plan: Sequence[str], grounding: Grounding, trim: TrimPolicy) -> str:
    """What a review depends on: the plan, the scene, the goal spec, the named types and the
    trim policy."""
    text = "\n".join(
        [trim, _scene_digest(grounding.scene), repr(grounding.spec), repr(grounding.focus), *plan]
    )
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def _grounding(goal: str, plan: Sequence[str], scene: Scene | None) -> Grounding:
    said = dialogue_lines(parse_action(line) for line in plan)
    return ground(goal, said, scene, task=None, teach_task=None, plan=plan)


CUT_SHORT = (
    "the rules Judge stopped its search at its work budget (a very long plan): the steps it "
    "did not reach are kept unjudged"
)


def judge_plan(
    goal: str, plan: Sequence[str], grounding: Grounding, *, trim: TrimPolicy = DEFAULT_TRIM
) -> Critique:
    """One pass of the world model's review over a plan, as a critique."""
    verdicts = review(plan, scene=grounding.scene, spec=grounding.spec, focus=grounding.focus)
    return critique_of(plan, verdicts, grounding, trim=trim)


def critique_of(
    plan: Sequence[str], verdicts: Review, grounding: Grounding, *, trim: TrimPolicy = DEFAULT_TRIM
) -> Critique:
    """The critique a review of a plan amounts to, each verdict with its evidence level: what
    its proof rests on (`Removal.uses_goal`, `Removal.known`) weighed by the precedence rule of
    `planverify.records.evidence`: the goal counts only where the proof needs it, and a proof that used
    a state the simulator did not know is `heuristic`. A removal of a kind the `natural` trim
    policy keeps carries its `optional` note; under `natural` it is no flag but an optional
    step (`Critique.optional`)."""
    source = grounding.spec.source if grounding.spec is not None else None

    def level(uses_goal: bool, known: bool) -> Evidence:
        return simulated(scene_known=known, goal_source=source, uses_goal=uses_goal)

    flags: list[Flag] = []
    optional: list[Flag] = []
    for removal in verdicts.removals:
        evidence = level(removal.uses_goal, removal.known)
        note = (
            None
            if removal.optional is None
            else OptionalNote(kind=removal.optional, reason=removal.reason, evidence=evidence)
        )
        kept = note is not None and trim == "natural"
        for step in removal.steps:
            flag = Flag(
                step=step,
                action=plan[step],
                reason=removal.reason,
                evidence=evidence,
                optional=note,
            )
            (optional if kept else flags).append(flag)
    missing = [
        Missing(
            description=p.reason,
            action=p.action,
            after=p.after,
            evidence=level(p.uses_goal, p.known),
        )
        for p in verdicts.proposals
    ]
    return Critique(
        flags=sorted(flags, key=lambda f: f.step),
        missing=missing,
        optional=sorted(optional, key=lambda f: f.step),
    )
