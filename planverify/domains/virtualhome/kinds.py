"""The trim policies' kinds on VirtualHome, in one table (`KINDS`): the steps a person writes that
the goal does without, but that are how people carry out a task.

- `approach`: finding, walking to, turning to, looking at something before using it;
- `posture`: sitting or lying down to do the task, and standing up after;
- `activity`: what the task is about and the simulator does not model (drinking, reading,
  typing, washing, watching...): it changes nothing in the scene graph, and that is no reason to
  remove it.

Under `natural` these are kept (listed as optional); under `minimal` they are removed when the goal
does without them, and kept when it does not (a `[FIND]` is often what makes the character close
enough to grab; some goals ask for `[LOOKAT]` or `[WATCH]` as actions). Either way a step of
these kinds is kept only when it is about an object the task uses (`used`), else it is a detour.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping

from planverify.domains.virtualhome.notation import Step

KINDS: dict[str, frozenset[str]] = {
    "approach": frozenset({"WALK", "RUN", "FIND", "TURNTO", "LOOKAT", "POINTAT"}),
    "posture": frozenset({"SIT", "LIE", "STANDUP"}),
    "activity": frozenset(
        {"DRINK", "EAT", "READ", "WATCH", "TOUCH", "TYPE", "PUSH", "PULL", "MOVE", "WASH"}
        | {"RINSE", "SCRUB", "WIPE", "SQUEEZE", "GREET", "SLEEP", "WAKEUP", "CUT", "RELEASE"}
        | {"LOOKAT_SHORT", "LOOKAT_LONG"}
    ),
}  # kind -> the verbs of that kind; every kind here is one `natural` keeps
TASK = "task"  # any other step on objects the task uses (the goal, the goal text, kept steps)
NATURAL_KINDS = frozenset({*KINDS, TASK})  # the kinds `natural` keeps
REASONS = {
    "approach": "a person's approach to an object the task uses; the goal does without it",
    "activity": "part of what the task is about, which the simulator does not model; the goal "
    "does without it",
    "posture": "a person sitting, lying or standing up to do the task; the goal does without it",
    TASK: "a step on an object the task uses, which its goal conditions do not ask for",
}  # why `minimal` removes a step of each kind
_WORD = re.compile(r"[a-z]+")
IDEMPOTENT = frozenset(
    {"WALK", "RUN", "FIND", "TURNTO", "OPEN", "CLOSE", "SWITCHON", "SWITCHOFF", "PLUGIN"}
    | {"PLUGOUT", "GRAB", "SIT", "LIE", "STANDUP", "PUTON", "PUTOFF", "PUTBACK", "PUTIN"}
)  # verbs whose exact repeat, right after themselves, changes nothing whatever the scene
OPPOSITES = {
    "SWITCHON": "SWITCHOFF",
    "SWITCHOFF": "SWITCHON",
    "OPEN": "CLOSE",
    "CLOSE": "OPEN",
    "PLUGIN": "PLUGOUT",
    "PLUGOUT": "PLUGIN",
    "GRAB": "PUTBACK",
    "PUTON": "PUTOFF",
    "PUTOFF": "PUTON",
}  # a verb and the one that undoes it


def kind_of(verb: str) -> str | None:
    """The kind of a verb in `KINDS`, or None."""
    return next((kind for kind, verbs in KINDS.items() if verb in verbs), None)


def optional_kind(
    step: Step, used: Collection[int], rooms: Mapping[int, int], place: Collection[int] = ()
) -> str | None:
    """The kind of a step `natural` keeps, or None: a step on objects the task uses (`used`; for
    an approach, one of them is enough), a walk into a room where the task uses something
    (`rooms`: node -> room), or, for a kind that moves or changes nothing but the character
    (approach, posture, activity), a step on things that lie in the task's place (`place`: the
    rooms where it uses something)."""
    kind = kind_of(step.verb) or TASK
    nodes = {a.node for a in step.arguments}
    if not nodes:
        return kind if step.verb in {"SLEEP", "WAKEUP", "STANDUP"} else None
    things = {n for n in nodes if rooms.get(n) != n}
    if kind != TASK and things and all(rooms.get(n) in place for n in things):
        return kind
    if kind == "approach":
        in_use = {rooms.get(node) for node in used}
        if nodes & set(used) or all(rooms.get(n) == n and n in in_use for n in nodes):
            return kind
        return None
    return kind if things and things <= set(used) else None


def named_nodes(classes: Mapping[int, str], text: str) -> set[int]:
    """The nodes whose class the text names: the whole name (`coffee table`, `toothpaste`) or
    one of its words of four letters or more, singular or plural."""
    lowered = text.lower()
    words = set(_WORD.findall(lowered))
    words |= {w.removesuffix("es") for w in words} | {w.removesuffix("s") for w in words}
    found = set()
    for node, name in classes.items():
        parts = name.split("_")
        whole = " ".join(parts) in lowered or "".join(parts) in words
        if whole or any(len(p) >= 4 and p in words for p in parts):
            found.add(node)
    return found
