"""The hand-annotated test set: TEACh demonstrations labelled by reading them (docs/annotation.md).

`annotated/hand.jsonl` holds one line per episode, `{"id", "input_digest", "labels"}`, and no game
content: the episodes are rebuilt from the shared TEACh games. `load_hand_set` finds each game
under `GAMES/{train,valid_seen}/ID.game.json`, converts it as `planverify convert` does, checks
that its input digest is the one annotated, and returns the episode with its `labels` and its
`clean` plan (`planverify.metrics.gold_plan`: the actions without the REMOVE-labelled steps, with
the MISSING actions inserted), ready for plan-level scoring. Without the games it raises
`HandSetUnavailable` with the reason.

`draw` is the rule that chose the episodes, so the selection can be checked and repeated: per task
family, the episodes of at most `MAX_STEPS` non-dialogue steps (a family with fewer than
`PER_FAMILY` of those: at most `MAX_STEPS` non-dialogue, non-motion steps), sorted by id and
shuffled by a generator seeded with the family's name; the first `PER_FAMILY` of distinct scenes
are taken, topped up in the same order when there are too few scenes.

    python benchmarks/hand_set.py [--games DIR]   # lists the drawn episodes and the label counts
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson

from planverify.inputs.teach import load_game
from planverify.metrics import gold_plan
from planverify.records.episode import Episode, EpisodeError
from planverify.records.notation import MOTION_VERBS

HAND_FILE = Path(__file__).resolve().parent / "annotated" / "hand.jsonl"
GAMES = Path(__file__).resolve().parents[1].parent / "shared" / "teach" / "games"
SPLITS = ("train", "valid_seen")  # where the annotated games come from
RECORD_KEYS = frozenset({"id", "input_digest", "labels"})  # all a line of hand.jsonl may hold
PER_FAMILY = 5  # episodes drawn per task family
MAX_STEPS = 40  # the most non-dialogue steps of an annotated episode (see `draw` for the exception)
SEED = "planverify-hand-set"  # with the family's name, seeds each family's draw


class HandSetUnavailable(RuntimeError):
    """The hand set cannot be rebuilt here (no shared games); the message says why."""


def steps(episode: Episode, *, motion: bool = True) -> int:
    """The number of non-dialogue steps of an episode (without motion steps when `motion` is off)."""
    return sum(
        not a.is_dialogue and (motion or a.verb not in MOTION_VERBS) for a in episode.parsed()
    )


def draw(episodes: Iterable[Episode]) -> list[Episode]:
    """The episodes the hand set annotates, chosen from `episodes` by the rule in the docstring."""
    families: dict[str, list[Episode]] = {}
    for episode in episodes:
        families.setdefault(episode.task or "", []).append(episode)
    chosen: list[Episode] = []
    for family in sorted(families):
        pool = [ep for ep in families[family] if steps(ep) <= MAX_STEPS]
        if len(pool) < PER_FAMILY:
            pool = [ep for ep in families[family] if steps(ep, motion=False) <= MAX_STEPS]
        pool.sort(key=lambda ep: ep.id)
        random.Random(f"{SEED}:{family}").shuffle(pool)
        chosen += distinct_scenes_first(pool, PER_FAMILY)
    return chosen


def distinct_scenes_first(pool: Sequence[Episode], wanted: int) -> list[Episode]:
    """The first `wanted` episodes of a shuffled pool, one per scene while the scenes last."""
    picked: list[Episode] = []
    scenes: set[object] = set()
    for episode in pool:
        scene = (episode.model_extra or {}).get("world")
        if len(picked) < wanted and scene not in scenes:
            picked.append(episode)
            scenes.add(scene)
    taken = {ep.id for ep in picked}
    return picked + [ep for ep in pool if ep.id not in taken][: wanted - len(picked)]


def read_records(path: Path = HAND_FILE) -> list[dict[str, Any]]:
    """The lines of the annotation file, as dicts."""
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def game_path(episode_id: str, games: Path = GAMES) -> Path:
    """The shared game file of an episode id, in whichever split holds it."""
    for split in SPLITS:
        path = games / split / f"{episode_id}.game.json"
        if path.is_file():
            return path
    raise HandSetUnavailable(f"game {episode_id} is in none of {', '.join(SPLITS)} under {games}")


def annotated_game(record: dict[str, Any], games: Path) -> Episode:
    """The episode an annotation record was made on, converted afresh from its TEACh game;
    ValueError when the game now converts to other content (its input digest differs)."""
    try:
        episode = load_game(game_path(record["id"], games))
    except EpisodeError as exc:
        raise HandSetUnavailable(str(exc)) from None
    if episode.input_digest != record["input_digest"]:
        raise ValueError(f"{record['id']}: the game converts to other content than annotated")
    return episode


def load_hand_set(games: Path = GAMES, path: Path = HAND_FILE) -> list[Episode]:
    """The annotated episodes, rebuilt from the TEACh games, with `labels` and `clean`.

    Raises `HandSetUnavailable` when the games are not there, and ValueError when a game no longer
    converts to the episode that was annotated (its input digest differs) or a label is invalid.
    """
    if not games.is_dir():
        raise HandSetUnavailable(f"no TEACh games at {games} (the shared data is not here)")
    episodes = []
    for record in read_records(path):
        episode = annotated_game(record, games)
        annotated = Episode.model_validate(
            episode.model_dump(mode="json") | {"labels": record["labels"]}
        )
        try:
            annotated.validate_labels()
        except ValueError as exc:
            raise ValueError(f"{record['id']}: {exc}") from None
        extra = annotated.model_extra if annotated.model_extra is not None else {}
        extra["clean"] = gold_plan(annotated)
        episodes.append(annotated)
    return episodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=Path, default=GAMES)
    args = parser.parse_args()
    try:
        episodes = load_hand_set(args.games)
    except HandSetUnavailable as exc:
        sys.exit(str(exc))
    families = Counter((ep.task, (ep.model_extra or {}).get("split")) for ep in episodes)
    kinds = Counter(label.error for ep in episodes for label in ep.labels or [])
    print(f"{len(episodes)} episodes, {sum(kinds.values())} labels")
    for (family, split), count in sorted(families.items()):
        print(f"  {family} {split}: {count}")
    for kind, count in kinds.most_common():
        print(f"  {kind}: {count}")


if __name__ == "__main__":
    main()
