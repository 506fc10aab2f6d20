"""What `natural` keeps of the steps the VirtualHome Judge's search removed: the objects the task
uses (those the script names and those a person uses without naming them), the kind of each
removed step (`kinds.KINDS`), the pairs that undo each other and keep no kind, and the put-back
of the steps of a kind, when the program still runs and meets its goal with them."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from itertools import pairwise

from planverify.domains.virtualhome.edit import (
    PUTS,
    Along,
    Entry,
    Work,
    accepts,
    goal_parts,
    lay_there,
    objects_of,
    previous_lines,
    step_of,
)
from planverify.domains.virtualhome.kinds import (
    IDEMPOTENT,
    OPPOSITES,
    TASK,
    kind_of,
    named_nodes,
    optional_kind,
)
from planverify.domains.virtualhome.notation import Step
from planverify.domains.virtualhome.replay import Scene, check, goal_nodes, held, in_state, trace
from planverify.domains.virtualhome.simulate import State, StepResult


def used_objects(work: Work, goal_text: str, along: Along) -> set[int]:
    """The objects the task uses: those of the goal, of the steps kept, and those the goal text
    names (not the character)."""
    scene = work.scene
    kept = {a.node for e in work.entries if (step := step_of(e.line)) for a in step.arguments}
    written = {a.node for step in along.steps if step is not None for a in step.arguments}
    used = set(goal_nodes(scene.goal)) | _meant(scene.classes, goal_text, written) | kept
    used = {n for n in used if scene.classes.get(n) != "character"}
    used |= _tools(scene, used, along) | _set_up(scene, along)
    near = {m for n in used for m in scene.near.get(n, ())}
    return used | {n for n in near if scene.classes.get(n) != "character"}


def _set_up(scene: Scene, along: Along) -> set[int]:
    """The devices the person switches on in the room where the goal is met and leaves on to the
    end: setting up the place the task is done in (the light and the music to relax on the sofa
    by). A device switched on and off again, or on where it was on, is no part of that."""
    rooms = {
        scene.rooms.get(n) for n in goal_nodes(scene.goal) if scene.classes.get(n) != "character"
    }
    found = set()
    for k, step in enumerate(along.steps):
        node = _first_node(step)
        if step is None or step.verb != "SWITCHON" or node is None:
            continue
        on = in_state(along.states[k], node, "ON"), in_state(along.states[-1], node, "ON")
        if scene.rooms.get(node) in rooms and on == (False, True):
            found.add(node)
    return found


def _meant(classes: Mapping[int, str], goal_text: str, written: Collection[int]) -> set[int]:
    """The things the goal text names: of a class the program's steps name, the instances they
    name (the keyboard on the desk the person types at, not the one in the bedroom); of any
    other class, every instance."""
    named = named_nodes(classes, goal_text)
    acted = {classes.get(n) for n in written}
    return {n for n in named if n in written or classes.get(n) not in acted}


def _tools(scene: Scene, used: set[int], along: Along) -> set[int]:
    """What the person used on the things the task uses without the script naming it: a thing in
    hand while doing something to one of them (the towel held while wiping the bowl), and a
    device switched on or off while one of them sat at it (the faucet running while the cup
    stood in the sink)."""
    steps = along.steps
    found: set[int] = set()
    for k, step in enumerate(steps):
        if step is not None and kind_of(step.verb) == "activity":
            objects = {a.node for a in step.arguments}
            found |= held(along.states[k]) - objects if objects & used else set()
    for thing, switches in _stays(scene, steps):
        found |= {n for k in switches if thing in used and (n := _first_node(steps[k]))}
    return found


def _stays(scene: Scene, steps: Sequence[Step | None]) -> list[tuple[int, list[int]]]:
    """Each thing put down, with the positions of the switch steps on a device at its place (the
    place or what is tied to it) while it stays there, until it is taken up again."""
    stays = []
    for k, put in enumerate(steps):
        if put is None or put.verb not in PUTS:
            continue
        thing, at = put.arguments[0].node, _devices_at(scene, put)
        switches = []
        for j in range(k + 1, len(steps)):
            step = steps[j]
            if step is not None and step.verb == "GRAB" and _first_node(step) == thing:
                break
            if step is not None and step.verb in {"SWITCHON", "SWITCHOFF"}:
                switches += [j] if _first_node(step) in at else []
        stays.append((thing, switches))
    return stays


def _first_node(step: Step | None) -> int | None:
    return step.arguments[0].node if step is not None and step.arguments else None


ROUNDS = (frozenset({"activity", "posture"}), frozenset({TASK}), frozenset({"approach"}))
# the kinds `kept_kinds` settles in turn: what a person does in the task's place, then other steps on
# what the task uses (now also what those did something with), then the approaches to all that


def kept_kinds(
    work: Work,
    used: set[int],
    lines: Sequence[str],
    outcomes: dict[int, StepResult],
    along: Along,
) -> dict[int, str]:
    """The kind `natural` keeps of each removed input step that has one (by input position).

    The task's place is the rooms of what it uses. An activity or posture there is how the person
    carried the task out (wiping a chair with the cloth in hand, washing at the sink after the
    toilet), and so is going to a thing there (finding the desk and chair to read at); a step
    that moves, opens or switches a thing the task has no use for is a detour wherever it is,
    and so is going to that thing. Going to a thing only to open and close it again or to switch
    it off and on (or on when it is on) is part of that: the approach goes too, whatever the
    thing, when nothing kept is done with it (`_switched_only`, `_done_with`)."""
    undone = _undone(work, along)
    removed = [e for block in work.removed for e in block if e.origin is not None]
    previous = previous_lines(along)
    rooms = work.scene.rooms
    place = {rooms[n] for n in used if n in rooms}
    kinds: dict[int, str] = {}
    wider = set(used)
    for kinds_now in ROUNDS:
        handled = set()  # objects of removed steps not kept, which no approach may lead to
        futile: set[int] = set()  # of those, the ones nothing kept is done with
        if "approach" in kinds_now:
            handled = {a.node for e in removed if e.origin not in kinds for a in objects_of(e)}
            futile = _switched_only(removed, kinds) - _done_with(work, removed, kinds)
        for entry in removed:
            origin, step = entry.origin, step_of(entry.line)
            if origin is None or step is None or (kind_of(step.verb) or TASK) not in kinds_now:
                continue
            if repeats(previous, entry) or outcomes[origin].outcome != "ok" or id(entry) in undone:
                continue
            things = {a.node for a in step.arguments if rooms.get(a.node) != a.node}
            if things and things <= futile:
                continue
            here = place if not {a.node for a in step.arguments} & handled else set()
            kind = optional_kind(step, wider, rooms, here)
            if kind is not None:
                kinds[origin] = kind
        wider |= {a.node for o in kinds if (s := step_of(lines[o])) for a in s.arguments}
    return kinds


SWITCHES = frozenset({"OPEN", "CLOSE", "SWITCHON", "SWITCHOFF", "PLUGIN", "PLUGOUT"})
# verbs that change a thing's state where it stands


def _switched_only(removed: Sequence[Entry], kinds: dict[int, str]) -> set[int]:
    """The objects whose removed steps that `natural` does not keep only open, close or switch
    them (a thing taken up and put down is another matter: the person may have meant to carry
    it)."""
    gone = [
        (s.verb, a.node)
        for e in removed
        if e.origin not in kinds and (s := step_of(e.line))
        for a in objects_of(e)
    ]
    return {n for v, n in gone if v in SWITCHES} - {n for v, n in gone if v not in SWITCHES}


def _done_with(work: Work, removed: Sequence[Entry], kinds: dict[int, str]) -> set[int]:
    """The objects a step other than an approach does something with, among the steps kept and
    the removed ones `natural` keeps (`kinds`); for a put, where it goes as well."""
    kept = [*work.entries, *(e for e in removed if e.origin in kinds)]
    return {
        a.node
        for e in kept
        if (step := step_of(e.line)) is not None and kind_of(step.verb) != "approach"
        for a in step.arguments
    }


def _undone(work: Work, along: Along) -> set[int]:
    """The removed steps (by `id`) that undo each other on one object, next to each other in the
    program (opened and closed, switched off and on, put down and picked up again, taken up and put
    back where it lay): such a pair is no way of carrying out a task, whatever it is on. With a step
    between, even only going to or looking at the thing, the person did something with it in between
    (switched the TV on, turned to it, switched it off): how people work. A take-up and a put-down
    somewhere else carry the thing there: that undoes nothing. Of a take-up, a put-down and a
    take-up again, the pair is the put-down and the take-up after it: taking a thing up and putting
    it down is how it is carried, so the first take-up is not undone."""
    removed = {id(e) for block in work.removed for e in block}
    numbered = enumerate(zip(along.order, along.steps, strict=True))
    acts = [(k, e, step) for k, (e, step) in numbered if step]
    states = along.states
    filling = {k for _, switches in _stays(work.scene, along.steps) for k in switches}
    pairs = []
    for (i, first, a), (_, second, b) in pairwise(acts):
        if id(first) not in removed or id(second) not in removed or i in filling:
            continue
        if not a.arguments or not b.arguments or a.arguments[0].node != b.arguments[0].node:
            continue
        if a.verb == "GRAB" and b.verb in PUTS and not lay_there(states[i], b):
            continue  # carried somewhere else
        put = (i, a) if a.verb in PUTS else (i + 1, b) if b.verb in PUTS else None
        if put is not None and at_running_device(work.scene, states[put[0] + 1], put[1]):
            continue  # filled at the running faucet
        if OPPOSITES.get(a.verb) == b.verb or (a.verb in PUTS and b.verb == "GRAB"):
            pairs.append((first, a, second))
    put_down = {id(first) for first, a, _ in pairs if a.verb in PUTS}
    found: set[int] = set()
    for first, a, second in pairs:
        if a.verb != "GRAB" or id(second) not in put_down:
            found |= {id(first), id(second)}
    return found


def at_running_device(scene: Scene, state: State, put: Step) -> bool:
    """Whether a device at the place of a put-down is on."""
    return any(in_state(state, node, "ON") for node in _devices_at(scene, put))


RECEPTACLES = frozenset({"RECIPIENT", "CONTAINERS"})  # properties of a place that takes things in


def _devices_at(scene: Scene, put: Step) -> set[int]:
    """The devices that act on what a put-down leaves in a receptacle (a sink, a coffee maker, a
    microwave): the receptacle itself or what is tied to it (the faucet over the sink), when it
    has a switch. A lamp by the table lights it but does nothing to what lies on it."""
    place = put.arguments[-1].node
    if not RECEPTACLES & scene.properties.get(place, frozenset()):
        return set()
    return {
        n
        for n in {place, *scene.near.get(place, ())}
        if "HAS_SWITCH" in scene.properties.get(n, ())
    }


def repeats(previous: Mapping[int, Entry], entry: Entry) -> bool:
    """Whether the line is the one before it again, with a verb whose repeat changes nothing
    (being at, holding, opening...). An activity done again (`[SCRUB]`, `[WASH]`) is more of it."""
    before = previous.get(id(entry))
    step = step_of(entry.line)
    if before is None or step is None or before.line != entry.line:
        return False
    return step.verb in IDEMPOTENT


def restore(work: Work, kinds: dict[int, str]) -> set[int]:
    """Put back the removed steps of a kind `natural` keeps, all at once if the program still
    runs and meets its goal as well, else one by one; the input positions put back."""
    run = trace(work.lines, work.scene.start)
    base = goal_parts(check(work.scene, run))
    candidates = [e for block in work.removed for e in block if e.origin in kinds]
    restored: set[int] = set()
    for group in [candidates, *([e] for e in sorted(candidates, key=lambda e: e.order))]:
        group = [e for e in group if e.origin not in restored]
        if not group:
            continue
        tried = sorted([*work.entries, *group], key=lambda e: e.order)
        if accepts(work, trace([e.line for e in tried], work.scene.start), base):
            work.entries = tried
            restored |= {e.origin for e in group if e.origin is not None}
    return restored
