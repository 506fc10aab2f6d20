"""One digest of everything the `rules` Judge concludes over the shared TEACh games and the corrupt
sets, to prove that a change moved no verdict (a refactoring, an iteration order, a speed-up).

It verifies, with the `rules` Judge and Planner (the iterative loop, as `planverify verify` does):

- the shared games (train and valid_seen) as recorded, with scene and task, and from the goal
  text alone (`scene`, `task` and `teach_task` removed, as `judge_quality.py` does);
- the corrupt sets of each generator (`injected`, `natural`) and seed, in both conditions, their
  annotations removed before verifying.

Each result is reduced to what a verdict consists of: its status and error, the goal used, every
verdict with its reason and evidence, the insertions, the refined plan, the loop's history
(critiques, edits) and warnings; run settings, token usage and cost are left out. It prints one
sha256 per set and one over all of them. `--detail FILE` writes one digest per episode, to
`diff` two runs and find what moved.

Usage: python benchmarks/verdict_digest.py [--games DIR] [--seeds 1 2] [--detail FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from planverify import verify_many
from planverify.inputs.sources import load_episodes
from planverify.noise import ANNOTATION_KEYS, GENERATORS
from planverify.records.episode import Episode
from planverify.records.result import VerificationResult

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
CONDITIONS = {"full": (), "goal": ("scene", "task", "teach_task")}
LEFT_OUT = {"settings", "usage", "cost_usd", "input_digest"}  # not verdicts


def without(episode: Episode, keys: tuple[str, ...] | set[str]) -> Episode:
    """The episode without these record keys."""
    data = episode.model_dump(mode="json", exclude_none=True)
    for key in keys:
        data.pop(key, None)
    return Episode.model_validate(data)


def canonical(result: VerificationResult) -> bytes:
    """The verdict content of a result, as canonical JSON."""
    data = result.model_dump(mode="json", exclude=LEFT_OUT)
    return json.dumps(data, sort_keys=True, ensure_ascii=False).encode()


def sets(source: list[Episode], seeds: list[int]) -> Iterator[tuple[str, list[Episode]]]:
    """The named episode sets to verify, inputs as the verifier gets them."""
    for condition, dropped in CONDITIONS.items():
        yield f"games/{condition}", [without(ep, dropped) for ep in source]
    for generator in sorted(GENERATORS):
        for seed in seeds:
            annotated = list(GENERATORS[generator](source, seed=seed))
            for condition, dropped in CONDITIONS.items():
                inputs = [without(ep, set(dropped) | set(ANNOTATION_KEYS)) for ep in annotated]
                yield f"{generator}-{seed}/{condition}", inputs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=Path, default=SHARED / "teach" / "games")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--detail", type=Path, help="write one digest per episode here")
    args = parser.parse_args()
    if not args.games.is_dir():
        sys.exit(f"no TEACh games at {args.games}; pass --games DIR")
    source = list(load_episodes([args.games]))
    total = hashlib.sha256()
    detail: IO[str] | None = args.detail.open("w") if args.detail else None
    for name, inputs in sets(source, args.seeds):
        digest = hashlib.sha256()
        for result in verify_many(inputs, judge="rules", planner="rules"):
            content = canonical(result)
            digest.update(content + b"\n")
            if detail is not None:
                detail.write(f"{name} {result.id} {hashlib.sha256(content).hexdigest()}\n")
        total.update(f"{name} {digest.hexdigest()}\n".encode())
        print(f"{name:22} {len(inputs):4} episodes  {digest.hexdigest()}", flush=True)
    if detail is not None:
        detail.close()
    print(f"all {total.hexdigest()}")


if __name__ == "__main__":
    main()
