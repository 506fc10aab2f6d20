"""The search: candidate blocks in plan order, blame for impossible steps, the removal sweep
(each block the keep rules let go, until a sweep removes nothing), and the reasons and evidence
of each verdict."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence

from planverify.records.notation import MOTION_VERBS, Action, object_type
from planverify.world.classes import types_of
from planverify.world.deadline import CHECK_EVERY
from planverify.world.goals import evaluate
from planverify.world.repair.insertion import Insertion
from planverify.world.repair.keep import LOADING, KeepRules
from planverify.world.repair.plan import MAX_ROUNDS
from planverify.world.repair.verdicts import Proposal, Removal, Review, steps_named
from planverify.world.rules import (
    Pose,
    cancels,
    compose,
    is_motion,
    poses,
    relative,
    same_pose,
    step_pose,
)
from planverify.world.trace import Variant, no_worse, score

MAX_RUN = 4  # the longest run of contiguous steps tried as one block
MAX_HANDLING = 6  # the most steps of one object's handling tried as one block
CARRYING = frozenset({"PickUp", "PutAOnB", "PourFromAIntoB"})  # what a whole handling does
RELOADS = 2  # the most removed loadings tried with a device switched around them


class Reviewer(KeepRules, Insertion):
    """The search over one plan."""

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
            handling = self._whole_handling(pos) if action.verb == "PickUp" else None
            if handling is not None:
                pairs.append(handling)
            yield from sorted(pairs + runs, key=len, reverse=True)
            trip = self._round_trip(pos) if action.verb == "PickUp" else None
            if trip is not None:  # after the rest: only when no part of it goes on its own
                yield trip
            moved = self._transfer(pos) if action.verb == "PickUp" else None
            if moved is not None:
                yield moved
            if self._single_allowed(pos, blame=blame):
                yield {step}

    def _whole_handling(self, pos: int) -> set[int] | None:
        """Every step on the object a first pick-up at an order position takes, when all of them
        carry it (pick-ups and put-downs, two pairs or three, and pouring it out when it ends
        as clean and empty as it began: `_as_it_was`): an object fetched, moved about and left
        aside (a slice too many put in the microwave and taken out again before it runs; a
        clean mug rinsed and emptied). None otherwise."""
        name = self.actions[self.order[pos]].objects[0]
        if self._near(pos, name, forward=False) is not None:
            return None
        steps = [self.order[p] for p in self._named.get(name, []) if p >= pos]
        if not 4 <= len(steps) <= MAX_HANDLING or not all(self.judged(s) for s in steps):
            return None
        if any(
            self.actions[s].verb not in CARRYING or self.actions[s].objects[0] != name
            for s in steps
        ):
            return None
        poured = any(self.actions[s].verb == "PourFromAIntoB" for s in steps)
        return None if poured and not self._as_it_was(steps) else set(steps)

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

    def remove_noop_motion(self) -> None:
        """Remove motion that leaves every later pose as it was, in each stretch of motion with
        no interaction inside (dialogue aside): a run that nets to no motion (a turn full
        circle, a move and the move back with only dialogue between, four sides of a square),
        and a motion and its inverse whose removal leaves the pose at the stretch's end as it
        was (`_noop_block`). Provable without positions: where removals brought the motion
        together, as sure as those removals."""
        found = False
        for stretch in self._motion_stretches():
            while (noop := self._noop_in([self.actions[s] for s in stretch])) is not None:
                block = [stretch[i] for i in noop[0]]
                why = self._noop_reason(block, run=noop[1])
                first, last = block[0], block[-1]
                between = [
                    self.grounds.get(s, (True, False))
                    for s in range(first + 1, last)
                    if s in self.removed
                ]
                grounds = (any(g[0] for g in between), all(g[1] for g in between))
                for step in block:
                    self.removed[step] = why
                    self.grounds[step] = grounds
                self.order = [s for s in self.order if s not in block]
                stretch = [s for s in stretch if s not in block]
                found = True
        if found:
            self._retrace()

    def _noop_in(self, motion: list[Action]) -> tuple[list[int], bool] | None:
        """`_noop_block`, remembered by the stretch's motion: the motion passes find the same
        stretches again where nothing between them went."""
        key = tuple((action.verb, action.amount) for action in motion)
        if key not in self._noop_memo:
            self._noop_memo[key] = _noop_block(motion)
        return self._noop_memo[key]

    def _motion_stretches(self) -> list[list[int]]:
        """The steps of motion (of known amount, that the search may remove) in each stretch of
        the order that holds nothing else but dialogue."""
        stretches: list[list[int]] = [[]]
        for step in self.order:
            action = self.actions[step]
            if self.judged(step) and is_motion(action):
                stretches[-1].append(step)
            elif not action.is_dialogue and stretches[-1]:
                stretches.append([])
        return [s for s in stretches if s]

    def _noop_reason(self, block: list[int], *, run: bool) -> str:
        """Why a block of motion goes (`run`: it is all the motion between its ends), named as
        it stands in the order before it goes."""
        actions = [self.actions[s] for s in block]
        if len(block) == 1:
            does = (
                "goes nowhere"
                if actions[0].verb == "Move"
                else "turns the Driver to face as it did"
            )
            return f"{actions[0]} ({steps_named(block)}) {does}: every later pose is the same"
        at = self.order.index(block[0])
        if len(block) == 2 and self.order[at + 1] == block[1] and cancels(*actions):
            if block[1] == block[0] + 1:
                return f"{actions[0]} is undone by the next step, {actions[1]}: the Driver ends where it started"
            return (
                f"{actions[0]} is undone by {actions[1]} ({steps_named(block)}) once the steps "
                "between them go: the Driver ends where it started"
            )
        shown = "; ".join(str(a) for a in actions)
        if not run:
            return (
                f"{actions[0]} is undone by {actions[1]} ({steps_named(block)}), and the motion "
                "between them ends the same without both: every later pose is the same"
            )
        between = self.order[at : self.order.index(block[-1]) + 1]
        dialogue = ", with only dialogue between them," if len(between) > len(block) else ""
        return (
            f"{steps_named(block)} ({shown}){dialogue} bring the Driver back to where it stood, "
            "facing the same way: every later pose is the same"
        )

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
                if not variant.fewer or not no_worse(variant.units, self.trace.units):
                    continue
                met, progress = score(variant.units)
                key = (
                    -met,
                    -progress,
                    variant.count,
                    len(block),
                    max(positions) - culprit,  # the cause before the symptom
                )
                if best is None or key < best[0]:
                    best = (key, block, variant)
            if best is None:
                return
            block = best[1]
            fixed = sorted(best[2].lost)
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
            block = self._later_alike(block) or block
            why = self._removal_reason(block)
            known = self._known_effects(block) and not self._presumed(block)
            grounds = (not self._goal_free(block), known)
            parts = self.trim_blocks(block)
            for step in block:
                if step in self.added:  # an insertion the removal makes needless
                    del self.added[step]
                    continue
                self.removed[step] = why
                self.removed_with[step] = min(block)
                self.grounds[step] = grounds
            for part, kind in parts:
                for step in (s for s in part if s < self.n):
                    self.trim_kinds[step] = (kind, min(part))
            start = min(self.trace.position(s) for s in block)
            for step in block:
                for name in self.actions[step].objects[:1]:
                    earlier = self._near(self.trace.position(step), name, forward=False)
                    if earlier is not None and earlier not in block:
                        start = min(start, self.trace.position(earlier))
            self._apply(block)
            start = min(start, len(self.order))
            removed = True

    def _later_alike(self, block: set[int]) -> set[int] | None:
        """A later block that does to another instance of the same type what a block that can go
        does to its object (a second tomato slice put on the plate after the first), when the two
        end in the same place and the later can go too with the block kept: of interchangeable
        instances, the one that came last is the one too many. (One that ends elsewhere, set
        aside, is no such twin: it is the wrong one.) None otherwise."""
        steps = sorted(block, key=self.trace.position)
        actions = [self.actions[s] for s in steps]
        names = {a.objects[0] for a in actions if a.objects}
        if len(names) != 1 or any(a.verb not in ("PickUp", "PutAOnB") for a in actions):
            return None
        name = names.pop()
        shape = [(a.verb, a.objects[1:]) for a in actions]
        for other in self.blocks(blame=False, start=self.trace.position(steps[-1]) + 1):
            if self.exhausted():
                return None
            theirs = [self.actions[s] for s in sorted(other, key=self.trace.position)]
            if [(a.verb, a.objects[1:]) for a in theirs] != shape:
                continue
            named = {a.objects[0] for a in theirs}
            if len(named) != 1 or name in named:
                continue
            twin = named.pop()
            alike = object_type(twin) == object_type(name) and self._end_together(name, twin)
            if alike and self._removable(other):
                return other
        return None

    def _end_together(self, name: str, other: str) -> bool:
        """Whether two objects end the plan in the same place."""
        end = self.trace.final[0]
        keys = end.key(name), end.key(other)
        if keys[0] is None or keys[1] is None:
            return False
        return end.get(keys[0]).loc == end.get(keys[1]).loc

    def put_back(self) -> None:
        """Make the plan `natural`'s: put back each removed block of a kind the trim table keeps
        (`NATURAL_KEEPS`), where the plan with it still runs and meets the goal no less. Its
        steps stay removals of `minimal` (`optional`, with their kind). The blocks are tried in
        plan order, and those that could not go back are tried again once others went back,
        until a pass puts back none or the work budget is spent: a block is read in the plan
        with the others back (a search of one cabinet among several is a search once the rest
        are back too). A second simulation only where such a block was removed."""
        blocks: dict[int, list[int]] = {}
        for step, (_, block) in self.trim_kinds.items():
            if step in self.removed and step not in self.optional:
                blocks.setdefault(block, []).append(step)
        switched: list[list[int]] = []  # device pairs put back as found
        pending = sorted(blocks.values(), key=min)
        while pending:
            left = [steps for steps in pending if not self._put_back_block(steps, switched)]
            if len(left) == len(pending) or self.exhausted():
                break
            pending = left
        self._unpair_undone(sorted(switched, key=min))

    def _put_back_block(self, steps: list[int], switched: list[list[int]]) -> bool:
        """Put one removed block of a kind the trim table keeps back, with the set-down around
        it (`making_room`) or a loading it switched around (`device_around_loading`) where it
        cannot go back alone; whether it went back. Device pairs put back alone join
        `switched`."""
        kind = self.trim_kinds[steps[0]][0]
        if self._restore(steps, kind):
            if kind == "device_around_loading":
                switched.append(steps)
            return True
        if kind == "making_room":
            freed = self._set_down_around(steps)
            return bool(freed) and self._restore(steps + freed, kind)
        if kind == "device_around_loading":
            return any(
                self._restore(steps + loading, kind, read=steps, needed=loading)
                for loading in self._loadings_within(steps)[:RELOADS]
            )
        return False

    def _unpair_undone(self, switched: list[list[int]]) -> None:
        """Take out again the inner switches of two device pairs put back one after the other,
        when they undo each other in `natural`'s plan (a faucet off before loading and on for
        a rinse the search removed, then off and on again at the end): a switch-on and the next
        switch-off of the same switch, no step the plan keeps between them, that the plan does
        without while the outer two still switch around loading. Left in, `natural`'s plan
        would switch the device on and straight off again with nothing done between: a block
        that undoes itself, which no trim policy keeps."""
        first: list[int] | None = None  # the pair before, as it stands once unpaired
        for then in switched:
            if first is None or not self._undone_between(max(first), min(then)):
                first = then
                continue
            on, off = max(first), min(then)
            inner = {on, off}
            if not self._acceptable(self.sim.without(self.trace, inner, strict=True), inner):
                first = then
                continue
            before = self.order, self.trace
            self.order = [s for s in self.order if s not in inner]
            self._retrace()
            outer = {min(first), max(then)}
            if (outer, "device_around_loading") not in self.trim_blocks(outer):
                self._follow(*before)
                first = then
                continue
            first = sorted(outer)
            why = self._removal_reason(inner)
            for step in inner:
                del self.optional[step]
                self.removed[step] = why
                self.removed_with[step] = on
                self.trim_kinds.pop(step, None)

    def _undone_between(self, on: int, off: int) -> bool:
        """Whether a switch-on and a later switch-off of the same switch stand in the plan with
        no active step between them (motion and dialogue aside)."""
        ends = self.actions[on], self.actions[off]
        if (ends[0].verb, ends[1].verb) != ("ToggleOn", "ToggleOff") or not on < off:
            return False
        if ends[0].objects[:1] != ends[1].objects[:1]:
            return False
        return self._next_interaction(self.trace.position(on)) == off

    def _loadings_within(self, switches: Sequence[int]) -> list[list[int]]:
        """The removed blocks (not put back) that load or unload something between a switch-off
        and its switch-on, the one nearest the switch-on first."""
        off, on = min(switches), max(switches)
        blocks: dict[int, list[int]] = {}
        for step, first in self.removed_with.items():
            if step < self.n and step not in self.optional and step not in switches:
                blocks.setdefault(first, []).append(step)
        within = [
            sorted(block)
            for block in blocks.values()
            if any(off < s < on for s in block)
            and any(self.actions[s].verb in LOADING for s in block)
        ]
        return sorted(within, key=lambda block: -max(s for s in block if s < on))

    def _restore(
        self,
        steps: list[int],
        kind: str,
        *,
        read: Sequence[int] | None = None,
        needed: Sequence[int] = (),
    ) -> bool:
        """Put removed steps back as optional of `kind`, if the plan with them still runs, meets
        the goal no less, and the trim table still reads them (or the part `read`) as that
        kind; and, once back, the plan cannot do without the steps `needed`."""
        if any(step in self.optional for step in steps):
            return False
        order = self._order_with(steps)
        trace = self.sim.trace(order, reuse=self.trace)
        if trace.impossible - self.trace.impossible or not no_worse(trace.units, self.trace.units):
            return False
        before = self.order, self.trace
        self._follow(order, trace)
        read = steps if read is None else read
        if (set(read), kind) not in self.trim_blocks(read) or (  # what made it so went too
            needed and self._acceptable(self.sim.without(trace, set(needed), strict=True), set())
        ):
            self._follow(*before)
            return False
        for step in steps:
            self.optional[step] = kind
        return True

    def _set_down_around(self, steps: Collection[int]) -> list[int]:
        """The removed put-down right before some steps and the removed pick-up right after
        them, of one object (motion and dialogue aside): what the Driver held, set down to
        have the hands free for them. Else empty."""
        ours = set(steps)

        def neighbour(step: int, forward: bool) -> int | None:
            span = range(step + 1, self.n) if forward else range(step - 1, -1, -1)
            for other in span:
                action = self.actions[other]
                if other not in ours and action.verb not in MOTION_VERBS and not action.is_dialogue:
                    return other
            return None

        put, pick = neighbour(min(ours), False), neighbour(max(ours), True)
        if put is None or pick is None or {put, pick} & self.optional.keys():
            return []
        if put not in self.removed or pick not in self.removed:
            return []
        down, up = self.actions[put], self.actions[pick]
        if (down.verb, up.verb) != ("PutAOnB", "PickUp") or down.objects[0] != up.objects[0]:
            return []
        return [put, pick]

    def _order_with(self, steps: Collection[int]) -> list[int]:
        """The order with removed input steps back where they stood (before the first input
        step after them; insertions that follow the input step before them stay before)."""
        order = list(self.order)
        for step in sorted(steps):
            at = next(
                (i for i, s in enumerate(order) if s < self.n and s > step),
                len(order),
            )
            order.insert(at, step)
        return order

    def _minimal_motion(self) -> None:
        """After `natural`'s motion pass: the motion that goes once the put-back blocks go too
        is `minimal`'s alone, of the kind of the put-back step nearest it; the order returns
        to `natural`'s (every step it removes is optional), and so does the trace."""
        natural, trace, before = self.order, self.trace, set(self.removed)
        self.order = [s for s in natural if s not in self.optional]
        self.remove_noop_motion()  # (it reads the order, not the trace)
        put = sorted(self.optional)
        for step in set(self.removed) - before:
            nearest = min(put, key=lambda s: abs(s - step))
            self.optional[step] = self.optional[nearest]
        self._follow(natural, trace)

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
        met = [u.text for u in self.sim.judge(self.trace.final[0]) if u.met is True]
        listed = [text for text in dict.fromkeys(met) if text not in start]  # the spec's order
        pending = set(listed)
        for pos in range(len(self.order) - 1, -1, -1):
            if not pending:
                break
            if pos % CHECK_EVERY == 0 and self.sim.deadline is not None:
                self.sim.deadline.check()
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
            for text in [t for t in listed if t in pending and before.get(t) is not True]:
                by[text] = step
                pending.discard(text)
        return by

    def review(self) -> Review:
        self.remove_noop_motion()
        self.complete_switches()
        self.add_missing(goal=False)  # what impossible steps lack (a closed fridge opened)
        self.blame()  # before steps are added for the goal: the cause goes, not a second copy
        self.replace_misplaced()
        self.add_missing()
        self.remove()
        if self.prune_added():
            self.remove()  # what the pruned steps gave an effect to may now go
        self.put_back()
        self.remove_noop_motion()  # motion the removals left with no interaction between
        if self.optional:
            self._minimal_motion()
        result = Review(units=list(self.trace.units), cut_short=self.exhausted())
        groups: dict[tuple[str, str | None], list[int]] = {}
        for step, why in self.removed.items():
            groups.setdefault((why, self.optional.get(step)), []).append(step)
        evidence = self._evidence() if any("still holds" in why for why, _ in groups) else {}
        cited = "; ".join(
            f"{text}, by step {self._input_number(step)}"
            for text, step in list(evidence.items())[:2]
        )
        for (why, kind), steps in groups.items():
            if cited and why.endswith("still holds"):
                why = f"{why}: {cited}"
            uses_goal = any(self.grounds.get(s, (True, False))[0] for s in steps)
            known = all(self.grounds.get(s, (True, False))[1] for s in steps)
            result.removals.append(Removal(tuple(sorted(steps)), why, uses_goal, known, kind))
        result.removals.sort(key=lambda r: r.steps)
        for step, (after, why) in self.added.items():
            uses_goal, known = self.grounds.get(step, (True, False))
            action = str(self.actions[step])
            result.proposals.append(Proposal(action, after, why, uses_goal, known))
        return result


