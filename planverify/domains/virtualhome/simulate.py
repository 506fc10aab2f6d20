"""A VirtualHome program run step by step by the package's own evolving-graph simulator.

The state is the package's `EnvironmentState`, built with `instance_selection=True` so that a
step acts on the node its `(k.ID)` names. Each step either changes the state (`ok`), changes
nothing because what it would do already holds (`satisfied`, the simulator's error code 4), or
cannot happen (`failed`, with the simulator's reason or ours: an unknown verb or node, a name
that is not the node's class).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from planverify.domains.virtualhome.data import PackageMissing
from planverify.domains.virtualhome.notation import NotationError, Step, misnamed, parse_step

try:
    from virtualhome_eval.simulation.evolving_graph import common, environment, execution, scripts
except ImportError as exc:  # pragma: no cover - the extra is part of `dev`
    raise PackageMissing() from exc

# It logs every step at INFO; a batch of programs would drown a console in it.
logging.getLogger("virtualhome_eval").setLevel(logging.WARNING)

Outcome = Literal["ok", "satisfied", "failed"]
SATISFIED = 4  # the simulator's error code for "what the step would do already holds"
State = Any  # the package's `EnvironmentState` (untyped)


@dataclass(frozen=True)
class StepResult:
    """What one step did."""

    index: int  # 0-based position in the program
    line: str  # the script line
    outcome: Outcome  # ok: changed the state; satisfied: changed nothing; failed: cannot happen
    reason: str = ""  # why it was satisfied or failed, as the simulator (or the check) says
    code: int | None = None  # the simulator's error code, when it gave one
    effects: tuple[str, ...] = ()  # what an `ok` step changed: "+mug HOLDS_RH..." (see `effects`)


@dataclass
class Run:
    """A program run on its initial graph."""

    steps: list[StepResult] = field(default_factory=list)  # one per step that was tried
    state: State = None  # the state after the last step tried
    length: int = 0  # the program's number of steps

    @property
    def failure(self) -> StepResult | None:
        """The first step that failed, if any."""
        return next((s for s in self.steps if s.outcome == "failed"), None)

    @property
    def completed(self) -> bool:
        """Every step was tried and none failed."""
        return len(self.steps) == self.length and self.failure is None


def initial_state(graph: Mapping[str, Any]) -> State:
    """The simulator's state for a scene graph `{"nodes": [...], "edges": [...]}`."""
    environment_graph = environment.EnvironmentGraph(dict(graph))
    return environment.EnvironmentState(
        environment_graph, _name_equivalence(), instance_selection=True
    )


def _name_equivalence() -> dict[str, list[str]]:
    if not _EQUIVALENCE:
        from virtualhome_eval.simulation.evolving_graph import utils

        _EQUIVALENCE.update(utils.load_name_equivalence())
    return _EQUIVALENCE


_EQUIVALENCE: dict[str, list[str]] = {}  # read once: with instance selection it is not used


def take_step(state: State, line: str, index: int = 0) -> tuple[StepResult, State]:
    """Try one script line on a state: what happened, and the state after it (the same state
    unless the step is `ok`)."""
    try:
        step = parse_step(line)
    except NotationError as exc:
        return StepResult(index, line, "failed", str(exc)), state
    problem = _refusal(step, state)
    if problem is not None:
        return StepResult(index, line, "failed", problem), state
    action = scripts.Action[step.verb]
    objects = [scripts.ScriptObject(a.name, a.node) for a in step.arguments]
    script = scripts.Script([scripts.ScriptLine(action, objects, index)])
    info = execution.ExecutionInfo(eval_mode=True)
    try:
        after = next(execution.ScriptExecutor.call_action_method(script, state, info, 0), None)
    except common.Error as exc:
        return StepResult(index, line, "failed", str(exc)), state
    if after is not None:
        return StepResult(index, line, "ok", effects=effects(state, after)), after
    code = info.get_error_type()
    outcome: Outcome = "satisfied" if code == SATISFIED else "failed"
    reason = info.get_error_string() or "the simulator refused it without a reason"
    return StepResult(index, line, outcome, reason, code), state


def _refusal(step: Step, state: State) -> str | None:
    """Why the simulator must not be asked to take the step at all (it would raise, or act on a
    node the name does not describe); None when it may."""
    action = scripts.Action.__members__.get(step.verb)
    if action is None:
        return f"unknown verb [{step.verb}]"
    wanted = action.value[1]
    if len(step.arguments) != wanted:
        return f"[{step.verb}] takes {wanted} object(s), not {len(step.arguments)}"
    return misnamed(step, lambda node: getattr(state.get_node(node), "class_name", None))


def effects(before: State, after: State) -> tuple[str, ...]:
    """What differs between two states of one run: node states gained or lost (`+television
    (410) ON`) and edges made or broken (`+character (65) CLOSE mug (1000)`), in a stable order."""
    nodes = before._new_nodes.keys() | after._new_nodes.keys()
    changed = [_node_change(before.get_node(i), after.get_node(i)) for i in sorted(nodes)]
    edges = sorted(_edge_keys(before) | _edge_keys(after), key=lambda e: (e[0], e[1].name, e[2]))
    made = [_edge_change(before, after, edge) for edge in edges]
    return tuple(c for c in [*changed, *made] if c)


def _edge_keys(state: State) -> set[tuple[int, Any, int]]:
    # The simulator keeps a state as its initial graph plus what changed since; looking only at
    # those changes is a hundred times cheaper than comparing `to_dict()` graphs.
    recorded = [state._new_edges_from, state._removed_edges_from]
    return {(f, r, t) for table in recorded for (f, r), targets in table.items() for t in targets}


def _node_change(before: Any, after: Any) -> str:
    gained = sorted(s.name for s in set(after.states) - set(before.states))
    lost = sorted(s.name for s in set(before.states) - set(after.states))
    marks = [f"+{s}" for s in gained] + [f"-{s}" for s in lost]
    return f"{after} {' '.join(marks)}" if marks else ""


def _edge_change(before: State, after: State, edge: tuple[int, Any, int]) -> str:
    source, relation, target = edge
    ends = [after.get_node(source), after.get_node(target)]
    was = before.has_edge(ends[0], relation, ends[1])
    now = after.has_edge(ends[0], relation, ends[1])
    if was == now:
        return ""
    return f"{'+' if now else '-'}{ends[0]} {relation.name} {ends[1]}"


def simulate(lines: Sequence[str], graph: Mapping[str, Any], *, keep_going: bool = False) -> Run:
    """Run script lines on a scene graph, step by step. A failed step ends the run, unless
    `keep_going`: then it changes nothing and the next step is tried."""
    run = Run(state=initial_state(graph), length=len(lines))
    for index, line in enumerate(lines):
        result, run.state = take_step(run.state, line, index)
        run.steps.append(result)
        if result.outcome == "failed" and not keep_going:
            break
    return run
