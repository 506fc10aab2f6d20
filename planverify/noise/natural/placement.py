"""`wrong_placement` and `wrong_object`: a thing put in the wrong place and taken back, the
wrong object fetched and put back.
"""

from __future__ import annotations

import random

from planverify.noise.common import ACTING_PLACES
from planverify.noise.natural.draft import (
    Draft,
    Line,
    loose_object,
    put_back,
)
from planverify.noise.natural.goals import (
    goals_of,
)
from planverify.noise.natural.knowledge import (
    APPLIANCE_TARGETS,
    CLASSES,
    FALLBACK_SURFACES,
    KNIVES,
    LOOK_ALIKES,
    NOT_KNIVES,
    PLACE_GROUPS,
    PLANTS,
    SAME_PLACE,
    UNFIT_PLACES,
    VESSELS,
    driver_line,
    everyday_words,
    say_line,
)
from planverify.noise.natural.missing import (
    opens_for,
)
from planverify.records.notation import Action, object_type
from planverify.world.classes import base_type

# --------------------------------------------------------------------------- the errors


def make_wrong_placement(d: Draft, rng: random.Random) -> bool:
    puts = [
        j
        for j, s in enumerate(d.steps)
        if s.verb == "PutAOnB"
        and len(s.objects) == 2
        and d.held[j] == s.objects[0]
        and d.free(j)
        and d.kept(j)
        and not any(opens_for(d, i, j) for i in d.removals)
    ]
    rng.shuffle(puts)
    puts.sort(key=lambda j: base_type(object_type(d.steps[j].objects[0])) not in d.wanted)
    for j in puts:
        held, right = d.steps[j].objects
        wrong = _wrong_places(d, held, object_type(right))
        if not wrong:
            continue
        place = rng.choice(wrong)
        oops = say_line(
            "Driver",
            rng.choice(
                (
                    "oops",
                    "that was wrong",
                    "oh, wrong place",
                    "wait, not there",
                    "sorry, wrong spot",
                )
            ),
        )
        reason = f"puts {held} on {place}, the wrong place"
        lines = [Line(driver_line("PutAOnB", held, place), reason), Line(oops, None)]
        variant = "put_again"
        if rng.random() < 0.6:
            variant = "picked_up_again"
            lines.append(Line(driver_line("PickUp", held), f"picks {held} up again from {place}"))
        d.add(j, "wrong_placement", lines, variant=variant, relies_on=[j])
        return True
    return False


def _wrong_places(d: Draft, held: str, right: str) -> list[str]:
    """Places a held object could wrongly go instead of `right`, none the task would accept."""
    accepted = {right}
    for same in SAME_PLACE:
        if right in same:
            accepted |= same
    for goal in goals_of(d.episode.goal) or []:
        if goal.place in CLASSES and right in CLASSES[goal.place]:
            accepted |= CLASSES[goal.place]
    extra = (d.episode.model_extra or {}).get("task_objects")
    for name in extra if isinstance(extra, list) else []:
        if str(name) in CLASSES and right in CLASSES[str(name)]:
            accepted |= CLASSES[str(name)]
    if right in APPLIANCE_TARGETS:
        group: set[str] = {"CounterTop"}
    else:
        group = set().union(*(g for g in PLACE_GROUPS if right in g))
    small_food = base_type(object_type(held)) != object_type(held)
    if not small_food:
        group -= {"Plate", "Bowl"}

    def fits(kind: str) -> bool:
        return (
            kind not in accepted
            and kind not in UNFIT_PLACES
            and kind not in ACTING_PLACES
            and kind != object_type(held)
        )

    if not d.view.known:  # places the plan uses, or the commonest ones
        known = {object_type(o) for s in d.steps for o in s.objects} | set(FALLBACK_SURFACES)
        options = sorted(k for k in group & known if fits(k))
        return options or [k for k in FALLBACK_SURFACES if fits(k)][:2]
    options = sorted(k for k in group if fits(k) and d.view.place(k))
    if options:
        return options
    return [k for k in FALLBACK_SURFACES if fits(k) and d.view.place(k)]


def _next_use(d: Draft, j: int, name: str) -> int | None:
    """The first base step after j done with `name` in hand (slice, pour, put), if any."""
    for k in range(j + 1, d.n):
        if d.held[k] != name:
            return None
        if d.steps[k].verb in ("Slice", "PourFromAIntoB", "PutAOnB"):
            return k
    return None


