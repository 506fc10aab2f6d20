"""`missing_step`: an essential step forgotten."""

from __future__ import annotations

import random
import re

from planverify.noise.natural.draft import (
    Draft,
)
from planverify.noise.natural.knowledge import (
    CONTAINERS,
    LOADED_BY,
    PLANTS,
    SINKS,
)
from planverify.records.notation import object_type
from planverify.world.classes import base_type


def _essential(d: Draft, i: int) -> bool:
    """Whether base step i does something the plan cannot do without (so forgetting it is an
    error): a switch-on with its load in place and no other run of it for that load, the first
    slice of an object whose slices are used, the only pour into a plant from a vessel known to
    hold water, or the first opening of a closed container something is then taken from or put
    in."""
    step = d.steps[i]
    if not step.objects:
        return False
    name = step.objects[0]
    kind = object_type(name)
    if step.verb == "ToggleOn" and kind in LOADED_BY:
        return _loaded_run(d, i)
    if step.verb == "Slice":
        earlier = any(s.verb == "Slice" and s.objects == step.objects for s in d.steps[:i])
        used = any(
            object_type(o) == f"{base_type(kind)}Sliced"
            for s in d.steps[i + 1 :]
            for o in s.objects
        )
        return used and not earlier
    if step.verb == "PourFromAIntoB" and object_type(step.objects[1]) in PLANTS:
        pours = [
            s for s in d.steps if s.verb == "PourFromAIntoB" and object_type(s.objects[1]) in PLANTS
        ]
        return len(pours) == 1 and _holds_water(d, name, i)
    if step.verb == "Open" and kind in CONTAINERS:
        if d.view.known and all(o.open for o in d.view.of(kind)):
            return False
        if any(s.verb == "Open" and s.objects == (name,) for s in d.steps[:i]):
            return False
        opened = [s.verb for s in d.steps[:i] if s.objects and object_type(s.objects[0]) == kind]
        if opened.count("Open") > opened.count("Close"):  # another one is still open
            return False
        for later in d.steps[i + 1 :]:
            if (
                later.verb in ("Open", "Close")
                and later.objects
                and object_type(later.objects[0]) == kind
            ):
                return False
            if later.verb == "PutAOnB" and later.objects[1] == name:
                return True
            if later.verb == "PickUp":
                thing = d.view.named(later.objects[0])
                return thing is not None and kind in thing.parent
    return False


def _loaded_run(d: Draft, t: int) -> bool:
    """Whether switching on appliance t acts on something put in it and is the only such run."""
    name = d.steps[t].objects[0]
    loaded_by = LOADED_BY[object_type(name)]
    loads = [
        p
        for p in range(t)
        if d.steps[p].verb == "PutAOnB" and object_type(d.steps[p].objects[1]) in loaded_by
    ]
    if not loads:
        return False
    p = loads[-1]
    thing = d.steps[p].objects[0]
    end = next(
        (
            k
            for k in range(p + 1, d.n)
            if d.steps[k].verb == "PickUp" and d.steps[k].objects == (thing,)
        ),
        d.n,
    )
    if any(d.steps[k].verb == "PickUp" and d.steps[k].objects == (thing,) for k in range(p + 1, t)):
        return False
    runs = [
        k
        for k in range(p + 1, end)
        if d.steps[k].verb == "ToggleOn" and d.steps[k].objects == (name,)
    ]
    if runs != [t]:
        return False
    if object_type(name) != "Faucet":
        return True
    # rinsing only matters for something dirty, filling for water that is then poured out
    poured = any(
        s.verb == "PourFromAIntoB" and s.objects[0] == thing and object_type(s.objects[1]) in PLANTS
        for s in d.steps[t:]
    )
    found = d.view.named(thing)
    if found is not None:
        return found.dirty or poured
    return poured or re.search(r"\b(clean|wash|rinse)", d.episode.goal or "", re.I) is not None


def _holds_water(d: Draft, vessel: str, q: int) -> bool:
    """Whether a vessel has water before step q: filled in the scene, or run under the faucet."""
    thing = d.view.named(vessel)
    if thing is not None and thing.filled:
        return True
    in_sink = False
    for step in d.steps[:q]:
        if step.verb == "PutAOnB" and step.objects[0] == vessel:
            in_sink = object_type(step.objects[1]) in SINKS
        elif step.verb == "PickUp" and step.objects == (vessel,):
            pass
        elif (
            step.verb == "ToggleOn"
            and step.objects
            and object_type(step.objects[0]) == "Faucet"
            and in_sink
        ):
            return True
    return False


def opens_for(d: Draft, i: int, j: int) -> bool:
    """Whether base step i opens the container base step j puts something into. An error that
    relies on j needs it to work: forgetting the opening would make the wrong put-down before j
    the only place the object can go, and its REMOVE label right only with the MISSING one."""
    opened, put = d.steps[i], d.steps[j]
    return (
        i < j
        and opened.verb == "Open"
        and put.verb == "PutAOnB"
        and len(put.objects) == 2
        and opened.objects[:1] == put.objects[1:]
    )


def make_missing_step(d: Draft, rng: random.Random) -> bool:
    options = [
        i
        for i in range(d.n)
        if _essential(d, i)
        and i not in d.touched
        and i not in d.removals
        and i - 1 not in d.removals
        and i + 1 not in d.removals
        and i not in d.busy
        and i + 1 not in d.busy
        and not any(opens_for(d, i, j) for j in d.touched)
    ]
    if not options:
        return False
    i = rng.choice(options)
    d.removals[i] = (d.count, f"the plan needs {d.lines[i]}")
    d.count += 1
    return True
