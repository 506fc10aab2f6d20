"""`ineffective_action`: a step that cannot have its effect yet, before the one that does."""

from __future__ import annotations

import random

from planverify.noise.natural.draft import (
    Draft,
    Line,
    fresh_name,
)
from planverify.noise.natural.knowledge import (
    CONFUSED_APPLIANCES,
    KNIVES,
    LOADED_BY,
    PLANTS,
    SINKS,
    driver_line,
    say_line,
)
from planverify.records.notation import object_type


def make_ineffective(d: Draft, rng: random.Random) -> bool:
    ways = [_slice_without_knife, _wrong_switch, _run_before_loading, _pour_before_filling]
    rng.shuffle(ways)
    return any(way(d, rng) for way in ways)


def _slice_without_knife(d: Draft, rng: random.Random) -> bool:
    options = []
    for s, step in enumerate(d.steps):
        knife = d.held[s]
        if step.verb != "Slice" or knife is None or object_type(knife) not in KNIVES:
            continue
        k = max(
            i for i in range(s) if d.steps[i].verb == "PickUp" and d.steps[i].objects == (knife,)
        )
        before = d.steps[:k]
        if (
            d.free(k)
            and d.kept(k, s)
            and not any(b.verb == "Slice" and b.objects == step.objects for b in before)
        ):
            options.append((k, s))
    if not options:
        return False
    k, s = rng.choice(options)
    thing = d.steps[s].objects[0]
    lines = [Line(driver_line("Slice", thing), f"slices {thing} without a knife in hand")]
    if rng.random() < 0.5:
        lines.append(
            Line(say_line("Driver", rng.choice(("I need a knife first", "hm, need a knife"))), None)
        )
    d.add(k, "ineffective_action", lines, variant="slice_without_knife", relies_on=[k, s])
    return True


def _wrong_switch(d: Draft, rng: random.Random) -> bool:
    options: list[tuple[int, str]] = []
    for t, step in enumerate(d.steps):
        if step.verb != "ToggleOn" or not step.objects or not d.free(t) or not d.kept(t):
            continue
        kind = object_type(step.objects[0])
        if kind == "StoveKnob":
            knobs = {o for s in d.steps for o in s.objects if object_type(o) == "StoveKnob"}
            spare = not d.view.known or any(
                o.name is None and not o.toggled for o in d.view.of("StoveKnob")
            )
            if spare and (not d.view.known or len(d.view.of("StoveKnob")) > len(knobs)):
                options.append((t, fresh_name("StoveKnob", d.names)))
        for other in CONFUSED_APPLIANCES.get(kind, ()):
            if other in d.names:
                continue
            if d.view.known and (not d.view.of(other) or any(o.toggled for o in d.view.of(other))):
                continue
            options.append((t, other))
    if not options:
        return False
    t, other = rng.choice(options)
    right = d.steps[t].objects[0]
    lines = [Line(driver_line("ToggleOn", other), f"switches on {other}, not {right}")]
    if rng.random() < 0.5:
        lines.append(Line(driver_line("ToggleOff", other), f"switches {other} off again"))
    if rng.random() < 0.5:
        lines.append(
            Line(say_line("Driver", rng.choice(("oops, wrong one", "not that one"))), None)
        )
    d.add(t, "ineffective_action", lines, variant="wrong_switch", relies_on=[t])
    return True


def _run_before_loading(d: Draft, rng: random.Random) -> bool:
    options = []
    for t, step in enumerate(d.steps):
        if step.verb != "ToggleOn" or not step.objects:
            continue
        name = step.objects[0]
        loaded_by = LOADED_BY.get(object_type(name))
        if loaded_by is None:
            continue
        puts = [
            p
            for p in range(t)
            if d.steps[p].verb == "PutAOnB"
            and len(d.steps[p].objects) == 2
            and object_type(d.steps[p].objects[1]) in loaded_by
        ]
        if not puts:
            continue
        p = puts[-1]
        between = d.steps[p:t]
        if any(b.verb in ("ToggleOn", "ToggleOff") and name in b.objects for b in between):
            continue
        if d.free(p) and d.kept(p, t):
            options.append((p, t))
    if not options:
        return False
    p, t = rng.choice(options)
    name = d.steps[t].objects[0]
    thing = d.steps[p].objects[0]
    lines = [
        Line(driver_line("ToggleOn", name), f"runs {name} before {thing} is in place"),
        Line(driver_line("ToggleOff", name), f"switches {name} off with nothing done"),
    ]
    d.add(p, "ineffective_action", lines, variant="run_before_loading", relies_on=[p, t])
    return True


def _pour_before_filling(d: Draft, rng: random.Random) -> bool:
    if not d.view.known:
        return False
    options = []
    for q, step in enumerate(d.steps):
        if step.verb != "PourFromAIntoB" or object_type(step.objects[1]) not in PLANTS:
            continue
        vessel = step.objects[0]
        picks = [
            k for k in range(q) if d.steps[k].verb == "PickUp" and d.steps[k].objects == (vessel,)
        ]
        if not picks:
            continue
        first = picks[0]
        thing = d.view.named(vessel)
        if thing is None or thing.filled:
            continue
        # the plan fills it later: put in the sink, then the faucet run
        sink = next(
            (
                k
                for k in range(first, q)
                if d.steps[k].verb == "PutAOnB"
                and d.steps[k].objects[0] == vessel
                and object_type(d.steps[k].objects[1]) in SINKS
            ),
            None,
        )
        run = next(
            (
                k
                for k in range(sink or q, q)
                if d.steps[k].verb == "ToggleOn" and object_type(d.steps[k].objects[0]) == "Faucet"
            ),
            None,
        )
        if sink is None or run is None:
            continue
        if d.free(first + 1) and d.held[first + 1] == vessel and d.kept(first, sink, run, q):
            options.append((first + 1, [first, sink, run, q]))
    if not options:
        return False
    g, relied = rng.choice(options)
    q = relied[-1]
    vessel, plant = d.steps[q].objects
    lines = [Line(driver_line("PourFromAIntoB", vessel, plant), f"{vessel} is still empty")]
    d.add(g, "ineffective_action", lines, variant="pour_before_filling", relies_on=relied)
    return True
