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
5. **Removal.** A maximal (not maximum) removable set is searched greedily over candidate blocks in
   plan order: a motion and the motion that undoes it, a pick-up with its put-down, a put-down with
   the pick-up that takes the object back (the two cancel, whatever the object does next; but when
   that put-down already met every goal relation about the object, the later move goes instead: the
   cloth in the bathtub moved on into its basin), open/close pairs, on/off pairs and off/on pairs (a
   running device switched off and on again: it acts on what is put in it all along), every step on
   an object that is only carried about (two or three pick-ups with their put-downs, and pouring
   it out: a slice too many loaded and taken out again), contiguous runs of up to `MAX_RUN` steps,
   a round trip (an object set down elsewhere and later set back where it was, unchanged, tried
   only when no part of it goes alone), a transfer (everything on a receptacle that is no surface
   moved onto another of its kind, with that one's fetch: a finished salad moved onto a second
   plate), single steps. An object put into one receptacle and next taken, unchanged, into another
   where it stays (neither of them a surface) loses the first placement, unless a transfer can go
   instead (a bottle put in one cabinet, then gathered into another with the rest; a potato left
   in a bowl, then boiled in a pot). Where a later instance of the same type is
   handled alike and ends in the same place (a second slice on the plate), that later block goes
   instead when it can. A put-down, or a step that only restores the state (a close, a
   switch-off), is never removed on its own, except a switch-off of a device that ran from the
   start and that the plan did not use (put nothing where it acts, pours out nothing it filled);
   taking an object out of a receptacle the plan later uses as a device (clearing the sink, the
   coffee machine, the toaster, a burner, a pan or a pot) is preparation and never removed on its
   own, unless it goes straight back in; taking something else out of it needs no room and
   prepares nothing, nor does pouring out into a sink (the sink and its basin are one fixture:
   clearing either makes room in both). A close and the open that undoes it next go as a pair
   (the door stands open as before), and a put-down "on itself", as TEACh records now and then,
   never goes: where the object went is unknown. Without a scene, where an object stood is
   unknown: a pick-up right before a device is used counts as clearing it only when the Driver
   uses the device from where it picked the object up, and the device can hold the object at the
   start (nothing stands on a toaster, only mugs in a coffee machine). An object picked up at the
   end that the plan never worked on nor uses goes: no goal asks for anything to be held.

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

Motion is removed only where it provably changes no later pose (`Reviewer.remove_noop_motion`),
first and again once the removals are made: in a stretch with no interaction inside (dialogue
aside), a run that nets to no motion (a turn full circle, a move and the move back with only
dialogue between, the four sides of a square), the longest first, then a motion and its inverse
whose removal leaves the net of the motion between them as it was. Motion that only leads to or
from removed interactions is kept unless, once they are gone, it nets to no motion:
removing it as well cut plan-level precision on the injected-error set from 78.8% to 57.5% with
no gain in recall (the walking of the base demonstrations is not an error).

Cost: each candidate block is simulated from the state before it, only until its state is the
full plan's again, so a block that changes nothing lasting costs a few steps; a block with a
lasting effect runs to the end. A shared game's review (the longest has about 195 Driver
steps) simulates at most about 30,000 step updates, a few hundred ms. Longer or pathological
plans are bounded by `WORK_BUDGET` step updates: once spent, the search stops, what it found so
far stands (each removal is proved on its own) and the rest of the plan is kept unjudged.

The search is one class, `Reviewer`, composed of one layer per concern, each in its own module:

- `verdicts`: what a review concludes (`Review`, its removals and proposals);
- `kinds`: what kinds of objects do (surfaces, working devices and their controls, look-alikes);
- `worlds`: the worlds a review starts from without a scene (presumed, as the plan shows them);
- `plan`: the plan under repair (`Plan`): the order its steps stand in now, its trace, where each
  object is acted on, and the queries on them;
- `presumptions` (`Presumptions`): what is taken as so where no scene says it (an object set
  back where it was, a container searched, a device cleared), and whether a removal rests on it;
- `patterns` (`Patterns`): what a block of steps is (a switch that acts on nothing, a device
  switched back, a search, an object set back or left aside, a goal met without it);
- `keep` (`KeepRules`): the keep rules, which of those may go and which stay;
- `insertion` (`Insertion`): the missing steps, tried from templates and checked by simulation;
- `search` (`Reviewer`): the candidate blocks, blame, the removal sweep, and the reasons and
  evidence of each verdict.
"""

from __future__ import annotations

from collections.abc import Sequence

from planverify.records.episode import Scene
from planverify.world.goals import GoalSpec
from planverify.world.repair.insertion import PAIR_REACH
from planverify.world.repair.keep import RESTORING
from planverify.world.repair.kinds import (
    BROAD_CLASSES,
    CONTROLS,
    SURFACES,
    WORKING_DEVICES,
    goal_kinds,
    look_alike,
)
from planverify.world.repair.patterns import UNDOING, WORKED_STATES
from planverify.world.repair.plan import MAX_ROUNDS, SAME_SPOT, WORK_BUDGET
from planverify.world.repair.presumptions import CLEARED_ONTO, CLEARING_REACH, HELD_AT_START
from planverify.world.repair.search import MAX_RUN, Reviewer
from planverify.world.repair.verdicts import Proposal, Removal, Review, steps_named


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


__all__ = [
    "BROAD_CLASSES",
    "CLEARED_ONTO",
    "CLEARING_REACH",
    "CONTROLS",
    "HELD_AT_START",
    "MAX_ROUNDS",
    "MAX_RUN",
    "PAIR_REACH",
    "RESTORING",
    "SAME_SPOT",
    "SURFACES",
    "UNDOING",
    "WORKED_STATES",
    "WORKING_DEVICES",
    "WORK_BUDGET",
    "Proposal",
    "Removal",
    "Review",
    "Reviewer",
    "goal_kinds",
    "look_alike",
    "review",
    "steps_named",
]
