"""The offline Judge on VirtualHome: it judges a program by running it in the package's own
simulator against its `vh_goal` (node states, edges, ordered action goals).

1. A step that cannot happen is either made possible by one inserted step (a `Missing`: walk to
   it, open what holds it...) or removed (a flag), whichever leaves fewer failures and unmet
   goal parts; on a tie a step on what the task is about is helped, any other removed.
2. An unmet goal part gets a `Missing` step when one inserted step makes it hold.
3. Blocks the goal does without are removed greedily, from the end: runs of up to
   `LONGEST_RUN` steps, then pairs of steps on one object (on and off, open and close, a step
   and its repeat). A block goes only when the program without it still runs to the end and
   meets every goal part it met, action goals in order.
4. `natural` puts back the removed steps of a kind `kinds.KINDS` names, when the program still
   runs and meets the goal with them (never two that undo each other; `keeps`); they are listed
   in `Critique.optional`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

from planverify.domains.virtualhome.edit import (
    PUTS,
    Entry,
    Work,
    accepts,
    goal_parts,
    lay_there,
    previous_lines,
    read_along,
    step_of,
)
from planverify.domains.virtualhome.keeps import (
    at_running_device,
    kept_kinds,
    repeats,
    restore,
    used_objects,
)
from planverify.domains.virtualhome.kinds import OPPOSITES, REASONS, named_nodes
from planverify.domains.virtualhome.notation import Step
from planverify.domains.virtualhome.repair import (
    best_insertion,
    enablers,
    goal_steps,
    quality,
    shortfall,
)
from planverify.domains.virtualhome.replay import Scene, Trace, check, goal_nodes, trace
from planverify.domains.virtualhome.simulate import StepResult, take_step
from planverify.records.critique import Critique, Flag, Missing
from planverify.records.evidence import Evidence, simulated
from planverify.records.trim import DEFAULT_TRIM, OptionalNote, TrimPolicy

# changes whenever this Judge can give another verdict (stored results key on it)
RULES_VERSION = "4"
LONGEST_RUN = 4  # the longest run of steps removed as one block
PROVEN_USELESS: Evidence = simulated(scene_known=True, goal_source="vh_goal", uses_goal=True)
PROVEN_IMPOSSIBLE: Evidence = simulated(scene_known=True, goal_source="vh_goal", uses_goal=False)


def judge_program(
    lines: Sequence[str], scene: Scene, *, trim: TrimPolicy = DEFAULT_TRIM, goal_text: str = ""
) -> Critique:
    """The Judge's critique of a program in a known scene with a known goal."""
    return judge_both(lines, scene, goal_text=goal_text)[trim]


def judge_both(
    lines: Sequence[str], scene: Scene, *, goal_text: str = ""
) -> dict[TrimPolicy, Critique]:
    """The critique under each trim policy, from one search (`natural` is `minimal` with the
    steps of the kinds it keeps put back)."""
    entries = [Entry(line, float(i), i) for i, line in enumerate(lines)]
    work = Work(scene, entries, {}, [], [])
    core = _core(scene, goal_text, scene.near)
    _fix_failures(work, _core(scene, goal_text, scene.placed))
    _fix_goal(work, goal_text)
    outcomes = _outcomes(work)
    if scene.goal is not None and trace(work.lines, scene.start).completed:
        _remove_runs(work, lambda step: not {a.node for a in step.arguments} & core)
        _remove_runs(work)
        _remove_pairs(work)
        _last_put_stays(work)
    along = read_along(work)
    used = used_objects(work, goal_text, along)
    kinds = kept_kinds(work, used, lines, outcomes, along)
    previous = previous_lines(along)  # the same before and after the put-back
    minimal = _critique(work, lines, outcomes, used, kinds, previous, set())
    restored = restore(work, kinds)
    natural = _critique(work, lines, outcomes, used, kinds, previous, restored)
    return {"minimal": minimal, "natural": natural}


