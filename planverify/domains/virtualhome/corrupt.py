"""Labelled errors in VirtualHome's notation, put into human programs that meet their goal.

One error a program, of one of `ERRORS`, chosen and placed by a seeded generator:

- `detour`: walk to an object the task has nothing to do with (of a class the program and the
  goal never name, in a room where they use nothing), grab it and put it back where it was;
- `duplicate`: a step written twice in a row;
- `switch`: walk to a device the task does not use, switch it on and off again;
- `impossible`: a step the simulator refuses (grabbing furniture, opening what has no door);
- `missing_step`: a step the program needs taken out (a MISSING label).

Every label is checked by the simulator: the corrupted program without its REMOVE steps and with
its MISSING step is the human program, which runs and meets its goal; for `missing_step`, the
corrupted program does not.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from planverify.domains.virtualhome.kinds import named_nodes
from planverify.domains.virtualhome.notation import parse_step
from planverify.domains.virtualhome.repair import runs_to_goal, step_line
from planverify.domains.virtualhome.replay import Scene, goal_nodes, trace
from planverify.records.episode import Label

ERRORS = ("detour", "duplicate", "switch", "impossible", "missing_step")
LABEL_ERRORS = {
    "detour": "detour",
    "duplicate": "duplicate",
    "switch": "other",
    "impossible": "ineffective_action",
    "missing_step": "missing_step",
}  # our kind -> the label's `error` (the kind itself is kept as `vh_error`)
TRIES = 30  # placements tried before giving up on an error


@dataclass(frozen=True)
class Corrupted:
    """A human program with one labelled error."""

    lines: list[str]  # the corrupted program
    labels: list[Label]  # what to remove (REMOVE) or put back (MISSING)
    error: str  # one of `ERRORS`


@dataclass(frozen=True)
class _Job:
    scene: Scene  # the program's scene and goal
    lines: list[str]  # the human program
    rng: random.Random  # draws the kind and place of the error
    text: str  # the goal text (what it names is not "unrelated")


def corrupt(
    scene: Scene, lines: Sequence[str], rng: random.Random, error: str, text: str = ""
) -> Corrupted | None:
    """The program with one error of the given kind, or None when none could be placed."""
    made = _MAKERS[error](_Job(scene, list(lines), rng, text))
    if made is None or not exact(scene, made, lines):
        return None
    return made


def exact(scene: Scene, made: Corrupted, original: Sequence[str]) -> bool:
    """Whether the labels are exact: undoing them gives the original, which meets its goal."""
    drop = {label.index for label in made.labels if label.type == "REMOVE"}
    fixed = [line for i, line in enumerate(made.lines) if i not in drop]
    for label in made.labels:
        if label.type == "MISSING" and label.action is not None and label.after is not None:
            fixed.insert(label.after + 1, label.action)
    return fixed == list(original) and runs_to_goal(scene, fixed)


def _label(error: str, **fields: Any) -> Label:
    # `vh_error` is an extra field (labels allow them): our kind, finer than `error`
    return Label.model_validate({"error": LABEL_ERRORS[error], "vh_error": error, **fields})


def _insert(
    scene: Scene, lines: list[str], rng: random.Random, block: list[str], error: str
) -> Corrupted | None:
    """The block put in at a random place where the program still runs and meets its goal."""
    places = list(range(1, len(lines) + 1))
    rng.shuffle(places)
    for at in places[:TRIES]:
        corrupted = [*lines[:at], *block, *lines[at:]]
        if runs_to_goal(scene, corrupted):
            labels = [_label(error, type="REMOVE", index=at + k) for k in range(len(block))]
            return Corrupted(corrupted, labels, error)
    return None


def _unrelated(scene: Scene, lines: Sequence[str], needs: str, text: str) -> list[int]:
    """Objects with a property the program, its goal and its goal text have nothing to do with:
    of a class none names, in a room where none uses anything, tied to nothing they use."""
    named = {a.node for line in lines for a in parse_step(line).arguments} | goal_nodes(scene.goal)
    named |= named_nodes(scene.classes, text)
    classes = {scene.classes.get(n) for n in named}
    rooms = {scene.rooms.get(n) for n in named}
    near = {m for n in named for m in scene.near.get(n, ())}
    return sorted(
        n
        for n, props in scene.properties.items()
        if needs in props
        and scene.classes.get(n) not in classes
        and scene.rooms.get(n) not in rooms
        and n not in near
        and n in scene.rooms
    )


def _detour(job: _Job) -> Corrupted | None:
    scene, lines, rng = job.scene, job.lines, job.rng
    objects = _unrelated(scene, lines, "GRABBABLE", job.text)
    rng.shuffle(objects)
    for node in objects[:5]:
        surfaces = [t for t in scene.near.get(node, ()) if _on(scene, node, t)]
        if not surfaces:
            continue
        walk = step_line(scene, "WALK", [node], lines)
        grab = step_line(scene, "GRAB", [node], lines)
        put = step_line(scene, "PUTBACK", [node, surfaces[0]], lines)
        if walk and grab and put:
            made = _insert(scene, lines, rng, [walk, grab, put], "detour")
            if made is not None:
                return made
    return None


def _on(scene: Scene, node: int, target: int) -> bool:
    return any(
        int(e["from_id"]) == node and int(e["to_id"]) == target and e["relation_type"] == "ON"
        for e in scene.graph.get("edges", [])
    )


def _switch(job: _Job) -> Corrupted | None:
    scene, lines, rng = job.scene, job.lines, job.rng
    objects = _unrelated(scene, lines, "HAS_SWITCH", job.text)
    rng.shuffle(objects)
    for node in objects[:5]:
        block = [step_line(scene, verb, [node], lines) for verb in ("WALK", "SWITCHON")]
        block.append(step_line(scene, "SWITCHOFF", [node], lines))
        if all(block):
            made = _insert(scene, lines, rng, [b for b in block if b], "switch")
            if made is not None:
                return made
    return None


def _duplicate(job: _Job) -> Corrupted | None:
    scene, lines, rng = job.scene, job.lines, job.rng
    places = list(range(len(lines)))
    rng.shuffle(places)
    for at in places[:TRIES]:
        if parse_step(lines[at]).verb not in {"WALK", "FIND", "OPEN", "GRAB", "SWITCHON"}:
            continue
        corrupted = [*lines[: at + 1], lines[at], *lines[at + 1 :]]
        if runs_to_goal(scene, corrupted):
            return Corrupted(
                corrupted, [_label("duplicate", type="REMOVE", index=at + 1)], "duplicate"
            )
    return None


def _impossible(job: _Job) -> Corrupted | None:
    scene, lines, rng = job.scene, job.lines, job.rng
    named = sorted({a.node for line in lines for a in parse_step(line).arguments})
    rng.shuffle(named)
    for node in named[:TRIES]:
        props = scene.properties.get(node, frozenset())
        verb = "GRAB" if "GRABBABLE" not in props else "OPEN" if "CAN_OPEN" not in props else ""
        line = step_line(scene, verb, [node], lines) if verb else None
        if line is None or scene.rooms.get(node) == node:
            continue
        at = rng.randrange(1, len(lines) + 1)
        corrupted = [*lines[:at], line, *lines[at:]]
        run = trace(corrupted, scene.start)
        if run.failed_at == at:
            return Corrupted(
                corrupted, [_label("impossible", type="REMOVE", index=at)], "impossible"
            )
    return None


def _missing(job: _Job) -> Corrupted | None:
    scene, lines, rng = job.scene, job.lines, job.rng
    places = list(range(len(lines)))
    rng.shuffle(places)
    for at in places[:TRIES]:
        corrupted = lines[:at] + lines[at + 1 :]
        if not runs_to_goal(scene, corrupted):
            label = _label("missing_step", type="MISSING", after=at - 1, action=lines[at])
            return Corrupted(corrupted, [label], "missing_step")
    return None


_MAKERS: dict[str, Callable[[_Job], Corrupted | None]] = {
    "detour": _detour,
    "duplicate": _duplicate,
    "switch": _switch,
    "impossible": _impossible,
    "missing_step": _missing,
}


def corrupt_program(
    scene: Scene, lines: Sequence[str], seed: int, name: str, text: str = ""
) -> Corrupted | None:
    """One error for a program, its kind and place drawn from a generator seeded by `seed` and
    the program's name (the same for every run), trying the other kinds when one cannot be
    placed."""
    rng = random.Random(f"{seed}:{name}")
    kinds = list(ERRORS)
    rng.shuffle(kinds)
    for error in kinds:
        made = corrupt(scene, lines, rng, error, text)
        if made is not None:
            return made
    return None
