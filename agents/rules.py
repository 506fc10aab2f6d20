"""The offline `rules` Judge: grounded in a simulation of the plan, no model, deterministic.

It flags steps that cannot matter (detours with objects the goal never needs, a put-down undone
at once, switches and doors that change nothing, motion undone by the next step, exact repeats)
and names essential steps the plan lacks (an appliance never switched on, an object used in
slices that was never sliced, a plant never watered), each with a concrete action so the model-free
`rules` planner can insert it. Where the scene does not say how something starts, it does not
guess: unknown states never produce a verdict.

>>> import asyncio
>>> plan = ["Driver.PickUp('Apple')", "Driver.PutAOnB('Apple', 'DiningTable')",
...         "Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'CoffeeMachine')"]
>>> critique = asyncio.run(RulesJudge().ajudge("Prepare coffee in a clean mug.", plan)).critique
>>> [f.step for f in critique.flags], [m.action for m in critique.missing]
([0, 1], ["Driver.ToggleOn('CoffeeMachine')"])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from planverify.agents.base import JudgeReply
from planverify.critique import Critique, Flag, Missing
from planverify.episode import Scene
from planverify.knowledge import KNIVES, families, relevant_types
from planverify.notation import Action, object_type, parse_action
from planverify.world import Outcome, World
from planverify.world.rules import cancels

# Receptacles an object may be taken out of to make room: taking it out is preparation when the
# receptacle is used afterwards.
WORKSPACES = frozenset(
    {
        "Sink",
        "SinkBasin",
        "Plate",
        "Bowl",
        "Pot",
        "Pan",
        "Toaster",
        "CoffeeMachine",
        "Microwave",
        "StoveBurner",
        "Mug",
        "Cup",
        "Fridge",
        "Cabinet",
        "Drawer",
    }
)
STATE_VERBS = frozenset(
    {"ToggleOn", "ToggleOff", "Open", "Close", "Slice", "Clean", "Dirty", "Fill", "Empty"}
)
IDLE_CHECKED = frozenset({"Faucet", "Microwave", "Toaster", "CoffeeMachine", "StoveKnob"})
# Appliances that must be running while something is in them, by the families that need it.
APPLIANCES: dict[str, tuple[str, ...]] = {
    "CoffeeMachine": ("Coffee", "Breakfast"),
    "Toaster": ("Plate Of Toast", "Sandwich", "Breakfast"),
    "Microwave": ("N Cooked Slices Of X In Y", "Boil X", "Salad", "Breakfast"),
}


@dataclass
class _Plan:
    """A parsed plan with lookups the rules share."""

    lines: Sequence[str]
    actions: list[Action]
    outcomes: list[Outcome] = field(default_factory=list)
    locations: list[tuple[str, ...] | None] = field(default_factory=list)  # PickUp: from where
    occupied: dict[int, bool] = field(default_factory=dict)  # switch steps: anything inside
    running: dict[int, bool] = field(default_factory=dict)  # puts: the receptacle acts on it
    full: dict[int, bool] = field(default_factory=dict)  # puts: the object holds liquid

    def steps(self, start: int = 0) -> range:
        return range(start, len(self.actions))

    def __post_init__(self) -> None:
        self._acts = [a.known and not a.is_dialogue for a in self.actions]

    def acts(self, i: int) -> bool:
        """Whether step i is a Driver action the rules reason about."""
        return self._acts[i]

    def mentions(self, name: str, skip: set[int]) -> bool:
        return any(
            name in self.actions[i].objects for i in self.steps() if i not in skip and self.acts(i)
        )


class RulesJudge:
    """Grounded rule-based Judge (offline, deterministic)."""

    name = "rules"
    version = "1"  # bump whenever a change can alter a verdict

    async def ajudge(
        self, goal: str, plan: Sequence[str], scene: Scene | None = None
    ) -> JudgeReply:
        return JudgeReply(judge_plan(goal, plan, scene))


def judge_plan(goal: str, plan: Sequence[str], scene: Scene | None = None) -> Critique:
    """One pass of the rules over a plan."""
    actions = [parse_action(line) for line in plan]
    said = " ".join(a.text or "" for a in actions if a.is_dialogue and a.agent == "Commander")
    task_text = f"{goal} {said}"
    known_types = {t for a in actions for o in a.objects for t in _whole(o)}
    if scene is not None:
        known_types |= {o.type for o in scene.objects}
    needed = relevant_types(task_text, known_types)
    kinds = families(goal) or families(task_text)

    world = World.from_scene(scene)
    p = _Plan(plan, actions)
    resident = {t for o in (scene.objects if scene else []) if o.name is None for t in o.parent}
    for i, action in enumerate(actions):
        where = None
        if action.verb == "PickUp" and action.known:
            thing = world.thing(action.objects[0])
            where = (thing.location, *thing.also_in) if thing.location else None
        elif action.verb == "PutAOnB" and action.known:
            p.running[i] = _running(world, action.objects[1])
            p.full[i] = world.thing(action.objects[0]).filled is True
        elif action.verb in ("ToggleOn", "ToggleOff") and action.known:
            spaces = _spaces(action.objects[0])
            p.occupied[i] = bool(spaces & resident) or any(world.contents(s) for s in spaces)
        p.locations.append(where)
        p.outcomes.append(world.apply(action))

    flags: dict[int, str] = {}
    missing: list[Missing] = []
    _cancelling_motion(p, flags)
    _misplacements(p, flags)
    _detours(p, needed, flags)
    scene_off = {o.type for o in (scene.objects if scene else []) if o.toggleable and not o.toggled}
    _no_effect(p, flags, missing, scene is not None, scene_off)
    _pointless_open_close(p, flags)
    _idle_switching(p, flags)
    _appliances_never_on(p, kinds, missing, scene)
    _sink_never_run(p, task_text, missing)
    _stove_never_on(p, kinds, missing, scene)
    _never_emptied(p, kinds, missing)
    _never_sliced(p, missing, scene)
    _never_watered(p, kinds, missing)
    return Critique(
        flags=[Flag(step=i, action=plan[i], reason=r) for i, r in sorted(flags.items())],
        missing=missing,
    )


def _next_act(p: _Plan, i: int) -> int | None:
    """The next Driver step after i that is not motion."""
    for j in p.steps(i + 1):
        if p.acts(j) and p.actions[j].verb not in ("Move", "TurnLeft", "TurnRight"):
            return j
    return None


def _cancelling_motion(p: _Plan, flags: dict[int, str]) -> None:
    i = 0
    while i + 1 < len(p.actions):
        a, b = p.actions[i], p.actions[i + 1]
        if p.acts(i) and p.acts(i + 1) and cancels(a, b):
            reason = f"{a} is undone by the next step, {b}"
            flags.setdefault(i, reason)
            flags.setdefault(i + 1, reason)
            i += 2
        else:
            i += 1


def _misplacements(p: _Plan, flags: dict[int, str]) -> None:
    for i in p.steps():
        a = p.actions[i]
        if not p.acts(i) or a.verb != "PutAOnB":
            continue
        j = _next_act(p, i)
        if j is None or p.actions[j].verb != "PickUp" or p.actions[j].objects[0] != a.objects[0]:
            continue
        later = [
            k
            for k in p.steps(j + 1)
            if p.acts(k)
            and p.actions[k].verb == "PutAOnB"
            and p.actions[k].objects[0] == a.objects[0]
        ]
        sink = object_type(a.objects[1]) in ("Sink", "SinkBasin")
        if p.running.get(i) and (not sink or object_type(a.objects[0]) in WASHABLE):
            continue  # put into a running appliance, or a dish under a running faucet: used
        if later and p.actions[later[0]].objects[1] != a.objects[1]:
            reason = f"puts {a.objects[0]} on {a.objects[1]} and takes it straight back"
            flags.setdefault(i, reason)
            flags.setdefault(j, f"{reason}; the put-down and this pick-up undo each other")


def _detours(p: _Plan, needed: set[str], flags: dict[int, str]) -> None:
    for i in p.steps():
        a = p.actions[i]
        if not p.acts(i) or a.verb != "PickUp" or _whole(a.objects[0]) & needed:
            continue
        name = a.objects[0]
        put = next((k for k in p.steps(i + 1) if p.acts(k) and name in p.actions[k].objects), None)
        if put is None or p.actions[put].verb != "PutAOnB" or p.actions[put].objects[0] != name:
            continue
        if p.mentions(name, {i, put}):
            continue
        origins = p.locations[i] or ()
        if any(
            (object_type(o) in WORKSPACES or object_type(o) in needed) and _used_after(p, o, put)
            for o in origins
        ):
            continue  # cleared out of the way of a later step
        flags.setdefault(i, f"picks up {name}, which plays no part in the goal")
        flags.setdefault(put, f"puts {name} down again: a detour that leaves the task unchanged")


def _whole(name: str) -> set[str]:
    """A name's type, and for slices the type of the whole object too (`BreadSliced`, `Bread`)."""
    kind = object_type(name)
    return {kind, kind.removesuffix("Sliced")}