def make_wrong_object(d: Draft, rng: random.Random) -> bool:
    picks = [
        j
        for j, s in enumerate(d.steps)
        if s.verb == "PickUp" and s.objects and d.held[j] is None and d.free(j)
    ]
    rng.shuffle(picks)
    picks.sort(key=lambda j: base_type(object_type(d.steps[j].objects[0])) not in d.wanted)
    for j in picks:
        right = d.steps[j].objects[0]
        kind = object_type(right)
        use = _next_use(d, j, right)
        if not d.kept(j) or (use is not None and not d.kept(use)):
            continue
        later = d.steps[use] if use is not None else None
        options = _look_alikes(d, j, kind, later)
        if not options:
            continue
        other, variant = rng.choice(options)
        back = put_back(d, loose_object(d, other))
        if back is None:
            continue
        lines = _fetch_and_return(rng, variant, other, kind, later, back)
        d.add(j, "wrong_object", lines, variant=variant, relies_on=[j] if use is None else [j, use])
        return True
    return False


def _look_alikes(d: Draft, j: int, kind: str, later: Action | None) -> list[tuple[str, str]]:
    """What could be fetched instead of the object step `j` picks up, and how (the variant)."""
    options: list[tuple[str, str]] = []  # (look-alike, variant)
    for other in LOOK_ALIKES.get(kind, ()):
        if other in d.needed or other in d.names:
            continue
        if d.view.known and loose_object(d, other) is None:
            continue
        options.append((other, "swapped"))
        if (
            later is not None
            and later.verb == "PutAOnB"
            and kind not in KNIVES
            and (not d.view.known or d.view.place(object_type(later.objects[1])))
        ):
            options.append((other, "carried"))
    if kind in KNIVES and later is not None and later.verb == "Slice":
        sliced = later.objects[0]
        if not any(s.verb == "Slice" and s.objects == (sliced,) for s in d.steps[:j]):
            for other in NOT_KNIVES:
                if (
                    other not in d.needed
                    and other not in d.names
                    and (not d.view.known or loose_object(d, other))
                ):
                    options.append((other, "tried_to_slice"))
    if (
        later is not None
        and later.verb == "PourFromAIntoB"
        and object_type(later.objects[1]) in PLANTS
        and d.view.known
    ):
        for other in sorted(VESSELS - {kind}):
            objects = [o for o in d.view.of(other) if o.pickupable and d.view.reachable(o)]
            if objects and other not in d.names and not any(o.filled for o in d.view.of(other)):
                options.append((other, "poured_empty"))
    return options


def _fetch_and_return(
    rng: random.Random, variant: str, other: str, kind: str, later: Action | None, back: str
) -> list[Line]:
    """The steps of fetching `other` for a `kind`, what happens with it, and putting it back."""
    lines = [Line(driver_line("PickUp", other), f"fetches {other} instead of the {kind}")]
    if variant == "carried":
        assert later is not None
        target = later.objects[1]
        lines += [
            Line(
                driver_line("PutAOnB", other, target),
                f"puts {other} where the {kind} should go",
            ),
            _remark(rng, other, kind),
            Line(driver_line("PickUp", other), f"takes {other} away again"),
        ]
    elif variant == "tried_to_slice":
        assert later is not None
        lines.append(Line(driver_line("Slice", later.objects[0]), f"{other} cannot slice"))
    elif variant == "poured_empty":
        assert later is not None
        lines.append(
            Line(
                driver_line("PourFromAIntoB", other, later.objects[1]),
                f"{other} holds no water",
            )
        )
    if variant != "carried" and rng.random() < 0.6:
        lines.append(_remark(rng, other, kind))
    lines.append(Line(driver_line("PutAOnB", other, back), f"puts {other} back"))
    return lines


def _remark(rng: random.Random, wrong: str, right: str) -> Line:
    w, r = everyday_words(object_type(wrong)), everyday_words(right)
    if rng.random() < 0.5:
        text = rng.choice(
            (f"that's a {w}, I need the {r}", f"no, the {r} please", f"wrong one, get the {r}")
        )
        return Line(say_line("Commander", text), None)
    text = rng.choice((f"oops, that's a {w}", "wrong one", f"oh, that's not the {r}"))
    return Line(say_line("Driver", text), None)
