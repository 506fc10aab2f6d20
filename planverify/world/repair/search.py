"""The search: candidate blocks in plan order, blame for impossible steps, the removal sweep
(each block the keep rules let go, until a sweep removes nothing), and the reasons and evidence
of each verdict."""

from __future__ import annotations

from collections.abc import Collection, Iterator

from planverify.records.notation import MOTION_VERBS, Action
from planverify.world.classes import types_of
from planverify.world.deadline import CHECK_EVERY
from planverify.world.goals import evaluate
from planverify.world.repair.insertion import Insertion
from planverify.world.repair.keep import KeepRules
from planverify.world.repair.plan import MAX_ROUNDS
from planverify.world.repair.verdicts import Proposal, Removal, Review, steps_named
from planverify.world.rules import cancels
from planverify.world.trace import Variant, no_worse, score

MAX_RUN = 4  # the longest run of contiguous steps tried as one block


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


def _gist(action: Action) -> str:
    """A step in a few words: "PickUp Apple", "PutAOnB Apple on DiningTable"."""
    if action.verb == "PutAOnB":
        return f"puts {action.objects[0]} on {action.objects[1]}"
    if action.verb == "PourFromAIntoB":
        return f"pours {action.objects[0]} into {action.objects[1]}"
    words = {"PickUp": "picks up", "ToggleOn": "switches on", "ToggleOff": "switches off"}
    verb = words.get(action.verb, action.verb.lower())
    return f"{verb} {' '.join(action.objects)}".strip()