def _used_after(p: _Plan, receptacle: str, after: int) -> bool:
    kind = object_type(receptacle)
    for k in p.steps(after + 1):
        a = p.actions[k]
        if not p.acts(k):
            continue
        if a.verb in ("PutAOnB", "PourFromAIntoB") and object_type(a.objects[1]) == kind:
            return True
        if kind in ("Sink", "SinkBasin") and a.objects and object_type(a.objects[0]) == "Faucet":
            return True
        if a.verb in STATE_VERBS | {"PickUp"} and object_type(a.objects[0]) == kind:
            return True
    return False


def _no_effect(
    p: _Plan,
    flags: dict[int, str],
    missing: list[Missing],
    grounded: bool,
    scene_off: set[str],
) -> None:
    previous: int | None = None
    for i in p.steps():
        a = p.actions[i]
        if not p.acts(i) or a.verb in ("Move", "TurnLeft", "TurnRight"):
            continue
        outcome = p.outcomes[i]
        repeat = previous is not None and p.lines[previous].strip() == p.lines[i].strip()
        previous = i
        if a.verb == "ToggleOff" and not outcome.known and _unused_and_some_off(p, i, scene_off):
            flags.setdefault(i, f"switches off {a.objects[0]}, which the plan never uses")
            continue
        if a.verb not in STATE_VERBS or outcome.changed:
            if outcome.problem:
                flags.setdefault(i, f"cannot happen here: {outcome.problem}")
            continue
        if not outcome.known and not repeat:
            continue
        name = a.objects[0]
        if a.verb == "ToggleOff" and not repeat and _in_use(p, name, i):
            if not any(m.action == f"Driver.ToggleOn('{name}')" for m in missing):
                missing.append(
                    Missing(
                        description=f"{name} is switched off without ever being switched on",
                        action=f"Driver.ToggleOn('{name}')",
                        after=i - 1,
                    )
                )
            continue
        if a.verb == "ToggleOff" and not repeat and not grounded:
            continue
        state = {
            "ToggleOn": "already on",
            "ToggleOff": "already off",
            "Open": "already open",
            "Close": "already closed",
            "Slice": "already sliced",
        }.get(a.verb, "unchanged by it")
        why = "repeats the previous step" if repeat else "the scene says it starts that way"
        flags.setdefault(i, f"{name} is {state}: this step changes nothing ({why})")


