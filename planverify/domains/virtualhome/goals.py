"""Whether a VirtualHome scene meets a `vh_goal`: its node states, its edges, and its ordered
action goals (`LOOKAT|WATCH`: either verb will do).

Checked here on a scene graph (`{"nodes", "edges"}`, e.g. a run's `state.to_dict()`) and the
verbs a run carried out, rather than with the package's `scene_evaluate_wID`, which stops at
the first edge goal it matches and puts ordered action goals through a `set`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from planverify.domains.virtualhome.data import Program, raw_goal


@dataclass(frozen=True)
class NodeGoal:
    """A node that must be in a state."""

    node: int  # the node id in the program's scene graph
    class_name: str  # its class, e.g. "television"
    state: str  # e.g. "ON", "PLUGGED_IN", "CLOSED"

    def __str__(self) -> str:
        return f"{self.state}({self.class_name}.{self.node})"


@dataclass(frozen=True)
class EdgeGoal:
    """A relation that must hold between two nodes."""

    source: int  # from_id, e.g. the character (65)
    relation: str  # e.g. "ON", "INSIDE", "HOLDS_RH", "FACING"
    target: int  # to_id

    def __str__(self) -> str:
        return f"{self.relation}({self.source}, {self.target})"


@dataclass(frozen=True)
class Goal:
    """A program's `vh_goal`."""

    nodes: tuple[NodeGoal, ...] = ()  # node states that must hold at the end
    edges: tuple[EdgeGoal, ...] = ()  # edges that must hold at the end
    actions: tuple[frozenset[str], ...] = ()  # verbs to carry out in this order; each a choice


def parse_goal(raw: Mapping[str, Any]) -> Goal:
    """A `vh_goal` as the package writes it: `{"goal": [node or edge goals], "actions": [...]}`."""
    nodes, edges = [], []
    for item in raw.get("goal", []):
        if "state" in item:
            nodes.append(NodeGoal(int(item["id"]), str(item["class_name"]), str(item["state"])))
        else:
            edges.append(
                EdgeGoal(int(item["from_id"]), str(item["relation_type"]), int(item["to_id"]))
            )
    actions = tuple(frozenset(a.upper().split("|")) for a in raw.get("actions", []))
    return Goal(tuple(nodes), tuple(edges), actions)


def goal_of(program: Program) -> Goal | None:
    """The installed package's goal for a program, if it has one."""
    raw = raw_goal(program.title, program.key)
    return None if raw is None else parse_goal(raw)


@dataclass(frozen=True)
class GoalCheck:
    """The parts of a goal a scene and its run leave unmet."""

    nodes: tuple[NodeGoal, ...] = ()  # node states that do not hold
    edges: tuple[EdgeGoal, ...] = ()  # edges that do not hold
    actions: tuple[frozenset[str], ...] = field(default=())  # action goals not reached, in order

    @property
    def met(self) -> bool:
        """Every part of the goal holds."""
        return not (self.nodes or self.edges or self.actions)

    def describe(self) -> list[str]:
        """One line per unmet part, e.g. `ON(television.410)`, `action LOOKAT|WATCH`."""
        return [
            *(str(n) for n in self.nodes),
            *(str(e) for e in self.edges),
            *("action " + "|".join(sorted(a)) for a in self.actions),
        ]


def check_goal(goal: Goal, graph: Mapping[str, Any], verbs: Sequence[str]) -> GoalCheck:
    """What of `goal` the scene graph and the verbs carried out (in order) leave unmet."""
    states = {int(n["id"]): set(n.get("states", [])) for n in graph.get("nodes", [])}
    edges = {
        (int(e["from_id"]), str(e["relation_type"]), int(e["to_id"]))
        for e in graph.get("edges", [])
    }
    return GoalCheck(
        nodes=tuple(n for n in goal.nodes if n.state not in states.get(n.node, set())),
        edges=tuple(e for e in goal.edges if (e.source, e.relation, e.target) not in edges),
        actions=unreached(goal.actions, verbs),
    )


def unreached(wanted: Sequence[frozenset[str]], verbs: Iterable[str]) -> tuple[frozenset[str], ...]:
    """The ordered action goals that `verbs` do not reach: each goal is met by the first verb
    among its choices after the verb that met the goal before it."""
    reached = 0
    for verb in verbs:
        if reached < len(wanted) and verb.upper() in wanted[reached]:
            reached += 1
    return tuple(wanted[reached:])
