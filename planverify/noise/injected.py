"""Inject labelled errors into plans, giving annotated episodes to measure a verifier on.

Each injected error follows the paper's taxonomy and carries exact labels (`Episode.labels`):

- `detour`: the Driver, hands empty, picks up an object the goal does not need and puts it on
  some receptacle; both steps are REMOVE-labelled.
- `misplacement`: before the plan puts a held object X on Y, the Driver puts X on a wrong
  receptacle Z (never one that acts on what it holds, `ACTING_PLACES`), says so
  (`Driver.Say('Oops, wrong spot.')`) and picks X up again; the wrong put-down and the
  re-pickup are REMOVE-labelled, the utterance is dialogue and never labelled.
- `premature_toggle`: a `ToggleOff` of an appliance that starts switched off and that the plan
  never uses; REMOVE-labelled.
- `cancelling_navigation`: a motion and its reverse (`Move(0.5)` then `Move(-0.5)`,
  `TurnLeft(90.0)` then `TurnRight(90.0)` -- the notation writes turns with positive amounts);
  both REMOVE-labelled.
- `pointless_open_close`: `Open` then `Close` of a closed container the plan never uses; both
  REMOVE-labelled.
- `duplicate`: an exact repeat, right after it, of a step whose repeat changes nothing
  (`NO_OP_REPEATS`: a second `ToggleOn`, `Open`, `Slice`, ...); the repeat is REMOVE-labelled.
- `missing_step`: an essential step (`ToggleOn` of an appliance in `ESSENTIAL_TOGGLES`, a
  `Slice`, a `PourFromAIntoB`) is removed; a MISSING label gives it back (`action`) with `after`
  = the position, in the new plan, of the line before it (-1 when it was first).

Injected steps use the episode's own scene (`episode.scene`): objects the plan never mentions,
with their initial states (a closed cabinet, an appliance that is off, an object lying in the
open). Without a scene, object types from a small built-in list stand in. The episode's own
steps are never changed or reordered; only `missing_step` removes one. The kinds injected, in
order, and the positions of their lines are recorded in an extra field `injected` (a list of
`{"error", "lines"}` or, for a removal, `{"error", "after", "action"}`); an error kind that
cannot be injected in an episode is skipped and another one tried.

So the original plan comes back by dropping the REMOVE-labelled lines and the utterances listed
in `injected`, then putting each MISSING action back after its `after` line; every record also
carries it as `clean` (the plan before any error was injected, which plan-level scoring compares
with). `labels`, `injected` and `clean` are annotations (`ANNOTATION_KEYS`), never input to a
verifier.

>>> import random
>>> episode = Episode(id="e1", actions=["Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'Sink')"])
>>> bad = corrupt_episode(episode, rng=random.Random(2), errors=1, kinds=["misplacement"])
>>> for line in bad.actions:
...     print(line)
Driver.PickUp('Mug')
Driver.PutAOnB('Mug', 'CounterTop')
Driver.Say('Oops, wrong spot.')
Driver.PickUp('Mug')
Driver.PutAOnB('Mug', 'Sink')
>>> [(label.type, label.index, label.error) for label in bad.labels]
[('REMOVE', 1, 'misplacement'), ('REMOVE', 3, 'misplacement')]
>>> bad.model_extra["injected"]
[{'error': 'misplacement', 'lines': [1, 2, 3]}]
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, get_args

from planverify.noise.common import ACTING_PLACES, CorruptSummary, mark_minimal_only
from planverify.records.episode import Episode, InjectedError, Label
from planverify.records.notation import Action, escape_text, object_type
from planverify.world.classes import base_type
from planverify.world.mentions import mentions_type

__all__ = [
    "ESSENTIAL_TOGGLES",
    "KINDS",
    "NO_OP_REPEATS",
    "ErrorKind",
    "corrupt_episode",
    "corrupt_many",
]

ErrorKind = InjectedError
KINDS: tuple[ErrorKind, ...] = get_args(InjectedError)
ESSENTIAL_TOGGLES = frozenset(
    {"CoffeeMachine", "Toaster", "Faucet", "StoveKnob", "StoveBurner", "Microwave"}
)
"""Appliances whose `ToggleOn` a task cannot do without (candidates for `missing_step`)."""
NO_OP_REPEATS = frozenset(
    {"ToggleOn", "ToggleOff", "Open", "Close", "Slice", "Clean", "Dirty", "Fill", "Empty"}
)
"""Verbs whose immediate repeat changes nothing (a second `PickUp` would be impossible)."""

# Stand-ins when an episode has no scene: common TEACh objects of each use.
FALLBACK_PICKUPABLE = (
    "Spatula",
    "Spoon",
    "Fork",
    "SaltShaker",
    "PepperShaker",
    "DishSponge",
    "Book",
    "RemoteControl",
    "Pen",
)
FALLBACK_SURFACES = ("CounterTop", "DiningTable", "Shelf", "SideTable", "Chair")
FALLBACK_CONTAINERS = ("Cabinet", "Drawer", "Fridge", "Microwave")
FALLBACK_APPLIANCES = ("Toaster", "CoffeeMachine", "Microwave", "StoveKnob", "Faucet")
UNFIT_SURFACES = frozenset({"Floor", "Toaster", "CoffeeMachine", "GarbageCan"})
OOPS = ("Oops, wrong spot.", "Wait, that is the wrong place.", "Oh, not there.", "Hmm, wrong spot.")
MOVES = (0.25, 0.5, 0.75, 1.0, 1.5)
TURNS = (90.0, 180.0)


# --------------------------------------------------------------------------- the world


@dataclass(frozen=True)
class _Thing:
    name: str  # name in the notation
    parents: tuple[str, ...] = ()  # types of the receptacles it starts in


@dataclass
class _World:
    """What the injected steps can use."""

    loose: list[_Thing]  # pickupable objects the goal does not need, reachable without opening
    surfaces: list[str]  # receptacles to put things on
    containers: list[str]  # closed openable receptacles the plan never uses
    appliances: list[str]  # appliances that start off, the plan never uses


def _world(episode: Episode, steps: Sequence[Action]) -> _World:
    plan_types = {object_type(o) for step in steps for o in step.objects}
    plan_bases = {base_type(t) for t in plan_types}
    goal = episode.goal or ""
    extra = (episode.model_extra or {}).get("task_objects")
    task_objects = {str(t) for t in extra} if isinstance(extra, list) else set()

    def needed(kind: str) -> bool:
        return (
            base_type(kind) in plan_bases
            or kind in task_objects
            or base_type(kind) in task_objects
            or mentions_type(goal, kind)
        )

    if episode.scene is None:
        targets = [s.objects[1] for s in steps if s.verb == "PutAOnB" and len(s.objects) == 2]
        placed = [
            t
            for t in targets
            if object_type(t) not in UNFIT_SURFACES and object_type(t) not in FALLBACK_CONTAINERS
        ]
        return _World(
            loose=[_Thing(t) for t in FALLBACK_PICKUPABLE if not needed(t)],
            surfaces=list(dict.fromkeys([*placed, *FALLBACK_SURFACES])),
            containers=[t for t in FALLBACK_CONTAINERS if t not in plan_types],
            appliances=[t for t in FALLBACK_APPLIANCES if t not in plan_types],
        )
    objects = episode.scene.objects
    closed = {o.type for o in objects if o.openable and not o.open}
    loose: dict[str, _Thing] = {}
    surfaces: dict[str, None] = {}
    containers: dict[str, None] = {}
    appliances: dict[str, None] = {}
    for o in objects:
        if o.pickupable:
            if not needed(o.type) and not closed & set(o.parent):
                loose.setdefault(o.type, _Thing(o.type, tuple(o.parent)))
            continue
        if o.receptacle and not (o.openable and not o.open) and o.type not in UNFIT_SURFACES:
            surfaces[o.name or o.type] = None
        if o.type in plan_types:
            continue
        if o.openable and o.receptacle and not o.open:
            containers[o.type] = None
        if o.toggleable and not o.toggled:
            appliances[o.type] = None
    return _World(
        loose=list(loose.values()),
        surfaces=list(surfaces),
        containers=list(containers),
        appliances=list(appliances),
    )


# --------------------------------------------------------------------------- the edit


@dataclass
class _Line:
    text: str
    reason: str | None  # None: not labelled (the misplacement's utterance)


@dataclass
class _Insert:
    gap: int  # the original step it goes before (len(plan): at the end)
    rank: int  # 0: right after the step before the gap (duplicates); 1: the others
    seq: int  # order of injection
    kind: ErrorKind
    lines: list[_Line]


@dataclass
class _Work:
    """An episode being corrupted: its plan, its world, and the errors injected so far.

    Insertions are recorded against gaps of the original plan and removals against original
    indices; final positions are only computed at the end (`finish`).
    """

    episode: Episode
    steps: list[Action]
    world: _World
    held: list[str | None]  # held[g]: the object in hand before original step g
    inserts: list[_Insert] = field(default_factory=list)
    removals: dict[int, tuple[int, str]] = field(default_factory=dict)  # index -> (seq, reason)
    touched: set[int] = field(default_factory=set)  # original steps duplicated or removed
    used: set[str] = field(default_factory=set)  # objects an injected error already uses
    kinds: list[ErrorKind] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.steps)

    def add(self, gap: int, kind: ErrorKind, lines: list[_Line], *, rank: int = 1) -> None:
        self.inserts.append(_Insert(gap, rank, len(self.kinds), kind, lines))
        self.kinds.append(kind)

    def finish(self) -> tuple[list[str], list[Label], list[dict[str, Any]]]:
        """The new plan, its labels (in plan order) and the `injected` notes (in order)."""
        lines = self.episode.actions
        out: list[str] = []
        labels: list[tuple[tuple[int, int], Label]] = []
        notes: dict[int, dict[str, Any]] = {}
        ordered = sorted(self.inserts, key=lambda i: (i.gap, i.rank, i.seq))
        for gap in range(self.n + 1):
            for insert in (i for i in ordered if i.gap == gap):
                note = notes.setdefault(insert.seq, {"error": insert.kind, "lines": []})
                for line in insert.lines:
                    note["lines"].append(len(out))
                    if line.reason is not None:
                        label = Label(
                            type="REMOVE", index=len(out), reason=line.reason, error=insert.kind
                        )
                        labels.append(((len(out), 0), label))
                    out.append(line.text)
            if gap == self.n:
                break
            if gap in self.removals:
                seq, reason = self.removals[gap]
                after = len(out) - 1
                notes[seq] = {"error": "missing_step", "after": after, "action": lines[gap]}
                label = Label(
                    type="MISSING",
                    after=after,
                    action=lines[gap],
                    reason=reason,
                    error="missing_step",
                )
                labels.append(((after, 1), label))
            else:
                out.append(lines[gap])
        labels.sort(key=lambda item: item[0])
        return out, [label for _, label in labels], [notes[k] for k in sorted(notes)]


def _held(steps: Sequence[Action]) -> list[str | None]:
    held: str | None = None
    out: list[str | None] = [None]
    for step in steps:
        if step.verb == "PickUp" and step.objects:
            held = step.objects[0]
        elif step.verb == "PutAOnB":
            held = None
        out.append(held)
    return out


def _line(verb: str, *objects: str) -> str:
    return f"Driver.{verb}({', '.join(repr(o) for o in objects)})"


# --------------------------------------------------------------------------- the errors


def _detour(w: _Work, rng: random.Random) -> bool:
    things = [t for t in w.world.loose if t.name not in w.used]
    gaps = [g for g in range(w.n + 1) if w.held[g] is None]
    if not things or not gaps or not w.world.surfaces:
        return False
    thing = rng.choice(things)
    away = [s for s in w.world.surfaces if object_type(s) not in thing.parents]
    target = rng.choice(away or w.world.surfaces)
    w.used.add(thing.name)
    w.add(
        rng.choice(gaps),
        "detour",
        [
            _Line(_line("PickUp", thing.name), f"{thing.name} is not needed for the goal"),
            _Line(_line("PutAOnB", thing.name, target), f"puts away {thing.name}, a detour"),
        ],
    )
    return True


def _misplacement(w: _Work, rng: random.Random) -> bool:
    used_gaps = {i.gap for i in w.inserts if i.kind == "misplacement"}
    puts = [
        j
        for j, s in enumerate(w.steps)
        if s.verb == "PutAOnB" and s.objects and w.held[j] == s.objects[0] and j not in used_gaps
    ]
    rng.shuffle(puts)
    for j in puts:
        held, goal_target = w.steps[j].objects
        wrong = [
            s
            for s in w.world.surfaces
            if object_type(s) not in {object_type(held), object_type(goal_target)}
            and object_type(s) not in ACTING_PLACES
        ]
        if not wrong:
            continue
        target = rng.choice(wrong)
        oops = f"Driver.Say('{escape_text(rng.choice(OOPS))}')"
        w.add(
            j,
            "misplacement",
            [
                _Line(_line("PutAOnB", held, target), f"{target} is the wrong place for {held}"),
                _Line(oops, None),
                _Line(_line("PickUp", held), f"picks {held} up again after misplacing it"),
            ],
        )
        return True
    return False


def _premature_toggle(w: _Work, rng: random.Random) -> bool:
    options = [a for a in w.world.appliances if a not in w.used]
    if not options:
        return False
    name = rng.choice(options)
    w.used.add(name)
    reason = f"turns off {name}, which is off and not used"
    w.add(rng.randrange(w.n + 1), "premature_toggle", [_Line(_line("ToggleOff", name), reason)])
    return True


def _cancelling_navigation(w: _Work, rng: random.Random) -> bool:
    if rng.random() < 0.5:
        amount = rng.choice(MOVES) * rng.choice((1, -1))
        pair = [f"Driver.Move({amount!r})", f"Driver.Move({-amount!r})"]
    else:
        angle = rng.choice(TURNS)
        pair = [f"Driver.TurnLeft({angle!r})", f"Driver.TurnRight({angle!r})"]
        rng.shuffle(pair)
    gap = rng.randrange(w.n + 1)
    w.add(
        gap,
        "cancelling_navigation",
        [_Line(pair[0], "undone by the next step"), _Line(pair[1], "undoes the step before")],
    )
    return True


def _pointless_open_close(w: _Work, rng: random.Random) -> bool:
    options = [c for c in w.world.containers if c not in w.used]
    if not options:
        return False
    name = rng.choice(options)
    w.used.add(name)
    w.add(
        rng.randrange(w.n + 1),
        "pointless_open_close",
        [
            _Line(_line("Open", name), f"opens {name}, which the task does not use"),
            _Line(_line("Close", name), f"closes {name} again at once"),
        ],
    )
    return True


def _duplicate(w: _Work, rng: random.Random) -> bool:
    options = [
        i
        for i, s in enumerate(w.steps)
        if s.known and s.verb in NO_OP_REPEATS and i not in w.touched
    ]
    if not options:
        return False
    i = rng.choice(options)
    w.touched.add(i)
    reason = f"repeats step {w.steps[i].verb}, which changes nothing the second time"
    w.add(i + 1, "duplicate", [_Line(w.episode.actions[i], reason)], rank=0)
    return True


def _essential(step: Action) -> bool:
    if step.verb == "ToggleOn":
        return bool(step.objects) and object_type(step.objects[0]) in ESSENTIAL_TOGGLES
    return step.verb in ("Slice", "PourFromAIntoB")


def _missing_step(w: _Work, rng: random.Random) -> bool:
    options = [
        i
        for i, s in enumerate(w.steps)
        if _essential(s)
        and i not in w.touched
        and i - 1 not in w.removals
        and i + 1 not in w.removals
    ]
    if not options:
        return False
    i = rng.choice(options)
    w.touched.add(i)
    w.removals[i] = (len(w.kinds), f"the plan needs {w.episode.actions[i]}")
    w.kinds.append("missing_step")
    return True


INJECTORS: dict[ErrorKind, Callable[[_Work, random.Random], bool]] = {
    "detour": _detour,
    "misplacement": _misplacement,
    "premature_toggle": _premature_toggle,
    "cancelling_navigation": _cancelling_navigation,
    "pointless_open_close": _pointless_open_close,
    "duplicate": _duplicate,
    "missing_step": _missing_step,
}


# --------------------------------------------------------------------------- public


def corrupt_episode(
    episode: Episode,
    *,
    rng: random.Random,
    errors: int,
    kinds: Sequence[ErrorKind] = KINDS,
) -> Episode:
    """A copy of `episode` with `errors` injected errors and their labels.

    Each error's kind is drawn from `kinds`: they are tried in a random order until one can be
    injected in this episode. Fewer errors are injected only when no kind fits any more. The
    copy keeps the id and every other field; `labels` holds the ground truth (`[]` when
    `errors` is 0), the extra field `injected` what was injected, in order, and `clean` the
    episode's own actions.

    Raises ValueError when the episode already has labels (their positions would go stale).
    """
    if episode.labels:
        raise ValueError(f"episode {episode.id} is already annotated")
    unknown = set(kinds) - set(INJECTORS)
    if unknown:
        raise ValueError(f"unknown error kind(s): {', '.join(sorted(unknown))}")
    steps = episode.parsed()
    work = _Work(episode, steps, _world(episode, steps), _held(steps))
    for _ in range(errors):
        order = rng.sample(list(kinds), len(kinds))
        if not any(INJECTORS[kind](work, rng) for kind in order):
            break
    actions, labels, notes = work.finish()
    data = episode.model_dump(mode="json", exclude_none=True)
    data["actions"] = actions
    data["labels"] = [label.model_dump(mode="json", exclude_none=True) for label in labels]
    data["injected"] = notes
    data["clean"] = list(episode.actions)
    corrupted = Episode.model_validate(data)
    corrupted.validate_labels()
    return mark_minimal_only(corrupted)


def corrupt_many(
    episodes: Iterable[Episode],
    *,
    seed: int = 0,
    errors_per_episode: tuple[int, int] = (1, 3),
    clean_fraction: float = 0.2,
    max_steps: int | None = 25,
    kinds: Sequence[ErrorKind] = KINDS,
    summary: CorruptSummary | None = None,
) -> Iterator[Episode]:
    """Annotated copies of episodes, each with errors injected, or none for a clean share.

    Episodes with more than `max_steps` non-dialogue steps are skipped (None: no limit). Each
    episode draws, from its own generator `random.Random(f"{seed}:{episode.id}")`, whether it
    stays clean (probability `clean_fraction`, labels `[]`) and otherwise how many errors it
    gets (uniform in `errors_per_episode`, both ends included). So the output of an episode
    depends only on the seed and the episode, not on the order or the other episodes.
    `summary`, when given, is updated as episodes go by.
    """
    low, high = errors_per_episode
    if not 0 <= low <= high:
        raise ValueError(
            f"errors_per_episode must be (low, high) with 0 <= low <= high: {low, high}"
        )
    tally = summary if summary is not None else CorruptSummary()
    for episode in episodes:
        tally.read += 1
        if max_steps is not None and sum(not a.is_dialogue for a in episode.parsed()) > max_steps:
            tally.too_long += 1
            continue
        rng = random.Random(f"{seed}:{episode.id}")
        errors = 0 if rng.random() < clean_fraction else rng.randint(low, high)
        corrupted = corrupt_episode(episode, rng=rng, errors=errors, kinds=kinds)
        if corrupted.labels:
            tally.corrupted += 1
            notes = (corrupted.model_extra or {}).get("injected", [])
            tally.kinds.update(str(note["error"]) for note in notes)
        else:
            tally.clean += 1
        yield corrupted
