"""A program's scene and goal, and fast re-runs of edited versions of its script.

The Judge tries many versions of one program (a block left out, a step put in). Each try starts
from the state the simulator reached before the first line it changes, so only the rest is run
again; the goal is checked on the simulator's state itself rather than on a `to_dict()` graph.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from planverify.domains.virtualhome import data
from planverify.domains.virtualhome.goals import Goal, GoalCheck, goal_of, unreached
from planverify.domains.virtualhome.notation import node_classes, parse_step
from planverify.domains.virtualhome.simulate import State, StepResult, initial_state, take_step
from planverify.world.deadline import current

try:
    from virtualhome_eval.simulation.evolving_graph.environment import Relation
except ImportError as exc:  # pragma: no cover - simulate already said so
    raise data.PackageMissing() from exc

PLACED = frozenset({"ON", "INSIDE"})  # the edges that say where a thing lies
CHECK_EVERY_STEPS = 32  # simulator steps between two checks of the deadline (each is slow)


@dataclass(frozen=True)
class Scene:
    """What the Judge knows of a program: its initial graph and state, and its goal."""

    name: str  # the program, e.g. "file628_2"
    title: str  # its task title
    graph: Mapping[str, Any]  # its initial scene graph
    start: State  # the simulator's state for that graph
    goal: Goal | None  # its vh_goal, if it has one
    classes: dict[int, str]  # node id -> class name
    rooms: dict[int, int]  # node id -> the room it lies in, at the start
    properties: dict[int, frozenset[str]]  # node id -> its properties, e.g. GRABBABLE
    near: dict[int, frozenset[int]]  # node id -> the objects an edge ties it to at the start
    placed: dict[int, frozenset[int]] = field(default_factory=dict)
    # node id -> what it lies on or in at the start, and what lies on or in it (rooms aside): of
    # `near`, the ties that are no mere closeness (`CLOSE`, `FACING` tie a lamp to the keyboard
    # on the desk beside it, and the floor and walls to everything)


@cache
def load_scene(name: str) -> Scene:
    """The scene and goal of an installed program (read once per program)."""
    program = data.read_program(name)
    graph = data.scene_graphs(name).initial
    return scene_of(name, program.title, graph, goal_of(program))


def scene_of(name: str, title: str, graph: Mapping[str, Any], goal: Goal | None) -> Scene:
    """A scene from an initial graph and a goal."""
    nodes = graph.get("nodes", [])
    room_ids = {int(n["id"]) for n in nodes if n.get("category") == "Rooms"}
    rooms = {
        int(e["from_id"]): int(e["to_id"])
        for e in graph.get("edges", [])
        if e["relation_type"] == "INSIDE" and int(e["to_id"]) in room_ids
    }
    rooms.update({r: r for r in room_ids})
    properties = {int(n["id"]): frozenset(n.get("properties", [])) for n in nodes}
    ties: dict[int, set[int]] = {}
    lies: dict[int, set[int]] = {}
    for e in graph.get("edges", []):
        ends = int(e["from_id"]), int(e["to_id"])
        if not room_ids & set(ends):
            for table in [ties] + ([lies] if e["relation_type"] in PLACED else []):
                table.setdefault(ends[0], set()).add(ends[1])
                table.setdefault(ends[1], set()).add(ends[0])
    near = {node: frozenset(found) for node, found in ties.items()}
    placed = {node: frozenset(found) for node, found in lies.items()}
    classes = node_classes(graph)
    start = initial_state(graph)
    return Scene(name, title, graph, start, goal, classes, rooms, properties, near, placed)


def goal_nodes(goal: Goal | None) -> frozenset[int]:
    """The nodes a goal names (the character's edges name the character too)."""
    if goal is None:
        return frozenset()
    ids = {n.node for n in goal.nodes} | {e.target for e in goal.edges}
    ids |= {e.source for e in goal.edges}
    return frozenset(ids)


def lies_at(state: State, node: int) -> frozenset[tuple[str, int]]:
    """Where a thing lies in a simulator state: the `ON` and `INSIDE` edges from it, as
    (relation, node) pairs."""
    found = state.get_node(node)
    if found is None:
        return frozenset()
    return frozenset(
        (name, n.id) for name in PLACED for n in state.get_nodes_from(found, Relation[name])
    )


def held(state: State) -> frozenset[int]:
    """The things the character holds in a simulator state."""
    character = next(state.get_char_node(0))
    return frozenset(
        n.id
        for name in ("HOLDS_RH", "HOLDS_LH")
        for n in state.get_nodes_from(character, Relation[name])
    )


def in_state(state: State, node: int, wanted: str) -> bool:
    """Whether a thing is in a state (`ON`, `OPEN`...) in a simulator state."""
    found = state.get_node(node)
    return found is not None and wanted in {s.name for s in found.states}


def state_check(goal: Goal | None, state: State, verbs: Sequence[str]) -> GoalCheck:
    """What of the goal a simulator state and the verbs carried out leave unmet."""
    if goal is None:
        return GoalCheck()

    def holds_edge(source: int, relation: str, target: int) -> bool:
        ends = state.get_node(source), state.get_node(target)
        if ends[0] is None or ends[1] is None or relation not in Relation.__members__:
            return False
        return bool(state.has_edge(ends[0], Relation[relation], ends[1]))

    return GoalCheck(
        nodes=tuple(n for n in goal.nodes if not in_state(state, n.node, n.state)),
        edges=tuple(e for e in goal.edges if not holds_edge(e.source, e.relation, e.target)),
        actions=unreached(goal.actions, verbs),
    )


@dataclass
class Trace:
    """A script run step by step until a step fails."""

    lines: list[str]  # the script
    states: list[State] = field(default_factory=list)  # states[i]: before step i (and after)
    results: list[StepResult] = field(default_factory=list)  # one per step tried
    verbs: list[list[str]] = field(default_factory=list)  # verbs[i]: verbs carried out before i

    @property
    def failed_at(self) -> int | None:
        """The step that failed, if one did."""
        last = self.results[-1] if self.results else None
        return last.index if last is not None and last.outcome == "failed" else None

    @property
    def completed(self) -> bool:
        """Every step ran."""
        return self.failed_at is None and len(self.results) == len(self.lines)

    @property
    def final(self) -> State:
        """The state after the last step that ran."""
        return self.states[-1]


def _verb(line: str) -> str:
    return parse_step(line).verb


def trace(lines: Sequence[str], start: State, *, since: Trace | None = None, at: int = 0) -> Trace:
    """Run a script from `start`; with `since` (a trace of a script whose first `at` lines are the
    same), resume from its state before line `at`."""
    run = Trace(list(lines))
    if since is not None and at > 0:
        at = min(at, len(since.states) - 1)
        run.states = since.states[: at + 1]
        run.results = since.results[:at]
        run.verbs = since.verbs[: at + 1]
    else:
        at = 0
        run.states, run.verbs = [start], [[]]
    state, verbs = run.states[-1], run.verbs[-1]
    deadline = current()  # a served run's: the Judge's search stops with it (`Stopped`)
    for index in range(at, len(lines)):
        if deadline is not None and (index - at) % CHECK_EVERY_STEPS == 0:
            deadline.check()
        result, state = take_step(state, lines[index], index)
        run.results.append(result)
        if result.outcome == "failed":
            break
        if result.outcome == "ok":
            verbs = [*verbs, _verb(lines[index])]
        run.states.append(state)
        run.verbs.append(verbs)
    return run


def check(scene: Scene, run: Trace) -> GoalCheck:
    """What of the scene's goal a run leaves unmet, from the state after its last step."""
    return state_check(scene.goal, run.final, run.verbs[-1])
