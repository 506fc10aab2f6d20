"""Human-like mistakes with exact labels: a second error generator, independent of `corrupt`.

`planverify.noise.injected` injects the paper's error taxonomy. This module models instead how people
and model-written plans go wrong in TEACh-like episodes, read off real games: a thing put in the
wrong place and corrected, the wrong object fetched and swapped, an action that cannot work yet
followed by the one that does, a look at objects next to the one wanted, steps on objects the
scene does not have, and forgotten steps. It also varies the input the way real requests vary,
without making errors: the goal phrased in everyday words or object classes, the goal left to
the dialogue, and objects named as model-written plans name them.

Errors (the label's `error`; every inserted step is REMOVE-labelled unless said otherwise):

- `wrong_placement`: before the plan puts a held X on R, the Driver puts X on a wrong place W
  (never a basin or a device that could act on X: `planverify.noise.injected.ACTING_PLACES`), says so (`Driver.Say('oops')`, never labelled), and then either picks X up again (the wrong
  put-down and the re-pickup are labelled) or, as a written plan may do, goes straight on to
  put X on R with no new pick-up: then only the wrong put-down is labelled, and the put on R is
  not an error even though a naive simulator would call it impossible.
- `wrong_object`: before the plan picks up R, the Driver fetches a look-alike W the task does
  not need (a Cup for the Mug, a Spoon for the Knife, a PepperShaker for the SaltShaker) and puts
  it back; sometimes after taking it to R's destination, trying to slice with it, or pouring
  from it while it is empty; a remark of either agent may follow, unlabelled.
- `ineffective_action`: a step that cannot have its intended effect, before the one that does:
  slicing before the knife is picked up, switching on the wrong appliance or stove knob (maybe
  switching it off again), running the faucet or an appliance before the thing is in it, or
  pouring from a vessel that is still empty into the plant.
- `detour`: an object next to the one the plan picks up (sharing its receptacle in the scene's
  `parent` lists) picked up and put back, or opened and closed; or another cabinet or drawer of
  the kind the plan opens, opened and closed first.
- `nonexistent_object`: a detour on an object no TEACh scene has (`Paper`, `Dishwasher`,
  `Blender`), as model-written plans invent them.
- `missing_step`: an essential step forgotten (a switch-on, a slice, the pour into the plant,
  opening a closed container): removed, with a MISSING label as `planverify.noise.injected` writes it.

Changes that are not errors (listed in `injected` as `{"change": ...}`, never labelled):

- `colloquial_goal`: the goal in everyday words or object classes ("put all the remotes on one
  coffee table", "put the silverware on the dining table", "make me a coffee");
- `goal_in_dialogue`: the goal becomes a greeting ("hi", "what should I do?"); when no Commander
  line asks for the task, a Commander line asking for it in everyday words is added;
- `renamed`: object types renamed as model-written plans name them (`Table` for `DiningTable`,
  `Counter` for `CounterTop`), everywhere in the plan, in MISSING labels and in `clean`.

The record keeps the format of `planverify.noise.injected`: `labels`, `injected` (one note per error,
`{"error", "lines", "variant"}` or `{"error": "missing_step", "after", "action"}`, then the
changes) and `clean`, the plan without the errors: drop the REMOVE-labelled steps and the
remarks listed in `injected`, put the MISSING actions back, and `clean` comes out exactly.

>>> import random
>>> episode = Episode(id="e1", goal="Put all Mug in any Sink.",
...     actions=["Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'Sink')"])
>>> bad = natural_episode(episode, rng=random.Random(0), errors=1, kinds=["wrong_placement"],
...     changes=False)
>>> for line in bad.actions:
...     print(line)
Driver.PickUp('Mug')
Driver.PutAOnB('Mug', 'CounterTop')
Driver.Say('oops')
Driver.PickUp('Mug')
Driver.PutAOnB('Mug', 'Sink')
>>> [(label.type, label.index, label.error) for label in bad.labels]
[('REMOVE', 1, 'wrong_placement'), ('REMOVE', 3, 'wrong_placement')]
>>> bad.model_extra["clean"] == episode.actions
True
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator, Sequence

from planverify.noise.common import CorruptSummary, mark_minimal_only
from planverify.noise.natural.changes import GoalChange, change_goal, rename_line, renames_for
from planverify.noise.natural.detours import (
    make_detour,
    make_nonexistent,
)
from planverify.noise.natural.draft import (
    Draft,
    Line,
    View,
    held_by_step,
    needed_objects,
    wanted_types,
)
from planverify.noise.natural.ineffective import (
    make_ineffective,
)
from planverify.noise.natural.knowledge import (
    ALIASES,
    CHANGES,
    CLASSES,
    INVENTED,
    LOOK_ALIKES,
    MISTAKES,
    RENAMED,
    WEIGHTS,
    MistakeKind,
)
from planverify.noise.natural.missing import (
    make_missing_step,
)
from planverify.noise.natural.placement import (
    make_wrong_object,
    make_wrong_placement,
)
from planverify.records.episode import Episode

__all__ = [
    "ALIASES",
    "CHANGES",
    "CLASSES",
    "INVENTED",
    "LOOK_ALIKES",
    "MISTAKES",
    "MistakeKind",
    "natural_episode",
    "natural_many",
]


MAKERS: dict[MistakeKind, Callable[[Draft, random.Random], bool]] = {
    "wrong_placement": make_wrong_placement,
    "wrong_object": make_wrong_object,
    "ineffective_action": make_ineffective,
    "detour": make_detour,
    "nonexistent_object": make_nonexistent,
    "missing_step": make_missing_step,
}


# --------------------------------------------------------------------------- public


def natural_episode(
    episode: Episode,
    *,
    rng: random.Random,
    errors: int,
    kinds: Sequence[MistakeKind] = MISTAKES,
    changes: bool = True,
) -> Episode:
    """A copy of `episode` with `errors` human-like mistakes, exact labels and the clean plan.

    Each error's kind is drawn from `kinds`, tried in a random order until one fits; fewer
    errors are made only when none fits any more. With `changes`, the goal may also be put in
    everyday words or left to the dialogue, and object types renamed (not errors). The copy
    keeps every other field; `labels` holds the ground truth, `injected` the notes, `clean` the
    plan without the errors (renames and dialogue changes applied).

    Raises ValueError when the episode already has labels or a kind is unknown.
    """
    if episode.labels:
        raise ValueError(f"episode {episode.id} is already annotated")
    unknown = set(kinds) - set(MAKERS)
    if unknown:
        raise ValueError(f"unknown mistake kind(s): {', '.join(sorted(unknown))}")
    steps = episode.parsed()
    view = View(list(episode.scene.objects) if episode.scene else [], episode.scene is not None)
    change = change_goal(episode, steps, rng) if changes else GoalChange(episode.goal)
    draft = Draft(
        episode,
        list(episode.actions),
        steps,
        view,
        needed_objects(episode, steps, view, [change.goal or "", change.line or ""]),
        wanted_types(episode),
        held_by_step(steps),
    )
    for _ in range(errors):
        # a random order, likelier kinds first (weighted sampling without replacement)
        keys = {kind: rng.random() ** (1 / WEIGHTS[kind]) for kind in kinds}
        order = sorted(kinds, key=lambda kind: -keys[kind])
        if not any(MAKERS[kind](draft, rng) for kind in order):
            break
    if change.line is not None:
        gap = 1 if steps and steps[0].is_dialogue else 0
        draft.add(gap, "goal_in_dialogue", [Line(change.line, None)], error=False)
    actions, clean, labels, notes = draft.finish()
    for note in notes:
        if note.get("change") == "goal_in_dialogue":
            note["goal"] = episode.goal
    if change.note is not None:
        notes.append(change.note)
    if changes and rng.random() < RENAMED:
        names = renames_for([*actions, *clean], view.types, rng)
        if names:
            actions = [rename_line(line, names) for line in actions]
            clean = [rename_line(line, names) for line in clean]
            for label in labels:
                if label.action is not None:
                    label.action = rename_line(label.action, names)
            for note in notes:
                if "action" in note:
                    note["action"] = rename_line(note["action"], names)
            notes.append({"change": "renamed", "names": names})
    data = episode.model_dump(mode="json", exclude_none=True)
    data["actions"] = actions
    if change.goal is not None:
        data["goal"] = change.goal
    data["labels"] = [label.model_dump(mode="json", exclude_none=True) for label in labels]
    data["injected"] = notes
    data["clean"] = clean
    mistaken = Episode.model_validate(data)
    mistaken.validate_labels()
    return mark_minimal_only(mistaken)


def natural_many(
    episodes: Iterable[Episode],
    *,
    seed: int = 0,
    errors_per_episode: tuple[int, int] = (1, 3),
    clean_fraction: float = 0.2,
    max_steps: int | None = 25,
    kinds: Sequence[MistakeKind] = MISTAKES,
    summary: CorruptSummary | None = None,
) -> Iterator[Episode]:
    """Annotated copies of episodes with human-like mistakes, or none for a clean share.

    The same contract as `planverify.noise.injected.corrupt_many`: episodes with more than `max_steps`
    non-dialogue steps are skipped, and each episode draws from its own generator
    `random.Random(f"natural:{seed}:{episode.id}")`, so its output depends only on the seed and
    the episode. Clean episodes (labels `[]`) may still get the changes that are not errors.
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
        rng = random.Random(f"natural:{seed}:{episode.id}")
        errors = 0 if rng.random() < clean_fraction else rng.randint(low, high)
        mistaken = natural_episode(episode, rng=rng, errors=errors, kinds=kinds)
        notes = (mistaken.model_extra or {}).get("injected", [])
        if mistaken.labels:
            tally.corrupted += 1
        else:
            tally.clean += 1
        tally.kinds.update(str(note["error"]) for note in notes if "error" in note)
        tally.changes.update(str(note["change"]) for note in notes if "change" in note)
        yield mistaken
