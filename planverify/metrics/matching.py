"""Whether two steps match, and whether a `#MISSING` critique asks for a labelled step."""

from __future__ import annotations

import re
from collections.abc import Sequence

from planverify.records.critique import Missing
from planverify.records.notation import MOTION_VERBS, Action, NotationError, parse_action
from planverify.world.mentions import mentions_type, mentions_verb

# --------------------------------------------------------------------------- matching steps

_ACTION_IN_TEXT = re.compile(
    r"(?:\b[A-Z]\w*\.)?\b[A-Za-z_]\w*\((?:[^()'\"]|'(?:\\.|[^'\\])*'|\"[^\"]*\")*\)"
)


def same_step(a: Action, b: Action) -> bool:
    """Whether two steps match: same verb and same object types (instance numbers ignored).

    >>> same_step(parse_action("Driver.PickUp('Mug2')"), parse_action("Driver.PickUp('Mug')"))
    True
    >>> same_step(parse_action("Driver.Move(0.5)"), parse_action("Driver.Move(-1.0)"))
    True
    """
    if not (a.known and b.known):
        return a.raw == b.raw
    return a.verb == b.verb and a.object_types == b.object_types


def actions_in(text: str) -> list[Action]:
    """The known actions written in the notation inside a text (`Agent.` may be left out).

    >>> [str(a) for a in actions_in("add Driver.ToggleOn('Toaster') after the bread")]
    ["Driver.ToggleOn('Toaster')"]
    >>> [str(a) for a in actions_in("first Slice('Bread2'), then go on")]
    ["Driver.Slice('Bread2')"]
    """
    found: list[Action] = []
    for candidate in [text.strip(), *(m.group(0) for m in _ACTION_IN_TEXT.finditer(text))]:
        for line in (candidate, f"Driver.{candidate}"):
            try:
                action = parse_action(line)
            except NotationError:
                continue
            if action.known and not action.is_dialogue:
                found.append(action)
                break
    return found


def missing_matches(critique: Missing, wanted: Action) -> bool:
    """Whether a `#MISSING` critique asks for the step `wanted` (a MISSING label's action).

    It does when an action in its `action` or `description` matches `wanted` (`same_step`), or
    when its text names `wanted`'s verb (a synonym will do) and its object types: both objects
    of `PutAOnB`, the target of `PourFromAIntoB` (the source is usually named by its contents,
    "pour the water into the plant"), the object of any other verb. A missing motion step is
    only found through a concrete action.

    >>> toggle = parse_action("Driver.ToggleOn('CoffeeMachine')")
    >>> missing_matches(Missing(description="Switch on the coffee machine"), toggle)
    True
    >>> missing_matches(Missing(description="Turn on the toaster"), toggle)
    False
    >>> missing_matches(Missing(description="x", action="Driver.ToggleOn('CoffeeMachine2')"), toggle)
    True
    """
    if not wanted.known:  # another domain's step: only the very same line asks for it
        return (critique.action or "").strip() == wanted.raw
    text = f"{critique.description} {critique.action or ''}"
    if any(same_step(found, wanted) for found in actions_in(text)):
        return True
    if not wanted.known or wanted.is_dialogue or wanted.verb in MOTION_VERBS:
        return False
    needed = wanted.objects[1:] if wanted.verb == "PourFromAIntoB" else wanted.objects
    return mentions_verb(text, wanted.verb) and all(mentions_type(text, o) for o in needed)


def max_matching(edges: Sequence[Sequence[int]]) -> dict[int, int]:
    """A largest one-to-one pairing of proposals (by position) with labels (the values).

    `edges[p]` lists the labels proposal `p` may account for, in label order. Augmenting paths
    try proposals in order and labels in the listed order, so the result is deterministic.
    """
    owner: dict[int, int] = {}  # label -> proposal

    def augment(p: int, seen: set[int]) -> bool:
        for label in edges[p]:
            if label in seen:
                continue
            seen.add(label)
            if label not in owner or augment(owner[label], seen):
                owner[label] = p
                return True
        return False

    for p in range(len(edges)):
        augment(p, set())
    return {p: label for label, p in owner.items()}


def _same_run(lines: Sequence[str], steps: Sequence[Action], i: int, j: int) -> bool:
    """Whether steps i and j are identical and only identical steps or dialogue lie between."""
    if lines[i] != lines[j]:
        return False
    lo, hi = min(i, j), max(i, j)
    return all(steps[k].is_dialogue or lines[k] == lines[i] for k in range(lo + 1, hi))


def twins_of(
    lines: Sequence[str], steps: Sequence[Action], labelled: set[int], removed: set[int]
) -> dict[int, int]:
    """Kept labelled steps paired with removed unlabelled twins (nearest first, then earlier)."""
    spare = sorted(j for j in removed if j not in labelled and not steps[j].is_dialogue)
    pairs: dict[int, int] = {}
    for i in sorted(labelled - removed):
        options = [j for j in spare if j not in pairs.values() and _same_run(lines, steps, i, j)]
        if options:
            pairs[i] = min(options, key=lambda j: (abs(j - i), j))
    return pairs
