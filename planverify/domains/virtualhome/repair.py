"""Steps to put into a VirtualHome program, found by trying them in the simulator: a step that
lets a failing step happen (walk to it, open what holds it...), or one that makes an unmet goal
condition hold (switch on the television the goal wants on...)."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass

from planverify.domains.virtualhome import data
from planverify.domains.virtualhome.goals import GoalCheck
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
    "INSIDE": ("PUTIN", "PUTBACK"),
}  # an edge a goal wants between two objects -> verbs that may make it hold
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


@dataclass(frozen=True)
class Quality:
    """How far a version of a program gets: fewer failures, then fewer unmet goal parts."""

    failures: int  # steps that cannot happen (each skipped, the run goes on)
    unmet: int  # goal parts left unmet at the end

    def key(self) -> tuple[int, int]:
        return self.failures, self.unmet


def quality(scene: Scene, lines: Sequence[str]) -> Quality:
    """Run every line (a failing one changes nothing) and count failures and unmet goal parts."""
    state, failures = scene.start, 0
    verbs: list[str] = []
    for index, line in enumerate(lines):
        result, state = take_step(state, line, index)
        failures += result.outcome == "failed"
        if result.outcome == "ok":
            verbs.append(parse_step(line).verb)
    unmet = state_check(scene.goal, state, verbs)
    return Quality(failures, len(unmet.describe()))


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
    """Steps that may let step `at` of a run happen: on its objects and what holds them. Of
    walking to and finding an object, the one the program does not already have comes first
    (`[FIND]` when it has neither)."""
    step = parse_step(run.lines[at])
    if step.verb in {"SIT", "LIE", "WALK", "FIND"} or not step.arguments:
        yield "[STANDUP]"
    state = run.states[min(at, len(run.states) - 1)]
    for argument in step.arguments:
        verbs = list(ENABLERS)
        if _walk_first(scene, argument.node, run.lines):
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


def _walk_first(scene: Scene, node: int, lines: Sequence[str]) -> bool:
    return step_line(scene, "FIND", [node], lines) in lines


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
    program, those of the first set in `prefer` first (e.g. the goal's objects, then those the
    title names), then the next set's..."""
    for node in unmet.nodes:
        verb = STATE_VERBS.get(node.state)
        line = None if verb is None else step_line(scene, verb, [node.node], lines)
        if line is not None:
            yield line
    for edge in unmet.edges:
        held = scene.classes.get(edge.source) == "character"
        table = CHARACTER_VERBS if held else EDGE_VERBS
        for verb in table.get(edge.relation, ()):
            nodes = [edge.target] if held else [edge.source, edge.target]
            line = step_line(scene, verb, nodes, lines)
            if line is not None:
                yield line
    if unmet.actions:
        objects = {a.node for line in lines for a in parse_step(line).arguments}
        ordered = sorted(objects, key=lambda n: ([n not in p for p in prefer], n))
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
    or None when there are no candidates."""
    best: tuple[Quality, int, str] | None = None
    for line in dict.fromkeys(candidates):
        for position in positions:
            tried = [*lines[:position], line, *lines[position:]]
            result = quality(scene, tried)
            if best is None or result.key() < best[0].key():
                best = (result, position, line)
    return best


def runs_to_goal(scene: Scene, lines: Sequence[str]) -> bool:
    """Whether the lines run to the end and meet the scene's goal."""
    run = trace(lines, scene.start)
    return run.completed and check(scene, run).met