def _fix_failures(work: Work, core: Collection[int]) -> None:
    """Make the program run to the end: each failing step is helped by one inserted step or
    removed, whichever leaves fewer failures and unmet goal parts (on ties a step on what the
    task is about, `core`, wins: a person wrote it; a step on nothing of the task goes, rather
    than a walk being added to a detour; so does a step written out of its place, `_misplaced`,
    one on a thing in a room the program does nothing else in, `_elsewhere`, and a put-down
    where the thing lies already, which a take-up would only undo, `_puts_back`).
    The helping steps are those that let it happen and those that make an unmet goal part hold
    (a missing `[LIE]` lets `[SLEEP]` happen; a missing `[PUTBACK]` frees a hand)."""
    for _ in range(len(work.entries) + 4):
        run = trace(work.lines, work.scene.start)
        at = run.failed_at
        if at is None:
            return
        lines = work.lines
        removal = quality(work.scene, lines[:at] + lines[at + 1 :])
        positions = range(at, -1, -1)
        candidates = list(enablers(work.scene, run, at))
        candidates += goal_steps(work.scene, shortfall(work.scene, lines)[1], lines)
        help_ = best_insertion(work.scene, lines, candidates, positions)
        failing = step_of(lines[at])
        ours = failing is None or any(a.node in core for a in failing.arguments)
        ours = ours and not _elsewhere(work, at)
        misplaced = help_ is not None and _misplaced(work, at, help_[2])
        ours = ours and (not misplaced or _fills(work.scene, run, at))
        ours = ours and (help_ is None or not _puts_back(run, at, help_[2]))
        if help_ is not None and (
            help_[0].key() < removal.key() or (ours and help_[0].key() == removal.key())
        ):
            _insert(work, help_[1], help_[2])
            continue
        entry = work.entries.pop(at)
        if entry.origin is not None:
            work.impossible[entry.origin] = run.results[-1].reason


def _misplaced(work: Work, at: int, help_line: str) -> bool:
    """Whether the failing line `at` is out of its place rather than short of a step: the person
    writes it again later (a step written before the walk that makes it possible, then in its
    place), or writes later the very step that would help it (a `[GRAB]` after the `[PUTBACK]`
    of what the hand does not hold yet; a `[FIND]` after the step on what it finds). Either way
    they did not forget a step: copying their later step in front would do it twice."""
    later = {e.line for e in work.entries[at + 1 :] if e.origin is not None}
    return work.entries[at].line in later or help_line in later


def _fills(scene: Scene, run: Trace, at: int) -> bool:
    """Whether the failing line `at` puts a thing into a receptacle while a device there runs
    (the cup into the sink under the running faucet): the take-up written after it ends the
    filling, so it is no copy of the step missing before it."""
    step = step_of(run.lines[at])
    return step is not None and step.verb in PUTS and at_running_device(scene, run.states[at], step)


def _puts_back(run: Trace, at: int, help_line: str) -> bool:
    """Whether the failing line `at` puts a thing down where it lies already and the help takes
    it up: the take-up and the put-down would leave it where it was, which is no way of carrying
    out a task (putting the soap back on the sink it lies on, without ever taking it)."""
    step, helper = step_of(run.lines[at]), step_of(help_line)
    if step is None or helper is None or step.verb not in PUTS or helper.verb != "GRAB":
        return False
    return helper.arguments[0].node == step.arguments[0].node and lay_there(run.states[at], step)


def _elsewhere(work: Work, at: int) -> bool:
    """Whether the failing line `at` is on things that lie in rooms where no other step of the
    program goes or uses anything: the person never went there, and a walk added to let the
    step happen would send them on a trip the program does not make (switching on the
    television of another room, from where they stand)."""
    rooms = work.scene.rooms
    step = step_of(work.entries[at].line)
    things = {a.node for a in step.arguments if rooms.get(a.node) != a.node} if step else set()
    visited = {
        rooms.get(a.node)
        for k, e in enumerate(work.entries)
        if k != at and (other := step_of(e.line)) is not None
        for a in other.arguments
    }
    return bool(things) and all(rooms.get(n) not in visited for n in things)


def _core(scene: Scene, goal_text: str, ties: Mapping[int, Collection[int]]) -> set[int]:
    """What the task is about whatever the program says: the goal's objects, those the goal text
    names, and the objects `ties` ties to them at the start. To order removals (detours first)
    that is any edge (`Scene.near`); to decide whether a step that cannot happen is given a walk
    it is only what they lie on or in and what lies on or in them (`Scene.placed`): the
    keyboard on the desk beside a lamp is close to it, not part of turning it on."""
    core = set(goal_nodes(scene.goal)) | named_nodes(scene.classes, goal_text)
    return core | {m for n in core for m in ties.get(n, ())}


