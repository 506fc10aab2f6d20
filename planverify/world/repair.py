"""Verdicts by minimal repair: which steps a plan can do without, which it cannot do, and which
it lacks, each proved by simulating the plan against its goal.

The classical idea is plan validation with action elimination: a set of steps is removable when
the plan without it can still be carried out (as far as the simulator knows) and every goal
condition the plan meets still holds at the end. The Driver's hands are no goal condition (TEACh
never asks for empty hands). `review` works in five stages:

1. **Missing preconditions.** A step that cannot happen because a step is missing (an apple
   taken from a fridge never opened) gets the missing step, placed where it works.
2. **Blame**, before anything is added for the goal. A step that cannot happen because of an
   earlier mistake (the object was already put down elsewhere) is repaired by removing the
   block that caused it: of all the blocks whose removal makes the plan executable without
   losing goal conditions, the one that meets the goal best, then the smallest, then the
   nearest. The wrong put-down goes, the right one stays (and is not inserted a second time).
3. **Replacement.** A device switched on right after the object the goal wants worked on was
   set down on a surface (the plate on the counter, then the faucet): the put-down is replaced
   by the one into the device's place, when that meets the goal better. The device stays.
4. **Missing steps.** For each goal condition the plan fails, actions that would make it hold
   are tried at the places where they could work (switching on the device the plan loads,
   slicing with the knife in hand, pouring the filled vessel), one at a time, then two close
   together; one that makes it hold, without breaking anything, is proposed.
5. **Removal.** A maximal (not maximum) removable set is searched greedily over candidate blocks
   in plan order: a motion and the motion that undoes it, a pick-up with its put-down, a put-down
   with the pick-up that takes the object back (the two cancel, whatever the object does next;
   but when that put-down already met every goal relation about the object, the later move
   goes instead: the cloth in the bathtub moved on into its basin),
   open/close pairs, on/off pairs and off/on pairs (a running device switched off and on again:
   it acts on what is put in it all along), contiguous runs of up to `MAX_RUN` steps, single
   steps. A put-down, or a step that only restores the state (a close, a switch-off), is never
   removed on its own, except a switch-off of a device that ran from the start and acted on
   nothing the plan uses; taking an object out of a receptacle the plan later uses as a device
   (clearing the sink, the coffee machine, the toaster, a burner, a pan or a pot) is preparation
   and never removed on its own, unless it goes straight back in; taking something else out
   of it needs no room and prepares nothing. A close and the open that undoes it next go as a
   pair (the door stands open as before), and a put-down "on itself", as TEACh records now and
   then, never goes: where the object went is unknown. Without a scene, where an object stood
   is unknown: a pick-up right before a device is used counts as clearing it only when the
   Driver uses the device from where it picked the object up, and the device can hold the
   object at the start (nothing stands on a toaster, only mugs in a coffee machine). An object
   picked up at the end that the plan never worked on nor uses goes: no goal asks for anything
   to be held.

Where things start is known as exactly as the scene says: by the receptacle's own key when the
scene gives its id (`SceneObject.within`) and the plan names it or it is the only one of its
type, so an object set back on its own counter is a detour wherever the Driver carried it, and a
container opened while nothing taken afterwards was in it is a search. Without a scene, the plan
itself is the evidence: a switch or a door starts as its first step needs (a faucet first
switched off ran), an object first taken right after a container was opened was in it, a pan
that food goes into as the stove is lit stands on a burner (`rules.as_first_placed`), an object
set down on a surface where it was picked up, with nothing but motion between and no container
open, was presumably set back, and a container opened just before another is opened was
presumably searched. Of a put-down taken straight back (nothing but motion between), the
put-down and the pick-up after it go, never the pick-up before it.

The goal check is evidence only where the plan meets some goal condition, or gets nearer to one,
that doing nothing would not: where it does neither (or no goal could be read), only what is
useless whatever the goal goes: steps that cannot happen or change nothing, switches of devices
that act on nothing, and blocks that change nothing that lasts (a cancelling pair, an object put
down and taken back or set back where it was, a container opened and closed with nothing taken).

Each removal and insertion says what its proof rests on (`Removal.uses_goal`, `Removal.known`),
from which the rules Judge sets its evidence level (`planverify.records.evidence`).

Motion is removed only as a move and the move back, or a turn and the turn back, next to each
other: provably nothing moved. Motion that only leads to or from removed interactions is kept:
removing it as well cut plan-level precision on the injected-error set from 78.8% to 57.5% with
no gain in recall (the walking of the base demonstrations is not an error).

Cost: each candidate block is simulated from the state before it, only until its state is the
full plan's again, so a block that changes nothing lasting costs a few steps; a block with a
lasting effect runs to the end. A shared game's review (the longest has about 195 Driver
steps) simulates at most about 30,000 step updates, a few hundred ms. Longer or pathological
plans are bounded by `WORK_BUDGET` step updates: once spent, the search stops, what it found so
far stands (each removal is proved on its own) and the rest of the plan is kept unjudged.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field

from planverify.records.episode import Scene
from planverify.records.notation import MOTION_VERBS, Action, parse_action
from planverify.world.classes import classes_of, types_of
from planverify.world.goals import GoalSpec, Unit, evaluate
from planverify.world.rules import (
    BASINS,
    COOKERS,
    DERIVED_TYPES,
    DIRTYABLE,
    FILLABLE,
    KNIVES,
    SLICES,
    WATER_TAPS,
    as_first_placed,
    as_first_used,
    cancels,
    net_motion,
    placeable,
    serves,
    undone,
    within,
)
from planverify.world.start import initial_state
from planverify.world.state import CONTAINERS, SOME, WATER, Obj, State
from planverify.world.trace import (
    Judge,
    Simulator,
    Variant,
    better,
    goal_judge,
    no_worse,
    preserving_judge,
    rank,
    score,
)

MAX_RUN = 4  # the longest run of contiguous steps tried as one block
MAX_ROUNDS = 6  # repairs tried per stage before giving up
PAIR_REACH = 2  # steps inserted together are at most this many positions apart
WORK_BUDGET = 100_000  # step updates one review may simulate (the shared games need < 30,000)
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
SAME_SPOT = 0.5  # metres: a step or two of TEACh's 0.25 m moves is still within reach
CLEARING_REACH = 8  # interactions within which a receptacle cleared without a scene is used
# (over the 478 shared games, 8 rather than 4 makes 83.3% of the removals made without the scene
# ones the Judge makes with it, up from 82.4%, and finds 79.2% of those, down from 79.4%)
CLEARED_ONTO = frozenset({"CounterTop", "DiningTable"})  # where what is cleared goes
HELD_AT_START = {"Toaster": frozenset[str](), "CoffeeMachine": frozenset({"Mug"})}
# all these devices ever hold at the start in the 478 shared scenes (103 mugs in coffee machines,
# nothing on a toaster): anything else picked up before one is used was not cleared off it
RESTORING = frozenset({"Close", "ToggleOff"})  # verbs that only put a state back
UNDOING = {"ToggleOff": ("ToggleOn", True), "Close": ("Open", True)}
UNDOING |= {"ToggleOn": ("ToggleOff", False), "Open": ("Close", False)}
"""A restoring step and the step that undoes it next (forward), or the other way round."""
WORKING_DEVICES = WATER_TAPS | {"CoffeeMachine", "Microwave", "StoveBurner", "StoveKnob", "Toaster"}
# switches that act on what they hold; the others (lights, lamps, screens) serve no TEACh goal
CONTROLS = {"SinkBasin": "Faucet", "Sink": "Faucet", "StoveBurner": "StoveKnob"}
CONTROLS |= {"Pan": "StoveKnob", "Pot": "StoveKnob", "Kettle": "StoveKnob"}


@dataclass
class Removal:
    """Steps the plan can do without (0-based positions in the plan reviewed), and why."""

    steps: tuple[int, ...]
    reason: str
    uses_goal: bool = True  # the proof needs the goal (False: useless whatever the goal)
    known: bool = True  # every state the proof used was known (a scene, no unknown effect)


@dataclass
class Proposal:
    """A step the plan lacks, and where it goes (after plan position `after`; -1: first)."""

    action: str
    after: int
    reason: str
    uses_goal: bool = True  # needed for the goal (False: only makes a step possible)
    known: bool = True  # proved from known states (False: a pattern, or unknown states)


@dataclass
class Review:
    """The verdicts on a plan."""

    removals: list[Removal] = field(default_factory=list)
    proposals: list[Proposal] = field(default_factory=list)
    units: list[Unit] = field(default_factory=list)  # the goal conditions, after the repairs
    achieved_by: dict[str, int] = field(default_factory=dict)  # condition -> plan position
    cut_short: bool = False  # the search spent its budget before it was done

    def repaired(self, lines: Sequence[str]) -> list[str]:
        """The plan with the removals made and the proposals inserted where they go (as the
        rules Planner applies them). A review of it finds nothing more: the repair is
        idempotent."""
        dropped = {s for r in self.removals for s in r.steps}
        inserted: dict[int, list[str]] = {}
        for proposal in self.proposals:
            inserted.setdefault(proposal.after, []).append(proposal.action)
        out = list(inserted.get(-1, []))
        for number, line in enumerate(lines):
            if number not in dropped:
                out.append(line)
            out += inserted.get(number, [])
        return out


def steps_named(numbers: Sequence[int]) -> str:
    """0-based plan positions as a reader counts them: "step 3", "steps 3-5", "steps 3, 7"."""
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
        as_first_used(start, self.actions)
        self._unplaced = start.copy()  # before `as_first_placed`, which follows the plan
        self._placeable = any(placeable(o) for o in start.objects.values())
        self._placed = as_first_placed(start, self.actions)
        self.spec = spec
        self._start = start
        self._taken: set[str] = set()  # objects the possible worlds let stand in a device
        judge: Judge
        possible: list[State] = []
        if spec is not None:
            judge = goal_judge(spec)
            if scene is None:  # every state unknown: see what the goal needs in both worlds
                self._taken = _taken_first(self.actions)
                possible = _possible_worlds(start, self._taken, goal_kinds(spec))
        else:
            trace = Simulator(self.actions, start, lambda s: []).trace(list(range(self.n)))
            full = trace.final[0]
            named = set(focus)
            keep = [k for k, o in full.objects.items() if not named or o.kind in named]
            judge = preserving_judge(keep, full)
        self.sim = Simulator(self.actions, start, judge, possible)
        self.goal_kinds = goal_kinds(spec) if spec is not None else frozenset(focus)
        self._unit_types = spec.unit_types() if spec is not None else []
        self._state_units = len(spec.components) if spec is not None else 0  # units first in it
        self.order = list(range(self.n))
        self._inactive = {i for i, a in enumerate(self.actions) if not a.known or a.is_dialogue}
        self.trace = self.sim.trace(self.order)
        self.idle_units = self.sim.trace([]).units  # what the goal gets from doing nothing
        self._index()
        self.removed: dict[int, str] = {}
        self.added: dict[int, tuple[int, str]] = {}  # step id -> (input position it follows, why)
        # what each removal's and insertion's proof rests on: (uses the goal, states known)
        self.grounds: dict[int, tuple[bool, bool]] = {}
        self.scene_known = scene is not None

    # ------------------------------------------------------------------ helpers

    def exhausted(self) -> bool:
        """Whether the search has spent its budget (`WORK_BUDGET`): what it found so far holds,
        the rest of the plan is kept as it is."""
        return self.sim.work > WORK_BUDGET

    def active(self, step: int) -> bool:
        """Whether a step is a Driver action in the notation (not dialogue, not opaque)."""
        return step not in self._inactive

    def judged(self, step: int) -> bool:
        """Whether the search may remove a step: an active input step (never an insertion)."""
        return step < self.n and self.active(step)

    def state_at(self, pos: int) -> State:
        """The state (as known) before the step at an order position."""
        return self.trace.before[pos][0] if pos < len(self.trace.order) else self.trace.final[0]

    def _apply(self, block: set[int]) -> None:
        self.order = [s for s in self.order if s not in block]
        if self._refresh_worlds():
            self.trace = self.sim.trace(self.order)
            self._index()
        else:
            self._retrace()

    def _refresh_worlds(self) -> bool:
        """Follow the plan as repaired so far, as a review of the repaired plan would (so that
        a second review finds nothing more): place what its steps show (`as_first_placed`), and
        without a scene, let only objects the plan still takes from a place nobody knows stand
        in a device in the possible worlds; whether the worlds changed."""
        active = [self.actions[s] for s in self.order if self.active(s)]
        moved = False
        if self._placeable:  # (with a scene, hardly anything is left to place)
            start = self._unplaced.copy()
            placed = as_first_placed(start, active)
            moved = placed != self._placed
            if moved:
                self._placed, self._start = placed, start
        if len(self.sim.starts) == 1 or self.spec is None:
            if moved:
                self.sim.starts = [self._start]
                self.idle_units = self.sim.trace([]).units
            return moved
        taken = _taken_first(active)
        if taken == self._taken and not moved:
            return False
        self._taken = taken
        self.sim.starts = [self._start, *_possible_worlds(self._start, taken, self.goal_kinds)]
        self.idle_units = self.sim.trace([]).units
        return True

    def _retrace(self) -> None:
        self.trace = self.sim.trace(self.order, reuse=self.trace)
        self._index()

    def _add_step(self, action: Action) -> int:
        self.sim.steps.append(action)
        self.actions.append(action)
        return len(self.sim.steps) - 1

    def _input_number(self, step: int) -> str:
        """How a step is named to the reader: its 1-based input position, or "the inserted"."""
        return str(step + 1) if step < self.n else f"{self.actions[step]} (to be inserted)"

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

    def blocks(self, *, blame: bool, start: int = 0, end: int | None = None) -> Iterator[set[int]]:
        """Candidate blocks in plan order from an order position on (starting before `end`,
        when given), larger ones first at each start."""
        order = self.order
        stop = len(order) if end is None else min(end, len(order))
        interactions = [
            pos
            for pos in range(start, stop)
            if self.judged(order[pos]) and self.actions[order[pos]].verb not in MOTION_VERBS
        ]
        for k, pos in enumerate(interactions):
            step = order[pos]
            action = self.actions[step]
            obj = action.objects[0] if action.objects else None
            pairs: list[set[int]] = []
            partner = None
            follow = {"PickUp": {"PutAOnB"}, "PutAOnB": {"PickUp"}}
            follow["Open"] = follow["Close"] = {"Open", "Close"}
            follow["ToggleOn"] = follow["ToggleOff"] = {"ToggleOn", "ToggleOff"}
            if action.verb in follow and obj is not None:
                partner = self._near(pos, obj, follow[action.verb], forward=True)
            if (
                partner is not None
                and (self.judged(partner) or self._switched_on_by_insertion(step, partner))
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

    def _switched_on_by_insertion(self, step: int, partner: int) -> bool:
        """Whether `partner` is a switch-on the search inserted right after the switch-off
        `step` of the same device: if the two may go together, the device runs as it did, and
        the switch-off goes rather than a switch-on being added (as a second review of the
        repaired plan would find)."""
        return (
            partner in self.added
            and self.actions[step].verb == "ToggleOff"
            and self.actions[partner].verb == "ToggleOn"
        )

    def _single_allowed(self, pos: int, *, blame: bool) -> bool:
        step = self.order[pos]
        action = self.actions[step]
        outcome = self.trace.outcomes[pos]
        if outcome.problem or outcome.changed is False:
            return True  # an impossible step, or one that changes nothing
        if blame or self._inert_switch(pos) or self._idle_switch_off(pos):
            return True
        return action.verb != "PutAOnB" and action.verb not in RESTORING

    def _idle_switch_off(self, pos: int) -> bool:
        """Whether the step at an order position switches off a device that ran from the start
        and has acted on nothing the plan put in it: it serves nothing (tidying up after use is
        switching off what the plan used)."""
        action = self.actions[self.order[pos]]
        if action.verb != "ToggleOff" or not action.objects:
            return False
        name = action.objects[0]
        if self._near(pos, name, {"ToggleOn", "ToggleOff"}, forward=False) is not None:
            return False
        state = self.state_at(pos)
        device = state.key(name)
        if (
            device is None
            or state.get(device).on is not True
            or state.kind_at(device) == "Microwave"
        ):
            return False  # (whether a microwave may be opened while it runs is not known)
        acted = set(self._acted_on(state, device)) | {device}
        places = {state.get(key).loc for key in acted}
        basins = {key for key in acted if state.get(key).kind in BASINS}
        if any(self._named.get(key) for key in acted - places - basins - {device}):
            return False  # what it acts on is used: switching it off is tidying up
        for p in range(pos):
            earlier = self.actions[self.order[p]]
            if self.active(self.order[p]) and self._put_nowhere(self.order[p]):
                return False  # put down somewhere unknown: maybe where the device acts
            if earlier.verb in ("PutAOnB", "PourFromAIntoB") and self.active(self.order[p]):
                before = self.state_at(p)
                if (
                    before.key(earlier.objects[1]) in acted
                    or before.key(earlier.objects[0]) in acted
                ):
                    return False
        return True

    def _inert_switch(self, pos: int) -> bool:
        """Whether the step at an order position switches a device that acts on nothing."""
        if pos not in self._inert:
            self._inert[pos] = self._find_inert_switch(pos)
        return self._inert[pos]

    def _find_inert_switch(self, pos: int) -> bool:
        action = self.actions[self.order[pos]]
        if action.verb not in ("ToggleOn", "ToggleOff"):
            return False
        state = self.state_at(pos)
        key = state.key(action.objects[0])
        return key is not None and state.get(key).kind not in WORKING_DEVICES

    def _near(
        self, pos: int, name: str, verbs: Collection[str] | None = None, *, forward: bool
    ) -> int | None:
        """The nearest active step after (or before) an order position acting on `name` (its
        first object) with one of `verbs` (any verb when None)."""
        key = (pos, name, None if verbs is None else frozenset(verbs), forward)
        if key not in self._nearest:
            self._nearest[key] = self._find_near(pos, name, verbs, forward=forward)
        return self._nearest[key]

    def _find_near(
        self, pos: int, name: str, verbs: Collection[str] | None, *, forward: bool
    ) -> int | None:
        lists = (
            [self._on.get(name, [])]
            if verbs is None
            else [self._on_verb.get((name, verb), []) for verb in verbs]
        )
        best: int | None = None
        for positions in lists:
            if forward:
                k = bisect.bisect_right(positions, pos)
                found = positions[k] if k < len(positions) else None
                if found is not None and (best is None or found < best):
                    best = found
            else:
                k = bisect.bisect_left(positions, pos) - 1
                found = positions[k] if k >= 0 else None
                if found is not None and (best is None or found > best):
                    best = found
        return None if best is None else self.order[best]

    def _index(self) -> None:
        """Where each object is acted on (as first object) in the current order, and with
        which verb; and forget what was memoised of the previous order."""
        self._nearest: dict[tuple[int, str, frozenset[str] | None, bool], int | None] = {}
        self._inert: dict[int, bool] = {}
        self._goal_touch: dict[int, bool] = {}
        self._removable_memo: dict[frozenset[int], tuple[bool, int]] = {}
        self._made_at: dict[str, int | None] = {}  # derived object -> order position it appears
        self._on: dict[str, list[int]] = {}
        self._on_verb: dict[tuple[str, str], list[int]] = {}
        self._named: dict[str, list[int]] = {}  # any object of an active step -> positions
        for pos, step in enumerate(self.order):
            action = self.actions[step]
            if action.objects and step not in self._inactive:
                self._on.setdefault(action.objects[0], []).append(pos)
                self._on_verb.setdefault((action.objects[0], action.verb), []).append(pos)
                for name in action.objects:
                    seen = self._named.setdefault(name, [])
                    if not seen or seen[-1] != pos:
                        seen.append(pos)

    def _self_contained(self, block: set[int]) -> bool:
        """Whether a block can go as a whole: no step of it is left half done (`half_done`),
        and an object picked up and put down is not touched again afterwards."""
        last = max(self.trace.position(s) for s in block)
        for step in block:
            if self.half_done(step, block) is not None:
                return False
            action = self.actions[step]
            outcome = self.trace.outcomes[self.trace.position(step)]
            if action.verb == "PickUp" and not (outcome.problem or outcome.changed is False):
                obj = action.objects[0]
                back = self._near(self.trace.position(step), obj, {"PutAOnB"}, forward=False)
                if back is not None and back in block:
                    continue  # takes back what the block put down: the two cancel
                put = self._near(self.trace.position(step), obj, {"PutAOnB"}, forward=True)
                if put is None and self._held_for_nothing([step], last, block):
                    continue
                if put is None:
                    return False
                if (
                    put in block
                    and self._touched_after(obj, last, block)
                    and not self._set_straight_back(step, put)
                ):
                    return False
        return True

    def half_done(self, step: int, block: Collection[int]) -> str | None:
        """What removing a block would leave half done of what one of its steps belongs to, or
        None: a put-down without the pick-up before it or the one that takes the object back; a
        step that puts a state back (a close, a switch-off, pouring a vessel out) without the
        step that changed it, or, where the plan never changed it, readying something the plan
        uses; an open or a switch-on without the step that undoes it, or an open something is
        taken from. Steps that change nothing or cannot happen, and switches that act on
        nothing, go alone."""
        pos = self.trace.position(step)
        outcome = self.trace.outcomes[pos]
        if outcome.problem or outcome.changed is False:
            return None
        action = self.actions[step]
        obj = action.objects[0] if action.objects else ""
        n = step + 1
        if action.verb == "PutAOnB":
            pick = self._near(pos, obj, {"PickUp"}, forward=False)
            again = self._near(pos, obj, {"PickUp"}, forward=True)
            if (pick is None or pick not in block) and (again is None or again not in block):
                return f"step {n} goes with the pick-up of {obj} before it or after it"
            return None
        if action.verb in ("ToggleOn", "ToggleOff") and self._inert_switch(pos):
            return None
        if self._switched_back(pos, block):
            return None  # off and on again: the device runs as it did
        if action.verb in ("Close", "ToggleOff"):
            opener = self._near(pos, obj, {"Open", "ToggleOn"}, forward=False)
            if opener is not None:  # puts back what the plan changed: tidying up
                return None if opener in block else f"step {n} undoes step {opener + 1}"
            if self._touched_elsewhere(obj, block):
                return f"step {n} readies {obj}, which the plan uses"
            return None
        if (
            action.verb == "PourFromAIntoB"
            and self.state_at(pos).kind_at(self.state_at(pos).key(action.objects[1])) in BASINS
        ):
            pick = self._near(pos, obj, {"PickUp"}, forward=False)
            if pick is None or pick not in block:
                return f"step {n} empties {obj}, which the plan fetched"
            return None
        if action.verb in ("Open", "ToggleOn"):
            closer = self._near(pos, obj, {"Close", "ToggleOff"}, forward=True)
            if closer is None:  # left on: whether that serves the goal, the simulation says
                if action.verb == "Open" and not self._searched(pos, obj, block):
                    return f"step {n} leaves {obj} open"
                return None
            if closer not in block:
                return f"step {closer + 1} undoes step {n}"
            if action.verb == "Open" and self._reached_into(pos, self.trace.position(closer)):
                return f"something is taken from {obj} while it is open"
        return None

    def _switched_back(self, pos: int, block: Collection[int]) -> bool:
        """Whether the step at an order position is a switch-off (or a close) that the block
        switches on (opens) again next, or a switch-on (an open) right after a switch-off (a
        close) in the block: the device runs, the door stands open, as before (a microwave's
        switches stay: whether it may be opened while it runs is not known)."""
        action = self.actions[self.order[pos]]
        if action.verb not in UNDOING or not action.objects:
            return False
        state = self.state_at(pos)
        if action.verb.startswith("Toggle"):
            if state.kind_at(state.key(action.objects[0])) == "Microwave":
                return False
        elif len(block) != 2:  # a door closed and opened again, and nothing else
            return False
        wanted, forward = UNDOING[action.verb]
        other = self._near(pos, action.objects[0], {action.verb, wanted}, forward=forward)
        return other is not None and other in block and self.actions[other].verb == wanted

    def _searched(self, pos: int, name: str, block: Collection[int]) -> bool:
        """Whether an open left open at an order position only searched: nothing else names
        the container, and nothing is taken afterwards from a place that may be in it (a place
        not known, or somewhere of its type)."""
        if self._touched_elsewhere(name, block):
            return False
        if not self.scene_known:
            return self._opened_another_next(pos, name)
        state = self.state_at(pos)
        key = state.key(name)
        kind = state.kind_at(key)
        for later in range(pos + 1, len(self.order)):
            step = self.order[later]
            action = self.actions[step]
            if not self.active(step) or action.verb in MOTION_VERBS:
                continue
            now = self.state_at(later)
            for name in action.objects:
                used = now.key(name)
                if used is not None and now.get(used).can_pick is False:
                    continue  # fixed furniture is in no container
                loc = now.get(used).loc if used is not None else None
                if loc is None or loc == key or (kind is not None and loc == SOME + kind):
                    return False
        return True

    def _opened_another_next(self, pos: int, name: str) -> bool:
        """Whether the next step after an open at an order position, motion aside, opens
        another container: where nobody knows what stood where, the first was a search."""
        step = self._next_interaction(pos)
        action = self.actions[step] if step is not None else None
        return action is not None and action.verb == "Open" and action.objects[0] != name

    def _handles_goal_objects(self, block: set[int]) -> bool:
        """Whether a block does something to an object of a kind the goal names (moves it,
        switches a device it is in, changes its state). Such steps serve the goal in ways a
        simulation cannot always show, so they only go when they change nothing, cannot
        happen, or put the object down and take it back at once (a misplacement)."""
        steps = sorted(block, key=self.trace.position)
        positions = [self.trace.position(s) for s in steps]
        verbs = [self.actions[s].verb for s in steps]
        if len(steps) == 2 and verbs == ["PutAOnB", "PickUp"]:
            obj = self.actions[steps[0]].objects[0]
            if self._near(positions[0], obj, forward=True) == steps[1]:
                return False  # put down and taken back: a misplacement, whatever follows
        if len(steps) == 2 and all(self._switched_back(p, block) for p in positions):
            return False  # switched off and on again: the device runs as it did
        if len(steps) == 1 and self._idle_switch_off(positions[0]):
            return False
        if not any(self._touches_goal_objects(p) for p in positions):
            return False
        if self._looked_into(block):
            return False  # opened and closed again, nothing taken or put: nothing moved
        return not self._abandoned(steps, positions)

    def _set_straight_back(self, pick: int, put: int) -> bool:
        """Whether a pick-up and a put-down set the object straight back where it was, with
        nothing but motion between them: it was never carried anywhere."""
        first, second = self.trace.position(pick), self.trace.position(put)
        between = self.order[first + 1 : second]
        if any(self.active(s) and self.actions[s].verb not in MOTION_VERBS for s in between):
            return False
        return self._put_back([pick, put], [first, second])

    def _put_back(self, steps: Sequence[int], positions: Sequence[int]) -> bool:
        """Whether a block is a pick-up and the put-down that sets the object back on the
        receptacle it was taken from, wherever the Driver carried it between (for a scene's
        initial place known by type only: on one of that type, from where the Driver stood;
        carried elsewhere, it went to another)."""
        if [self.actions[s].verb for s in steps] != ["PickUp", "PutAOnB"]:
            return False
        pick, put = (self.actions[s] for s in steps)
        if pick.objects[0] != put.objects[0]:
            return False
        state = self.state_at(positions[0])
        key = state.key(pick.objects[0])
        loc = state.get(key).loc if key is not None else None
        if self._taken_straight_back(positions[1], pick.objects[0]):
            return False  # put down and taken back: the put-down is the misplacement
        if loc is None:
            return self._presumably_back(positions[0], positions[1])
        if loc.startswith(SOME) and self._moved_between(*positions):
            return False
        return self._puts_into(steps[1], loc)

    def _taken_straight_back(self, pos: int, name: str) -> bool:
        """Whether the next step after an order position, motion aside, picks `name` up."""
        step = self._next_interaction(pos)
        action = self.actions[step] if step is not None else None
        return action is not None and action.verb == "PickUp" and action.objects[0] == name

    def _presumably_back(self, first: int, second: int) -> bool:
        """Without a scene, whether the pick-up and the put-down at two order positions set the
        object down where it was, presumably: onto a surface, from where the Driver picked it
        up, with nothing but motion between, and no container open that it may have come from."""
        if self.scene_known:
            return False
        between = self.order[first + 1 : second]
        if any(self.active(s) and self.actions[s].verb not in MOTION_VERBS for s in between):
            return False
        if self._moved_between(first, second):
            return False
        onto = self.state_at(second)
        target = onto.kind_at(onto.key(self.actions[self.order[second]].objects[1]))
        if target not in SURFACES:
            return False
        state = self.state_at(first)
        opened: set[str] = set()  # containers the plan has opened and not closed again
        for step in self.order[:first]:
            action = self.actions[step]
            if self.active(step) and action.verb in ("Open", "Close"):
                name = action.objects[0]
                if action.verb == "Close":
                    opened.discard(name)
                elif state.kind_at(state.key(name)) in CONTAINERS:
                    opened.add(name)
        return not opened

    def _abandoned(self, steps: Sequence[int], positions: Sequence[int]) -> bool:
        """Whether a block only picks up objects and puts them down: back where they were, or,
        where the plan meets its whole goal (as far as it concerns them), each never touched
        again and never changed by the plan since it was there or made (the wrong object, or a
        slice too many, fetched and left aside; a finished object put away was changed, and
        stays)."""
        if any(self.actions[s].verb not in ("PickUp", "PutAOnB") for s in steps):
            return False
        if self._put_back(steps, positions):
            return True
        last = max(positions)
        if self._held_for_nothing(steps, last, set(steps)):
            return True
        kinds: set[str] = set()
        for step, pos in zip(steps, positions, strict=True):
            state = self.state_at(pos)
            name = self.actions[step].objects[0]
            key = state.key(name)
            if key is None or self._touched_after(name, last, set(steps)):
                return False
            if _worked(self._as_made(key, pos), state.get(key)):
                return False
            kinds.add(state.get(key).kind)
        return self._goal_met_without(kinds, states_kept=lambda: self._states_kept(steps))

    def _states_kept(self, steps: Sequence[int]) -> bool:
        """Whether pick-ups and put-downs move their objects only onto surfaces, objects surely
        as they were: nothing the block does or leaves them in can change their states."""
        for step in steps:
            action, pos = self.actions[step], self.trace.position(step)
            if action.verb == "PutAOnB" and _onto(self.state_at(pos), action) not in SURFACES:
                return False
            if self._maybe_worked(action.objects[0], pos):
                return False
        return True

    def _held_for_nothing(self, steps: Sequence[int], last: int, block: set[int]) -> bool:
        """Whether steps are pick-ups of objects the plan never worked on and no later step
        touches: they end in the hand, and no TEACh goal asks for anything to be held (a goal
        that could not be read might). Taking out what the plan finished is tidying up."""
        if self.spec is None:
            return False
        for step in steps:
            action, pos = self.actions[step], self.trace.position(step)
            name = action.objects[0]
            if action.verb != "PickUp" or self._touched_after(name, last, block):
                return False
            if self._maybe_worked(name, pos):
                return False
        return True

    def _maybe_worked(self, name: str, pos: int) -> bool:
        """Whether the plan may have changed an object's states (other than where it is) by an
        order position since it was there or made: it did, or a state of it is unknown and the
        plan did more than carry it (a mug left in a coffee machine whose switch is unknown)."""
        state = self.state_at(pos)
        key = state.key(name)
        if key is None:
            return True
        now = state.get(key)
        if _worked(self._as_made(key, pos), now):
            return True
        unknown = any(getattr(now, s) is None for s in WORKED_STATES if s not in ("on", "open"))
        unknown |= (now.can_toggle is not False and now.on is None) or (
            now.can_open is not False and now.open is None
        )
        return unknown and not self._only_carried(name, pos)

    def _only_carried(self, name: str, pos: int) -> bool:
        """Whether every step before an order position that names an object picks it up or
        sets it on a surface: nothing there can have worked on it."""
        state = self.state_at(pos)
        for p in self._named.get(name, []):
            if p >= pos:
                break
            action = self.actions[self.order[p]]
            if action.objects[0] != name or action.verb not in ("PickUp", "PutAOnB"):
                return False
            if action.verb == "PutAOnB" and _onto(state, action) not in SURFACES:
                return False
        return True

    def _goal_met_without(
        self, kinds: Collection[str], *, states_kept: Callable[[], bool] | None = None
    ) -> bool:
        """Whether the plan meets its whole goal, as far as anything about objects of these
        kinds goes (a condition about other things may fail: no step on these could make it):
        a condition about them that fails or is not known to hold may still need them (moving
        its objects may be progress), unless it is about their states alone, not known to hold,
        and they were moved only where nothing acts on them (`states_kept`, asked when needed)."""
        units = self.sim.known_units(self.trace.units)
        if self.spec is None:
            return all(u.met is True for u in units)
        moved = set(kinds)
        doubtful = [
            k for k, u in enumerate(units) if u.met is not True and self._unit_types[k] & moved
        ]
        if not doubtful:
            return True
        if states_kept is None or any(
            units[k].met is not None or k >= self._state_units for k in doubtful
        ):
            return False
        return states_kept()

    def _as_made(self, key: str, pos: int) -> Obj | None:
        """An object as it was at the start or, for one the plan made before an order position
        (a slice, once its whole was sliced), as it was made."""
        start = self.state_at(0).objects.get(key)
        if start is None or start.present is True or start.kind not in DERIVED_TYPES:
            return start
        if key not in self._made_at:
            self._made_at[key] = next(
                (
                    p
                    for p in range(1, len(self.order) + 1)
                    if (made := self.state_at(p).objects.get(key)) is not None
                    and made.present is True
                ),
                None,
            )
        made_at = self._made_at[key]
        return start if made_at is None or made_at > pos else self.state_at(made_at).get(key)

    def _touches_goal_objects(self, pos: int) -> bool:
        """Whether the step at an order position does something to an object of a kind the
        goal names (see `_handles_goal_objects`)."""
        if pos not in self._goal_touch:
            self._goal_touch[pos] = self._find_goal_touch(pos)
        return self._goal_touch[pos]

    def _find_goal_touch(self, pos: int) -> bool:
        outcome = self.trace.outcomes[pos]
        if outcome.problem or outcome.changed is False:
            return False
        action = self.actions[self.order[pos]]
        state = self.state_at(pos)
        names = action.objects
        if action.verb in ("PutAOnB", "PourFromAIntoB"):
            names = names[:1]  # what is moved or poured, not where to
        keys = [state.key(name) for name in names]
        touched = [k for k in keys if k is not None]
        if action.verb in ("ToggleOn", "ToggleOff"):
            touched += self._acted_on(state, touched[0]) if touched else []
        elif action.verb in ("PickUp", "PutAOnB") and touched:
            touched += within(state, touched[0])  # what it holds moves with it
        return any(state.get(k).kind in self.goal_kinds for k in touched)

    def _acted_on(self, state: State, device: str) -> list[str]:
        """What switching a device acts on: the sink's contents for a faucet, the pans' and
        pots' for a stove knob, its own for the rest."""
        kind = state.get(device).kind
        if kind in WATER_TAPS:  # the basins, and what stands in one of their kind
            basins = serves(state, device)
            places = [
                k
                for k, o in state.objects.items()
                if o.kind in basins or state.kind_at(o.loc) in basins
            ]
        elif kind in ("StoveKnob", "StoveBurner"):
            places = [k for k, o in state.objects.items() if o.kind in COOKERS]
        else:
            places = [device]
        acted = [
            item for place in places for item in [place, *within(state, place)] if item != device
        ]
        if kind in WATER_TAPS:  # water washes and fills, and does nothing to the rest
            wet = DIRTYABLE | FILLABLE | serves(state, device)
            return [item for item in acted if state.get(item).kind in wet]
        return acted

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

    def _touched_elsewhere(self, name: str, block: Collection[int]) -> bool:
        return any(self.order[p] not in block for p in self._named.get(name, []))

    def _touched_after(self, name: str, last: int, block: set[int]) -> bool:
        positions = self._named.get(name, [])
        k = bisect.bisect_right(positions, last)
        return any(self.order[p] not in block for p in positions[k:])

    def _policy(self, block: set[int]) -> str | None:
        """Which policy keeps a block ("alone", "unplaced", "preparation", "goal"), or None."""
        if not self._self_contained(block):
            return "alone"
        if any(self._put_nowhere(s) for s in block):
            return "unplaced"
        if self._is_preparation(block):
            return "preparation"
        if self._handles_goal_objects(block):
            return "goal"
        return None

    def _put_nowhere(self, step: int) -> bool:
        """Whether a step is a put-down "on itself", as TEACh records now and then: where the
        object went (a sink, a device) is unknown, and so is what it did there."""
        action = self.actions[step]
        outcome = self.trace.outcomes[self.trace.position(step)]
        return (
            action.verb == "PutAOnB"
            and len(set(action.objects)) == 1
            and not (outcome.problem or outcome.changed is False)
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
            if self._near(pos, action.objects[0], {"PutAOnB"}, forward=False) in block:
                continue  # taking back what the block itself put there clears nothing
            state = self.state_at(pos)
            key = state.key(action.objects[0])
            place = state.get(key).loc if key is not None else None
            kind = state.kind_at(place)
            put = self._near(pos, action.objects[0], {"PutAOnB"}, forward=True)
            if place is not None and put in block and self._puts_into(put, place):
                continue  # put back where it was: nothing cleared
            if kind is None and place is None:
                # where it was is unknown: it may have been cleared off a device the plan uses
                # next, so only a pick-up far from any such use can be a detour; what is
                # cleared goes onto a counter or a table (in the shared games, 760 of the 1151
                # objects taken off a device), never into another device
                if put is not None and put in block:
                    onto = self.state_at(self.trace.position(put))
                    if onto.kind_at(onto.key(self.actions[put].objects[1])) not in CLEARED_ONTO:
                        continue
                # ... and only when the Driver used the device from where it picked the object
                # up: in the shared games, 897 of 1192 such clearings (75%), against 1434 of
                # 3033 pick-ups from elsewhere (47%)
                use = self._device_used_soon(last, block, key, state.get(key).kind if key else None)
                if use is not None and not self._moved_between(pos, use):
                    return True
                continue
            if (
                kind is not None
                and kind not in SURFACES
                and self._used_after(last, kind, place, block)
            ):
                return True
        return False

    def _puts_into(self, step: int, place: str) -> bool:
        """Whether a put-down puts its object into this receptacle (for a place known by type
        only, `*Sink`, into one of that type)."""
        state = self.state_at(self.trace.position(step))
        target = state.key(self.actions[step].objects[1])
        if place.startswith(SOME):
            return state.kind_at(target) == place.removeprefix(SOME)
        return target == place

    def _moved_between(self, start: int, end: int) -> bool:
        """Whether the Driver stands elsewhere, or faces elsewhere, at the order position `end`
        than at `start`."""
        distance, heading = net_motion(self.actions[s] for s in self.order[start:end])
        return distance > SAME_SPOT or heading != 0

    def _device_used_soon(
        self,
        last: int,
        block: set[int],
        item: str | None,
        kind: str | None,
        window: int = CLEARING_REACH,
    ) -> int | None:
        """The order position of the first of the next few interactions that puts something
        into a receptacle that is not a surface, or switches a device; None when there is none.
        Other objects moved from places not known onto a counter on the way are more of the
        same clearing and do not count, nor do switch-offs.
        What is loaded must not be a look-alike of `kind`: fetching a cup, putting it back and
        loading the mug is a swap of the wrong vessel, not clearing; nor is it the `item`
        picked up itself (a plate set down and then served on)."""
        seen = 0
        clearing: str | None = None
        for pos in range(last + 1, len(self.order)):
            step = self.order[pos]
            action = self.actions[step]
            if step in block or not self.active(step) or action.verb in MOTION_VERBS:
                continue
            state = self.state_at(pos)
            if action.verb == "ToggleOff":
                continue
            if action.verb == "PickUp":
                key = state.key(action.objects[0])
                if key is not None and state.get(key).loc is None:
                    clearing = action.objects[0]
                    continue
            if (
                action.verb == "PutAOnB"
                and action.objects[0] == clearing
                and state.kind_at(state.key(action.objects[1])) == "CounterTop"
            ):
                clearing = None
                continue
            clearing = None
            seen += 1
            if seen > window:
                return None
            if action.verb not in ("PutAOnB", "ToggleOn"):
                continue
            device = state.kind_at(state.key(action.objects[-1]))
            if action.verb == "PutAOnB" and device in SURFACES:
                continue
            if kind is not None and kind not in HELD_AT_START.get(device or "", {kind}):
                return None  # it cannot have stood there
            if action.verb == "ToggleOn":
                return pos
            loaded = state.key(action.objects[0])
            if loaded is not None and look_alike(kind, state.get(loaded).kind):
                return None
            return None if state.key(action.objects[1]) == item else pos
        return None

    def _used_after(self, last: int, kind: str, place: str | None, block: set[int]) -> bool:
        """Whether the plan uses a receptacle after an order position: puts or pours into it
        (into one of its kind, when where the object stood is known by type only), takes it,
        or switches it or its control on. Taking something else out of it needs no room."""
        control = CONTROLS.get(kind, kind)
        exact = place is not None and not place.startswith(SOME)
        for pos in range(last + 1, len(self.order)):
            step = self.order[pos]
            if step in block or not self.active(step):
                continue
            action = self.actions[step]
            state = self.state_at(pos)
            if action.verb in ("PutAOnB", "PourFromAIntoB"):
                target = state.key(action.objects[1])
                if target == place or (not exact and state.kind_at(target) == kind):
                    return True
            if action.verb == "PickUp" and state.key(action.objects[0]) == place:
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
                # provable without positions; once removals brought them together, as sure as
                # those removals
                between = [self.grounds.get(s, (True, False)) for s in range(a + 1, b)]
                self.grounds[a] = self.grounds[b] = (
                    any(g[0] for g in between),
                    all(g[1] for g in between),
                )
                del self.order[k : k + 2]
                k, found = max(k - 1, 0), True
            else:
                k += 1
        if found:
            self._retrace()

    def blame(self) -> None:
        """Make the plan executable by removing what makes its impossible steps impossible."""
        for _ in range(MAX_ROUNDS):
            if not self.trace.impossible:
                return
            culprit = min(self.trace.position(s) for s in self.trace.impossible)
            best: tuple[tuple[int, ...], set[int], Variant] | None = None
            for block in self.blocks(blame=True, end=culprit + 1):
                if self.exhausted():
                    return
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
            # a step removed for itself cannot happen whatever the goal; a cause is chosen as
            # the block whose removal meets the goal best
            itself = block <= self.trace.impossible
            grounds = (not itself, self._known_effects(block))
            for step in block:
                self.removed[step] = why
                self.grounds[step] = grounds
            self._apply(block)

    def _blame_reason(self, block: set[int], fixed: list[int]) -> str:
        shown = [s for s in fixed if s not in block]
        if not shown:
            problems = [self.trace.outcomes[self.trace.position(s)].problem for s in sorted(block)]
            return f"cannot happen here: {next(p for p in problems if p)}"
        names = steps_named(sorted(block))
        make, them = ("makes", "it") if len(block) == 1 else ("make", "them")
        problem = self.trace.outcomes[self.trace.position(shown[0])].problem or ""
        return f"{names} {make} {steps_named(shown)} impossible ({problem}); without {them} the plan can be carried out"

    def remove(self) -> None:
        """Remove every block the plan can do without: sweep the candidates in plan order, going
        back after each removal to the first earlier step on an object the block handled (a
        pick-up whose put-down was just taken back may now go with it), and sweep again until a
        sweep removes nothing, so that the set removed is maximal."""
        while self._sweep() and not self.exhausted():
            pass

    def _sweep(self) -> bool:
        start, removed = 0, False
        while True:
            block = next(
                (
                    b
                    for b in self.blocks(blame=False, start=start)
                    if not self.exhausted() and self._removable(b)
                ),
                None,
            )
            if block is None:
                return removed
            why = self._removal_reason(block)
            known = self._known_effects(block) and not self._presumed(block)
            grounds = (not self._goal_free(block), known)
            for step in block:
                if step in self.added:  # an insertion the removal makes needless
                    del self.added[step]
                    continue
                self.removed[step] = why
                self.grounds[step] = grounds
            start = min(self.trace.position(s) for s in block)
            for step in block:
                for name in self.actions[step].objects[:1]:
                    earlier = self._near(self.trace.position(step), name, forward=False)
                    if earlier is not None and earlier not in block:
                        start = min(start, self.trace.position(earlier))
            self._apply(block)
            start = min(start, len(self.order))
            removed = True

    def _removable(self, block: set[int]) -> bool:
        """Whether a block can go. The same block comes up again under the same order (a pair
        that is also a run; the sweep after the last removal), so the answer is memoised with
        the work it cost, which is counted again so that the budget runs out as it would."""
        key = frozenset(block)
        if key in self._removable_memo:
            answer, work = self._removable_memo[key]
            self.sim.work += work
            return answer
        before = self.sim.work
        answer = self._find_removable(block)
        self._removable_memo[key] = (answer, self.sim.work - before)
        return answer

    def _find_removable(self, block: set[int]) -> bool:
        if any(s in self.removed for s in block) or self._policy(block) is not None:
            return False
        if self.vacuous and not self._goal_free(block):
            return False
        if not self._acceptable(self.sim.without(self.trace, block, strict=True), block):
            return False
        later = self._moved_on_after_goal(block)
        return later is None or not self._removable(later)

    def _moved_on_after_goal(self, block: set[int]) -> set[int] | None:
        """For a put-down and the pick-up that takes the object back, when the put-down already
        met every goal relation about the object that the plan meets at the end and the object
        is put down again later: that later pick-up and put-down, the detour to remove instead
        (the cloth in the bathtub, moved on into its basin). Otherwise None."""
        steps = sorted(block, key=self.trace.position)
        positions = [self.trace.position(s) for s in steps]
        if self.spec is None or not self._taken_back(steps, positions):
            return None
        obj = self.actions[steps[0]].objects[0]
        again = self._near(positions[1], obj, {"PutAOnB"}, forward=True)
        key = self.state_at(positions[0]).key(obj)
        if again is None or key is None:
            return None
        kind = self.state_at(positions[0]).get(key).kind
        about = [  # where the object is matters only to relations
            k
            for k, types in enumerate(self._unit_types)
            if k >= self._state_units and kind in types
        ]
        final = self.sim.known_units(self.trace.units)
        there = self.sim.judge(self.state_at(positions[0] + 1))
        met = [k for k in about if final[k].met is True]
        return {steps[1], again} if met and all(there[k].met is True for k in met) else None

    @property
    def vacuous(self) -> bool:
        """Whether the plan as repaired so far meets no goal condition, nor gets nearer to one,
        that doing nothing would not, in any world simulated (the world as known, and without a
        scene the possible worlds): "it meets the goal no less" is then no evidence, and only what is useless whatever the goal may go. Without a
        goal spec the objects the goal text names must end as they do, and when it names none,
        every object must: that too lets only what is useless whatever the goal go."""
        if self.spec is None:  # the objects the goal text names must end as they do (with
            return False  # none named, every object: nothing with a lasting effect goes)
        return not any(
            rank(now.met) > rank(idle.met) or now.progress > idle.progress
            for now, idle in zip(self.trace.units, self.idle_units, strict=True)
        )

    def _goal_free(self, block: Collection[int]) -> bool:
        """Whether a block is useless whatever the goal: each of its steps cannot happen,
        changes nothing or switches a device that acts on nothing, or, as a whole, it changes
        nothing that lasts (a cancelling pair, an
        object put down and taken back, or picked up and set back where it was)."""
        outcomes = [self.trace.outcomes[self.trace.position(s)] for s in block]
        if all(o.problem or o.changed is False for o in outcomes):
            return True
        if all(self._inert_switch(self.trace.position(s)) for s in block):
            return True  # a radio, a lamp: no TEACh goal asks for their switches
        steps = sorted(block, key=self.trace.position)
        if self._put_back(steps, [self.trace.position(s) for s in steps]):
            return True
        return self._looked_into(block) or self.sim.settles(self.trace, block)

    def _looked_into(self, block: Collection[int]) -> bool:
        """Whether a block is a container opened and closed again with nothing taken from it or
        put into it in between (what it holds is unknown without a scene, but nothing moved)."""
        steps = sorted(block, key=self.trace.position)
        if [self.actions[s].verb for s in steps] != ["Open", "Close"]:
            return False
        name = self.actions[steps[0]].objects[0]
        first, last = (self.trace.position(s) for s in steps)
        if self.actions[steps[1]].objects[0] != name or self._reached_into(first, last):
            return False
        return not any(
            name in self.actions[self.order[p]].objects[1:] for p in range(first + 1, last)
        )

    def _presumed(self, block: Collection[int]) -> bool:
        """Whether a removal rests on a presumption rather than on simulated states: an object
        set back on a receptacle known by its type only (the same one, presumably), an instance
        of what the goal is about fetched and left aside (the wrong one, presumably), a
        container left open with nothing known to be taken from it (a search, presumably), or a
        put-down somewhere nobody knows."""
        steps = sorted(block, key=self.trace.position)
        positions = [self.trace.position(s) for s in steps]
        if any(
            self.actions[s].verb == "PutAOnB" and len(set(self.actions[s].objects)) == 1
            for s in steps
        ):
            return True  # put down "on itself", as TEACh records now and then: where is unknown
        if len(steps) == 1:
            action = self.actions[steps[0]]
            return action.verb == "Open" and action.objects[0] not in {
                o for s in self.order[positions[0] + 1 :] for o in self.actions[s].objects[:1]
            }
        if self._put_back(steps, positions):
            state = self.state_at(positions[0])
            key = state.key(self.actions[steps[0]].objects[0])
            loc = state.get(key).loc if key is not None else None
            return loc is None or loc.startswith(SOME)
        return any(self._touches_goal_objects(p) for p in positions) and (
            all(self.actions[s].verb in ("PickUp", "PutAOnB") for s in steps)
            and not self.sim.settles(self.trace, steps)
            and not self._taken_back(steps, positions)
        )

    def _taken_back(self, steps: Sequence[int], positions: Sequence[int]) -> bool:
        """Whether a block is a put-down and the pick-up that takes the object back next."""
        if [self.actions[s].verb for s in steps] != ["PutAOnB", "PickUp"]:
            return False
        obj = self.actions[steps[0]].objects[0]
        return self._near(positions[0], obj, forward=True) == steps[1]

    def _known_effects(self, block: Collection[int]) -> bool:
        """Whether the states a block's proof used were known: a scene, and no step of the block
        with an effect the simulator did not know."""
        return self.scene_known and all(
            self.trace.outcomes[self.trace.position(s)].changed is not None for s in block
        )

    def _removal_reason(self, block: set[int]) -> str:
        block = {s for s in block if s < self.n} or block  # an insertion that goes is not named
        if len(block) == 1:
            pos = self.trace.position(next(iter(block)))
            outcome = self.trace.outcomes[pos]
            action = self.actions[self.order[pos]]
            if outcome.problem:
                return f"cannot happen here: {outcome.problem}"
            if outcome.changed is False:
                return f"changes nothing: {action.objects[-1] if action.objects else 'the state'} is already that way"
        what = "; ".join(_gist(self.actions[s]) for s in sorted(block))
        if self.vacuous:
            return f"{steps_named(sorted(block))} ({what}) change nothing that lasts"
        return f"without {steps_named(sorted(block))} ({what}) {self.what_holds()}"

    def what_holds(self) -> str:
        """What a removal the search accepts keeps of the plan, as the reasons say it."""
        if self.spec is None:
            return "every object the goal names ends the same"
        return "every goal condition the plan meets still holds"

    def _evidence(self) -> dict[str, int]:
        """For each goal condition the final plan meets and the start does not: the input
        position of the step that makes it hold (the last one that turns it true), found
        walking back from the end."""
        if self.spec is None:
            return {}
        by: dict[str, int] = {}
        kinds = {t for name in self.spec.types() for t in types_of(name)}
        start = {u.text for u in self.sim.judge(self.sim.starts[0]) if u.met is True}
        pending = {u.text for u in self.sim.judge(self.trace.final[0]) if u.met is True} - start
        for pos in range(len(self.order) - 1, -1, -1):
            if not pending:
                break
            step = self.order[pos]
            if self.trace.outcomes[pos].changed is False or not self.active(step):
                continue
            prior = self.trace.before[pos][0]
            later = (
                self.trace.before[pos + 1][0] if pos + 1 < len(self.order) else self.trace.final[0]
            )
            if not any(  # only a change to an object the goal names can change a condition
                obj.kind in kinds
                for key, obj in later.objects.items()
                if prior.objects.get(key) is not obj
            ):
                continue
            # the goal judge (`goal_judge`), asked only about the conditions still pending
            before = {u.text: u.met for u in evaluate(self.spec, prior, only=pending)}
            for text in [t for t in pending if before.get(t) is not True]:
                by[text] = step
                pending.discard(text)
        return by

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
                    name = (
                        self._name_for(kind) if where is None or where.startswith(SOME) else where
                    )
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
                    tap = self._tap_for(state, kind) if kind in BASINS else None
                    name = tap or self._name_for(device)
                    yield (
                        pos + 1,
                        parse_action(f"Driver.ToggleOn('{name}')"),
                        f"{name} is never switched on with {action.objects[0]} in {action.objects[1]}",
                    )
            if (
                action.verb == "PutAOnB"
                and state.kind_at(state.key(action.objects[1])) == "CoffeeMachine"
            ):
                mug = state.key(action.objects[0])
                if mug is not None and state.get(mug).liquid == WATER:
                    sink = self._name_for("SinkBasin", "Sink")
                    pour = parse_action(f"Driver.PourFromAIntoB('{action.objects[0]}', '{sink}')")
                    yield pos, pour, f"{action.objects[0]} is still full of water from the rinse"
            picked = state.key(action.objects[0]) if action.verb == "PickUp" else None
            whole = None if picked is None else _whole_of(state.get(picked).kind)
            if whole is not None:
                knife = self._knife_before(pos)
                if knife is not None:
                    name = self._name_for(whole)
                    why = f"{action.objects[0]} is picked up but {name} is never sliced"
                    yield knife, parse_action(f"Driver.Slice('{name}')"), why
            yield from self._watering(pos, state)
        yield from self._watering(len(self.order), self.trace.final[0])

    def _watering(self, pos: int, state: State) -> Iterator[tuple[int, Action, str]]:
        """Pouring the vessel in hand into the plant, when the goal wants a plant watered."""
        held = state.held
        if held is None or state.get(held).liquid in (None, ""):
            return
        if self.spec is not None and "HousePlant" in self.spec.types():
            plant = self._name_for("HousePlant")
            name = next(
                (n for a in self.actions[: self.n] for n in a.objects if state.key(n) == held),
                held,
            )
            pour = parse_action(f"Driver.PourFromAIntoB('{name}', '{plant}')")
            yield pos, pour, f"the plant is never watered from {name}"

    def _tap_for(self, state: State, basin: str) -> str | None:
        """The plan's name for a tap that runs into basins of this kind, if it names one."""
        for action in self.actions[: self.n]:
            for name in action.objects:
                key = state.key(name)
                if (
                    key is not None
                    and state.get(key).kind in WATER_TAPS
                    and basin in serves(state, key)
                ):
                    return name
        return None

    def _name_for(self, kind: str, *alternatives: str) -> str:
        """The plan's own name for an object of this kind (or else of the first alternative kind
        it names), or the kind itself."""
        for wanted in (kind, *alternatives):
            for action in self.actions[: self.n]:
                for name in action.objects:
                    if self.trace.final[0].index.type_of(name) == wanted:
                        return name
        return kind

    def _knife_before(self, pos: int) -> int | None:
        """The latest order position before `pos` where a knife is in hand."""
        for p in range(pos, 0, -1):
            state = self.state_at(p)
            if state.held is not None and state.get(state.held).kind in KNIVES:
                return p
        return None

    def complete_switches(self) -> None:
        """A switch-off that changes nothing right after something is put into what the device
        acts on shows a forgotten switch-on (the Driver loads the sink and turns off a tap that
        never ran): the switch-on goes before it, when that breaks nothing."""
        for step in list(self.order):
            action = self.actions[step]
            if self.exhausted():
                return
            if action.verb != "ToggleOff" or not self.judged(step):
                continue
            pos = self.trace.position(step)
            if self.trace.outcomes[pos].changed is not False:
                continue
            put = self._previous_interaction(pos)
            state = self.state_at(pos)
            device = state.key(action.objects[0])
            if put is None or device is None or self.actions[put].verb != "PutAOnB":
                continue
            loaded = state.key(self.actions[put].objects[0])
            if loaded not in self._acted_on(state, device):
                continue
            switch_on = parse_action(f"Driver.ToggleOn('{action.objects[0]}')")
            added = self._add_step(switch_on)
            variant = self.sim.without(self.trace, set(), {pos: [added]})
            if variant.impossible - self.trace.impossible or not no_worse(
                variant.units, self.trace.units
            ):
                self.sim.steps.pop()
                self.actions.pop()
                continue
            why = f"{action.objects[0]} is switched off after {self.actions[put].objects[0]} is put in, but never switched on"
            self.added[added] = (self._origin_before(pos), why)
            self.grounds[added] = (True, False)  # a pattern: a forgotten switch-on
            self.order.insert(pos, added)
            self._retrace()

    def _previous_interaction(self, pos: int) -> int | None:
        """The nearest active step before an order position that is not motion."""
        for p in range(pos - 1, -1, -1):
            step = self.order[p]
            if self.active(step) and self.actions[step].verb not in MOTION_VERBS:
                return step
        return None

    def _next_interaction(self, pos: int) -> int | None:
        """The nearest active step after an order position that is not motion."""
        for p in range(pos + 1, len(self.order)):
            step = self.order[p]
            if self.active(step) and self.actions[step].verb not in MOTION_VERBS:
                return step
        return None

    def add_missing(self, *, goal: bool = True) -> None:
        """Insert steps that make goal conditions the plan is known to fail hold, or impossible
        steps possible, each checked by simulation (a condition that is only not known to
        hold is not a reason to add anything). Without `goal`, only steps that make impossible
        steps possible. When no one step helps, two close together (`PAIR_REACH`) that help
        together are tried (a rinsed mug poured out, then the coffee machine switched on)."""
        for _ in range(MAX_ROUNDS):
            known = self.sim.known_units(self.trace.units)
            wanted = [u for u in known if u.met is False] if goal else []
            if not wanted and not self.trace.impossible:
                return
            candidates: list[tuple[int, Action, str]] = []
            seen: set[tuple[int, str]] = set()
            for pos, action, why in self._templates():
                if (pos, str(action)) not in seen:
                    seen.add((pos, str(action)))
                    candidates.append((pos, action, why))
            best = self._best_insertion([[c] for c in candidates], known, goal=goal)
            if best is None and goal and len(candidates) > 1:
                pairs = [
                    sorted([a, b], key=lambda c: c[0])
                    for k, a in enumerate(candidates)
                    for b in candidates[k + 1 :]
                    if str(a[1]) != str(b[1]) and abs(a[0] - b[0]) <= PAIR_REACH
                ]
                best = self._best_insertion(pairs, known, goal=goal)
            if best is None or self.exhausted():
                return
            chosen, gains = best
            for pos, action, why in reversed(chosen):  # the later first: positions hold
                step = self._add_step(action)
                self.added[step] = (self._origin_before(pos), why)
                self.grounds[step] = (gains, self.scene_known)
                self.order.insert(pos, step)
            self._retrace()

    def _best_insertion(
        self, options: list[list[tuple[int, Action, str]]], known: list[Unit], *, goal: bool
    ) -> tuple[list[tuple[int, Action, str]], bool] | None:
        """Of sets of steps to insert (each at an order position), the one that meets the goal
        best (or makes the most impossible steps possible) without breaking anything; with
        whether it gains on the goal. None when none helps."""
        best: tuple[tuple[int, int, int], list[tuple[int, Action, str]], bool] | None = None
        for option in options:
            if self.exhausted():
                return None
            extra: dict[int, list[int]] = {}
            for pos, action, _ in option:
                extra.setdefault(pos, []).append(self._add_step(action))
            variant = self.sim.without(self.trace, set(), extra)
            for _ in option:
                self.sim.steps.pop()
                self.actions.pop()
            fewer = variant.impossible < self.trace.impossible
            gains = (
                goal
                and better(self.sim.known_units(variant.units), known)
                and no_worse(variant.units, self.trace.units)
            )
            if variant.impossible - self.trace.impossible or not (gains or fewer):
                continue
            key = (-score(variant.units)[0], len(variant.impossible), -option[0][0])
            if best is None or key < best[0]:
                best = (key, option, gains)
        return None if best is None else (best[1], best[2])

    def replace_misplaced(self) -> None:
        """A device switched on while the object the goal wants worked on was just set down on
        a surface (a plate put on the counter, the faucet turned on and off, the plate picked
        up): the device only makes sense with the object in it. The wrong put-down is replaced
        by the right one, in its place, when that meets the goal better and breaks nothing;
        the device's steps stay."""
        if self.spec is None:
            return
        for step in list(self.order):
            if self.exhausted():
                return
            action = self.actions[step]
            if action.verb != "ToggleOn" or not self.judged(step):
                continue
            pos = self.trace.position(step)
            put = self._previous_interaction(pos)
            if put is None or self.actions[put].verb != "PutAOnB" or not self.judged(put):
                continue
            state = self.state_at(pos)
            device = state.key(action.objects[0])
            kind = state.kind_at(device)
            where = self._device_place(state, device)
            thing = self.actions[put].objects[0]
            onto = state.kind_at(state.key(self.actions[put].objects[1]))
            if where is None or kind not in WORKING_DEVICES or onto not in SURFACES:
                continue
            if state.kind_at(state.key(thing)) not in self.goal_kinds:
                continue
            self._try_replacement(put, parse_action(f"Driver.PutAOnB('{thing}', '{where}')"))

    def _device_place(self, state: State, device: str | None) -> str | None:
        """The plan's name for where an object goes for a device to act on it: the basin a tap
        runs into, or the device itself (a coffee machine, a toaster)."""
        if device is None:
            return None
        kind = state.get(device).kind
        if kind in WATER_TAPS:
            basins = serves(state, device)
            return self._name_for(*sorted(basins, key=lambda b: b != "SinkBasin"))
        if kind in ("CoffeeMachine", "Toaster"):
            return next(
                (n for a in self.actions[: self.n] for n in a.objects if state.key(n) == device),
                None,
            )
        return None

    def _try_replacement(self, put: int, right: Action) -> None:
        """Remove a put-down and insert another in its place, when the goal gains."""
        pos = self.trace.position(put)
        known = self.sim.known_units(self.trace.units)
        added = self._add_step(right)
        variant = self.sim.without(self.trace, {put}, {pos: [added]})
        gains = better(self.sim.known_units(variant.units), known)
        if variant.impossible - self.trace.impossible or not gains:
            self.sim.steps.pop()
            self.actions.pop()
            return
        wrong = self.actions[put]
        why = f"{wrong.objects[0]} goes in {right.objects[1]}, not on {wrong.objects[1]}: the device the plan switches next acts on what is in {right.objects[1]}"
        self.removed[put] = f"replaced: {why}"
        self.grounds[put] = self.grounds[added] = (True, self.scene_known)
        self.added[added] = (self._origin_before(pos), why)
        self.order[pos] = added
        self._retrace()

    def prune_added(self) -> bool:
        """Take back every inserted step the final plan does as well without (one added for a
        step that blame or removal took out since); whether any was."""
        pruned = False
        for step in list(self.added):
            if self.exhausted():
                break
            if self._acceptable(self.sim.without(self.trace, {step}, strict=True), {step}):
                del self.added[step]
                self._apply({step})
                pruned = True
        return pruned

    # ------------------------------------------------------------------ result

    def review(self) -> Review:
        self.cancel_motion()
        self.complete_switches()
        self.add_missing(goal=False)  # what impossible steps lack (a closed fridge opened)
        self.blame()  # before steps are added for the goal: the cause goes, not a second copy
        self.replace_misplaced()
        self.add_missing()
        self.remove()
        if self.prune_added():
            self.remove()  # what the pruned steps gave an effect to may now go
        self.cancel_motion()  # motions the removals left next to each other
        result = Review(units=list(self.trace.units), cut_short=self.exhausted())
        groups: dict[str, list[int]] = {}
        for step, why in self.removed.items():
            groups.setdefault(why, []).append(step)
        evidence = self._evidence() if any("still holds" in why for why in groups) else {}
        cited = "; ".join(
            f"{text}, by step {self._input_number(step)}"
            for text, step in list(evidence.items())[:2]
        )
        for why, steps in groups.items():
            if cited and why.endswith("still holds"):
                why = f"{why}: {cited}"
            uses_goal = any(self.grounds.get(s, (True, False))[0] for s in steps)
            known = all(self.grounds.get(s, (True, False))[1] for s in steps)
            result.removals.append(Removal(tuple(sorted(steps)), why, uses_goal, known))
        result.removals.sort(key=lambda r: r.steps)
        for step, (after, why) in self.added.items():
            uses_goal, known = self.grounds.get(step, (True, False))
            action = str(self.actions[step])
            result.proposals.append(Proposal(action, after, why, uses_goal, known))
        return result


BROAD_CLASSES = frozenset({"Food", "KitchenUtensils", "SmallHandheldObjects", "Tableware"})


def look_alike(kind: str | None, other: str) -> bool:
    """Whether two object types could be taken for one another: different types of a class
    narrower than `BROAD_CLASSES` (a cup and a mug, a spoon and a butter knife, pot and pan)."""
    if kind is None or kind == other:
        return False
    shared = set(classes_of(kind)) & set(classes_of(other))
    return bool(shared - BROAD_CLASSES)


def _onto(state: State, action: Action) -> str | None:
    """The type of what a put-down (or a pour) puts its object on or in."""
    return state.kind_at(state.key(action.objects[1]))


WORKED_STATES = ("present", "dirty", "liquid", "cooked", "boiled", "sliced", "on", "open")


def _worked(start: Obj | None, now: Obj) -> bool:
    """Whether an object's states (other than where it is) are not what they were at the start:
    the plan has worked on it."""
    if start is None:
        return True
    return any(getattr(start, name) != getattr(now, name) for name in WORKED_STATES)


def _possible_worlds(start: State, taken: set[str], kinds: frozenset[str]) -> list[State]:
    """Without a scene, the worlds where nothing the goal wants is done yet: vessels empty, and
    what the plan takes from nowhere known maybe in the device; or devices running and full."""
    return [
        undone(start, hopeful=taken),
        undone(start, running=True, hopeful=taken, wanted=kinds),
    ]


def _taken_first(actions: Sequence[Action]) -> set[str]:
    """The objects a plan picks up before it puts them anywhere: where they stood is unknown."""
    placed: set[str] = set()
    taken: set[str] = set()
    for action in actions:
        if action.verb == "PutAOnB" and action.objects:
            placed.add(action.objects[0])
        elif action.verb == "PickUp" and action.objects and action.objects[0] not in placed:
            taken.add(action.objects[0])
    return taken


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


def _gist(action: Action) -> str:
    """A step in a few words: "PickUp Apple", "PutAOnB Apple on DiningTable"."""
    if action.verb == "PutAOnB":
        return f"puts {action.objects[0]} on {action.objects[1]}"
    if action.verb == "PourFromAIntoB":
        return f"pours {action.objects[0]} into {action.objects[1]}"
    words = {"PickUp": "picks up", "ToggleOn": "switches on", "ToggleOff": "switches off"}
    verb = words.get(action.verb, action.verb.lower())
    return f"{verb} {' '.join(action.objects)}".strip()


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
