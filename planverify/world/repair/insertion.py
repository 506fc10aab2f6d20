"""The steps a plan lacks: actions that would make an unmet goal condition hold or an impossible
step possible are tried from templates where they could work, and kept when the simulation shows
they help without breaking anything; a forgotten switch-on, and a put-down replaced by the one
the device switched next needs."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from itertools import islice

from planverify.records.notation import Action, parse_action
from planverify.world.goals import Unit
from planverify.world.repair.kinds import CONTROLS, SURFACES, WORKING_DEVICES
from planverify.world.repair.plan import MAX_ROUNDS, Plan
from planverify.world.rules import BASINS, COOKERS, KNIVES, SLICES, WATER_TAPS, serves
from planverify.world.state import SOME, WATER, State
from planverify.world.trace import better, no_worse, score

Template = tuple[int, Action, str]  # an action to try, the order position it goes before, why
PAIR_REACH = 2  # steps inserted together are at most this many positions apart


class Insertion(Plan):
    """Adding what the plan lacks."""

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
                    # the whole the scene says the slice is cut from, else the plan's first
                    name = state.index.made_from.get(action.objects[0]) or self._name_for(whole)
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
                (
                    n
                    for a in islice(self.actions, self.n)
                    for n in a.objects
                    if state.key(n) == held
                ),
                held,
            )
            pour = parse_action(f"Driver.PourFromAIntoB('{name}', '{plant}')")
            yield pos, pour, f"the plant is never watered from {name}"

    def _tap_for(self, state: State, basin: str) -> str | None:
        """The plan's name for a tap that runs into basins of this kind, if it names one."""
        for action in islice(self.actions, self.n):
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
            if wanted in self._first_names:
                return self._first_names[wanted]
        return kind

    @cached_property
    def _first_names(self) -> dict[str, str]:
        """The first name the plan's input steps give an object of each type, in plan order
        (names never change type while a plan runs, so this is looked up once)."""
        index = self.trace.final[0].index
        first: dict[str, str] = {}
        for action in self.actions[: self.n]:
            for name in action.objects:
                kind = index.type_of(name)
                if kind is not None:
                    first.setdefault(kind, name)
        return first

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
            if variant.gained or not no_worse(variant.units, self.trace.units):
                self.sim.steps.pop()
                self.actions.pop()
                continue
            why = f"{action.objects[0]} is switched off after {self.actions[put].objects[0]} is put in, but never switched on"
            self.added[added] = (self._origin_before(pos), why)
            self.grounds[added] = (True, False)  # a pattern: a forgotten switch-on
            self.order.insert(pos, added)
            self._retrace()

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
                best = self._best_insertion(_close_pairs(candidates), known, goal=goal)
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
            fewer = variant.fewer
            gains = (
                goal
                and better(self.sim.known_units(variant.units), known)
                and no_worse(variant.units, self.trace.units)
            )
            if variant.gained or not (gains or fewer):
                continue
            key = (-score(variant.units)[0], variant.count, -option[0][0])
            if best is None or key < best[0]:
                best = (key, option, gains)
        return None if best is None else (best[1], best[2])

    def _changes_nothing(self, step: int) -> bool:
        """Whether a step cannot happen or changes nothing (a second open of an open door)."""
        outcome = self.trace.outcomes[self.trace.position(step)]
        return bool(outcome.problem) or outcome.changed is False

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
            while put is not None and (self._switch_to_same(put) or self._changes_nothing(put)):
                # it goes, so it is no step
                put = self._previous_interaction(self.trace.position(put))
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

    def _switch_to_same(self, step: int) -> bool:
        """Whether a step switches a device to the state it is already in."""
        if self.actions[step].verb not in ("ToggleOn", "ToggleOff"):
            return False
        return self.trace.outcomes[self.trace.position(step)].changed is False

    def _device_place(self, state: State, device: str | None) -> str | None:
        """The plan's name for where an object goes for a device to act on it: the basin a tap
        runs into, or the device itself (a coffee machine, a toaster)."""
        if device is None:
            return None
        kind = state.get(device).kind
        if kind in WATER_TAPS:
            basins = serves(state, device)
            return self._name_for(*sorted(basins, key=lambda b: (not b.endswith("Basin"), b)))
        if kind in ("CoffeeMachine", "Toaster"):
            return next(
                (
                    n
                    for a in islice(self.actions, self.n)
                    for n in a.objects
                    if state.key(n) == device
                ),
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
        if variant.gained or not gains:
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


def _close_pairs(candidates: list[Template]) -> list[list[Template]]:
    """Every two candidates for different actions at most `PAIR_REACH` order positions apart,
    each pair in position order; in the order of the candidates, by the first, then the second.
    Only the candidates near each one are looked at, so a long plan's many cost no more than
    their number."""
    at: dict[int, list[int]] = {}  # order position -> the candidates there
    for k, (pos, _, _) in enumerate(candidates):
        at.setdefault(pos, []).append(k)
    texts = [str(action) for _, action, _ in candidates]
    pairs: list[list[Template]] = []
    for k, (pos, _, _) in enumerate(candidates):
        near = range(pos - PAIR_REACH, pos + PAIR_REACH + 1)
        later = sorted(j for p in near for j in at.get(p, ()) if j > k and texts[j] != texts[k])
        pairs += [sorted([candidates[k], candidates[j]], key=lambda c: c[0]) for j in later]
    return pairs


def _whole_of(kind: str) -> str | None:
    return next((whole for whole, made in SLICES.items() if made == kind), None)
