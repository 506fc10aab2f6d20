"""`detour` and `nonexistent_object`: a look at the objects next to the one wanted, or at objects
no scene has.
"""

from __future__ import annotations

import random

from planverify.noise.natural.draft import (
    Draft,
    Line,
    fresh_name,
    put_back,
)
from planverify.noise.natural.knowledge import (
    FALLBACK_LOOSE,
    INVENTED,
    SEARCHED,
    driver_line,
    everyday_words,
)
from planverify.records.notation import object_type
from planverify.world.classes import base_type


def make_detour(d: Draft, rng: random.Random) -> bool:
    options: list[tuple[int, list[Line], str]] = []
    for j, step in enumerate(d.steps):
        if not d.free(j) or not d.kept(j):
            continue
        if step.verb == "PickUp" and step.objects and d.held[j] is None:
            options += _neighbours(d, j, step.objects[0])
        if step.verb == "Open" and step.objects and object_type(step.objects[0]) in SEARCHED:
            kind = object_type(step.objects[0])
            taken = {o for s in d.steps for o in s.objects if object_type(o) == kind}
            if d.view.known and len([o for o in d.view.of(kind) if not o.open]) <= len(taken):
                continue
            other = fresh_name(kind, d.names)
            options.append(
                (
                    j,
                    [
                        Line(
                            driver_line("Open", other),
                            f"looks in {other}, the wrong {everyday_words(kind)}",
                        ),
                        Line(driver_line("Close", other), f"closes {other}, nothing taken"),
                    ],
                    "wrong_container",
                )
            )
    if not options:
        return False
    near_goal = [o for o in options if _wanted_at(d, o[0])]
    j, lines, variant = rng.choice(near_goal if near_goal and rng.random() < 0.75 else options)
    d.add(j, "detour", lines, variant=variant, relies_on=[j])
    return True


def _wanted_at(d: Draft, j: int) -> bool:
    """Whether base step j handles an object the goal names (or opens where one is)."""
    step = d.steps[j]
    if step.verb == "PickUp":
        return base_type(object_type(step.objects[0])) in d.wanted
    nxt = next((s for s in d.steps[j + 1 :] if s.verb == "PickUp"), None)
    return nxt is not None and base_type(object_type(nxt.objects[0])) in d.wanted


def _neighbours(d: Draft, j: int, target: str) -> list[tuple[int, list[Line], str]]:
    """Detours to objects sharing the target's receptacle, before it is picked up."""
    out: list[tuple[int, list[Line], str]] = []
    if not d.view.known:
        surfaces = {
            object_type(s.objects[1])
            for s in d.steps
            if s.verb == "PutAOnB" and len(s.objects) == 2
        }
        if "CounterTop" in surfaces:
            for kind in FALLBACK_LOOSE:
                if kind not in d.needed and kind not in d.names:
                    out.append((j, _pick_and_put_back(kind, "CounterTop", target), "picked_up"))
        return out
    thing = d.view.named(target)
    if thing is None:
        return out
    shared = set(thing.parent) - {"Floor"}
    for step in d.steps[:j]:  # where the plan left it, if it moved it
        if step.verb == "PutAOnB" and step.objects[0] == target:
            shared = {object_type(step.objects[1])}
    for o in d.view.objects:
        if o is thing or not (set(o.parent) & shared) or o.type in d.needed or o.type in d.names:
            continue
        where = sorted(set(o.parent) & shared)[0]
        if o.pickupable and d.view.reachable(o) and d.view.place(where):
            out.append((j, _pick_and_put_back(o.type, where, target), "picked_up"))
        elif o.openable and not o.open and (o.pickupable or o.receptacle):
            out.append(
                (
                    j,
                    [
                        Line(
                            driver_line("Open", o.type),
                            f"opens {o.type}, next to {target}, not needed",
                        ),
                        Line(driver_line("Close", o.type), f"closes {o.type} again"),
                    ],
                    "opened",
                )
            )
    return out


def _pick_and_put_back(kind: str, where: str, target: str) -> list[Line]:
    return [
        Line(driver_line("PickUp", kind), f"picks up {kind} next to {target}, not needed"),
        Line(driver_line("PutAOnB", kind, where), f"puts {kind} back"),
    ]


def make_nonexistent(d: Draft, rng: random.Random) -> bool:
    scene = d.view.types
    verb = rng.choice(sorted(INVENTED))
    names = [n for n in INVENTED[verb] if n not in scene and n not in d.names]
    if not names:
        return False
    name = rng.choice(names)
    if verb == "PickUp":
        gaps = [g for g in range(d.n + 1) if d.held[g] is None and d.free(g)]
        where = put_back(d, None)
        if not gaps or where is None:
            return False
        gap = rng.choice(gaps)
        lines = [
            Line(driver_line("PickUp", name), f"there is no {name} in the scene"),
            Line(driver_line("PutAOnB", name, where), f"puts down a {name} that does not exist"),
        ]
    else:
        gaps = [g for g in range(d.n + 1) if d.free(g)]
        if not gaps:
            return False
        gap = rng.choice(gaps)
        off = "Close" if verb == "Open" else "ToggleOff"
        lines = [Line(driver_line(verb, name), f"there is no {name} in the scene")]
        if verb == "Open" or rng.random() < 0.5:
            lines.append(Line(driver_line(off, name), f"there is no {name} in the scene"))
    d.add(gap, "nonexistent_object", lines, variant=verb)
    return True