def _in_use(p: _Plan, name: str, before: int) -> bool:
    """Whether an appliance had something put in it, or the sink something in it, before a step."""
    kind = object_type(name)
    targets = {"Sink", "SinkBasin"} if kind == "Faucet" else {kind}
    return any(
        p.acts(k)
        and p.actions[k].verb == "PutAOnB"
        and object_type(p.actions[k].objects[1]) in targets
        for k in range(before)
    )


def _pointless_open_close(p: _Plan, flags: dict[int, str]) -> None:
    for i in p.steps():
        a = p.actions[i]
        if not p.acts(i) or a.verb != "Open" or i in flags:
            continue
        name = a.objects[0]
        close = next(
            (k for k in p.steps(i + 1) if p.acts(k) and name in p.actions[k].objects), None
        )
        if close is None or p.actions[close].verb != "Close":
            continue
        kind = object_type(name)
        used = False
        for k in range(i + 1, close):
            b = p.actions[k]
            if not p.acts(k) or not b.objects:
                continue
            if b.verb == "PutAOnB" and b.objects[1] == name:
                used = True
            origins = p.locations[k]
            if b.verb == "PickUp" and (
                origins is None or any(object_type(o) == kind for o in origins)
            ):
                used = True
        if not used:
            reason = f"{name} is opened and closed again with nothing taken out or put in"
            flags.setdefault(i, reason)
            flags.setdefault(close, reason)


def _appliances_never_on(
    p: _Plan, kinds: list[str], missing: list[Missing], scene: Scene | None
) -> None:
    """Something goes into a coffee machine, toaster or microwave the task needs running, and
    the appliance is never switched on afterwards."""
    for appliance, wanted_by in APPLIANCES.items():
        if not set(kinds) & set(wanted_by):
            continue
        puts = [k for k in p.steps() if _puts_into(p, k, {appliance})]
        if not puts or _named(missing, appliance):
            continue
        switched_on = any(_switches(p, k, appliance, "ToggleOn") for k in p.steps(puts[0]))
        if switched_on or p.running.get(puts[-1]):
            continue  # switched on afterwards, or already running when the thing went in
        if appliance == "Microwave" and any(
            _switches(p, k, "StoveKnob", "ToggleOn") for k in p.steps()
        ):
            continue  # cooked on the stove instead
        name = p.actions[puts[-1]].objects[1]
        _add_missing(
            missing, f"{name} is never switched on with something in it", "ToggleOn", name, puts[-1]
        )


