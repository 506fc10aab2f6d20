"""The `natural` annotation files: TEACh demonstrations labelled under both trim policies
(docs/annotation.md, "The `natural` trim policy").

- `annotated/natural_test.jsonl` to `natural_test11.jsonl`, the **held-out test parts**, one a
  round: episodes not in `hand.jsonl` nor in an earlier part, drawn by `draw_test` with the
  part's own seed (`TEST_PARTS`) and labelled blind under the `natural` rule, before any Judge
  had seen them. A part is scored once, at the end of the round that made it, and is development
  data from then on; a next blind part needs a new seed. Parts 1 to 7 were scored at the end of
  rounds 1 to 7 (without motion, with scene and task: part 4 recall 0.786, precision 0.895;
  part 5 0.866 / 0.900; part 6 0.877 / 0.854; part 7 0.826 / 0.868); part 8 was scored at the
  end of round 8 (0.644 / 0.934), part 9 at the end of round 9 (0.795 / 0.738) and part 10 at
  the end of round 10 (0.825 / 0.881), part 11 at the end of round 14 (0.896 / 0.953). Part 7 holds
  36 episodes over eleven families (no Plate Of Toast episode was left under the cap and only two
  N Cooked Slices Of X In Y), part 8 only 29 over nine families (one Breakfast episode was left
  under the cap). The pool under 60 steps being nearly spent, part 9 is drawn with a cap of 80
  (`TEST_PARTS`) and holds 34 episodes over eleven families (no Plate Of Toast episode is left
  even under 80, only one Boil X and two N Cooked Slices Of X In Y). Under 80 steps the pool was
  nearly spent after part 9, so part 10 is drawn with a cap of 100 (`MAX_STEPS_10`, fixed before
  any part-10 episode was read) and holds 29 episodes over ten families (no N Cooked Slices Of X
  In Y nor Plate Of Toast episode is left even under 100; one Boil X, one Water Plant and two
  Sandwich are). After part 10 only six families have episodes left at all (51 episodes; no Boil X, N
  Cooked Slices Of X In Y, N Slices Of X In Y, Plate Of Toast, Sandwich nor Water Plant at any
  cap) and only one of them has more than 100 steps (a Breakfast of 105), so a higher cap would
  add no family: part 11 keeps the cap of 100 (`MAX_STEPS_11`, fixed before any part-11 episode
  was read) and holds 20 episodes over six families (two Coffee are left). Parts 1 to 11 are
  development data now.
- `annotated/natural_test12.jsonl`, the **twelfth test part**: after part 11 only four families
  had episodes left (31 in all, one of them over the cap), so part 12 is drawn by a rule of its
  own, fixed from ids and step counts alone before any of its episodes was read: every episode no
  earlier part took, at any length (`LAST_PART`), in family and id order. It holds 31 episodes:
  17 Put All X On Y, 7 Clean All X, 5 Breakfast and 2 Salad. It was scored once, blind, at the
  end of round 15 (0.832 / 0.790) and is development data since. No episode is left to draw, so
  no blind part is drawn (`BLIND_SET` is None) until the shared games grow.
- `annotated/hand_natural.jsonl`: the episodes of `hand.jsonl`, read again under `natural` after
  Judges had seen them (no blind test).
- `annotated/second_reading.jsonl`: two episodes of each set above read a second time,
  independently, and `annotated/adjudication.jsonl`, disputes between the rules Judge and these
  files decided blind; `annotator_agreement.py` scores both (docs/annotation.md).

A line is `{"id", "input_digest", "part", "labels"}`; a label is a `hand.jsonl` label, and one
that only the `minimal` policy removes also has `"policy": "minimal"` and `optional` (why
`natural` keeps it). `natural` labels are those without the marker; `minimal` labels are all.

`load_natural` rebuilds each episode from the shared games (as `hand_set` does), checks the digest
and the labels, and checks by simulation alone (`planverify.world.simulate` and the goal's
conditions, never a Judge) that the plan without the labelled steps still runs and meets the goal
at least as well as the whole plan, under each policy. Each episode comes back with its labels
(all of them) and `clean` under `natural` and `minimal`.

`draw_test` is the test parts' rule: per task family, the episodes not excluded of at most
`max_steps` non-dialogue, non-motion steps, sorted by id and shuffled by a generator seeded with
the family's name; the first ones of distinct scenes are taken (topped up in the same order):
`PER_FAMILY`, one more for the `LARGEST` families with the most games. Each part has its seed and
its cap (`TEST_PARTS`: `MAX_STEPS`, 60, for parts 1 to 8, so their draws stay as they were;
`MAX_STEPS_9`, 80, for part 9, `MAX_STEPS_10`, 100, for part 10 and `MAX_STEPS_11`, 100, for
part 11, each fixed before any episode of its part was read) and excludes `hand.jsonl` and the
parts before it (`draw_part`). `LARGEST` is counted over all games, so a part's cap changes which
episodes it may take, never which families get the extra one.

    python benchmarks/natural_set.py [--games DIR] [--part 11]   # a part's draw and label counts
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from hand_set import (
    GAMES,
    SPLITS,
    HandSetUnavailable,
    annotated_game,
    distinct_scenes_first,
    read_records,
    steps,
)

from planverify.inputs.teach import load_game
from planverify.metrics import gold_plan
from planverify.records.episode import Episode
from planverify.records.notation import MOTION_VERBS
from planverify.records.trim import labels_under
from planverify.world import simulate
from planverify.world.goals import evaluate, parse_teach_task
from planverify.world.trace import no_worse

ANNOTATED = Path(__file__).resolve().parent / "annotated"
TEST_FILE = ANNOTATED / "natural_test.jsonl"  # the first test part (development data since)
TEST2_FILE = ANNOTATED / "natural_test2.jsonl"  # the second test part (development data since)
TEST3_FILE = ANNOTATED / "natural_test3.jsonl"  # the third test part (development data since)
TEST4_FILE = ANNOTATED / "natural_test4.jsonl"  # the fourth test part (development data since)
TEST5_FILE = ANNOTATED / "natural_test5.jsonl"  # the fifth test part (development data since)
TEST6_FILE = ANNOTATED / "natural_test6.jsonl"  # the sixth test part (development data since)
TEST7_FILE = ANNOTATED / "natural_test7.jsonl"  # the seventh test part (development data since)
TEST8_FILE = ANNOTATED / "natural_test8.jsonl"  # the eighth test part (development data since)
TEST9_FILE = ANNOTATED / "natural_test9.jsonl"  # the ninth test part (development data since)
TEST10_FILE = ANNOTATED / "natural_test10.jsonl"  # the tenth test part (development data since)
TEST11_FILE = ANNOTATED / "natural_test11.jsonl"  # the eleventh test part (development data since)
TEST12_FILE = ANNOTATED / "natural_test12.jsonl"  # the twelfth test part (development data since)
REREAD_FILE = ANNOTATED / "hand_natural.jsonl"  # hand.jsonl read again under natural
HAND_FILE = ANNOTATED / "hand.jsonl"
SECOND_READING_FILE = ANNOTATED / "second_reading.jsonl"  # annotator_agreement.py's sample
ADJUDICATION_FILE = ANNOTATED / "adjudication.jsonl"  # disputed steps decided blind (world 29)
DEVELOPMENT_SETS = {  # the sets Judge work may read, by their name in the tables
    "hand-natural": REREAD_FILE,
    "natural-test-1": TEST_FILE,
    "natural-test-2": TEST2_FILE,
    "natural-test-3": TEST3_FILE,
    "natural-test-4": TEST4_FILE,
    "natural-test-5": TEST5_FILE,
    "natural-test-6": TEST6_FILE,
    "natural-test-7": TEST7_FILE,
    "natural-test-8": TEST8_FILE,
    "natural-test-9": TEST9_FILE,
    "natural-test-10": TEST10_FILE,
    "natural-test-11": TEST11_FILE,
    "natural-test-12": TEST12_FILE,
}
# the blind part (its name in the tables, its file), scored once at the end of a round of Judge
# work; None while no part is drawn that has not been scored
BLIND_SET: tuple[str, Path] | None = None
RECORD_KEYS = frozenset({"id", "input_digest", "part", "labels"})  # all a line may hold
PARTS = {
    TEST_FILE.name: "held_out_test",
    TEST2_FILE.name: "held_out_test_2",
    TEST3_FILE.name: "held_out_test_3",
    TEST4_FILE.name: "held_out_test_4",
    TEST5_FILE.name: "held_out_test_5",
    TEST6_FILE.name: "held_out_test_6",
    TEST7_FILE.name: "held_out_test_7",
    TEST8_FILE.name: "held_out_test_8",
    TEST9_FILE.name: "held_out_test_9",
    TEST10_FILE.name: "held_out_test_10",
    TEST11_FILE.name: "held_out_test_11",
    TEST12_FILE.name: "held_out_test_12",
    REREAD_FILE.name: "reread_after_judges",
    SECOND_READING_FILE.name: "second_reading",
}
LABEL_KEYS = frozenset({"type", "index", "after", "action", "error", "reason"})
POLICY_KEYS = frozenset({"policy", "optional"})  # on a label only `minimal` removes
OPTIONAL_KINDS = frozenset({"search", "device_around_loading"})  # why `natural` keeps a step
MOTION_ERROR = "cancelling_navigation"  # the only error a motion label may name
PER_FAMILY = 3  # test episodes drawn per task family
LARGEST = 4  # the families with the most games get one episode more
MAX_STEPS = 60  # the most non-dialogue, non-motion steps of a drawn episode (parts 1 to 8)
MAX_STEPS_9 = 80  # part 9's cap: under 60 the pool was nearly spent after part 8
MAX_STEPS_10 = 100  # part 10's cap: under 80 the pool was nearly spent after part 9
MAX_STEPS_11 = 100  # part 11's cap, part 10's: no higher cap adds a family (one episode left)
SEED = "planverify-natural-test"  # with the family's name, seeds each family's draw
SEED_2 = "planverify-natural-test-2"  # the second test part's seed
SEED_3 = "planverify-natural-test-3"  # the third test part's seed
SEED_4 = "planverify-natural-test-4"  # the fourth test part's seed
SEED_5 = "planverify-natural-test-5"  # the fifth test part's seed
SEED_6 = "planverify-natural-test-6"  # the sixth test part's seed
SEED_7 = "planverify-natural-test-7"  # the seventh test part's seed
SEED_8 = "planverify-natural-test-8"  # the eighth test part's seed
SEED_9 = "planverify-natural-test-9"  # the ninth test part's seed
SEED_10 = "planverify-natural-test-10"  # the tenth test part's seed
SEED_11 = "planverify-natural-test-11"  # the eleventh test part's seed
TEST_PARTS = (  # in drawn order: (file, seed, cap on non-dialogue, non-motion steps)
    (TEST_FILE, SEED, MAX_STEPS),
    (TEST2_FILE, SEED_2, MAX_STEPS),
    (TEST3_FILE, SEED_3, MAX_STEPS),
    (TEST4_FILE, SEED_4, MAX_STEPS),
    (TEST5_FILE, SEED_5, MAX_STEPS),
    (TEST6_FILE, SEED_6, MAX_STEPS),
    (TEST7_FILE, SEED_7, MAX_STEPS),
    (TEST8_FILE, SEED_8, MAX_STEPS),
    (TEST9_FILE, SEED_9, MAX_STEPS_9),
    (TEST10_FILE, SEED_10, MAX_STEPS_10),
    (TEST11_FILE, SEED_11, MAX_STEPS_11),
)
LAST_PART = len(TEST_PARTS) + 1  # part 12: every episode no earlier part took, at any length


def draw_test(
    episodes: Iterable[Episode],
    excluded: Iterable[str],
    *,
    seed: str = SEED,
    max_steps: int = MAX_STEPS,
) -> list[Episode]:
    """The episodes of a test part, chosen from `episodes` by the rule in the docstring; `seed`
    is the part's own (`SEED`, `SEED_2` ... `SEED_11` for the first to the eleventh) and
    `max_steps` its cap (`TEST_PARTS`)."""
    skip = set(excluded)
    families: dict[str, list[Episode]] = {}
    for episode in episodes:
        families.setdefault(episode.task or "", []).append(episode)
    largest = set(sorted(families, key=lambda f: (-len(families[f]), f))[:LARGEST])
    chosen: list[Episode] = []
    for family in sorted(families):
        wanted = PER_FAMILY + (family in largest)
        pool = [
            ep
            for ep in families[family]
            if ep.id not in skip and steps(ep, motion=False) <= max_steps
        ]
        pool.sort(key=lambda ep: ep.id)
        random.Random(f"{seed}:{family}").shuffle(pool)
        chosen += distinct_scenes_first(pool, wanted)
    return chosen


def draw_part(part: int, episodes: Iterable[Episode]) -> list[Episode]:
    """Test part 1 to 12 as drawn: each part excludes `hand.jsonl` and the parts before it; parts
    1 to 11 with their own seed and cap, part 12 (`LAST_PART`) is every episode left, by family
    and id."""
    if not 1 <= part <= LAST_PART:
        raise ValueError(f"no test part {part}")
    excluded = [r["id"] for r in read_records(HAND_FILE)]
    for earlier, _, _ in TEST_PARTS[: part - 1]:
        excluded += [r["id"] for r in read_records(earlier)]
    if part == LAST_PART:
        skip = set(excluded)
        return sorted((ep for ep in episodes if ep.id not in skip), key=lambda ep: (ep.task, ep.id))
    _, seed, max_steps = TEST_PARTS[part - 1]
    return draw_test(episodes, excluded, seed=seed, max_steps=max_steps)


def _check_label(episode: Episode, label: dict[str, Any]) -> None:
    """A label's keys, its policy marker and, for motion, its error type; ValueError if wrong."""
    if not set(label) <= LABEL_KEYS | POLICY_KEYS:
        raise ValueError(f"unknown label keys {sorted(set(label) - LABEL_KEYS - POLICY_KEYS)}")
    if not label.get("error"):
        raise ValueError(f"a label without an error type: {label}")
    marked = label.get("policy")
    if marked not in (None, "minimal") or (marked is None) != ("optional" not in label):
        raise ValueError(f"a minimal-only label needs both policy and optional: {label}")
    if marked is not None and label["optional"] not in OPTIONAL_KINDS:
        raise ValueError(f"unknown optional kind {label['optional']!r}")
    if label["type"] == "REMOVE":  # its index is in range: `validate_labels` ran first
        motion = episode.parsed()[label["index"]].verb in MOTION_VERBS
        if motion != (label["error"] == MOTION_ERROR):
            raise ValueError(
                f"step {label['index']}: motion labels, and only they, are {MOTION_ERROR}"
            )


