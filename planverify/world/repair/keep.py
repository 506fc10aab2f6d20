"""The keep rules: which candidate blocks the search may remove. A block goes when no rule keeps
it (`_policy`: left half done, put down nowhere known, preparation, an object the goal is about)
and the plan without it meets the goal no less (`_find_removable`); where the plan meets no goal
condition that doing nothing would not, only what is useless whatever the goal goes.

What a block is comes from `patterns` and `presumptions`; what to do with each kind of block is
decided here: the keep rules (`_policy`) that no trim policy removes, and the trim table
(`NATURAL_KEEPS`, `trim_kind`): the kinds of removable block that the `natural` trim policy keeps
as optional, which the search's put-back and certify read alike."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from planverify.records.notation import MOTION_VERBS
from planverify.world.repair.kinds import SURFACES
from planverify.world.repair.patterns import Patterns
from planverify.world.repair.presumptions import CLEARING_REACH
from planverify.world.rules import BASINS
from planverify.world.state import CONTAINERS, SOME, State
from planverify.world.trace import rank

RESTORING = frozenset({"Close", "ToggleOff"})  # verbs that only put a state back
SEARCHED = CONTAINERS  # any container may hide what the Driver looks for
SOUGHT = frozenset({"PickUp", "Slice"})  # steps that find the object a search looked for
LOADING = frozenset({"PickUp", "PutAOnB", "PourFromAIntoB"})  # steps that load or unload

# The trim table: what the goal does without only because the simulator is generous or the
# Driver could not know where things are. `minimal` removes these, `natural` keeps them.
NATURAL_KEEPS: dict[str, str] = {
    "search": "a container opened while looking for an object the plan takes next",
    "device_around_loading": "a running device switched off and on again around loading it",
    "tidying": "a container closed after use and opened again when needed later",
    "freeing_hands": "an object set down to free the hands for the next thing the plan takes",
    "making_room": "objects taken off the receptacle the plan puts something on next",
}


class KeepRules(Patterns):
    """Which blocks may go, and which stay."""

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

    def trim_blocks(
        self, block: Collection[int], *, gone: Collection[int] = ()
    ) -> list[tuple[set[int], str]]:
        """The parts of a block the search removes that are of a kind in the trim table
        (`NATURAL_KEEPS`), each with its kind: a container closed after use and opened again,
        its opening and closing of containers when that is a search, a running device switched
        off and on again around loading, and an object carried and set down to free the hands.
        The rest of the block every trim policy removes. `gone`: other steps that go as well
        (a tidying close and open with only those between them undo each other)."""
        parts: list[tuple[set[int], str]] = []
        closed_after_use = self._tidied(block, gone)
        if closed_after_use:
            parts.append((closed_after_use, "tidying"))
        opened = {  # opening what stands open (or closing what is closed) looks for nothing
            s
            for s in block
            if self.actions[s].verb in ("Open", "Close")
            and self._kind_of(s, self.actions[s].objects[0]) in SEARCHED
            and self.trace.outcomes[self.trace.position(s)].changed is not False
        }
        opened -= closed_after_use
        if self._opens_something(opened) and (
            self._searching(opened)
            or (
                self._only_looked_at(set(block) - opened, opened)
                and self._searching(opened, ignoring=set(block) - opened)
            )
        ):
            opened |= self._switched_off_to_look(block, opened)
            parts.append((opened, "search"))
        switched = {s for s in block if self.actions[s].verb in ("ToggleOff", "ToggleOn")}
        switched -= opened
        if len(switched) == 2 and self._around_loading(switched):
            parts.append((switched, "device_around_loading"))
        freeing = self._freeing_hands(block)
        if freeing:
            parts.append((freeing, "freeing_hands"))
        room = self._making_room(block)
        if room:
            parts.append((room, "making_room"))
        return parts

    def _switched_off_to_look(self, block: Collection[int], opened: Collection[int]) -> set[int]:
        """The switch-offs in a block of a device the search then opens, with only motion and
        dialogue between, that ran before the block (a running microwave switched off to look
        inside): they belong to the search, as a microwave's switches go with its opening. One
        the block itself switched on is not: that pair acts on nothing."""
        opens = {self.actions[s].objects[0]: s for s in opened if self.actions[s].verb == "Open"}
        for s in block:
            if self.actions[s].verb == "ToggleOn":
                opens.pop(self.actions[s].objects[0], None)
        return {
            s
            for s in block
            if self.actions[s].verb == "ToggleOff"
            and self._next_interaction(self.trace.position(s))
            == opens.get(self.actions[s].objects[0], -1)
        }

    def _making_room(self, block: Collection[int]) -> set[int]:
        """The pick-ups and put-downs in a block, when they take objects off one receptacle
        (its place given by the scene) and set them elsewhere, and the plan soon after puts
        something else on it that the goal is about, or anything when the goal puts things on
        receptacles of its kind (the laptop taken off the coffee table the newspapers go on),
        with nothing taken up again before that (a thing set down in passing made no room).
        What the Driver held may be set down first and taken up again after, to free the hands
        for it. Whether the room was needed nobody knows; making it is how people work. Else
        empty."""
        if self.spec is None:
            return set()
        steps = sorted(
            (s for s in block if self.actions[s].verb in ("PickUp", "PutAOnB")),
            key=self.trace.position,
        )
        pairs = [s for s in steps if s not in self._hands_freed(steps)]
        if not pairs or len(pairs) % 2:
            return set()
        places: set[str] = set()
        for pick, put in zip(pairs[::2], pairs[1::2], strict=True):
            taken, placed = self.actions[pick], self.actions[put]
            if (taken.verb, placed.verb) != ("PickUp", "PutAOnB"):
                return set()
            if taken.objects[0] != placed.objects[0]:
                return set()
            if self._near(self.trace.position(pick), taken.objects[0], forward=False) is not None:
                return set()  # the plan moved it there: taking it away again makes no room
            state = self.state_at(self.trace.position(pick))
            key = state.key(taken.objects[0])
            place = state.get(key).loc if key is not None else None
            if place is None or place.startswith(SOME):
                return set()
            if self._puts_into(put, place):
                return set()  # set back where it was: no room made
            places.add(place)
        if len(places) != 1:
            return set()
        place = places.pop()
        handled = {self.actions[s].objects[0] for s in pairs}
        loaded = self._loaded_soon(steps[-1], handled, place)
        if loaded is None:
            return set()
        for name in handled:
            again = self._near(self.trace.position(steps[-1]), name, forward=True)
            if again is not None and self.trace.position(again) < self.trace.position(loaded):
                return set()  # taken up again before the room is used: set down in passing
        # room is worth making where the goal puts things, or for a thing the goal is about
        if self._kind_of(loaded, self.actions[loaded].objects[0]) in self.goal_kinds:
            return set(steps)
        state = self.state_at(self.trace.position(pairs[0]))
        return set(steps) if state.kind_at(place) in self._tail_kinds else set()

    def _hands_freed(self, steps: Sequence[int]) -> set[int]:
        """The first and last of some steps in plan order, when the first sets down an object
        and the last picks the same object up again: the hands freed for what lies between.
        Else empty."""
        if len(steps) < 4:
            return set()
        first, last = self.actions[steps[0]], self.actions[steps[-1]]
        if (first.verb, last.verb) == ("PutAOnB", "PickUp") and first.objects[0] == last.objects[0]:
            return {steps[0], steps[-1]}
        return set()

    def _loaded_soon(self, after: int, handled: Collection[str], place: str) -> int | None:
        """The step that, within `CLEARING_REACH` interactions after step `after`, puts an
        object not in `handled` onto `place`, or None."""
        seen = 0
        for pos in range(self.trace.position(after) + 1, len(self.order)):
            step = self.order[pos]
            action = self.actions[step]
            if not self.active(step) or action.verb in MOTION_VERBS:
                continue
            seen += 1
            if seen > CLEARING_REACH:
                return None
            if (
                action.verb == "PutAOnB"
                and action.objects[0] not in handled
                and self._puts_into(step, place)
            ):
                return step
        return None

    def _freeing_hands(self, block: Collection[int]) -> set[int]:
        """A pick-up and a put-down of one object, alone in a block (motion aside), that carry
        it elsewhere and set it down to free the hands for the next thing the plan picks up,
        before picking it up again later (the pot carried to the sink and set down while the
        sink is cleared). Picking it up later would save the pair, but it is how people work.
        Else empty."""
        steps = sorted(
            (s for s in block if self.actions[s].verb not in MOTION_VERBS),
            key=self.trace.position,
        )
        if len(steps) != 2:
            return set()
        pick, put = (self.actions[s] for s in steps)
        if (pick.verb, put.verb) != ("PickUp", "PutAOnB") or pick.objects[:1] != put.objects[:1]:
            return set()
        name = pick.objects[0]
        start, end = (self.trace.position(s) for s in steps)
        if not self._moved_between(start, end):
            return set()  # set down where it was picked up: never carried anywhere
        if self._near(end, name, {"PickUp"}, forward=True) is None:
            return set()
        taken = self._next_interaction(end)
        if taken is None or taken in block:
            return set()
        action = self.actions[taken]
        if action.verb != "PickUp" or action.objects[:1] == (name,):
            return set()
        return set(steps)

    def _tidied(self, block: Collection[int], gone: Collection[int] = ()) -> set[int]:
        """The close and the later open of one container in a block, when the plan had opened
        it and taken something from it or put something in it before closing it: closing after
        use is tidying, and the open that follows is needed because of it, unless nothing is
        done or said between the two in the plan as it stands, without the steps `gone`
        (motion aside): a close and an open left side by side by the removals undo each other.
        Else empty."""
        steps = sorted(
            (s for s in block if self.actions[s].verb in ("Open", "Close")),
            key=self.trace.position,
        )
        if [self.actions[s].verb for s in steps] != ["Close", "Open"]:
            return set()
        name = self.actions[steps[0]].objects[0]
        if self.actions[steps[1]].objects[0] != name:
            return set()
        first, last = (self.trace.position(s) for s in steps)
        between = (s for s in self.order[first + 1 : last] if s not in gone)
        if all(self.actions[s].verb in MOTION_VERBS for s in between):
            return set()  # opened again at once, nothing done or said between: no tidying
        opener = self._near(first, name, {"Open"}, forward=False)
        if opener is None or not self._used_while_open(opener):
            return set()
        return set(steps)

    def _opens_something(self, steps: Collection[int]) -> bool:
        """Whether some step among these opens a container that was closed."""
        return any(
            self.actions[s].verb == "Open"
            and self.trace.outcomes[self.trace.position(s)].changed is not False
            and not self.trace.outcomes[self.trace.position(s)].problem
            for s in steps
        )

    def _kind_of(self, step: int, name: str) -> str | None:
        """The type of the object a step names, as the state before it knows it."""
        state = self.state_at(self.trace.position(step))
        return state.kind_at(state.key(name))

    def _searching(self, block: Collection[int], *, ignoring: Collection[int] = ()) -> bool:
        """Whether opening (and closing) these containers, with nothing taken or put, comes
        before the plan takes an object it has not named yet, or serves on one (a plate), other
        than one it made (a slice it cut): the Driver looking for where that object is. Opening
        something to put down what is in hand there (or to put away or take back what the
        search removes: `_opened_for_a_removal`) is no search, nor is looking once every object
        the plan takes is found, nor before the Commander first speaks (the Driver exploring,
        not yet told what to look for). Steps in `ignoring` are read as gone: what is taken out
        and set aside again with the opening (a look-alike found, a thing looked at) leaves the
        opening a search."""
        if min(block) < self.told:
            return False  # nobody has said yet what the task needs: exploring, not looking
        first = min(self.trace.position(s) for s in block)
        skip = set(ignoring) - set(block)
        if any(self.actions[s].verb not in ("PickUp", "PutAOnB", *MOTION_VERBS) for s in skip):
            return False  # more than taking out and setting aside happened with it
        if any(self._used_while_open(s, skip) for s in block if self.actions[s].verb == "Open"):
            return False  # something taken from it or put in it: it was opened for that
        if any(self._opened_for_a_removal(s) for s in block if self.actions[s].verb == "Open"):
            return False  # opened to put away, or take back, what the plan handles for nothing
        held = self.state_at(first).held
        names = {self.actions[s].objects[0] for s in block}
        later = [  # what the Driver does next, besides closing what the block opened
            step
            for step in self.order[first + 1 :]
            if step not in block
            and step not in skip
            and self.active(step)
            and self.actions[step].verb not in MOTION_VERBS
            and not (self.actions[step].verb == "Close" and self.actions[step].objects[0] in names)
        ]
        if held is not None and self._room_sought(block, later):
            return False  # looking for where to put what is in hand
        for step in later:
            action = self.actions[step]
            if action.verb == "ToggleOn" and action.objects[0] in names:
                return False  # switched on next: it was opened to see what it would cook
            if any(self._first_found(first, step, name) for name in self._sought(step)):
                return True
        return False

    def _room_sought(self, block: Collection[int], later: Sequence[int]) -> bool:
        """Whether what the Driver does next, other containers opened or closed aside, puts
        down what is in hand: right away, where room can be short (not on a counter or a
        table, unless the block opened containers of a kind the goal puts things in), or in a
        container of a kind the block opened (the mug held while cabinets are opened, then put
        in another cabinet)."""
        rest = [s for s in later if self.actions[s].verb not in ("Open", "Close")]
        if not rest or self.actions[rest[0]].verb != "PutAOnB":
            return False
        state = self.state_at(self.trace.position(rest[0]))
        place = state.kind_at(state.key(self.actions[rest[0]].objects[1]))
        opened = {self._kind_of(s, self.actions[s].objects[0]) for s in block}
        if self.actions[later[0]].verb == "PutAOnB":
            return place not in SURFACES or bool(opened & self._tail_kinds)
        return place is not None and place in opened

    def _sought(self, step: int) -> tuple[str, ...]:
        """The objects a step shows the Driver found: what it takes or slices, and what it puts
        or pours something onto when that can be carried (a plate, not a counter)."""
        action = self.actions[step]
        if action.verb in SOUGHT:
            return action.objects[:1]
        if action.verb in ("PutAOnB", "PourFromAIntoB"):
            state = self.state_at(self.trace.position(step))
            key = state.key(action.objects[1])
            if key is not None and state.get(key).can_pick is True:
                return action.objects[1:2]
        return ()

    def _first_found(self, first: int, step: int, name: str) -> bool:
        """Whether a step is where the plan first names an object after an order position, and
        the plan did not make it (a slice it cut: the Driver knows where that is)."""
        named = self._named.get(name)
        if named and named[0] <= first:
            return False
        pos = self.trace.position(step)
        return not self._made_by(self.state_at(pos).key(name), pos)

    def _only_looked_at(self, aside: Collection[int], opened: Collection[int]) -> bool:
        """Whether some steps, beside opening containers, only take out and set down objects
        that a search turns up by the way: each put back into a container the block opened
        (looked at), or of a kind the plan takes another of later (a look-alike: a knife found
        in the fridge, put aside, and another knife used). Else False, as when there are no
        such steps."""
        handled: dict[str, list[int]] = {}
        for step in sorted(aside, key=self.trace.position):
            action = self.actions[step]
            if action.verb in MOTION_VERBS:
                continue
            if action.verb not in ("PickUp", "PutAOnB"):
                return False
            handled.setdefault(action.objects[0], []).append(step)
        if not handled:
            return False
        last = max(self.trace.position(s) for s in aside)
        containers = {
            self.state_at(self.trace.position(s)).key(self.actions[s].objects[0])
            for s in opened
            if self.actions[s].verb == "Open"
        }
        later_kinds = {
            self._kind_of(step, self.actions[step].objects[0])
            for step in self.order[last + 1 :]
            if self.active(step)
            and self.actions[step].verb in SOUGHT
            and self.actions[step].objects[0] not in handled
        }
        for name, steps in handled.items():
            put_back = self.actions[steps[-1]].verb == "PutAOnB" and any(
                self._puts_into(steps[-1], key) for key in containers if key is not None
            )
            if not put_back and self._kind_of(steps[0], name) not in later_kinds:
                return False
        return True

    def _opened_for_a_removal(self, opener: int) -> bool:
        """Whether, in the plan as given, a step the search removed put into the container an
        input open step opens something brought from elsewhere, or took from it something the
        plan had put there, within `CLEARING_REACH` interactions and before the plan closes it
        again: the container was opened for that (the wrong object put away in a drawer), not to
        look for anything."""
        if opener >= self.n:
            return False
        name = self.actions[opener].objects[0]
        before = self.input_trace.before
        seen = 0
        for step in range(opener + 1, self.n):
            action = self.actions[step]
            if action.verb in MOTION_VERBS or action.is_dialogue:
                continue
            seen += 1
            if seen > CLEARING_REACH or (action.verb == "Close" and action.objects[0] == name):
                return False
            if step not in self.removed or action.verb not in ("PutAOnB", "PickUp"):
                continue
            state = before[step][0]
            key = state.key(action.objects[0])
            if key is None:
                continue
            container = state.key(name)
            if action.verb == "PutAOnB" and action.objects[-1] == name:
                taken = self._near_input(step, action.objects[0], "PickUp")
                came_from = before[taken][0].get(key).loc if taken is not None else None
                if came_from is not None and not _within(state, came_from, container):
                    return True  # brought from elsewhere to be put away there
            if action.verb == "PickUp" and _within(state, state.get(key).loc, container):
                put = self._near_input(step, action.objects[0], "PutAOnB")
                if put is not None and self.actions[put].objects[-1] == name:
                    return True  # taken back from where the plan had put it
        return False

    def _near_input(self, step: int, name: str, verb: str) -> int | None:
        """The nearest input step before `step` with this verb on `name`."""
        return next(
            (
                s
                for s in range(step - 1, -1, -1)
                if self.actions[s].verb == verb and self.actions[s].objects[:1] == (name,)
            ),
            None,
        )

    def _used_while_open(self, opener: int, ignoring: Collection[int] = ()) -> bool:
        """Whether anything is taken from, or put into, the container an open step opens
        before the plan closes it again (by a step not in `ignoring`)."""
        pos = self.trace.position(opener)
        name = self.actions[opener].objects[0]
        key = self.state_at(pos).key(name)
        for later in range(pos + 1, len(self.order)):
            action = self.actions[self.order[later]]
            if not self.active(self.order[later]) or not action.objects:
                continue
            if action.verb == "Close" and action.objects[0] == name:
                return False
            if self.order[later] in ignoring:
                continue
            if action.verb in ("PutAOnB", "PourFromAIntoB") and action.objects[-1] == name:
                return True
            if action.verb == "PickUp":
                now = self.state_at(later)
                taken = now.key(action.objects[0])
                where = now.get(taken).loc if taken is not None else None
                if _within(self.state_at(pos), where, key):
                    return True
                if where is None and self._next_interaction(pos) == self.order[later]:
                    return True  # from a place not known, first thing after the open: from it
        return False

    def _around_loading(self, block: Collection[int]) -> bool:
        """Whether a block switches a running device off and on again, with something loaded
        into or taken from what it acts on while it is off, or loaded right before, other
        switches aside (a mug put in a running coffee machine; a pan set on the stove, then two
        knobs switched off and on): what a careful person does, though the simulated device
        would have acted all along."""
        steps = sorted(block, key=self.trace.position)
        verbs = [self.actions[s].verb for s in steps]
        if verbs != ["ToggleOff", "ToggleOn"]:
            return False
        off, on = (self.trace.position(s) for s in steps)
        if not self._switched_back(off, block):
            return False
        if self._presumably_unloaded_while_off(off, on):
            return True
        state = self.state_at(off)
        device = state.key(self.actions[steps[0]].objects[0])
        if device is None:
            return False
        acted = set(self._acted_on(state, device)) | {device}
        before = self._previous_interaction(off)
        switch = self.actions[steps[0]].objects[0]
        while before is not None and self.actions[before].verb in ("ToggleOff", "ToggleOn"):
            if self.actions[before].objects[0] == switch:
                break
            before = self._previous_interaction(self.trace.position(before))  # other switches
        span = list(range(off + 1, on))
        if before is not None and self.actions[before].verb == "PutAOnB":
            span.insert(0, self.trace.position(before))  # only putting in: pouring loads nothing
        for pos in span:
            action = self.actions[self.order[pos]]
            if action.verb not in LOADING or not self.active(self.order[pos]):
                continue
            now = self.state_at(pos)
            target = action.objects[-1] if action.verb != "PickUp" else action.objects[0]
            key = now.key(target)
            place = now.get(key).loc if key is not None and action.verb == "PickUp" else key
            if place in acted or (place in now.objects and now.get(place).loc in acted):
                return True
        return False

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

    def _single_allowed(self, pos: int, *, blame: bool) -> bool:
        step = self.order[pos]
        action = self.actions[step]
        outcome = self.trace.outcomes[pos]
        if outcome.problem or outcome.changed is False:
            return True  # an impossible step, or one that changes nothing
        if blame or self._inert_switch(pos) or self._idle_switch_off(pos):
            return True
        return action.verb != "PutAOnB" and action.verb not in RESTORING

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
                    and self._round_trip(self.trace.position(step)) != block
                    and not self._placed_first(sorted(block, key=self.trace.position))
                ):
                    return False
        return True

    def _placed_first(self, steps: Sequence[int]) -> bool:
        """Whether a block is the first placement of an object placed again (`_placed_again`)
        whose move on cannot go as part of a transfer: of the two, the move is the detour
        where it can go (the salad moved onto a second plate), else the first placement (the
        bottle put in one cabinet, then gathered into another)."""
        taken = self._placed_again(steps)
        if taken is None:
            return False
        moved = self._transfer_through(taken)
        return moved is None or not self._removable(moved)

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

    def _handles_goal_objects(self, block: set[int]) -> bool:
        """Whether a block does something to an object of a kind the goal names (moves it,
        switches a device it is in, changes its state). Such steps serve the goal in ways a
        simulation cannot always show, so they only go when they change nothing, cannot
        happen, put the object down and take it back at once (a misplacement), or went into
        an instance the task does not count (`_wrong_instance`)."""
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
        if len(steps) == 4 and self._round_trip(positions[0]) == block:
            return False  # carried somewhere and back as it was
        if any(self._transfer(p) == block for p in positions[:3:2]):  # (after a fetch)
            return False  # moved on to another receptacle of the kind: left, it does as well
        if not any(self._touches_goal_objects(p) for p in positions):
            return False
        if self._looked_into(block):
            return False  # opened and closed again, nothing taken or put: nothing moved
        if self._one_too_many(steps) or self._as_it_was(steps) or self._placed_first(steps):
            return False
        if self._wrong_instance(steps):
            return False
        return not self._abandoned(steps, positions)

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
            # the receptacle must be used once this pick-up's object is put down (within the
            # block, where the block handles it again later), not only after the whole block
            done = self.trace.position(put) if put is not None and put in block else last
            if kind is None and place is None:
                if self._presumably_cleared(pos, key, put, done, block):
                    return True
                continue
            if (
                kind is not None
                and kind not in SURFACES
                and self._used_after(done, kind, place, block)
            ):
                return True
        return False

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


def _within(state: State, loc: str | None, container: str | None) -> bool:
    """Whether a location is in this container, directly or on something movable in it (a
    tomato on a plate in the cabinet: `State.shut_by`): the container's key, or "one of its
    type" (`SOME`) for what the scene places by type only."""
    places = (container, SOME + (state.kind_at(container) or ""))
    if loc is None or loc.startswith(SOME):
        return loc in places  # a place known by type holds nothing further up
    return state.shut_by(loc) in places