def _puts_into(p: _Plan, k: int, kinds: set[str]) -> bool:
    a = p.actions[k]
    return p.acts(k) and a.verb == "PutAOnB" and object_type(a.objects[1]) in kinds


def _switches(p: _Plan, k: int, kind: str, verb: str) -> bool:
    a = p.actions[k]
    return p.acts(k) and a.verb == verb and object_type(a.objects[0]) == kind


def _named(missing: list[Missing], kind: str) -> bool:
    return any(m.action is not None and f"'{kind}" in m.action for m in missing)


def _add_missing(missing: list[Missing], why: str, verb: str, name: str, after: int) -> None:
    missing.append(Missing(description=why, action=f"Driver.{verb}('{name}')", after=after))


WASHABLE = frozenset(
    {
        "Mug",
        "Cup",
        "Bowl",
        "Plate",
        "Pot",
        "Pan",
        "Kettle",
        "Cloth",
        "DishSponge",
        "Fork",
        "Spoon",
        "Knife",
        "ButterKnife",
        "Spatula",
        "Ladle",
        "WineGlass",
        "Bottle",
        "WateringCan",
    }
)
WASH_WORDS = ("clean", "rinse", "wash", "water")


def _sink_never_run(p: _Plan, task_text: str, missing: list[Missing]) -> None:
    """A dish goes into the sink for a task about washing or water, and the faucet never runs."""
    lowered = task_text.lower()
    if not any(word in lowered for word in WASH_WORDS) or _named(missing, "Faucet"):
        return
    if any(_switches(p, k, "Faucet", "ToggleOn") for k in p.steps()):
        return
    puts = [
        k
        for k in p.steps()
        if _puts_into(p, k, {"Sink", "SinkBasin"})
        and object_type(p.actions[k].objects[0]) in WASHABLE
    ]
    if puts and not p.running.get(puts[-1]):
        _add_missing(
            missing,
            "the faucet is never turned on over the dishes in the sink",
            "ToggleOn",
            "Faucet",
            puts[-1],
        )


def _stove_never_on(
    p: _Plan, kinds: list[str], missing: list[Missing], scene: Scene | None
) -> None:
    """Something to boil goes onto the stove, and no burner or microwave is ever switched on
    (nor on from the start)."""
    if "Boil X" not in kinds or _named(missing, "StoveKnob"):
        return
    if scene is None or any(
        o.type in ("StoveKnob", "StoveBurner") and o.toggled for o in scene.objects
    ):
        return
    if any(
        _switches(p, k, kind, "ToggleOn") for k in p.steps() for kind in ("StoveKnob", "Microwave")
    ):
        return
    puts = [k for k in p.steps() if _puts_into(p, k, {"StoveBurner", "Pot", "Kettle"})]
    if puts:
        _add_missing(missing, "the stove is never switched on", "ToggleOn", "StoveKnob", puts[-1])


def _never_sliced(p: _Plan, missing: list[Missing], scene: Scene | None) -> None:
    sliced_at: dict[str, int] = {}
    for k in p.steps():
        a = p.actions[k]
        if not p.acts(k) or not a.objects:
            continue
        if a.verb == "Slice":
            sliced_at.setdefault(object_type(a.objects[0]), k)
            continue
        kind = object_type(a.objects[0])
        if not kind.endswith("Sliced"):
            continue
        whole = kind.removesuffix("Sliced")
        if whole in sliced_at and sliced_at[whole] < k:
            continue
        if scene is not None and any(o.type == whole and o.sliced for o in scene.objects):
            continue
        if any(o.type == kind for o in (scene.objects if scene else [])):
            continue  # the scene already has slices
        if any(m.action == f"Driver.Slice('{whole}')" for m in missing):
            continue
        knife = max(
            (
                j
                for j in range(k)
                if p.acts(j)
                and p.actions[j].verb == "PickUp"
                and object_type(p.actions[j].objects[0]) in KNIVES
            ),
            default=k - 1,
        )
        missing.append(
            Missing(
                description=f"{whole} is used in slices but never sliced",
                action=f"Driver.Slice('{whole}')",
                after=knife,
            )
        )
        sliced_at[whole] = k