def runs_and_meets_goal(episode: Episode, plan: Sequence[str]) -> str | None:
    """Why `plan` is not an acceptable clean plan of the episode, or None: a step of it cannot
    happen, or it meets the goal less well than the whole plan (by simulation only)."""
    final, outcomes = simulate(plan, episode.scene)
    for line, outcome in zip(plan, outcomes, strict=True):
        if outcome.problem:
            return f"{line} cannot happen: {outcome.problem}"
    if not episode.teach_task:
        return None
    spec = parse_teach_task(episode.teach_task)
    whole, _ = simulate(episode.actions, episode.scene)
    if not no_worse(evaluate(spec, final), evaluate(spec, whole)):
        return "it meets the goal less well than the whole plan"
    return None


def _annotated(episode: Episode, record: dict[str, Any], part: str) -> Episode:
    annotated = Episode.model_validate(
        episode.model_dump(mode="json") | {"labels": record["labels"]}
    )
    annotated.validate_labels()  # indices in range, no dialogue removed, MISSING well formed
    for label in record["labels"]:
        _check_label(episode, label)
    extra = annotated.model_extra if annotated.model_extra is not None else {}
    extra["part"] = part
    extra["clean"] = {}
    for policy in ("natural", "minimal"):
        labels = labels_under(annotated.labels or [], policy)
        clean = gold_plan(annotated.model_copy(update={"labels": labels}))
        problem = runs_and_meets_goal(annotated, clean)
        if problem is not None:
            raise ValueError(f"the plan without its {policy} labels fails: {problem}")
        extra["clean"][policy] = clean
    return annotated


