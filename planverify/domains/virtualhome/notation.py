"""VirtualHome's script notation: `[VERB] <name> (k.ID)`, with zero to two objects.

In `(k.ID)`, k numbers the instances of that class within the script and ID is the object's node
in the program's initial scene graph. The simulator goes by ID alone, so whether the name agrees
with the node's class is checked here (`misnamed`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

_VERB = re.compile(r"\[([A-Za-z_]+)\]")
_ARGUMENT = re.compile(r"\s*<([^<>()]+)>\s*\((\d+)\.(\d+)\)")


class NotationError(ValueError):
    """A line that is not a VirtualHome script line."""


@dataclass(frozen=True)
class Argument:
    """An object a step acts on."""

    name: str  # the object's class as the script names it, e.g. "water_glass"
    instance: int  # k: the instance of that class within the script
    node: int  # ID: the node in the program's initial scene graph

    def __str__(self) -> str:
        return f"<{self.name}> ({self.instance}.{self.node})"


@dataclass(frozen=True)
class Step:
    """One script line."""

    verb: str  # upper case, e.g. "WALK"
    arguments: tuple[Argument, ...] = ()  # the objects, in the order written

    def __str__(self) -> str:
        return format_step(self)


def parse_step(line: str) -> Step:
    """A script line as a `Step`; `NotationError` saying what is wrong."""
    text = line.strip()
    verb = _VERB.match(text)
    if verb is None:
        raise NotationError(f"{line!r}: not a script line; expected `[VERB] <object> (1.ID)`")
    arguments: list[Argument] = []
    at = verb.end()
    while at < len(text):
        argument = _ARGUMENT.match(text, at)
        if argument is None:
            raise NotationError(f"{line!r}: expected `<object> (k.ID)` at {text[at:]!r}")
        name, instance, node = argument.groups()
        arguments.append(Argument(name.strip(), int(instance), int(node)))
        at = argument.end()
    return Step(verb[1].upper(), tuple(arguments))


def format_step(step: Step) -> str:
    """A step written as the package writes script lines."""
    return " ".join([f"[{step.verb}]", *(str(a) for a in step.arguments)])


def misnamed(step: Step, class_of: Callable[[int], str | None]) -> str | None:
    """Why the step's objects do not match the scene (`class_of`: a node's class name, None
    for no such node): an unknown node, or a name that is not the node's class; None when they
    match."""
    for argument in step.arguments:
        known = class_of(argument.node)
        if known is None:
            return f"{argument}: no node {argument.node} in the scene"
        if class_name(argument.name) != known:
            return f"{argument}: node {argument.node} is a {known}"
    return None


def class_name(name: str) -> str:
    """A script name as a class name (the simulator lower-cases names and joins words by `_`)."""
    return name.lower().replace(" ", "_")


def node_classes(graph: Mapping[str, object]) -> dict[int, str]:
    """Node id to class name, for a scene graph `{"nodes": [...], ...}`."""
    nodes = graph.get("nodes")
    if not isinstance(nodes, list):
        return {}
    return {int(n["id"]): str(n["class_name"]) for n in nodes}
