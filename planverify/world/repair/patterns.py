"""What a block of steps is, as far as the keep rules ask: a switch of a device that acts on
nothing, a device switched off and on again, a container only searched, an object set straight
back or fetched and left aside, a pick-up held for nothing, an object the plan worked on, a goal
met as well without it."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Collection, Sequence

from planverify.records.notation import MOTION_VERBS, Action
from planverify.world.goals import matches
from planverify.world.repair.kinds import CONTROLS, SURFACES, WORKING_DEVICES
from planverify.world.repair.presumptions import Presumptions
from planverify.world.rules import BASINS, SINKS
from planverify.world.state import SOME, Obj, State

UNDOING = {"ToggleOff": ("ToggleOn", True), "Close": ("Open", True)}
UNDOING |= {"ToggleOn": ("ToggleOff", False), "Open": ("Close", False)}
"""A restoring step and the step that undoes it next (forward), or the other way round."""
ACTING = frozenset(CONTROLS) | WORKING_DEVICES  # receptacles a device may act on what they hold
WORKED_STATES = ("present", "dirty", "liquid", "cooked", "boiled", "sliced", "on", "open")


class Patterns(Presumptions):
    """Recognising what a block of steps does."""

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

    def _idle_switch_off(self, pos: int) -> bool:
        """Whether the step at an order position switches off a device that ran from the start
        and that the plan did not use: it put nothing where the device acts, and pours out
        nothing the device filled. Such a switch-off serves nothing (tidying up after use is
        switching off what the plan used; taking a knife from under a running tap is no use)."""
        action = self.actions[self.order[pos]]
        if action.verb != "ToggleOff" or not action.objects:
            return False
        name = action.objects[0]
        if self._near(pos, name, {"ToggleOn", "ToggleOff"}, forward=False) is not None:
            return False
        state = self.state_at(pos)
        device = state.key(name)
        if device is None or state.get(device).on is not True:
            return False
        microwave = state.kind_at(device) == "Microwave"
        if microwave and self._near(pos, name, {"Open"}, forward=True) is not None:
            return False  # opened later: whether it may be opened while it runs is not known
        acted = set(self._acted_on(state, device)) | {device}
        if any(self._poured_out(key) for key in acted - {device}):
            return False  # the plan uses what the device filled: switching it off is after use
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

    def _poured_out(self, key: str) -> bool:
        """Whether an active step of the plan pours out the object with this state key."""
        return bool(self._on_verb.get((key, "PourFromAIntoB")))

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

    def _round_trip(self, pos: int) -> set[int] | None:
        """The pick-up at an order position, the put-down after it, the pick-up that takes the
        object from there and the put-down that sets it back where the first pick-up took it,
        when no other step names the object between them and it comes back as it was: an
        object carried somewhere and back (a slice set on a plate that is not ready yet, then
        back on its counter). None otherwise."""
        if pos not in self._trips:
            self._trips[pos] = self._find_round_trip(pos)
        return self._trips[pos]

    def _find_round_trip(self, pos: int) -> set[int] | None:
        name = self.actions[self.order[pos]].objects[0]
        named = self._named.get(name, [])
        k = bisect.bisect_left(named, pos)
        positions = named[k : k + 4]
        steps = [self.order[p] for p in positions]
        verbs = [self.actions[s].verb for s in steps]
        if positions[:1] != [pos] or verbs != ["PickUp", "PutAOnB", "PickUp", "PutAOnB"]:
            return None
        if any(self.actions[s].objects[0] != name or not self.judged(s) for s in steps):
            return None
        ends = [positions[0], positions[3]]
        if not self._put_back([steps[0], steps[3]], ends):
            return None
        start, end = self.state_at(ends[0]), self.state_at(ends[1] + 1)
        key = start.key(name)
        if key is None or key not in end.objects or _worked(start.get(key), end.get(key)):
            return None
        away = self.state_at(positions[2]).get(key).loc
        if away is not None and away == self.trace.final[0].get(key).loc:
            back = self._near(positions[3], name, {"PutAOnB"}, forward=True)
            until = self.trace.position(back) if back is not None else len(self.order)
            if self._loaded_between(away, positions[2], until):
                return None  # taken off where it ends, to go back on what went there meanwhile
        if not self._whereabouts_known(key, positions[1] + 1, positions[2]):
            return None  # what happened to it there is not known
        return set(steps)

    def _loaded_between(self, place: str, first: int, last: int) -> bool:
        """Whether a step between two order positions puts something onto `place` (the bread
        put on the plate a tomato slice was lifted off, to go back on top: rearranged)."""
        return any(
            self.active(step := self.order[pos])
            and self.actions[step].verb == "PutAOnB"
            and self.state_at(pos).key(self.actions[step].objects[1]) == place
            for pos in range(first + 1, last)
        )

    def _whereabouts_known(self, key: str, first: int, last: int) -> bool:
        """Whether, before each order position from `first` to `last`, neither an object nor
        what holds it (at any depth) stands where the plan put it down somewhere nobody knows
        (a pot "put on itself", as TEACh records now and then, with a plate on it)."""
        start = self.state_at(0)
        for pos in range(first, last + 1):
            state = self.state_at(pos)
            holder, seen = key, set()
            while holder in state.objects and holder not in seen:
                seen.add(holder)
                loc = state.get(holder).loc
                if loc is None:
                    if holder in start.objects and start.get(holder).loc is not None:
                        return False  # it was somewhere known at the start
                    break
                holder = loc
        return True

    def _set_straight_back(self, pick: int, put: int) -> bool:
        """Whether a pick-up and a put-down set the object straight back where it was, with
        nothing but motion between them: it was never carried anywhere."""
        first, second = self.trace.position(pick), self.trace.position(put)
        between = self.order[first + 1 : second]
        if any(self.active(s) and self.actions[s].verb not in MOTION_VERBS for s in between):
            return False
        return self._put_back([pick, put], [first, second])

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

    def _as_it_was(self, steps: Sequence[int]) -> bool:
        """Whether a block is every step on one object, one of them pouring it out, and the
        object, clean and empty when the block began, ends it so: filled and emptied again for
        nothing (a clean mug rinsed), wherever it was carried."""
        name = self._only_object(steps)
        if name is None or all(self.actions[s].verb != "PourFromAIntoB" for s in steps):
            return False
        positions = self._named[name]
        before, after = self.state_at(positions[0]), self.state_at(positions[-1] + 1)
        key = before.key(name)
        if key is None or key not in after.objects:
            return False
        start = before.get(key)
        if start.dirty is not False or start.liquid != "":
            return False  # not known to be clean and empty: rinsed or emptied for something
        return not _worked(start, after.get(key))

    def _wrong_instance(self, steps: Sequence[int]) -> bool:
        """Whether every step of a block acts first on one object that, where the plan meets
        its whole task, ends known to fail a state that each of the task's components of its
        kind asks for: the work went into the wrong instance (a dirty mug filled with coffee,
        while a clean one is served)."""
        if self.spec is None or self.spec.source != "teach_task":
            return False
        names = {self.actions[s].objects[0] for s in steps if self.actions[s].objects}
        if len(names) != 1:
            return False
        if not all(u.met is True for u in self.sim.known_units(self.trace.units)):
            return False
        final = self.state_at(len(self.order))
        key = final.key(names.pop())
        if key is None:
            return False
        kind = final.get(key).kind
        asking = [  # the components come first among the units, with the types they are about
            c
            for c, types in zip(self.spec.components, self._unit_types, strict=False)
            if kind in types and c.states.keys() - {"receptacle"}
        ]
        return bool(asking) and all(matches(c, final).get(key) is False for c in asking)

    def _one_too_many(self, steps: Sequence[int]) -> bool:
        """Whether a block is every step on one object, all of them carrying it (pick-ups and
        put-downs), and the object ends where others of its type end too, of which it was
        taken up last: of interchangeable instances the last is the one too many (a third
        potato slice boiled and served when the salad needs two), worked on or not. Only where
        a task definition says how many the goal wants; whether it does without this one, the
        simulation says."""
        if self.spec is None or self.spec.source != "teach_task":
            return False  # how many the goal wants, only a task definition says
        name = self._only_object(steps)
        if name is None or any(self.actions[s].verb not in ("PickUp", "PutAOnB") for s in steps):
            return False
        end = self.trace.final[0]
        key = end.key(name)
        if key is None:
            return False
        kind, place = end.get(key).kind, end.get(key).loc
        first = self._named[name][0]
        twins = [
            other
            for other, at in self._named.items()
            if other != name
            and (twin := end.key(other)) is not None
            and end.get(twin).kind == kind
            and end.get(twin).loc == place
            and at
        ]
        if not twins or any(self._named[other][0] >= first for other in twins):
            return False
        final = self.sim.known_units(self.trace.units)
        about = [k for k, types in enumerate(self._unit_types) if kind in types]
        return bool(about) and all(final[k].met is True for k in about)  # else: which is unclear

    def _transfer(self, pos: int) -> set[int] | None:
        """`_find_transfer`, memoised per order."""
        if pos not in self._transfers:
            self._transfers[pos] = self._find_transfer(pos)
        return self._transfers[pos]

    def _transfer_through(self, step: int) -> set[int] | None:
        """The transfer (`_transfer`) that moves the object a pick-up takes, found from the
        first of the moves before it, or None."""
        found: set[int] | None = None
        earlier: int | None = step
        while earlier is not None and self.actions[earlier].verb in ("PickUp", "PutAOnB"):
            at = self.trace.position(earlier)
            if self.actions[earlier].verb == "PickUp":
                block = self._transfer(at)
                if block is not None and step in block:
                    found = block
                elif earlier != step:
                    break
            earlier = self._previous_interaction(at)
        return found

    def _find_transfer(self, pos: int) -> set[int] | None:
        """The pick-up at an order position and the steps that go with it, when they move
        everything on one receptacle that is no surface, one after another, onto another of the
        same kind, where each stays untouched: with the fetch of that other receptacle right
        before, when it was fetched (a finished salad moved onto a second plate). None
        otherwise."""
        state = self.state_at(pos)
        first = state.key(self.actions[self.order[pos]].objects[0])
        source = state.get(first).loc if first is not None else None
        kind = state.kind_at(source)
        if source is None or kind is None or kind in SURFACES:
            return None
        moves, target = self._moves_onto(pos, source, kind)
        if target is None:
            return None
        after = self.state_at(self.trace.position(moves[-1]) + 1)
        if any(o.loc == source for o in after.objects.values()):
            return None  # something stays: the second receptacle was no replacement
        block = set(moves) | self._fetched_before(pos, target)
        if len(block) < 4 or not all(self.judged(s) for s in block):
            return None
        return block

    def _moves_onto(self, pos: int, source: str, kind: str) -> tuple[list[int], str | None]:
        """The pick-ups from `source` from an order position on, each followed by its put-down
        onto one other receptacle of `kind` where the object stays, and that receptacle (None
        when there are none)."""
        moves: list[int] = []
        target: str | None = None
        pick: int | None = self.order[pos]
        while pick is not None and self.actions[pick].verb == "PickUp":
            at = self.trace.position(pick)
            put = self._next_interaction(at)
            name = self.actions[pick].objects[0]
            now = self.state_at(at)
            if put is None or (key := now.key(name)) is None or now.get(key).loc != source:
                break
            placed, there = self.actions[put], self.state_at(self.trace.position(put))
            onto = there.key(placed.objects[1]) if placed.verb == "PutAOnB" else None
            if placed.objects[:1] != (name,) or onto in (None, source):
                break
            if there.kind_at(onto) != kind or target not in (None, onto):
                break
            if self._near(self.trace.position(put), name, forward=True) is not None:
                break  # moved on again: not where it stays
            target = onto
            moves += [pick, put]
            pick = self._next_interaction(self.trace.position(put))
        return moves, target

    def _fetched_before(self, pos: int, target: str) -> set[int]:
        """The pick-up and put-down of `target` right before an order position (motion aside):
        the receptacle fetched for what follows. Else empty."""
        put = self._previous_interaction(pos)
        if put is None or self.actions[put].verb != "PutAOnB":
            return set()
        fetch = self._previous_interaction(self.trace.position(put))
        name = self.actions[put].objects[0]
        if fetch is None or self.actions[fetch].verb != "PickUp":
            return set()
        if self.actions[fetch].objects[0] != name or self.state_at(pos).key(name) != target:
            return set()
        return {fetch, put}

    def _placed_again(self, steps: Sequence[int]) -> int | None:
        """For a block that is a pick-up and the put-down of one object into a receptacle that
        is no surface, from which the plan next takes it, unchanged, into another that is no
        surface either, where it stays: the pick-up that takes it on (put in one cabinet, then
        gathered into another; left in a bowl, then boiled in a pot). Into another kind only off
        one the goal puts nothing in, and, without a scene, off none a device acts on (what the
        stove did to a potato in a pan is unknown). None otherwise."""
        if [self.actions[s].verb for s in steps] != ["PickUp", "PutAOnB"]:
            return None
        name = self.actions[steps[0]].objects[0]
        if self.actions[steps[1]].objects[0] != name:
            return None
        put = self.trace.position(steps[1])
        state = self.state_at(put)
        first, held = state.key(self.actions[steps[1]].objects[1]), state.key(name)
        kind = state.kind_at(first)
        if held is None or kind is None or kind in SURFACES:
            return None
        taken = self._near(put, name, forward=True)
        if taken is None or self.actions[taken].verb != "PickUp":
            return None
        again = self._near(self.trace.position(taken), name, forward=True)
        if again is None or self.actions[again].verb != "PutAOnB":
            return None
        if self._near(self.trace.position(again), name, forward=True) is not None:
            return None  # moved on again: where it stays is elsewhere
        there = self.state_at(self.trace.position(again))
        second = there.key(self.actions[again].objects[1])
        if second == first or held not in there.objects:
            return None
        then = there.kind_at(second)
        if then != kind and (then in SURFACES | {None} or kind in self._tail_kinds):
            return None  # into another kind, only off one the goal puts nothing in
        if then != kind and not self.scene_known and kind in ACTING:
            return None  # what a pan or a basin did to it, nobody knows
        return None if _worked(state.get(held), there.get(held)) else taken

    def _only_object(self, steps: Sequence[int]) -> str | None:
        """The object every one of these steps acts on first, when they are every step that
        names it; None otherwise (something else is done with it, or with another object)."""
        names = {self.actions[s].objects[0] if self.actions[s].objects else None for s in steps}
        if len(names) != 1 or (name := names.pop()) is None:
            return None
        positions = self._named.get(name, [])
        return name if {self.order[p] for p in positions} == set(steps) else None

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
        made_at = self._made_position(key)
        return start if made_at is None or made_at > pos else self.state_at(made_at).get(key)

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

    def _used_after(self, last: int, kind: str, place: str | None, block: set[int]) -> bool:
        """Whether the plan uses a receptacle after an order position: puts or pours into it
        (into one of its kind, when where the object stood is known by type only; into the
        sink's basin, for the sink), takes it, or switches it or its control on. Taking
        something else out of it needs no room, nor does pouring out into a basin."""
        control = CONTROLS.get(kind, kind)
        exact = place is not None and not place.startswith(SOME)
        for pos in range(last + 1, len(self.order)):
            step = self.order[pos]
            if step in block or not self.active(step):
                continue
            action = self.actions[step]
            state = self.state_at(pos)
            if action.verb == "PourFromAIntoB" and kind in BASINS:
                continue  # pouring out into a sink or a tub needs no room in it
            if action.verb in ("PutAOnB", "PourFromAIntoB"):
                target = state.key(action.objects[1])
                if target == place or (not exact and state.kind_at(target) == kind):
                    return True
                if frozenset({kind, state.kind_at(target)}) == SINKS:
                    return True  # one fixture: what the sink holds stands in its basin's way
            if action.verb == "PickUp" and state.key(action.objects[0]) == place:
                return True
            if action.verb == "ToggleOn" and state.kind_at(state.key(action.objects[0])) in (
                kind,
                control,
            ):
                return True
        return False


def _onto(state: State, action: Action) -> str | None:
    """The type of what a put-down (or a pour) puts its object on or in."""
    return state.kind_at(state.key(action.objects[1]))


def _worked(start: Obj | None, now: Obj) -> bool:
    """Whether an object's states (other than where it is) are not what they were at the start:
    the plan has worked on it."""
    if start is None:
        return True
    return any(getattr(start, name) != getattr(now, name) for name in WORKED_STATES)