def load_natural(path: Path, games: Path = GAMES) -> list[Episode]:
    """The episodes of a `natural` file, rebuilt from the TEACh games and checked, with `labels`,
    `part` and `clean` (`{"natural": plan, "minimal": plan}`).

    Raises `HandSetUnavailable` when the games are not there, and ValueError when a line is
    malformed, a game converts to other content than annotated, or a label does not fit.
    """
    if not games.is_dir():
        raise HandSetUnavailable(f"no TEACh games at {games} (the shared data is not here)")
    episodes = []
    for record in read_records(path):
        if set(record) != RECORD_KEYS or record["part"] != PARTS.get(path.name, record["part"]):
            raise ValueError(f"{record.get('id')}: a line holds {sorted(record)}, part as named")
        episode = annotated_game(record, games)
        try:
            episodes.append(_annotated(episode, record, record["part"]))
        except ValueError as exc:
            raise ValueError(f"{record['id']}: {exc}") from None
    return episodes


def all_games(games: Path = GAMES) -> list[Episode]:
    """Every shared game, converted (the pool `draw_test` chooses from)."""
    return [load_game(p) for split in SPLITS for p in sorted((games / split).glob("*.game.json"))]


def print_counts(path: Path, games: Path) -> None:
    """A natural file's episode count and its labels by error and policy."""
    try:
        episodes = load_natural(path, games)
    except HandSetUnavailable as exc:
        sys.exit(str(exc))
    kinds = Counter(
        (label.error, (label.model_extra or {}).get("policy", "both"))
        for ep in episodes
        for label in ep.labels or []
    )
    print(f"{path.name}: {len(episodes)} episodes, {sum(kinds.values())} labels")
    for (kind, policy), count in sorted(kinds.items()):
        print(f"  {kind} ({policy}): {count}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=Path, default=GAMES)
    parser.add_argument(
        "--part",
        type=int,
        choices=range(1, LAST_PART + 1),
        default=1,
        help="whose draw to list",
    )
    args = parser.parse_args()
    if not args.games.is_dir():
        sys.exit(f"no TEACh games at {args.games}")
    for episode in draw_part(args.part, all_games(args.games)):
        print(episode.task, episode.id, steps(episode, motion=False))
    for path in (*(test for test, _, _ in TEST_PARTS), TEST12_FILE, REREAD_FILE):
        if path.is_file():
            print_counts(path, args.games)


if __name__ == "__main__":
    main()
