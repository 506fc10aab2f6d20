"""What the two error generators share: the record keys that annotate an episode, the places that
act on what they hold, a run's summary, and a generator's signature."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from planverify.records.episode import Episode

ANNOTATION_KEYS = ("labels", "injected", "clean")
"""Record keys that annotate an episode (the ground truth), never part of a verifier's input."""

ACTING_PLACES = frozenset(
    {"Sink", "SinkBasin", "Bathtub", "BathtubBasin", "StoveBurner", "Pan", "Pot", "Microwave"}
    | {"CoffeeMachine", "Toaster"}
)
"""Receptacles that can act on what is put in them (a running tap washes and fills, a lit
burner cooks): a wrong place there may do the task's work, so a misplacement never goes there."""


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
