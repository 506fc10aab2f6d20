"""The plan under repair: its steps (the input's and those inserted), the order they stand in now,
the trace of that order, and where each object is acted on; the queries the search, its keep
rules and its presumptions share."""

from __future__ import annotations

import bisect
from collections.abc import Collection, Sequence

from planverify.records.episode import Scene
from planverify.records.notation import MOTION_VERBS, Action, parse_action
from planverify.world.goals import GoalSpec
from planverify.world.repair.kinds import goal_kinds, tail_kinds
from planverify.world.repair.worlds import possible_worlds, taken_first
from planverify.world.rules import (
    COOKERS,
    DERIVED_TYPES,
    DIRTYABLE,
    FILLABLE,
    WATER_TAPS,
    as_first_placed,
    as_first_used,
    net_motion,
    placeable,
    serves,
    within,
)
from planverify.world.start import initial_state
from planverify.world.state import SOME, State
from planverify.world.trace import (
    Judge,
    Simulator,
    Trace,
    Variant,
    goal_judge,
    no_worse,
    preserving_judge,
)

MAX_ROUNDS = 6  # repairs tried per stage before giving up
WORK_BUDGET = 100_000  # step updates one review may simulate (the shared games need < 30,000)
SAME_SPOT = 0.5  # metres: a step or two of TEACh's 0.25 m moves is still within reach


class Plan:
    """The plan a review repairs, as it stands."""

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
                self._taken = taken_first(self.actions)
                possible = possible_worlds(start, self._taken, goal_kinds(spec))
        else:
            trace = Simulator(self.actions, start, lambda s: []).trace(list(range(self.n)))
            full = trace.final[0]
            named = set(focus)
            keep = [k for k, o in full.objects.items() if not named or o.kind in named]
            judge = preserving_judge(keep, full)
        self.sim = Simulator(self.actions, start, judge, possible)
        self.goal_kinds = goal_kinds(spec) if spec is not None else frozenset(focus)
        self._tail_kinds = tail_kinds(spec) if spec is not None else frozenset[str]()
        self._unit_types = spec.unit_types() if spec is not None else []
        self._state_units = len(spec.components) if spec is not None else 0  # units first in it
        self.order = list(range(self.n))
        self._inactive = {i for i, a in enumerate(self.actions) if not a.known or a.is_dialogue}
        # the Commander's first line: before it the Driver has not been told what to look for
        self.told = next(
            (i for i, a in enumerate(self.actions) if a.is_dialogue and a.agent == "Commander"), 0
        )
        self.trace = self.sim.trace(self.order)
        self.input_trace = self.trace  # the whole plan as given: where things were in it
        self.idle_units = self.sim.trace([]).units  # what the goal gets from doing nothing
        self._index()
        self.removed: dict[int, str] = {}
        self.removed_with: dict[int, int] = {}  # step the sweep removed -> its block's first step
        # removed steps of a kind the `natural` trim policy keeps: step -> (kind, its block)
        self.trim_kinds: dict[int, tuple[str, int]] = {}
        self.optional: dict[int, str] = {}  # removed steps `natural` keeps, put back: their kind
        self.added: dict[int, tuple[int, str]] = {}  # step id -> (input position it follows, why)
        # what each removal's and insertion's proof rests on: (uses the goal, states known)
        self.grounds: dict[int, tuple[bool, bool]] = {}
        self.scene_known = scene is not None
        # a stretch's motion (verb, amount) -> the no-op motion found in it (`remove_noop_motion`)
        self._noop_memo: dict[
            tuple[tuple[str, str | None], ...], tuple[list[int], bool] | None
        ] = {}

    def exhausted(self) -> bool:
        """Whether the search has spent its budget (`WORK_BUDGET`): what it found so far holds,
        the rest of the plan is kept as it is. Past its caller's deadline, the search stops
        here instead (`planverify.world.deadline.Stopped`)."""
        if self.sim.deadline is not None:
            self.sim.deadline.check()
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
        taken = taken_first(active)
        if taken == self._taken and not moved:
            return False
        self._taken = taken
        self.sim.starts = [self._start, *possible_worlds(self._start, taken, self.goal_kinds)]
        self.idle_units = self.sim.trace([]).units
        return True

    def _follow(self, order: list[int], trace: Trace) -> None:
        """Make `order`, traced as `trace`, the plan as it stands (to try a change, or undo it)."""
        self.order, self.trace = order, trace
        self._index()

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
        left_out = self.trace.impossible & block  # (they cannot happen in it: they are not in it)
        return (
            not variant.gained
            and left_out <= variant.lost
            and no_worse(variant.units, self.trace.units)
        )

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
        self._trips: dict[int, set[int] | None] = {}  # order position -> its round trip
        self._transfers: dict[int, set[int] | None] = {}  # order position -> its transfer
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

    def _previous_interaction(self, pos: int) -> int | None:
        """The nearest active step before an order position that is not motion."""
        for p in range(pos - 1, -1, -1):
            step = self.order[p]
            if self.active(step) and self.actions[step].verb not in MOTION_VERBS:
                return step
        return None

    def _made_position(self, key: str) -> int | None:
        """The order position from which an object the plan makes (a slice, once its whole is
        sliced) is there; None for one that was there at the start or is never made."""
        start = self.state_at(0).objects.get(key)
        if start is None or start.present is True or start.kind not in DERIVED_TYPES:
            return None
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
        return self._made_at[key]

    def _made_by(self, key: str | None, pos: int) -> bool:
        """Whether the plan made this object (a slice it cut) by an order position."""
        made = self._made_position(key) if key is not None else None
        return made is not None and made <= pos

    def _next_interaction(self, pos: int) -> int | None:
        """The nearest active step after an order position that is not motion."""
        for p in range(pos + 1, len(self.order)):
            step = self.order[p]
            if self.active(step) and self.actions[step].verb not in MOTION_VERBS:
                return step
        return None

    def _touched_elsewhere(self, name: str, block: Collection[int]) -> bool:
        return any(self.order[p] not in block for p in self._named.get(name, []))

    def _touched_after(self, name: str, last: int, block: set[int]) -> bool:
        positions = self._named.get(name, [])
        k = bisect.bisect_right(positions, last)
        return any(self.order[p] not in block for p in positions[k:])

    def _puts_into(self, step: int, place: str) -> bool:
        """Whether a put-down puts its object into this receptacle (for a place known by type
        only, `*Sink`, into one of that type)."""
        state = self.state_at(self.trace.position(step))
        target = state.key(self.actions[step].objects[1])
        if place.startswith(SOME):
            return state.kind_at(target) == place.removeprefix(SOME)
        return target == place

    def _moved_between(self, start: int, end: int, *, reach: float = SAME_SPOT) -> bool:
        """Whether the Driver stands elsewhere (farther than `reach`), or faces elsewhere, at
        the order position `end` than at `start`."""
        distance, heading = net_motion(self.actions[s] for s in self.order[start:end])
        return distance > reach or heading != 0

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

    def _taken_back(self, steps: Sequence[int], positions: Sequence[int]) -> bool:
        """Whether a block is a put-down and the pick-up that takes the object back next."""
        if [self.actions[s].verb for s in steps] != ["PutAOnB", "PickUp"]:
            return False
        obj = self.actions[steps[0]].objects[0]
        return self._near(positions[0], obj, forward=True) == steps[1]