def _noop_block(motion: Sequence[Action]) -> tuple[list[int], bool] | None:
    """Which of a stretch's steps of motion (no interaction among them) go, leaving the pose at
    its end as it was, and whether they are a whole run; None when none may. First the longest
    run that nets to no motion (the earliest of equal ones); else a motion and its inverse, the
    nearest first, whose removal leaves the pose at the end as it was (a move and the move back
    with only moves or whole turns between, a turn and the turn back with only turns between).
    Translation and rotation do not commute: Move(1) TurnLeft(90) Move(-1) TurnRight(90) ends a
    metre off, and none of it goes."""
    pose = poses(motion)
    first: dict[Pose, int] = {}
    best: tuple[int, int] | None = None
    for end, here in enumerate(pose):
        start = first.setdefault(here, end)
        if start < end and (best is None or end - start > best[1] - best[0]):
            best = (start, end)
    if best is not None:
        return list(range(*best)), True
    steps = [step_pose(a) for a in motion]
    # a move and a turn undo each other only if both are next to nothing: pair like with like
    turns = [step.heading != 0 for step in steps]
    tiny = [same_pose(step, Pose()) for step in steps]
    for gap in range(2, len(motion)):
        for i in range(len(motion) - gap):
            j = i + gap
            if turns[i] != turns[j] and not (tiny[i] or tiny[j]):
                continue
            if not same_pose(compose(steps[i], steps[j]), Pose()):
                continue
            between = relative(pose[i + 1], pose[j])
            rest = relative(pose[j + 1], pose[-1])
            if same_pose(compose(compose(pose[i], between), rest), pose[-1]):
                return [i, j], False
    return None


def _gist(action: Action) -> str:
    """A step in a few words: "PickUp Apple", "PutAOnB Apple on DiningTable"."""
    if action.verb == "PutAOnB":
        return f"puts {action.objects[0]} on {action.objects[1]}"
    if action.verb == "PourFromAIntoB":
        return f"pours {action.objects[0]} into {action.objects[1]}"
    words = {"PickUp": "picks up", "ToggleOn": "switches on", "ToggleOff": "switches off"}
    verb = words.get(action.verb, action.verb.lower())
    return f"{verb} {' '.join(action.objects)}".strip()
