"""What the two error generators share: the record keys that annotate an episode, the places that
act on what they hold, a run's summary, and a generator's signature."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from planverify.records.episode import Episode
from planverify.world.goals import parse_teach_task
from planverify.world.repair import Reviewer

ANNOTATION_KEYS = ("labels", "injected", "clean")
"""Record keys that annotate an episode (the ground truth), never part of a verifier's input."""

ACTING_PLACES = frozenset(
    {"Sink", "SinkBasin", "Bathtub", "BathtubBasin", "StoveBurner", "Pan", "Pot", "Microwave"}
    | {"CoffeeMachine", "Toaster"}
)
"""Receptacles that can act on what is put in them (a running tap washes and fills, a lit
burner cooks): a wrong place there may do the task's work, so a misplacement never goes there."""


def mark_minimal_only(episode: Episode) -> Episode:
    """The episode with each labelled block that the trim table keeps under `natural`
    (`Reviewer.trim_blocks` on the plan as corrupted, as the rules Judge and certify read it)
    marked as an error under the `minimal` trim policy only: `"policy": "minimal"` and
    `"optional"` with the kind, as in the hand-annotated files. Two kinds can be labelled: an
    open-and-close of a container that is a search, and an object taken off the receptacle
    the goal puts things on right before the plan puts something there (`making_room`)."""
    labels = episode.labels or []
    removed = {
        label.index for label in labels if label.type == "REMOVE" and label.index is not None
    }
    marked = _searches(episode, removed) | _room_made(episode, removed)
    if not marked:
        return episode
    data = episode.model_dump(mode="json", exclude_none=True)
    for label in data["labels"]:
        if label.get("type") == "REMOVE" and label.get("index") in marked:
            label |= {"policy": "minimal", "optional": marked[label["index"]]}
    return Episode.model_validate(data)


def _searches(episode: Episode, removed: set[int]) -> dict[int, str]:
    """The labelled opens and closes that the trim table reads as a search (with what else
    is labelled between them: a look-alike found there and set aside)."""
    opened = [i for i in removed if episode.actions[i].startswith("Driver.Open(")]
    if not opened:
        return {}
    reviewer = Reviewer(episode.actions, episode.scene, None)
    marked: dict[int, str] = {}
    for i in opened:
        name = reviewer.actions[i].objects[0]
        close = next(
            (
                j
                for j in range(i + 1, len(episode.actions))
                if reviewer.actions[j].verb == "Close"
                and reviewer.actions[j].objects[:1] == (name,)
            ),
            None,
        )
        pair = {i} if close is None else {i, close}  # (certify completes an open with its close)
        between = {j for j in removed if close is not None and i < j < close}
        if (pair, "search") in reviewer.trim_blocks(pair | between):
            marked |= dict.fromkeys(pair & removed, "search")
    return marked


def _room_made(episode: Episode, removed: set[int]) -> dict[int, str]:
    """The labelled pick-ups and put-downs of an object that the trim table reads as making
    room, all of that object's labelled steps as one block (it needs the task definition:
    where the goal puts things)."""
    if not episode.teach_task or not episode.scene:
        return {}
    actions = episode.parsed()
    handled: dict[str, set[int]] = {}
    for i in removed:
        if actions[i].verb in ("PickUp", "PutAOnB"):
            handled.setdefault(actions[i].objects[0], set()).add(i)
    if not handled:
        return {}
    reviewer = Reviewer(episode.actions, episode.scene, parse_teach_task(episode.teach_task))
    marked: dict[int, str] = {}
    for block in handled.values():
        if (block, "making_room") in reviewer.trim_blocks(block):
            marked |= dict.fromkeys(block, "making_room")
    return marked


@dataclass
class CorruptSummary:
    """Counts of a `corrupt_many` run."""

    read: int = 0  # episodes seen
    too_long: int = 0  # skipped: more than `max_steps` non-dialogue steps
    clean: int = 0  # kept without errors
    corrupted: int = 0  # given at least one error
    kinds: Counter[str] = field(default_factory=Counter)  # errors injected, by kind
    changes: Counter[str] = field(default_factory=Counter)  # changes that are not errors, by kind

    def __str__(self) -> str:
        text = (
            f"read {self.read}, skipped {self.too_long} too long, "
            f"{self.clean} clean, {self.corrupted} with errors"
        )
        if self.kinds:
            text += " (" + ", ".join(f"{k}: {n}" for k, n in sorted(self.kinds.items())) + ")"
        if self.changes:
            text += (
                "; changes ("
                + ", ".join(f"{k}: {n}" for k, n in sorted(self.changes.items()))
                + ")"
            )
        return text


class Generator(Protocol):
    """What `corrupt_many` and `planverify.noise.natural.natural_many` have in common."""

    def __call__(
        self,
        episodes: Iterable[Episode],
        *,
        seed: int = ...,
        errors_per_episode: tuple[int, int] = ...,
        clean_fraction: float = ...,
        max_steps: int | None = ...,
        summary: CorruptSummary | None = ...,
    ) -> Iterator[Episode]: ...
