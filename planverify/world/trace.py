"""Simulating a plan and its variants: the states before every step, which steps are impossible,
and how far the goal is met at the end.

A variant without some steps is simulated from the state before its first change only, and
stops as soon as its state is again the same as the full plan's at that point: from there on
both run the same steps on the same state, so the rest is known without simulating it.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from planverify.records.notation import Action
from planverify.world.deadline import CHECK_EVERY, current
from planverify.world.goals import GoalSpec, Unit, evaluate
from planverify.world.rules import Outcome, apply
from planverify.world.state import State

Judge = Callable[[State], list[Unit]]  # what a final state meets of the goal


@dataclass
class Trace:
    """A simulated sequence of steps (ids into the plan's step list), in every world simulated
    (the world as known, and where states are unknown, the world where nothing is done yet)."""

    order: list[int]  # the steps run, in order
    before: list[list[State]]  # per position: the state before that step, in each world
    outcomes: list[Outcome]  # what each step did (in the world as known)
    final: list[State]  # the states after the last step, per world
    units: list[Unit]  # how far the goal is met at the end, all worlds' conditions in a row
    impossible: frozenset[int] = field(default_factory=frozenset)  # steps that cannot happen
    positions: dict[int, int] = field(default_factory=dict)  # step -> its position
    impossible_at: list[int] = field(default_factory=list)  # their positions, in order

    def __post_init__(self) -> None:
        self.positions = {step: pos for pos, step in enumerate(self.order)}
        self.impossible_at = sorted(self.positions[s] for s in self.impossible)

    def position(self, step: int) -> int:
        return self.positions[step]


@dataclass
class Variant:
    """What a variant of a traced sequence comes to (without some of its steps), against the
    trace: which steps cannot happen in it that could in the trace, and the other way round.
    (A strict variant that stopped at a step that newly cannot happen tells only the steps up to
    there.)"""

    gained: frozenset[int]  # steps that cannot happen in it, and could in the trace
    lost: frozenset[int]  # steps that cannot happen in the trace, and can (or are left out) in it
    count: int  # how many steps cannot happen in it
    units: list[Unit]  # how far the goal is met at its end

    @property
    def fewer(self) -> bool:
        """Whether its impossible steps are some of the trace's, not all."""
        return not self.gained and bool(self.lost)


def rank(met: bool | None) -> int:
    return 2 if met is True else (1 if met is None else 0)


def no_worse(candidate: Sequence[Unit], reference: Sequence[Unit]) -> bool:
    """Whether every goal condition is met at least as well: what holds still holds, and what
    does not hold has made no less progress."""
    for new, old in zip(candidate, reference, strict=True):
        if rank(new.met) < rank(old.met):
            return False
        if old.met is not True and new.progress < old.progress:
            return False
    return True


def better(candidate: Sequence[Unit], reference: Sequence[Unit]) -> bool:
    """Whether some goal condition is met better, and none worse."""
    return no_worse(candidate, reference) and any(
        rank(n.met) > rank(o.met) or n.progress > o.progress
        for n, o in zip(candidate, reference, strict=True)
    )


def score(units: Sequence[Unit]) -> tuple[int, int]:
    """How well a goal is met: conditions met, then progress (for ranking alternatives)."""
    return sum(rank(u.met) for u in units), sum(u.progress for u in units)


def goal_judge(spec: GoalSpec) -> Judge:
    """What a final state meets of a goal spec."""
    return lambda state: evaluate(spec, state)


def ending(state: State, key: str) -> tuple[object, ...] | None:
    """What matters of how an object ends: its states and the kind of place it is in."""
    obj = state.objects.get(key)
    if obj is None:
        return None
    return (
        obj.present,
        obj.dirty,
        obj.liquid,
        obj.cooked,
        obj.boiled,
        obj.sliced,
        obj.on,
        obj.open,
        state.kind_at(obj.loc),
    )


def preserving_judge(keys: Sequence[str], reference: State) -> Judge:
    """For a plan without a goal spec: each of these objects must end as the plan leaves it."""
    wanted = {key: ending(reference, key) for key in keys}

    def judge(state: State) -> list[Unit]:
        return [
            Unit(key, f"{key} ends as the plan leaves it", ending(state, key) == wanted[key])
            for key in keys
        ]

    return judge


def _shared_end(first: Sequence[int], second: Sequence[int], start: int) -> int:
    """How many steps two sequences end with alike (not reaching into `second`'s first
    `start` steps)."""
    k = 0
    while k < len(second) - start and k < len(first) and first[-1 - k] == second[-1 - k]:
        k += 1
    return k


def _same(states: Sequence[State], others: Sequence[State]) -> bool:
    """Whether two sets of world states agree (what is held and every object)."""
    return all(
        s.held == o.held and s.objects == o.objects for s, o in zip(states, others, strict=True)
    )


def _against(
    trace: Trace, first: int, stop: int, failed: Collection[int], units: list[Unit]
) -> Variant:
    """A variant that ran the order positions from `first` up to `stop` (`failed`: the steps
    run there that cannot happen), told against the trace: only the trace's impossible steps in
    that stretch are looked at, so a long plan's many cost nothing elsewhere."""
    stretch = trace.impossible_at[
        bisect.bisect_left(trace.impossible_at, first) : bisect.bisect_left(
            trace.impossible_at, stop
        )
    ]
    lost = frozenset(s for s in (trace.order[p] for p in stretch) if s not in failed)
    gained = frozenset(s for s in failed if s not in trace.impossible)
    return Variant(gained, lost, len(trace.impossible) - len(lost) + len(gained), units)


def _shared_start(first: Sequence[int], second: Sequence[int]) -> int:
    """How many steps two sequences start with alike."""
    for k, (a, b) in enumerate(zip(first, second, strict=False)):
        if a != b:
            return k
    return min(len(first), len(second))


class Simulator:
    """Runs a plan's steps (and variants of it) from its initial states: the world as known,
    and, when some states are unknown, also the world where nothing the goal wants is done yet
    (`possible`, e.g. with devices off, and with them on): a step the goal needs shows
    there even when the real outcome is unknown."""

    def __init__(
        self,
        steps: Sequence[Action],
        start: State,
        judge: Judge,
        possible: Sequence[State] = (),
    ) -> None:
        self.steps = list(steps)
        self.starts = [start, *possible]
        self.judge = judge
        self.work = 0  # step updates so far, over all worlds: what a search is budgeted in
        self.deadline = current()  # checked as long runs go (`planverify.world.deadline`)

    def _units(self, states: Sequence[State]) -> list[Unit]:
        """The goal conditions in every world, the world as known first (`known_units`). The
        Driver's hands are not among them: TEACh never asks for empty hands."""
        return [unit for state in states for unit in self.judge(state)]

    def known_units(self, units: Sequence[Unit]) -> list[Unit]:
        """Of all worlds' conditions, those of the world as known."""
        return list(units[: len(units) // len(self.starts)])

    def trace(self, order: Sequence[int], reuse: Trace | None = None) -> Trace:
        """Run a sequence of steps. `reuse`: an earlier trace whose states and outcomes hold for
        the steps the two sequences start with (its work is counted again all the same, so that
        a search's budget does not depend on what was reused)."""
        self.work += len(order) * len(self.starts)
        shared = 0 if reuse is None else _shared_start(reuse.order, order)
        if reuse is not None and shared:
            source = reuse.before[shared] if shared < len(reuse.order) else reuse.final
            states = [state.copy() for state in source]
            before = reuse.before[:shared]
            outcomes = reuse.outcomes[:shared]
        else:
            states = [start.copy() for start in self.starts]
            before, outcomes = [], []
        # the steps both sequences end with: once the states agree again before one of them,
        # the rest of the earlier trace holds as it is (a removal that changed nothing lasting)
        ending = 0 if reuse is None else _shared_end(reuse.order, order, shared)
        offset = 0 if reuse is None else len(reuse.order) - len(order)
        final: tuple[list[State], list[Unit]] | None = None
        deadline = self.deadline
        known, others, steps = states[0], states[1:], self.steps
        for pos in range(shared, len(order)):
            if deadline is not None and pos % CHECK_EVERY == 0:
                deadline.check()
            if (
                reuse is not None
                and pos >= len(order) - ending
                and _same(states, reuse.before[pos + offset])
            ):
                before += reuse.before[pos + offset :]
                outcomes += reuse.outcomes[pos + offset :]
                final = reuse.final, reuse.units
                break
            action = steps[order[pos]]
            before.append([state.copy() for state in states] if others else [known.copy()])
            outcomes.append(apply(known, action))
            for state in others:
                apply(state, action)
        ends, units = final if final is not None else (states, self._units(states))
        impossible = frozenset(s for s, o in zip(order, outcomes, strict=True) if o.problem)
        return Trace(list(order), before, outcomes, ends, units, impossible)

    def settles(self, trace: Trace, block: Collection[int]) -> bool:
        """Whether the trace's sequence without `block` is back in the full sequence's state
        right after the block's last step: taken as a whole, the block changes nothing that
        lasts (a put-down and the pick-up that takes the object back, an open and its close)."""
        positions = sorted(trace.position(s) for s in block)
        first, last = positions[0], positions[-1]
        states = [state.copy() for state in trace.before[first]]
        for step in trace.order[first : last + 1]:
            if step not in block:
                self.work += len(states)
                for state in states:
                    apply(state, self.steps[step])
        after = trace.before[last + 1] if last + 1 < len(trace.order) else trace.final
        return _same(states, after)

    def without(
        self,
        trace: Trace,
        block: set[int],
        extra: dict[int, list[int]] | None = None,
        *,
        strict: bool = False,
    ) -> Variant:
        """The trace's sequence without the steps in `block` (and with the steps `extra` maps a
        position to inserted right before it). `strict`: stop at the first step that becomes
        impossible (the variant then lists it, and its units are the trace's)."""
        extra = extra or {}
        positions = [trace.position(s) for s in block] + list(extra)
        first, last = min(positions), max(positions)
        source = trace.before[first] if first < len(trace.order) else trace.final
        states = [state.copy() for state in source]
        failed: set[int] = set()  # the steps run that cannot happen

        def run(step: int) -> bool:
            """Run a step in every world; whether it newly cannot happen."""
            self.work += len(states)
            new = False
            if apply(states[0], self.steps[step]).problem:
                failed.add(step)
                new = step not in trace.impossible
            for state in states[1:]:
                apply(state, self.steps[step])
            return new

        def variant(stop: int, units: list[Unit]) -> Variant:
            """The variant, run from `first` up to the order position `stop`: beyond, the trace
            holds (or, for a strict variant that stopped, is not told)."""
            return _against(trace, first, stop, failed, units)

        deadline = self.deadline
        for pos in range(first, len(trace.order)):
            if deadline is not None and (pos - first) % CHECK_EVERY == CHECK_EVERY - 1:
                deadline.check()
            for inserted in extra.get(pos, []):
                if run(inserted) and strict:
                    return variant(pos, trace.units)
            step = trace.order[pos]
            if step in block:
                continue
            if pos > last and _same(states, trace.before[pos]):
                return variant(pos, trace.units)
            if run(step) and strict:
                return variant(pos + 1, trace.units)
        for inserted in extra.get(len(trace.order), []):
            run(inserted)
        return variant(len(trace.order), self._units(states))
