"""Verdicts by minimal repair: which steps a plan can do without, which it cannot do, and which
it lacks, each proved by simulating the plan against its goal.

The classical idea is plan validation with action elimination: a set of steps is removable when
the plan without it can still be carried out (as far as the simulator knows) and every goal
condition the plan meets still holds at the end. `review` works in four stages:

1. **Missing preconditions.** A step that cannot happen because a step is missing (slices picked
   up from a tomato never sliced) gets the missing step, placed where it works.
2. **Blame.** A step that cannot happen because of an earlier mistake (the object was already put
   down elsewhere) is repaired by removing the block that caused it: of all the blocks whose
   removal makes the plan executable without losing goal conditions, the one that meets the goal
   best, then the smallest, then the nearest. The wrong put-down goes, the right one stays.
3. **Missing steps.** For each goal condition the plan fails, actions that would make it hold
   are tried at the places where they could work (switching on the device the plan loads,
   slicing with the knife in hand, pouring the filled vessel); one that makes it hold, without
   breaking anything, is proposed.
4. **Removal.** A maximal (not maximum) removable set is searched greedily over candidate blocks
   in plan order: a motion and the motion that undoes it, a pick-up with its put-down, a put-down
   with the pick-up that takes the object back, open/close and on/off pairs, contiguous runs of
   up to `MAX_RUN` steps, single steps. A put-down, or a step that only restores the state (a
   close, a switch-off), is never removed on its own; taking an object out of a receptacle the
   plan later uses as a device (clearing the sink, the coffee machine, the toaster, a burner, a
   pan or a pot) is preparation and never removed on its own.

Cost: each candidate block is simulated from the state before it, only until its state is the
full plan's again, so a block that changes nothing lasting costs a few steps; in the worst case
(a longest shared game, about 195 steps) candidates x suffix stays near 10^5 step updates, a
fraction of a second.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from planverify.episode import Scene
from planverify.notation import MOTION_VERBS, Action, parse_action
from planverify.world.classes import types_of
from planverify.world.goals import GoalSpec, Unit
from planverify.world.rules import (
    BASINS,
    COOKERS,
    KNIVES,
    SLICES,
    WATER_TAPS,
    cancels,
    serves,
    undone,
    within,
)
from planverify.world.state import SOME, State, initial_state
from planverify.world.trace import (
    Judge,
    Simulator,
    Variant,
    better,
    goal_judge,
    no_worse,
    preserving_judge,
    score,
)

MAX_RUN = 4  # the longest run of contiguous steps tried as one block
MAX_ROUNDS = 6  # repairs tried per stage before giving up
SURFACES = frozenset(
    {
        "ArmChair",
        "Bed",
        "Chair",
        "CoffeeTable",
        "CounterTop",
        "Desk",
        "DiningTable",
        "Dresser",
        "Floor",
        "Footstool",
        "Ottoman",
        "Shelf",
        "ShelvingUnit",
        "SideTable",
        "Sofa",
        "Stool",
        "TVStand",
    }
)  # receptacles with room to spare
RESTORING = frozenset({"Close", "ToggleOff"})  # verbs that only put a state back
CONTROLS = {"SinkBasin": "Faucet", "Sink": "Faucet", "StoveBurner": "StoveKnob"}
CONTROLS |= {"Pan": "StoveKnob", "Pot": "StoveKnob", "Kettle": "StoveKnob"}


@dataclass
class Removal:
    """Steps the plan can do without (0-based positions in the plan reviewed), and why."""

    steps: tuple[int, ...]
    reason: str


@dataclass
class Proposal:
    """A step the plan lacks, and where it goes (after plan position `after`; -1: first)."""

    action: str
    after: int
    reason: str


@dataclass
class Review:
    """The verdicts on a plan."""

    removals: list[Removal] = field(default_factory=list)
    proposals: list[Proposal] = field(default_factory=list)
    units: list[Unit] = field(default_factory=list)  # the goal conditions, after the repairs
    achieved_by: dict[str, int] = field(default_factory=dict)  # condition -> plan position


def _steps(numbers: Sequence[int]) -> str:
    shown = sorted(n + 1 for n in numbers)
    if len(shown) == 1:
        return f"step {shown[0]}"
    if shown == list(range(shown[0], shown[-1] + 1)):
        return f"steps {shown[0]}-{shown[-1]}"
    return "steps " + ", ".join(map(str, shown))


class Reviewer:
    """The search over one plan."""

    def __init__(
        self,
        lines: Sequence[str],
        scene: Scene | None,
        spec: GoalSpec | None,
        focus: Sequence[str] = (),
    ) -> None:
        self.lines = list(lines)
        self.actions: list[Action] = [parse_action(line) for line in lines]
        self.n = len(self.actions)
        start = initial_state(scene, names=[o for a in self.actions for o in a.objects])
        for name in ("Faucet", "StoveKnob", "HousePlant"):  # what repairs may name
            start.key(name)
        self.spec = spec
        judge: Judge
        possible: list[State] = []
        if spec is not None:
            judge = goal_judge(spec)
            if scene is None:  # every state unknown: see what the goal needs in both worlds
                possible = [undone(start), undone(start, running=True)]
        else:
            trace = Simulator(self.actions, start, lambda s: []).trace(list(range(self.n)))
            full = trace.final[0]
            kinds = set(focus)
            keep = [k for k, o in full.objects.items() if not kinds or o.kind in kinds]
            judge = preserving_judge(keep, full)
        self.sim = Simulator(self.actions, start, judge, possible)
        self.goal_kinds = goal_kinds(spec) if spec is not None else frozenset(focus)
        self.order = list(range(self.n))
        self.trace = self.sim.trace(self.order)
        self.removed: dict[int, str] = {}
        self.added: dict[int, tuple[int, str]] = {}  # step id -> (input position it follows, why)

    # ------------------------------------------------------------------ helpers

    def active(self, step: int) -> bool:
        """Whether a step is a Driver action in the notation (not dialogue, not opaque)."""
        action = self.actions[step]
        return action.known and not action.is_dialogue

    def judged(self, step: int) -> bool:
        """Whether the search may remove a step: an active input step (never an insertion)."""
        return step < self.n and self.active(step)

    def state_at(self, pos: int) -> State:
        """The state (as known) before the step at an order position."""
        return self.trace.before[pos][0] if pos < len(self.trace.order) else self.trace.final[0]

    def _apply(self, block: set[int]) -> None:
        self.order = [s for s in self.order if s not in block]
        self.trace = self.sim.trace(self.order)

    def _add_step(self, action: Action) -> int:
        self.sim.steps.append(action)
        self.actions.append(action)
        return len(self.sim.steps) - 1

    def _origin_before(self, position: int) -> int:
        """The input position a step inserted at `position` of the order follows."""
        for step in reversed(self.order[:position]):
            if step < self.n:
                return step
        return -1

    def _acceptable(self, variant: Variant, block: set[int]) -> bool:
        allowed = self.trace.impossible - block
        return variant.impossible <= allowed and no_worse(variant.units, self.trace.units)

    # ------------------------------------------------------------------ blocks

    def _next(self, start: int, test: object) -> int | None:
        for pos in range(start + 1, len(self.order)):
            step = self.order[pos]
            if self.active(step) and test(self.actions[step]):  # type: ignore[operator]
                return step
        return None

    def blocks(self, *, blame: bool) -> Iterator[set[int]]:
        """Candidate blocks in plan order, larger ones first at each start."""
        order = self.order
        interactions = [
            pos
            for pos, s in enumerate(order)
            if self.judged(s) and self.actions[s].verb not in MOTION_VERBS
        ]
        for k, pos in enumerate(interactions):
            step = order[pos]
            action = self.actions[step]
            obj = action.objects[0] if action.objects else None
            pairs: list[set[int]] = []
            partner = None
            if action.verb == "PickUp":
                partner = self._next(
                    pos, lambda a, o=obj: a.verb == "PutAOnB" and a.objects[0] == o
                )
            elif action.verb == "PutAOnB":
                partner = self._next(pos, lambda a, o=obj: a.verb == "PickUp" and a.objects[0] == o)
            elif action.verb == "Open":
                partner = self._next(
                    pos, lambda a, o=obj: a.verb in ("Open", "Close") and a.objects[0] == o
                )
            elif action.verb == "ToggleOn":
                partner = self._next(
                    pos, lambda a, o=obj: a.verb in ("ToggleOn", "ToggleOff") and a.objects[0] == o
                )
            if (
                partner is not None
                and self.judged(partner)
                and self.actions[partner].verb != action.verb
            ):
                pairs.append({step, partner})
            runs = [
                {order[p] for p in interactions[k : k + size]}
                for size in range(MAX_RUN, 1, -1)
                if k + size <= len(interactions)
            ]
            yield from sorted(pairs + runs, key=len, reverse=True)
            if self._single_allowed(pos, blame=blame):
                yield {step}

    def _single_allowed(self, pos: int, *, blame: bool) -> bool:
        step = self.order[pos]
        action = self.actions[step]
        outcome = self.trace.outcomes[pos]
        if outcome.problem or outcome.changed is False:
            return True  # an impossible step, or one that changes nothing
        if blame:
            return True
        return action.verb != "PutAOnB" and action.verb not in RESTORING

    def _near(self, pos: int, test: object, *, forward: bool) -> int | None:
        """The nearest active step after (or before) an order position passing `test`."""
        span = range(pos + 1, len(self.order)) if forward else range(pos - 1, -1, -1)
        for p in span:
            step = self.order[p]
            if self.active(step) and test(self.actions[step]):  # type: ignore[operator]
                return step
        return None

    def _self_contained(self, block: set[int]) -> bool:
        """Whether a block can go as a whole: each put-down goes with the pick-up before it or
        the one that takes the object back, each step that puts a state back (a close, a
        switch-off, pouring a vessel out) with the step that changed it, each open or
        switch-on with the step that undoes it; and an object picked up and put down is not
        touched again afterwards. Steps that change nothing or cannot happen go alone."""
        last = max(self.trace.position(s) for s in block)
        for step in block:
            pos = self.trace.position(step)
            outcome = self.trace.outcomes[pos]
            if outcome.problem or outcome.changed is False:
                continue
            action = self.actions[step]
            obj = action.objects[0] if action.objects else ""
            same = lambda verbs, o=obj: lambda a: a.verb in verbs and a.objects[0] == o  # noqa: E731
            if action.verb == "PutAOnB":
                pick = self._near(pos, same({"PickUp"}), forward=False)
                again = self._near(pos, same({"PickUp"}), forward=True)
                if pick not in block and again not in block:
                    return False
            elif action.verb in ("Close", "ToggleOff"):
                opener = self._near(pos, same({"Open", "ToggleOn"}), forward=False)
                if opener is not None and opener not in block:
                    return False  # puts back what the plan changed: tidying up
                if opener is None and self._touched_elsewhere(obj, block):
                    return False  # readies something the plan uses
            elif (
                action.verb == "PourFromAIntoB"
                and self.state_at(pos).kind_at(self.state_at(pos).key(action.objects[1])) in BASINS
            ):
                if self._near(pos, same({"PickUp"}), forward=False) not in block:
                    return False
            elif action.verb in ("Open", "ToggleOn"):
                closer = self._near(pos, same({"Close", "ToggleOff"}), forward=True)
                if closer is None or closer not in block:
                    return False
                if action.verb == "Open" and self._reached_into(pos, self.trace.position(closer)):
                    return False
            elif action.verb == "PickUp":
                put = self._near(pos, same({"PutAOnB"}), forward=True)
                if put is None or (put in block and self._touched_after(obj, last, block)):
                    return False
        return True

    def _handles_goal_objects(self, block: set[int]) -> bool:
        """Whether a block does something to an object of a kind the goal names (moves it,
        switches a device it is in, changes its state). Such steps serve the goal in ways a
        simulation cannot always show, so they only go when they change nothing, cannot
        happen, or put the object down and take it back at once (a misplacement)."""
        steps = sorted(block, key=self.trace.position)
        if len(steps) == 2 and [self.actions[s].verb for s in steps] == ["PutAOnB", "PickUp"]:
            first, second = (self.trace.position(s) for s in steps)
            between = self.order[first + 1 : second]
            if all(self.actions[s].verb in MOTION_VERBS or not self.active(s) for s in between):
                return False  # put down and taken straight back: a misplacement
        for step in steps:
            pos = self.trace.position(step)
            outcome = self.trace.outcomes[pos]
            if outcome.problem or outcome.changed is False:
                continue
            state = self.state_at(pos)
            names = self.actions[step].objects
            if self.actions[step].verb in ("PutAOnB", "PourFromAIntoB"):
                names = names[:1]  # what is moved or poured, not where to
            keys = [state.key(name) for name in names]
            touched = [k for k in keys if k is not None]
            if self.actions[step].verb in ("ToggleOn", "ToggleOff"):
                touched += self._acted_on(state, touched[0]) if touched else []
            elif self.actions[step].verb in ("PickUp", "PutAOnB") and touched:
                touched += within(state, touched[0])  # what it holds moves with it
            if any(state.get(k).kind in self.goal_kinds for k in touched):
                return True
        return False

    def _acted_on(self, state: State, device: str) -> list[str]:
        """What switching a device acts on: the sink's contents for a faucet, the pans' and
        pots' for a stove knob, its own for the rest."""
        kind = state.get(device).kind
        if kind in WATER_TAPS:
            basins = serves(state, device)
            places = [k for k, o in state.objects.items() if o.kind in basins]
        elif kind in ("StoveKnob", "StoveBurner"):
            places = [k for k, o in state.objects.items() if o.kind in COOKERS]
        else:
            places = [device]
        return [
            item for place in places for item in [place, *within(state, place)] if item != device
        ]

    def _reached_into(self, start: int, end: int) -> bool:
        """Whether something is taken from a place not known (it may be the container opened
        at `start`) between two order positions."""
        for pos in range(start + 1, end):
            action = self.actions[self.order[pos]]
            if action.verb == "PickUp" and self.active(self.order[pos]):
                state = self.state_at(pos)
                key = state.key(action.objects[0])
                if key is not None and state.get(key).loc is None:
                    return True
        return False

    def _touched_elsewhere(self, name: str, block: set[int]) -> bool:
        return any(
            name in self.actions[s].objects for s in self.order if self.active(s) and s not in block
        )

    def _touched_after(self, name: str, last: int, block: set[int]) -> bool:
        return any(
            name in self.actions[s].objects
            for s in self.order[last + 1 :]
            if self.active(s) and s not in block
        )

    def _is_preparation(self, block: set[int]) -> bool:
        """Whether a block takes something out of a receptacle the plan uses afterwards: a
        device (clearing the sink before washing, a pan before cooking), or a container or
        dish it puts things into or takes things from later. Surfaces have room: taking
        something off a counter or a table prepares nothing."""
        last = max(self.trace.position(s) for s in block)
        for step in block:
            action = self.actions[step]
            if action.verb != "PickUp":
                continue
            pos = self.trace.position(step)
            state = self.state_at(pos)
            key = state.key(action.objects[0])
            place = state.get(key).loc if key is not None else None
            kind = state.kind_at(place)
            if kind is None and place is None:
                # where it was is unknown: it may have been cleared off a device the plan uses
                # next, so only a pick-up far from any such use can be a detour
                if self._device_used_soon(last, block):
                    return True
                continue
            if kind not in SURFACES and self._used_after(last, kind, place, block):
                return True
        return False

    def _device_used_soon(self, last: int, block: set[int], window: int = 4) -> bool:
        """Whether one of the next few interactions puts something into a receptacle that is
        not a surface, or switches a device."""
        seen = 0
        for pos in range(last + 1, len(self.order)):
            step = self.order[pos]
            action = self.actions[step]
            if step in block or not self.active(step) or action.verb in MOTION_VERBS:
                continue
            seen += 1
            if seen > window:
                return False
            state = self.state_at(pos)
            if action.verb == "PutAOnB" and state.kind_at(state.key(action.objects[1])) not in SURFACES:
                return True
            if action.verb == "ToggleOn":
                return True
        return False

    def _used_after(self, last: int, kind: str, place: str | None, block: set[int]) -> bool:
        control = CONTROLS.get(kind, kind)
        for pos in range(last + 1, len(self.order)):
            step = self.order[pos]
            if step in block or not self.active(step):
                continue
            action = self.actions[step]
            state = self.state_at(pos)
            if action.verb in ("PutAOnB", "PourFromAIntoB"):
                target = state.key(action.objects[1])
                if target == place or state.kind_at(target) == kind:
                    return True
            if action.verb == "PickUp":  # reaching into it again, or taking it
                taken = state.key(action.objects[0])
                if taken is not None and place in (taken, state.get(taken).loc):
                    return True
            if action.verb == "ToggleOn" and state.kind_at(state.key(action.objects[0])) in (
                kind,
                control,
            ):
                return True
        return False

    # ------------------------------------------------------------------ stages

    def cancel_motion(self) -> None:
        """A motion and the motion that undoes it at once go together: provably nothing moved
        (also once what stood between them has gone: Move(1) Move(-0.5) Move(0.5) Move(-1))."""
        k = 0
        found = False
        while k + 1 < len(self.order):
            a, b = self.order[k], self.order[k + 1]  # next to each other, nothing between
            if self.judged(a) and self.judged(b) and cancels(self.actions[a], self.actions[b]):
                why = f"{self.actions[a]} is undone by the next step, {self.actions[b]}: the Driver ends where it started"
                self.removed[a] = self.removed[b] = why
                del self.order[k : k + 2]
                k, found = max(k - 1, 0), True
            else:
                k += 1
        if found:
            self.trace = self.sim.trace(self.order)

    def blame(self) -> None:
        """Make the plan executable by removing what makes its impossible steps impossible."""
        for _ in range(MAX_ROUNDS):
            if not self.trace.impossible:
                return
            culprit = min(self.trace.position(s) for s in self.trace.impossible)
            best: tuple[tuple[int, ...], set[int], Variant] | None = None
            for block in self.blocks(blame=True):
                positions = [self.trace.position(s) for s in block]
                if max(positions) > culprit:
                    continue
                variant = self.sim.without(self.trace, block)
                if not variant.impossible < self.trace.impossible or not no_worse(
                    variant.units, self.trace.units
                ):
                    continue
                met, progress = score(variant.units)
                key = (
                    -met,
                    -progress,
                    len(variant.impossible),
                    len(block),
                    max(positions) - culprit,  # the cause before the symptom
                )
                if best is None or key < best[0]:
                    best = (key, block, variant)
            if best is None:
                return
            block = best[1]
            fixed = sorted(self.trace.impossible - best[2].impossible)
            why = self._blame_reason(block, fixed)
            for step in block:
                self.removed[step] = why
            self._apply(block)

    def _blame_reason(self, block: set[int], fixed: list[int]) -> str:
        shown = [s for s in fixed if s not in block]
        if not shown:
            pos = self.trace.position(min(block))
            problem = self.trace.outcomes[pos].problem or "it cannot happen"
            return f"cannot happen here: {problem}"
        names = _steps(sorted(block))
        return f"{names} make {_steps(shown)} impossible ({self.trace.outcomes[self.trace.position(shown[0])].problem}); without them the plan can be carried out"

    def remove(self) -> None:
        """Remove every block the plan can do without, in plan order (a maximal set)."""
        progress = True
        while progress:
            progress = False
            for block in self.blocks(blame=False):
                if any(s in self.removed for s in block):
                    continue
                if not self._self_contained(block) or self._is_preparation(block):
                    continue
                if self._handles_goal_objects(block):
                    continue
                variant = self.sim.without(self.trace, block)
                if not self._acceptable(variant, block):
                    continue
                why = self._removal_reason(block)
                for step in block:
                    self.removed[step] = why
                self._apply(block)
                progress = True
                break

    def _removal_reason(self, block: set[int]) -> str:
        if len(block) == 1:
            pos = self.trace.position(next(iter(block)))
            outcome = self.trace.outcomes[pos]
            action = self.actions[self.order[pos]]
            if outcome.problem:
                return f"cannot happen here: {outcome.problem}"
            if outcome.changed is False:
                return f"changes nothing: {action.objects[-1] if action.objects else 'the state'} is already that way"
        held = [u for u in self.trace.units if u.met is True]
        if self.spec is None:
            return f"without {_steps(sorted(block))} every object the goal names ends the same"
        if not held:
            return f"without {_steps(sorted(block))} the plan meets the goal no less"
        return f"without {_steps(sorted(block))} every goal condition the plan meets still holds"

    # ------------------------------------------------------------------ missing steps

    def _templates(self) -> Iterator[tuple[int, Action, str]]:
        """(order position to insert before, action, why) to try for unmet goal conditions."""
        for pos, step in enumerate(self.order):
            if not self.active(step):
                continue
            action = self.actions[step]
            state = self.state_at(pos)
            problem = self.trace.outcomes[pos].problem or ""
            if "inside the closed" in problem or problem.endswith(" is closed"):
                inside = state.key(action.objects[0 if action.verb == "PickUp" else -1])
                where = inside if problem.endswith(" is closed") else None
                if where is None and inside is not None:
                    where = state.get(inside).loc
                kind = state.kind_at(where)
                if kind is not None:
                    name = self._name_for(kind) if where is None or where.startswith(SOME) else where
                    yield pos, parse_action(f"Driver.Open('{name}')"), f"{name} is never opened"
            if "only runs closed" in problem:
                name = action.objects[0]
                yield pos, parse_action(f"Driver.Close('{name}')"), f"{name} is never closed"
            if action.verb == "PutAOnB":
                place = state.key(action.objects[1])
                kind = state.kind_at(place)
                if kind is None:
                    continue
                device = CONTROLS.get(kind, kind)
                if kind in BASINS | COOKERS | {
                    "StoveBurner",
                    "CoffeeMachine",
                    "Toaster",
                    "Microwave",
                }:
                    name = self._name_for(device)
                    yield (
                        pos + 1,
                        parse_action(f"Driver.ToggleOn('{name}')"),
                        f"{name} is never switched on with {action.objects[0]} in {action.objects[1]}",
                    )
            picked = state.key(action.objects[0]) if action.verb == "PickUp" else None
            whole = None if picked is None else _whole_of(state.get(picked).kind)
            if whole is not None:
                knife = self._knife_before(pos)
                if knife is not None:
                    name = self._name_for(whole)
                    why = f"{action.objects[0]} is picked up but {name} is never sliced"
                    yield knife, parse_action(f"Driver.Slice('{name}')"), why
            yield from self._pour_template(pos, state)
        # the filled vessel may still be in hand when the plan ends
        yield from self._pour_template(len(self.order), self.state_at(len(self.order)))

    def _pour_template(self, pos: int, state: State) -> Iterator[tuple[int, Action, str]]:
        held = state.held
        if held is not None and state.get(held).liquid not in (None, ""):
            plant = self._name_for("HousePlant")
            if self.spec is not None and "HousePlant" in self.spec.types():
                yield (
                    pos,
                    parse_action(f"Driver.PourFromAIntoB('{held}', '{plant}')"),
                    f"the plant is never watered from {held}",
                )

    def _name_for(self, kind: str) -> str:
        for action in self.actions[: self.n]:
            for name in action.objects:
                if self.trace.final[0].index.type_of(name) == kind:
                    return name
        return kind

    def _knife_before(self, pos: int) -> int | None:
        """The latest order position before `pos` where a knife is in hand."""
        for p in range(pos, 0, -1):
            state = self.state_at(p)
            if state.held is not None and state.get(state.held).kind in KNIVES:
                return p
        return None

    def add_missing(self) -> None:
        """Insert steps that make goal conditions the plan is known to fail hold, or impossible
        steps possible, each checked by simulation (a condition that is only not known to
        hold is not a reason to add anything)."""
        for _ in range(MAX_ROUNDS):
            known = self.sim.known_units(self.trace.units)
            wanted = [u for u in known if u.met is False]
            if not wanted and not self.trace.impossible:
                return
            best = None
            seen: set[tuple[int, str]] = set()
            for pos, action, why in self._templates():
                if (pos, str(action)) in seen:
                    continue
                seen.add((pos, str(action)))
                step = self._add_step(action)
                variant = self.sim.without(self.trace, set(), {pos: [step]})
                self.sim.steps.pop()
                self.actions.pop()
                fewer = variant.impossible < self.trace.impossible
                gains = better(
                    self.sim.known_units(variant.units), known
                ) and no_worse(variant.units, self.trace.units)
                if variant.impossible - self.trace.impossible or not (gains or fewer):
                    continue
                key = (-score(variant.units)[0], len(variant.impossible), -pos)
                if best is None or key < best[0]:
                    best = (key, pos, action, why)
            if best is None:
                return
            _, pos, action, why = best
            step = self._add_step(action)
            self.added[step] = (self._origin_before(pos), why)
            self.order.insert(pos, step)
            self.trace = self.sim.trace(self.order)

    # ------------------------------------------------------------------ result

    def review(self) -> Review:
        self.cancel_motion()
        self.add_missing()
        self.blame()
        self.add_missing()
        self.remove()
        self.cancel_motion()  # motions the removals left next to each other
        result = Review(units=list(self.trace.units))
        groups: dict[str, list[int]] = {}
        for step, why in self.removed.items():
            groups.setdefault(why, []).append(step)
        for why, steps in groups.items():
            result.removals.append(Removal(tuple(sorted(steps)), why))
        result.removals.sort(key=lambda r: r.steps)
        for step, (after, why) in self.added.items():
            result.proposals.append(Proposal(str(self.actions[step]), after, why))
        return result


def goal_kinds(spec: GoalSpec) -> frozenset[str]:
    """The kinds of objects a goal is about: those it asks states of or places somewhere (not
    the tools and fixtures it only needs to exist, such as a knife or a sink)."""
    placed = {name for r in spec.relations for name, _ in r.heads} | {
        r.tail for r in spec.relations
    }
    return frozenset(
        t
        for c in spec.components
        if c.states.keys() - {"receptacle"} or c.name in placed
        for t in types_of(c.select)
    )


def _whole_of(kind: str) -> str | None:
    return next((whole for whole, made in SLICES.items() if made == kind), None)


def review(
    lines: Sequence[str],
    *,
    scene: Scene | None = None,
    spec: GoalSpec | None = None,
    focus: Sequence[str] = (),
) -> Review:
    """The verdicts on a plan: removable blocks, missing steps, the goal conditions.

    Without a goal spec, `focus` lists the object types the goal text names: those must end as
    the plan leaves them (every object does, when it is empty).
    """
    return Reviewer(lines, scene, spec, focus).review()


__all__ = ["MAX_RUN", "Proposal", "Removal", "Review", "Reviewer", "review"]