def _fix_goal(work: Work, goal_text: str) -> None:
    """Insert single steps that make unmet goal parts hold, while one does."""
    for _ in range(3):
        run = trace(work.lines, work.scene.start)
        unmet = check(work.scene, run)
        if not run.completed or unmet.met:
            return
        lines = work.lines
        positions = range(len(lines), -1, -1)
        scene = work.scene
        named = [goal_nodes(scene.goal), named_nodes(scene.classes, scene.title)]
        named.append(named_nodes(scene.classes, goal_text))
        found = best_insertion(
            work.scene, lines, list(goal_steps(work.scene, unmet, lines, named)), positions
        )
        if found is None or found[0].failures or found[0].unmet >= len(unmet.describe()):
            return
        _insert(work, found[1], found[2])


def _insert(work: Work, position: int, line: str) -> None:
    before = work.entries[position - 1].order if position > 0 else -1.0
    after = work.entries[position].order if position < len(work.entries) else before + 1.0
    entry = Entry(line, (before + after) / 2, None)
    work.entries.insert(position, entry)
    work.inserted.append(entry)


def _remove_runs(work: Work, only: Callable[[Step], bool] | None = None) -> None:
    """Remove runs of input steps the goal does without, trying from the end, longest first
    (with `only`: runs of steps it accepts, e.g. steps on nothing the task is about, tried
    before the others so that a detour goes rather than the steps it happens to stand for)."""
    run = trace(work.lines, work.scene.start)
    base = goal_parts(check(work.scene, run))
    at = len(work.entries) - 1
    while at >= 0:
        for size in range(LONGEST_RUN, 0, -1):
            block = work.entries[at : at + size]
            if len(block) < size or any(e.origin is None for e in block):
                continue
            if only is not None and not all((s := step_of(e.line)) and only(s) for e in block):
                continue
            rest = work.entries[:at] + work.entries[at + size :]
            tried = trace([e.line for e in rest], work.scene.start, since=run, at=at)
            if accepts(work, tried, base):
                work.entries, run = rest, tried
                work.removed.append(block)
                break
        else:
            at -= 1
        at = min(at, len(work.entries) - 1)


def _remove_pairs(work: Work) -> None:
    """Remove pairs of input steps on the same objects (one undoing the other, or repeating it)
    that the goal does without together."""
    run = trace(work.lines, work.scene.start)
    base = goal_parts(check(work.scene, run))
    j = len(work.entries) - 1
    while j > 0:
        for i in range(j - 2, -1, -1):
            first, second = work.entries[i], work.entries[j]
            if first.origin is None or second.origin is None or not _paired(first, second):
                continue
            rest = [e for k, e in enumerate(work.entries) if k not in (i, j)]
            tried = trace([e.line for e in rest], work.scene.start, since=run, at=i)
            if accepts(work, tried, base):
                work.entries, run = rest, tried
                work.removed.append([first, second])
                j -= 1
                break
        j = min(j - 1, len(work.entries) - 1)


def _last_put_stays(work: Work) -> None:
    """Where the person puts a thing down, takes it up and puts it down again just as before,
    the removal reads the last put as the one that stays: a thing stays where it was put last,
    and a put-down followed by taking the thing up again is what did nothing (a take-up then a
    put-down is how a thing is carried). Of a kept put and a removed one written the same way
    later, the removed one is kept instead when the program runs and meets its goal as well."""
    run = trace(work.lines, work.scene.start)
    base = goal_parts(check(work.scene, run))
    for block in work.removed:
        for slot, late in enumerate(block):
            step = step_of(late.line)
            if late.origin is None or step is None or step.verb not in PUTS:
                continue
            early = [e for e in work.entries if e.order < late.order and e.line == late.line]
            if not early or early[-1].origin is None:
                continue
            swapped = [e for e in work.entries if e is not early[-1]] + [late]
            swapped.sort(key=lambda e: e.order)
            if accepts(work, trace([e.line for e in swapped], work.scene.start), base):
                work.entries = swapped
                block[slot] = early[-1]
                block.sort(key=lambda e: e.order)


def _paired(first: Entry, second: Entry) -> bool:
    a, b = step_of(first.line), step_of(second.line)
    if a is None or b is None or not a.arguments:
        return False
    same = {x.node for x in a.arguments} & {x.node for x in b.arguments}
    return bool(same) and (first.line == second.line or OPPOSITES.get(a.verb) == b.verb)


