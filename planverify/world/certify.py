"""Checking another Judge's flags and a Planner's insertions by simulation (`certify`).

A flag is vetoed for what the simulation shows: without it (and what goes with it) a step of
the plan becomes impossible, a goal condition the plan meets is lost, or the plan makes less
progress toward one. The rules Judge's policies for its own search (an object picked up and put
down is not touched again, clearing a receptacle is preparation, an object the goal is about is
handled with care) are its own caution, not evidence against another Judge's flag: on the
tuning seeds (1 and 2 of both generators) they would have vetoed right flags of the perfect Judge
(`benchmarks/certify_fidelity.py`): "goal" 142 of 1037 injected ones, "preparation" 2, and the
pick-up rule is what kept a Judge from removing a knife's mistaken put-down with the pick-up
before it. Three rules stay, the first two measured on seeds 3 to 5, which they were not tuned
on:

- **No pair left half done** (`Reviewer.half_done`): a close or a switch-off goes with the open or
  switch-on it undoes (or, where the plan never changed the thing, not while the plan uses it),
  an open or a switch-on with what undoes it, pouring a vessel out into a basin with its pick-up.
  Removing half a pair changes how the world ends in a way no goal condition sees (a fridge left
  open), and a model Judge that flags one half is wrong far more often than right: the noisy
  Judge of `benchmarks/certify_effect.py` (0.3 of every interaction flagged) gets 381 false
  removals through without the rule and 250 with it (injected), 477 and 348 (natural), and the
  rule vetoes none of the perfect Judge's 1517 and 1676 flags. Put-downs are left to the
  simulation: a wrong put-down alone is a right flag when removing it makes a later step possible
  (a plan that puts the object down twice); the put-down half of the rule vetoed 65 of 1136 right
  flags on natural seeds 1 and 2, and no false one the simulation accepts.
- **Completions change nothing** (`_Decision.completes`): a block may take in a step the Judge did
  not flag (a wrongly placed object's re-pickup, an open's close) only when, as a whole, it leaves
  nothing changed that lasts (`Simulator.settles`). A flagged pick-up is not completed with a
  put-down somewhere else: that would move an object the Judge said nothing about. Completing
  every block let 456 of the noisy Judge's false removals through instead of 250 (injected),
  566 instead of 348 (natural), and vetoed no perfect flag either way.
- **Every accepted block pulls its weight** (`_Decision.pulling_weight`, version 4): a block is
  taken out of the accepted set when the plan without the others alone is better than with it
  too (fewer steps that cannot happen, or the goal met better): a pick-up flagged with the wrong
  put-down after it keeps the next put-down impossible, which the wrong put-down alone would
  mend. On all five seeds under `natural` it cut the noisy Judge's false removals on the natural
  generator from 306 to 242 and vetoed none of the perfect Judge's flags.

Each flag may go as one of a few blocks (`_options`): alone; with the object's next or previous
step when that is flagged too; completed with the step that undoes it (a pick-up's put-down, an open's
close, a switch-on's switch-off); as a put-down with the pick-up that takes the object back, or
the other way round, whatever follows; with the other flagged steps on its object. The decision
is joint: the largest set of flags whose blocks can go together is accepted, ties broken toward
the earliest steps (then the fewest steps the Judge did not flag). Every union of the candidate
blocks is tried while there are at most `EXACT_LIMIT` of them, and blocks are added greedily in
plan order beyond, within the review's `WORK_BUDGET`. Accepted flags keep the Judge's reasons
(a step that completes a block says which flag it goes with), and the decision names the joint
check they passed (`Certified.check`); a vetoed flag names the smallest set that fails (its own
block of flagged steps, then with the fewest accepted blocks) and why. An insertion is vetoed when it
cannot happen where it is placed, or changes nothing because its effect already holds.

**The trim policy (version 3; 4 when the table gained tidying and microwave searches; 5 when it
gained freeing the hands; 6 when it gained making room, and searches that found a look-alike set
aside again; 7 when a switch paired both ways went with its plain neighbour; 8 when a close and
an open with only accepted steps between them stopped counting as tidying).** The principle above
(the rules Judge's own caution is no evidence against another Judge) holds under `minimal`. Under
`natural`, the default, an accepted block of a kind the trim table keeps
(`planverify.world.repair.keep.NATURAL_KEEPS`: a search, a running device switched off and on around
loading, a container closed after use and opened again, an object set down to free the hands, room
made for what the goal is about or where it puts things) is vetoed, with the kind as the reason: the
policy defines what is noise, so a model Judge is held to the same definition as the rules Judge.
The table is read through the same `trim_blocks` as the search's put-back, so both agree; the
accepted flags count as gone there, as the search's removals do. A switch
the flags pair both ways, with a neighbour into a block of no kind (switched on and straight off
again) and with another into one of a kind (off and on around loading), goes with its neighbour: the
noisy Judge's flags around a tap run for nothing had made the whole run look like care, and vetoed
true flags (on the injected set, removal recall lost 1.6 points; 0.3 now).

>>> from planverify.records.critique import Critique, Flag
>>> from planverify.world import ground
>>> plan = ["Driver.PickUp('Cup')", "Driver.PutAOnB('Cup', 'SinkBasin')",
...         "Driver.ToggleOn('Faucet')", "Driver.PickUp('Cup')",
...         "Driver.PourFromAIntoB('Cup', 'HousePlant')", "Driver.PutAOnB('Cup', 'CounterTop')"]
>>> grounding = ground("Water the plant.", [], None, task=None, teach_task=None)
>>> critique = Critique(flags=[Flag(step=4, action=plan[4], reason="not needed")])
>>> certified = certify_flags(plan, critique, grounding)
>>> certified.critique.flags, certified.vetoes[0].reason
([], 'removing step 5 loses: a HousePlant that is filled with liquid')
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import NamedTuple

from planverify.records.critique import Critique, Flag, Veto
from planverify.records.notation import parse_action
from planverify.records.trim import DEFAULT_TRIM, TrimPolicy
from planverify.world import Grounding, simulate
from planverify.world.goals import Unit
from planverify.world.repair import WORK_BUDGET, Reviewer, steps_named
from planverify.world.repair.keep import NATURAL_KEEPS
from planverify.world.trace import better, rank, score

CERTIFY_VERSION = "10"  # changes whenever certify can decide a flag or an insertion otherwise
EXACT_LIMIT = 12  # candidate blocks up to which every union of them is tried (2**12 at most)
PARTNERS = {"PickUp": "PutAOnB", "Open": "Close", "ToggleOn": "ToggleOff"}

Steps = frozenset[int]


def _options(reviewer: Reviewer, step: int, flagged: Steps) -> list[Steps]:
    """The blocks a flag may go as: alone; with the object's very next (or previous) step when
    that is flagged too; completed with the step that undoes it (a pick-up's put-down, an
    open's close); a put-down with the pick-up that takes the object back, whatever follows
    (`_taken_back`); with every flagged step on the object."""
    action = reviewer.actions[step]
    options = [frozenset({step})]
    if not action.objects:
        return options
    pos = reviewer.trace.position(step)
    name = action.objects[0]
    for forward in (True, False):
        then = reviewer._near(pos, name, forward=forward)
        if then is not None and then in flagged:
            options.append(frozenset({step, then}))
    partner_verb = PARTNERS.get(action.verb)
    if partner_verb is not None:
        partner = reviewer._near(pos, name, {action.verb, partner_verb}, forward=True)
        if partner is not None and reviewer.actions[partner].verb == partner_verb:
            options.append(frozenset({step, partner}))
    taken_back = _taken_back(reviewer, step)
    if taken_back is not None:
        options.append(taken_back)
    same = {s for s in flagged if s != step and reviewer.actions[s].objects[:1] == (name,)}
    if len(same) > 1:
        options.append(frozenset({step, *same}))
    return list(dict.fromkeys(options))


def _taken_back(reviewer: Reviewer, step: int) -> Steps | None:
    """For a flagged put-down, it and the pick-up that next takes its object back; for a
    flagged pick-up, it and the put-down it takes the object back from."""
    action = reviewer.actions[step]
    if action.verb not in ("PutAOnB", "PickUp"):
        return None
    name = action.objects[0]
    moves = {"PutAOnB", "PickUp"}
    if action.verb == "PutAOnB":
        again = reviewer._near(reviewer.trace.position(step), name, moves, forward=True)
        if again is None or reviewer.actions[again].verb != "PickUp":
            return None
        return frozenset({step, again})
    put = reviewer._near(reviewer.trace.position(step), name, moves, forward=False)
    if put is None or reviewer.actions[put].verb != "PutAOnB":
        return None
    return frozenset({put, step})


def _half_done(reviewer: Reviewer, steps: Steps) -> str | None:
    """Why removing these steps would leave a pair half done, put-downs aside (see the module
    docstring), or None."""
    for step in sorted(steps):
        if reviewer.actions[step].verb != "PutAOnB":
            why = reviewer.half_done(step, steps)
            if why is not None:
                return why
    return None


class _Decision:
    """The joint decision over one critique's flags (see the module docstring)."""

    def __init__(self, reviewer: Reviewer, flagged: Steps) -> None:
        self.reviewer = reviewer
        self.flagged = flagged
        self.options = {
            step: [b for b in _options(reviewer, step, flagged) if self.completes(b)]
            for step in sorted(flagged)
        }
        every = {block for blocks in self.options.values() for block in blocks}
        # a block that is the union of smaller candidates offers no set of steps of its own
        self.candidates = sorted(
            (b for b in every if frozenset().union(*(c for c in every if c < b)) != b),
            key=self._plan_order,
        )
        self.blocks = sorted(every, key=self._plan_order)
        self._memo: dict[Steps, bool] = {}
        self.pulled: set[int] = set()  # steps `pulling_weight` took out of an accepted set
        self._outcomes: dict[Steps, tuple[int, list[Unit]]] = {}

    def completes(self, block: Steps) -> bool:
        """Whether a block may go: it holds only flagged steps, or what it adds to them makes
        it, as a whole, change nothing that lasts (see the module docstring)."""
        return block <= self.flagged or self.reviewer.sim.settles(self.reviewer.trace, block)

    def _plan_order(self, block: Steps) -> tuple[int, int, int, list[int]]:
        return (min(block), len(block - self.flagged), -len(block), sorted(block))

    def rank(self, steps: Steps) -> tuple[int, list[int], int, list[int]]:
        """Smaller is better: more flags accepted, earlier ones, fewer steps nobody flagged."""
        accepted = sorted(steps & self.flagged)
        return (-len(accepted), accepted, len(steps) - len(accepted), sorted(steps))

    def spent(self) -> bool:
        return self.reviewer.exhausted()

    def acceptable(self, steps: Steps) -> bool:
        """Whether the plan without these steps can be carried out as far as the full plan can,
        and meets every goal condition at least as well."""
        if not steps:
            return True
        if steps not in self._memo:
            reviewer = self.reviewer
            variant = reviewer.sim.without(reviewer.trace, set(steps), strict=True)
            fine = reviewer._acceptable(variant, set(steps))
            self._memo[steps] = fine and _half_done(reviewer, steps) is None
        return self._memo[steps]

    def greedy(self) -> Steps:
        """A maximal acceptable union of blocks, adding blocks in plan order until none fits."""
        accepted: Steps = frozenset()
        grown = True
        while grown and not self.spent():
            grown = False
            for block in self.blocks:
                if block <= accepted or self.spent():
                    continue
                if self.acceptable(accepted | block):
                    accepted |= block
                    grown = True
        return accepted

    def exact(self, floor: Steps) -> Steps:
        """The best acceptable union of the candidate blocks, or `floor` when none ranks above
        it (or the budget runs out first)."""
        unions: set[Steps] = {frozenset()}
        for block in self.candidates:
            unions |= {union | block for union in unions}
        bar = self.rank(floor)
        for union in sorted(unions, key=self.rank):
            if self.rank(union) >= bar or self.spent():
                break
            if self.acceptable(union):
                return union
        return floor

    def decide(self) -> Steps:
        accepted = self.greedy()
        if len(self.candidates) <= EXACT_LIMIT:
            accepted = self.exact(accepted)
        return self.pulling_weight(accepted)

    def pulling_weight(self, accepted: Steps) -> Steps:
        """The accepted set without the blocks that leave the plan worse than the others alone
        do: more steps that cannot happen, or a goal condition met less well (a pick-up flagged
        with the wrong put-down after it, which alone would make the next put-down possible
        again). Each round drops the block, or pair of blocks (while there are at most
        `EXACT_LIMIT`), that leaves the best plan, the fewest flags dropped among equals."""
        while not self.spent():
            drop = self._best_drop(accepted)
            if drop is None:
                break
            accepted -= drop
            self.pulled |= drop
        return accepted

    def _best_drop(self, accepted: Steps) -> Steps | None:
        now = self._outcome(accepted)
        inside = [b for b in self.blocks if b <= accepted]
        singles = [b for b in inside if self._improves(accepted - b, now)]
        if not singles:
            return None
        pairs: set[Steps] = set()
        if len(inside) <= EXACT_LIMIT:  # pairs of blocks only where few: the work stays bounded
            pairs = {a | b for a, b in combinations(inside, 2)} - set(inside)
        drops = singles + [
            d for d in pairs if not self.spent() and self._improves(accepted - d, now)
        ]

        def key(drop: Steps) -> tuple[int, tuple[int, int], int, list[int]]:
            count, units = self._outcome(accepted - drop)
            met, progress = score(units)
            return (count, (-met, -progress), len(drop & self.flagged), sorted(drop))

        return min(drops, key=key)

    def _improves(self, rest: Steps, than: tuple[int, list[Unit]]) -> bool:
        """Whether the plan without `rest` is acceptable and better than `than`: fewer steps
        that cannot happen, or as few and the goal met better."""
        if not self.acceptable(rest):
            return False
        count, units = self._outcome(rest)
        return count < than[0] or (count == than[0] and better(units, than[1]))

    def _outcome(self, steps: Steps) -> tuple[int, list[Unit]]:
        """How many steps cannot happen in the plan without these, and how far it meets the
        goal."""
        trace = self.reviewer.trace
        if not steps:
            return len(trace.impossible), trace.units
        if steps not in self._outcomes:
            variant = self.reviewer.sim.without(trace, set(steps))
            self._outcomes[steps] = variant.count, variant.units
        return self._outcomes[steps]

    def why_vetoed(self, step: int, accepted: Steps) -> str:
        """The smallest set that fails with this flag, and why: its own block (the one with the
        most flagged steps, then the smallest) alone, else with one accepted block, else with
        all that was accepted."""
        if step in self.pulled:
            return (
                f"the other removals leave a better plan without removing step {step + 1}: "
                "fewer steps that cannot happen, or the goal met better"
            )
        own = sorted(self.options[step], key=lambda b: (-len(b & self.flagged), len(b), sorted(b)))
        parts = [c for c in self.blocks if c <= accepted]
        for block in own:
            for others in [frozenset[int](), *parts, accepted]:
                if self.spent():
                    break
                if not self.acceptable(block | others):
                    return self._failure(block, others - block)
        return f"not certified: the check spent its budget of {WORK_BUDGET:,} step updates"

    def _failure(self, own: Steps, others: Steps) -> str:
        reviewer = self.reviewer
        steps = own | others
        name = steps_named(sorted(own))
        if others:
            name += f" together with the accepted {steps_named(sorted(others))}"
        variant = reviewer.sim.without(reviewer.trace, set(steps))
        new = sorted(variant.gained, key=reviewer.trace.position)
        if new:
            order = [s for s in reviewer.order if s not in steps]
            trace = reviewer.sim.trace(order)
            problem = trace.outcomes[trace.position(new[0])].problem or "it cannot happen"
            return f"removing {name} makes step {new[0] + 1} impossible: {problem}"
        lost = [
            old.text
            for new_unit, old in zip(variant.units, reviewer.trace.units, strict=True)
            if rank(new_unit.met) < rank(old.met)
            or (old.met is not True and new_unit.progress < old.progress)
        ]
        if lost:
            return f"removing {name} loses: {lost[0]}"
        return f"removing {name} leaves a pair half done: {_half_done(reviewer, steps)}"

    def why_accepted(self, accepted: Steps) -> str:
        """The joint check an accepted set passed."""
        together = " together" if len(accepted) > 1 else ""
        return (
            f"without {steps_named(sorted(accepted))}{together} the plan can still be carried "
            f"out, and {self.reviewer.what_holds()}"
        )

    def completed(self, step: int, accepted: Steps) -> list[int]:
        """The flagged steps whose block brought in an unflagged step."""
        for block in self.blocks:
            if step in block and block <= accepted and block & self.flagged:
                return sorted(block & self.flagged)
        return []


class Certified(NamedTuple):
    """What `certify_flags` decided."""

    critique: Critique  # the critique with only the accepted flags (and what completes them)
    vetoes: list[Veto]  # the flags refused, each with why
    check: str | None  # the joint check the accepted flags passed (None: none accepted)


def certify_flags(
    plan: Sequence[str],
    critique: Critique,
    grounding: Grounding,
    *,
    trim: TrimPolicy = DEFAULT_TRIM,
) -> Certified:
    """The critique with only the flags the simulator accepts (and the steps that complete
    them), the vetoes of the others, and the check the accepted ones passed. Under `natural`,
    accepted blocks the trim policy keeps are vetoed too (`_kept_by_trim`)."""
    if not critique.flags:
        return Certified(critique, [], None)
    reviewer = Reviewer(plan, grounding.scene, grounding.spec, grounding.focus)
    reasons = {flag.step: flag.reason for flag in critique.flags}
    vetoes = [
        Veto(kind="flag", action=plan[step], step=step, reason="not a Driver action")
        for step in sorted(reasons)
        if not reviewer.judged(step)
    ]
    decision = _Decision(reviewer, frozenset(s for s in reasons if reviewer.judged(s)))
    accepted = decision.decide()
    kept = _kept_by_trim(reviewer, decision, accepted) if trim == "natural" else {}
    vetoes += [
        Veto(kind="flag", action=plan[step], step=step, reason=_kept_reason(kind))
        for step, kind in sorted(kept.items())
        if step in decision.flagged
    ]
    accepted = accepted - kept.keys()
    vetoes += [
        Veto(kind="flag", action=plan[step], step=step, reason=decision.why_vetoed(step, accepted))
        for step in sorted(decision.flagged - accepted - kept.keys())
    ]
    vetoes.sort(key=lambda veto: veto.step or 0)
    flags = []
    for step in sorted(accepted):
        reason = reasons.get(step)
        if reason is None:  # a step that completes a flagged block
            reason = f"goes with the flagged {steps_named(decision.completed(step, accepted))}"
        # the level of the check that accepted it; a step that cannot happen does nothing, so
        # its removal does not depend on the goal
        level = grounding.evidence(uses_goal=step not in reviewer.trace.impossible)
        flags.append(Flag(step=step, action=plan[step], reason=reason, evidence=level))
    check = decision.why_accepted(accepted) if accepted else None
    return Certified(critique.model_copy(update={"flags": flags}), vetoes, check)


def _kept_by_trim(reviewer: Reviewer, decision: _Decision, accepted: Steps) -> dict[int, str]:
    """The accepted steps the `natural` trim policy keeps, with their kind: the parts of each
    accepted block that the trim table names (`Reviewer.trim_blocks`)."""
    kept: dict[int, str] = {}
    unkept: set[int] = set()  # steps of an accepted block that pairs them with no trim kind
    for block in decision.blocks:
        if block <= accepted:
            parts = reviewer.trim_blocks(block, gone=accepted)
            for part, kind in parts:
                kept.update(dict.fromkeys(part, kind))
            if len(block) == 2 and not parts:
                unkept |= block
    # a switch that also pairs with its neighbour into a block of no trim kind (switched on and
    # straight off again) goes with it, whatever else it could pair with
    switches = {s for s in unkept if reviewer.actions[s].verb in ("ToggleOn", "ToggleOff")}
    return {s: k for s, k in kept.items() if s not in switches}


def _kept_reason(kind: str) -> str:
    return (
        f"the natural trim policy keeps it as optional: {NATURAL_KEEPS[kind]} "
        "(--trim minimal removes it)"
    )


def certify_insertion(
    plan: Sequence[str], action: str, after: int, grounding: Grounding
) -> str | None:
    """Why an insertion after plan position `after` is refused, or None when it is accepted:
    it cannot happen there, or it changes nothing because its effect already holds."""
    lines = [*plan[: after + 1], action]
    _, outcomes = simulate(lines, grounding.scene)
    outcome = outcomes[-1]
    if outcome.problem:
        return f"impossible where it is placed: {outcome.problem}"
    objects = parse_action(action).objects
    if outcome.changed is False and objects:
        return f"changes nothing: {objects[-1]} is already that way"
    return None
