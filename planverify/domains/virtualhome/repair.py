"""Steps to put into a VirtualHome program, found by trying them in the simulator: a step that
lets a failing step happen (walk to it, open what holds it...), or one that makes an unmet goal
condition hold (switch on the television the goal wants on...)."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass

from planverify.domains.virtualhome import data
from planverify.domains.virtualhome.goals import GoalCheck
from planverify.domains.virtualhome.kinds import KINDS
from planverify.domains.virtualhome.notation import Argument, Step, format_step, parse_step
from planverify.domains.virtualhome.replay import (
    Scene,
    Trace,
    check,
    state_check,
    trace,
)
from planverify.domains.virtualhome.simulate import take_step

try:
    from virtualhome_eval.simulation.evolving_graph.environment import Relation
except ImportError as exc:  # pragma: no cover - simulate already said so
    raise data.PackageMissing() from exc

STATE_VERBS = {
    "ON": "SWITCHON",
    "OFF": "SWITCHOFF",
    "OPEN": "OPEN",
    "CLOSED": "CLOSE",
    "PLUGGED_IN": "PLUGIN",
    "PLUGGED_OUT": "PLUGOUT",
    "SITTING": "SIT",
    "LYING": "LIE",
    "CLEAN": "WASH",
}  # a node state a goal wants -> the verb that makes it hold
EDGE_VERBS = {
    "ON": ("PUTBACK",),
    "INSIDE": ("PUTIN", "PUTBACK", "POUR"),
}  # an edge a goal wants between two objects -> verbs that may make it hold
POURED_FIRST = "POURABLE"  # a source with this property goes INSIDE by `[POUR]` first
CHARACTER_VERBS = {
    "ON": ("SIT", "LIE"),
    "SITTING": ("SIT",),
    "INSIDE": ("WALK",),
    "HOLDS_RH": ("GRAB",),
    "HOLDS_LH": ("GRAB",),
    "FACING": ("TURNTO", "LOOKAT"),
    "CLOSE": ("FIND", "WALK"),
}  # an edge a goal wants from the character to an object -> verbs that may make it hold
ENABLERS = ("FIND", "WALK", "OPEN", "GRAB", "SWITCHON", "PLUGIN", "TURNTO", "STANDUP")
# what may let a step on an object happen: be close, open it, hold it, power it, stand up
NO_OBJECT = frozenset({"SLEEP", "WAKEUP", "STANDUP"})  # verbs written without an object
GLANCES = frozenset({"LOOKAT", "TURNTO", "FIND"})  # verbs that only look for or at something
APPROACHES = KINDS["approach"]  # verbs that bring the character to or face an object


@dataclass(frozen=True)
class Quality:
    """How far a version of a program gets: fewer failures, then fewer unmet goal parts."""

    failures: int  # steps that cannot happen (each skipped, the run goes on)
    unmet: int  # goal parts left unmet at the end

    def key(self) -> tuple[int, int]:
        return self.failures, self.unmet


def quality(scene: Scene, lines: Sequence[str]) -> Quality:
    """Run every line (a failing one changes nothing) and count failures and unmet goal parts."""
    failures, unmet = shortfall(scene, lines)
    return Quality(failures, len(unmet.describe()))


def shortfall(scene: Scene, lines: Sequence[str]) -> tuple[int, GoalCheck]:
    """Run every line (a failing one changes nothing): the failures, and the goal parts unmet."""
    state, failures = scene.start, 0
    verbs: list[str] = []
    for index, line in enumerate(lines):
        result, state = take_step(state, line, index)
        failures += result.outcome == "failed"
        if result.outcome == "ok":
            verbs.append(parse_step(line).verb)
    return failures, state_check(scene.goal, state, verbs)


def step_line(scene: Scene, verb: str, nodes: Sequence[int], lines: Sequence[str]) -> str | None:
    """A script line for a verb on nodes, numbering each object as the program does (or 1); None
    when a node is not in the scene."""
    known: dict[int, Argument] = {}
    for line in lines:
        for argument in parse_step(line).arguments:
            known.setdefault(argument.node, argument)
    arguments = []
    for node in nodes:
        if node not in scene.classes:
            return None
        arguments.append(known.get(node, Argument(scene.classes[node], 1, node)))
    return format_step(Step(verb, tuple(arguments)))


def enablers(scene: Scene, run: Trace, at: int) -> Iterator[str]:
    """Steps that may let step `at` of a run happen. First, picking up what the program went
    to and has done nothing with yet (`dangling`): a step that needs something in hand most
    likely needs that. Then steps on its own objects and what holds them; of finding and walking
    to an object, `[FIND]` first (people write it far more often right before using a thing),
    unless the program found it earlier: coming back to a thing, people write `[WALK]` as often."""
    step = parse_step(run.lines[at])
    own = {a.node for a in step.arguments}
    for node in dangling(scene, run.lines[:at]):
        if node not in own and "GRABBABLE" in scene.properties.get(node, ()):
            line = step_line(scene, "GRAB", [node], run.lines)
            if line is not None:
                yield line
    if step.verb in {"SIT", "LIE", "WALK", "FIND"} or not step.arguments:
        yield "[STANDUP]"
    state = run.states[min(at, len(run.states) - 1)]
    for argument in step.arguments:
        verbs = list(ENABLERS)
        if step_line(scene, "FIND", [argument.node], run.lines) in run.lines[:at]:
            verbs.remove("WALK")
            verbs.insert(0, "WALK")
        for verb in verbs:
            line = step_line(scene, verb, [argument.node], run.lines)
            if line is not None and line != run.lines[at]:
                yield line
        for holder in _holders(state, argument.node):
            line = step_line(scene, "OPEN", [holder], run.lines)
            if line is not None:
                yield line


def dangling(scene: Scene, lines: Sequence[str]) -> list[int]:
    """The objects whose last step in `lines` only goes to, finds or faces them (nothing done
    with them yet), the latest first; rooms are not objects here."""
    last: dict[int, tuple[int, bool]] = {}  # node -> (position, whether only approached)
    for index, line in enumerate(lines):
        step = parse_step(line)
        for argument in step.arguments:
            last[argument.node] = (index, step.verb in APPROACHES)
    found = [(at, node) for node, (at, approach) in last.items() if approach]
    return [node for _, node in sorted(found, reverse=True) if scene.rooms.get(node) != node]


def _holders(state: object, node: int) -> list[int]:
    """The nodes that can be opened and hold `node`."""
    found = state.get_node(node)  # type: ignore[attr-defined]
    if found is None:
        return []
    holders = state.get_nodes_from(found, Relation.INSIDE)  # type: ignore[attr-defined]
    return [h.id for h in holders if "CAN_OPEN" in {p.name for p in h.properties}]


def goal_steps(
    scene: Scene, unmet: GoalCheck, lines: Sequence[str], prefer: Sequence[Collection[int]] = ()
) -> Iterator[str]:
    """Steps that may make an unmet goal part hold; for an action goal, on the objects of the
    program: first those it went to and did nothing with (`dangling`, the latest first: a
    `[FIND] <keyboard>` with no `[TYPE]` after it), then those of the first set in `prefer`
    (e.g. the goal's objects, then those the title names), then the next set's..."""
    for node in unmet.nodes:
        verb = STATE_VERBS.get(node.state)
        line = None if verb is None else step_line(scene, verb, [node.node], lines)
        if line is not None:
            yield line
    for edge in unmet.edges:
        held = scene.classes.get(edge.source) == "character"
        table = CHARACTER_VERBS if held else EDGE_VERBS
        verbs = table.get(edge.relation, ())
        if not held and POURED_FIRST in scene.properties.get(edge.source, ()):
            verbs = tuple(sorted(verbs, key=lambda v: v != "POUR"))
        for verb in verbs:
            nodes = [edge.target] if held else [edge.source, edge.target]
            line = step_line(scene, verb, nodes, lines)
            if line is not None:
                yield line
    if unmet.actions:
        objects = {a.node for line in lines for a in parse_step(line).arguments}
        first = {node: rank for rank, node in enumerate(dangling(scene, lines))}
        ordered = sorted(
            objects,
            key=lambda n: (first.get(n, len(first)), [n not in p for p in prefer], n),
        )
        # the task's own verb before a glance: WATCH rather than LOOKAT, when either will do
        for verb in sorted(unmet.actions[0], key=lambda v: (v in GLANCES, v)):
            if verb in NO_OBJECT:
                yield f"[{verb}]"
            for thing in ordered:
                line = step_line(scene, verb, [thing], lines)
                if line is not None:
                    yield line


def best_insertion(
    scene: Scene, lines: Sequence[str], candidates: Sequence[str], positions: Sequence[int]
) -> tuple[Quality, int, str] | None:
    """The candidate and position (a line index it goes before) that give the best quality,
    or None when there are no candidates; of equally good candidates, the first. Of equally good
    places for one candidate, one between two copies of a line on its objects comes first (a
    person who finds a thing twice running did something with it in between: the step that is
    missing), then one right after the program goes to, finds or faces one of its objects when
    no step from there to the first of `positions` names them (a person takes up a thing as
    they find it, not after going on to open something else), then the first of `positions`."""
    best: tuple[Quality, int, str] | None = None
    for line in dict.fromkeys(candidates):
        mine: tuple[tuple[int, int, bool, bool], int] | None = None
        step = parse_step(line)
        on = {a.node for a in step.arguments}
        for position in positions:
            tried = [*lines[:position], line, *lines[position:]]
            rank = (
                *quality(scene, tried).key(),
                not _between_copies(lines, position, on),
                step.verb in APPROACHES or not _after_approach(lines, position, on, positions[0]),
            )
            if mine is None or rank < mine[0]:
                mine = (rank, position)
        if mine is None:
            continue
        found = Quality(mine[0][0], mine[0][1])
        if best is None or found.key() < best[0].key():
            best = (found, mine[1], line)
    return best


def _after_approach(lines: Sequence[str], position: int, on: Collection[int], until: int) -> bool:
    """Whether `position` comes right after a step that goes to, finds or faces one of `on`, and
    no step from there to `until` names one of them (so that the step put in there changes
    nothing the person does with them in between)."""
    if position == 0:
        return False
    before = parse_step(lines[position - 1])
    if before.verb not in APPROACHES or not any(a.node in on for a in before.arguments):
        return False
    between = lines[position:until]
    return not any(a.node in on for line in between for a in parse_step(line).arguments)


def _between_copies(lines: Sequence[str], position: int, on: Collection[int]) -> bool:
    """Whether `position` falls between two copies of a line on one of the nodes `on`."""
    if not 0 < position < len(lines) or lines[position - 1] != lines[position]:
        return False
    return any(a.node in on for a in parse_step(lines[position]).arguments)


def runs_to_goal(scene: Scene, lines: Sequence[str]) -> bool:
    """Whether the lines run to the end and meet the scene's goal."""
    run = trace(lines, scene.start)
    return run.completed and check(scene, run).met