def _never_watered(p: _Plan, kinds: list[str], missing: list[Missing]) -> None:
    if "Water Plant" not in kinds:
        return
    if any(p.acts(k) and p.actions[k].verb == "PourFromAIntoB" for k in p.steps()):
        return
    plants = [o for a in p.actions if a.known for o in a.objects if object_type(o) == "HousePlant"]
    vessels = [
        (k, p.actions[k].objects[0])
        for k in p.steps()
        if p.acts(k)
        and p.actions[k].verb == "PickUp"
        and object_type(p.actions[k].objects[0])
        in {"Cup", "Mug", "Bowl", "Pot", "Kettle", "Bottle", "WateringCan"}
    ]
    if not vessels:
        return
    last, vessel = vessels[-1]
    end = next((k for k in p.steps(last + 1) if p.acts(k) and vessel in p.actions[k].objects), None)
    after = len(p.actions) - 1 if end is None else end - 1
    plant = plants[0] if plants else "HousePlant"
    missing.append(
        Missing(
            description=f"the plant is never watered from {vessel}",
            action=f"Driver.PourFromAIntoB('{vessel}', '{plant}')",
            after=after,
        )
    )


def _spaces(appliance: str) -> set[str]:
    """Where the things an appliance acts on sit."""
    kind = object_type(appliance)
    if kind == "Faucet":
        return {"Sink", "SinkBasin"}
    if kind == "StoveKnob":
        return {"StoveBurner"}
    return {kind}


def _idle_switching(p: _Plan, flags: dict[int, str]) -> None:
    """On then off with nothing inside to act on."""
    for i in p.steps():
        a = p.actions[i]
        if not p.acts(i) or a.verb != "ToggleOn" or i in flags:
            continue
        name = a.objects[0]
        if object_type(name) not in IDLE_CHECKED or p.occupied.get(i, True):
            continue
        off = next((k for k in p.steps(i + 1) if p.acts(k) and name in p.actions[k].objects), None)
        if off is None or p.actions[off].verb != "ToggleOff" or p.occupied.get(off, True):
            continue
        if any(
            p.acts(k)
            and p.actions[k].verb in ("PutAOnB", "PourFromAIntoB")
            and p.actions[k].objects[1] in _spaces(name)
            for k in range(i + 1, off)
        ):
            continue
        reason = f"{name} is switched on and off with nothing in it to act on"
        flags.setdefault(i, reason)
        flags.setdefault(off, reason)


def _running(world: World, receptacle: str) -> bool:
    """Whether putting something into a receptacle makes something happen (a running faucet
    over the sink, a burner or appliance that is on)."""
    if object_type(receptacle) not in ("Sink", "SinkBasin"):
        return world.thing(receptacle).toggled is True
    faucets = [t for t in world.things.values() if t.type == "Faucet"]
    if faucets:
        return any(t.toggled is True for t in faucets)
    return bool(world.scene_types.get("Faucet", {}).get("toggled", False))


def _unused_and_some_off(p: _Plan, i: int, scene_off: set[str]) -> bool:
    """A switch-off of a type the scene has switched off somewhere and the plan never uses."""
    kind = object_type(p.actions[i].objects[0])
    if kind not in scene_off:
        return False
    return not any(
        p.acts(k) and any(object_type(o) == kind for o in p.actions[k].objects)
        for k in p.steps()
        if k != i
    )


def _never_emptied(p: _Plan, kinds: list[str], missing: list[Missing]) -> None:
    """A mug rinsed full of water goes into the coffee machine without being poured out."""
    if not {"Coffee", "Breakfast"} & set(kinds):
        return
    for k in p.steps():
        if not (_puts_into(p, k, {"CoffeeMachine"}) and p.full.get(k)):
            continue
        mug = p.actions[k].objects[0]
        sinks = [
            j
            for j in range(k)
            if _puts_into(p, j, {"Sink", "SinkBasin"}) and p.actions[j].objects[0] == mug
        ]
        if not sinks:
            return  # filled some other way: not ours to judge
        sink = p.actions[sinks[-1]].objects[1]
        pickup = max(
            (j for j in range(sinks[-1], k) if p.acts(j) and p.actions[j].verb == "PickUp"),
            default=k - 1,
        )
        missing.append(
            Missing(
                description=f"{mug} still holds the rinsing water when it goes into the machine",
                action=f"Driver.PourFromAIntoB('{mug}', '{sink}')",
                after=pickup,
            )
        )
        return