def _outcomes(work: Work) -> dict[int, StepResult]:
    """What each input step did in the program as repaired, before any removal (by input
    position; the steps that cannot happen are not there)."""
    state, results = work.scene.start, {}
    for index, entry in enumerate(work.entries):
        result, state = take_step(state, entry.line, index)
        if entry.origin is not None:
            results[entry.origin] = result
    return results


def _critique(
    work: Work,
    lines: Sequence[str],
    outcomes: dict[int, StepResult],
    used: Collection[int],
    kinds: dict[int, str],
    previous: Mapping[int, Entry],
    restored: set[int],
) -> Critique:
    critique = Critique()
    for origin, reason in work.impossible.items():
        critique.flags.append(
            Flag(
                step=origin,
                action=lines[origin],
                reason=f"cannot happen: {reason}",
                evidence=PROVEN_IMPOSSIBLE,
            )
        )
    for block in work.removed:
        for entry in block:
            if entry.origin is None:
                continue
            note = None
            if entry.origin in kinds:
                kind = kinds[entry.origin]
                note = OptionalNote(kind=kind, reason=REASONS[kind], evidence=PROVEN_USELESS)
            flag = Flag(
                step=entry.origin,
                action=entry.line,
                reason=_why(work, entry, block, outcomes, used, previous),
                evidence=PROVEN_USELESS,
                optional=note,
            )
            (critique.optional if entry.origin in restored else critique.flags).append(flag)
    critique.flags.sort(key=lambda f: f.step)
    critique.optional.sort(key=lambda f: f.step)
    critique.missing = [_missing(work, entry) for entry in work.inserted]
    return critique


def _why(
    work: Work,
    entry: Entry,
    block: list[Entry],
    outcomes: dict[int, StepResult],
    used: Collection[int],
    previous: Mapping[int, Entry],
) -> str:
    """Why a removed step goes, in one line."""
    origin = entry.origin
    assert origin is not None
    step = step_of(entry.line)
    result = outcomes[origin]
    if result.outcome == "satisfied":
        verb = step.verb if step is not None else ""
        what = "a switch that acts on nothing" if verb.startswith("SWITCH") else "changes nothing"
        return f"{what}: {result.reason}; the goal does without it"
    before = previous.get(id(entry))
    if before is not None and repeats(previous, entry):
        what = "the step put in before it" if before.origin is None else f"step {before.origin}"
        return f"repeats {what}; the goal does without it"
    for other in block:
        other_step = step_of(other.line)
        if other is not entry and step is not None and other_step is not None:
            if not _opposed(step.verb, other_step.verb):
                continue
            if other.order > entry.order:
                return f"undone by step {other.origin} ({other.line}); the goal does without both"
            return f"undoes step {other.origin} ({other.line}); the goal does without both"
    objects = [a for a in (step.arguments if step is not None else ()) if a.node not in used]
    rooms = work.scene.rooms
    if objects and all(rooms.get(a.node) != a.node for a in objects):
        names = ", ".join(f"<{a.name}> ({a.node})" for a in objects)
        return f"a detour to {names}, which the goal has no use for"
    return "the goal does without it: the program runs and meets its goal without it"


def _opposed(a: str, b: str) -> bool:
    """Whether one of two verbs undoes the other (a take-up and a put-down count)."""
    return (
        OPPOSITES.get(a) == b or OPPOSITES.get(b) == a or (bool({a, b} & PUTS) and "GRAB" in {a, b})
    )


def _missing(work: Work, entry: Entry) -> Missing:
    """An inserted step as a `Missing`, after the input step before it."""
    before = [e.origin for e in work.entries if e.order < entry.order and e.origin is not None]
    after = max(before) if before else -1
    return Missing(
        description=f"needed so that the program runs and meets its goal: {entry.line}",
        action=entry.line,
        after=after,
        evidence=PROVEN_USELESS,
    )


FLAG_KINDS = {
    "cannot happen": "impossible",
    "repeats": "repeat",
    "undone by": "undoes itself",
    "undoes": "undoes itself",
    "a switch that acts on nothing": "switch on nothing",
    "changes nothing": "changes nothing",
    "a detour": "detour",
    "the goal does without it": "unneeded",
}  # the start of a flag's reason -> the kind of step it judges


def flag_kind(flag: Flag) -> str:
    """The kind of step a flag of this Judge judges, read from its reason."""
    return next((k for start, k in FLAG_KINDS.items() if flag.reason.startswith(start)), "other")
