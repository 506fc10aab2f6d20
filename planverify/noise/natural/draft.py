"""The draft an episode's mistakes are written into: the scene as the generator may assume it,
the plan's steps, and what each mistake inserts or removes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from planverify.noise.natural.goals import (
    goals_of,
)
from planverify.noise.natural.knowledge import (
    CLASS_WORDS,
    CLASSES,
    FALLBACK_LOOSE,
    FALLBACK_SURFACES,
    KNIVES,
    LOOK_ALIKES,
    SINKS,
    UNFIT_PLACES,
    VESSELS,
)
from planverify.records.episode import Episode, ErrorType, Label, SceneObject
from planverify.records.notation import Action, object_type, parse_action
from planverify.world.classes import base_type
from planverify.world.mentions import mentions_type

# --------------------------------------------------------------------------- the scene


@dataclass
class View:
    """What the generator may assume about the objects (the scene, when the episode has one)."""

    objects: list[SceneObject]
    known: bool  # whether there is a scene at all

    @property
    def types(self) -> set[str]:
        return {o.type for o in self.objects}

    def of(self, kind: str) -> list[SceneObject]:
        return [o for o in self.objects if o.type == kind]

    def named(self, name: str) -> SceneObject | None:
        for o in self.objects:
            if o.name == name:
                return o
        same = self.of(object_type(name))
        return same[0] if len(same) == 1 else None

    @property
    def closed(self) -> set[str]:
        """Types with a closed openable instance (their contents are out of reach)."""
        return {o.type for o in self.objects if o.openable and not o.open}

    def reachable(self, o: SceneObject) -> bool:
        return not (set(o.parent) & self.closed)

    def place(self, kind: str) -> bool:
        """Whether something can be put on an object of this type without opening it."""
        return any(o.receptacle and not (o.openable and not o.open) for o in self.of(kind))


# --------------------------------------------------------------------------- the draft


@dataclass
class Line:
    text: str
    reason: str | None  # None: dialogue, not labelled


@dataclass
class _Insert:
    gap: int  # the base step it goes before (len(plan): at the end)
    seq: int  # order of injection
    kind: str  # error kind, or change
    lines: list[Line]
    variant: str = ""
    error: bool = True


@dataclass
class Draft:
    """An episode being given mistakes: insertions by gap of the base plan, removals by index."""

    episode: Episode
    lines: list[str]
    steps: list[Action]
    view: View
    needed: set[str]  # types the task might use
    wanted: set[str]  # types the goal names (directly or by class)
    held: list[str | None]  # held[g]: the object in hand before base step g
    inserts: list[_Insert] = field(default_factory=list)
    removals: dict[int, tuple[int, str]] = field(default_factory=dict)
    busy: set[int] = field(default_factory=set)  # gaps an error already uses
    touched: set[int] = field(default_factory=set)  # base steps an error relies on
    used: set[str] = field(default_factory=set)  # object names the errors added
    count: int = 0  # errors and changes so far

    @property
    def n(self) -> int:
        return len(self.steps)

    @property
    def names(self) -> set[str]:
        """Object names the plan and the errors use."""
        return {o for s in self.steps for o in s.objects} | self.used

    def add(
        self,
        gap: int,
        kind: str,
        lines: list[Line],
        *,
        variant: str = "",
        error: bool = True,
        relies_on: Iterable[int] = (),
    ) -> None:
        self.inserts.append(_Insert(gap, self.count, kind, lines, variant, error))
        self.count += 1
        if error:
            self.busy.add(gap)
            self.touched.update(relies_on)
        for line in lines:
            step = parse_step(line.text)
            self.used.update(step.objects)

    def free(self, gap: int) -> bool:
        """Whether an error may go in before base step `gap` (no other error there or next to it)."""
        return gap not in self.busy and gap not in self.removals and gap - 1 not in self.removals

    def kept(self, *steps: int) -> bool:
        """Whether none of these base steps was removed (an error can rely on them)."""
        return not set(steps) & set(self.removals)

    def finish(self) -> tuple[list[str], list[str], list[Label], list[dict[str, Any]]]:
        """The noisy plan, the clean plan, the labels (plan order) and the notes (in order)."""
        out: list[str] = []
        clean: list[str] = []
        labels: list[tuple[tuple[int, int], Label]] = []
        notes: dict[int, dict[str, Any]] = {}
        ordered = sorted(self.inserts, key=lambda i: (i.gap, i.error, i.seq))
        for gap in range(self.n + 1):
            for insert in (i for i in ordered if i.gap == gap):
                note: dict[str, Any]
                if insert.error:
                    note = {"error": insert.kind, "lines": [], "variant": insert.variant}
                else:
                    note = {"change": insert.kind, "lines": []}
                notes.setdefault(insert.seq, note)
                for line in insert.lines:
                    note["lines"].append(len(out))
                    if line.reason is not None:
                        label = Label(
                            type="REMOVE",
                            index=len(out),
                            reason=line.reason,
                            error=cast(ErrorType, insert.kind),
                        )
                        labels.append(((len(out), 0), label))
                    out.append(line.text)
                    if not insert.error:
                        clean.append(line.text)
            if gap == self.n:
                break
            clean.append(self.lines[gap])
            if gap in self.removals:
                seq, reason = self.removals[gap]
                after = len(out) - 1
                action = self.lines[gap]
                notes[seq] = {"error": "missing_step", "after": after, "action": action}
                label = Label(
                    type="MISSING", after=after, action=action, reason=reason, error="missing_step"
                )
                labels.append(((after, 1), label))
            else:
                out.append(self.lines[gap])
        labels.sort(key=lambda item: item[0])
        return out, clean, [label for _, label in labels], [notes[k] for k in sorted(notes)]


def parse_step(line: str) -> Action:
    return parse_action(line)


def held_by_step(steps: Sequence[Action]) -> list[str | None]:
    held: str | None = None
    out: list[str | None] = [None]
    for step in steps:
        if step.verb == "PickUp" and step.objects:
            held = step.objects[0]
        elif step.verb == "PutAOnB":
            held = None
        out.append(held)
    return out


def needed_objects(
    episode: Episode, steps: Sequence[Action], view: View, also: Sequence[str] = ()
) -> set[str]:
    """Object types the task might use (`also`: other texts asking for it): kept out of wrong
    fetches and detours."""
    needed = {object_type(o) for s in steps for o in s.objects}
    needed |= {base_type(t) for t in needed}
    extra = (episode.model_extra or {}).get("task_objects")
    named = [str(t) for t in extra] if isinstance(extra, list) else []
    texts = [episode.goal or "", *also] + [
        s.text or "" for s in steps if s.is_dialogue and s.agent == "Commander"
    ]
    for goal in goals_of(episode.goal) or []:
        named += [t for t in (goal.thing, goal.place) if t]
    candidates = view.types | set(LOOK_ALIKES) | {t for v in LOOK_ALIKES.values() for t in v}
    candidates |= set(FALLBACK_LOOSE)
    for kind in sorted(candidates):
        if any(mentions_type(text, kind) for text in texts):
            needed.add(kind)
    for name, members in CLASSES.items():
        words = [name, *CLASS_WORDS.get(name, ())]
        if name in named or any(re.search(rf"\b{w}", t, re.I) for w in words for t in texts):
            needed |= members
    needed |= set(named)
    family = " ".join(texts).lower() + " " + (episode.task or "").lower()
    if "plant" in family:
        needed |= VESSELS | SINKS | {"Faucet"}
    if "coffee" in family:
        needed |= {"Mug", "CoffeeMachine", "Faucet"} | SINKS
    if "clean" in family or "wash" in family or "rinse" in family:
        needed |= {"Faucet", "DishSponge"} | SINKS
    if any(w in family for w in ("toast", "sandwich", "slice", "salad", "breakfast", "cook")):
        needed |= KNIVES | {"Plate", "Bowl", "Toaster", "Bread", "Lettuce", "Tomato", "Potato"}
    if any(w in family for w in ("boil", "cook", "breakfast", "salad")):
        needed |= {"Pot", "Pan", "Kettle", "StoveBurner", "StoveKnob", "Microwave", "Bowl"}
    return needed


def wanted_types(episode: Episode) -> set[str]:
    """Object types the goal itself names: TEACh's task objects and the goal's things."""
    extra = (episode.model_extra or {}).get("task_objects")
    named = {str(t) for t in extra} if isinstance(extra, list) else set()
    named |= {g.thing for g in goals_of(episode.goal) or [] if g.thing}
    return named | {t for name in named for t in CLASSES.get(name, ())}


def fresh_name(kind: str, taken: set[str]) -> str:
    """A name for another object of a type: the type, else the type numbered 2, 3, ..."""
    if kind not in taken:
        return kind
    k = 2
    while f"{kind}{k}" in taken:
        k += 1
    return f"{kind}{k}"


def put_back(d: Draft, thing: SceneObject | None) -> str | None:
    """Where a fetched object goes back: where it lay, else a surface the plan uses."""
    if thing is not None:
        for parent in thing.parent:
            if parent not in ("Floor", *UNFIT_PLACES) and d.view.place(parent):
                return parent
    surfaces = [
        s.objects[1]
        for s in d.steps
        if s.verb == "PutAOnB"
        and len(s.objects) == 2
        and object_type(s.objects[1]) in FALLBACK_SURFACES
    ]
    if surfaces:
        return surfaces[0]
    if not d.view.known:
        return "CounterTop"
    options = [t for t in FALLBACK_SURFACES if d.view.place(t)]
    return options[0] if options else None


def loose_object(d: Draft, kind: str) -> SceneObject | None:
    """A reachable, pickupable object of a type (None: not in the scene)."""
    for o in d.view.of(kind):
        if o.pickupable and d.view.reachable(o):
            return o
    return None
