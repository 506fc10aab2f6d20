"""Where episodes come from: JSONL files of records, and TEACh game files, directories and globs.

Both stream: one record or one game file at a time, so a whole TEACh split never sits in memory.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

from planverify.episode import Episode, EpisodeError, iter_jsonl
from planverify.teach import GAME_SUFFIX, expand_inputs, iter_games, load_game

JSONL_SUFFIXES = (".jsonl", ".ndjson")


def is_jsonl(item: str | Path) -> bool:
    """Whether an input names a JSONL file of records (rather than TEACh games)."""
    return str(item).endswith(JSONL_SUFFIXES)


def _split_inputs(inputs: Iterable[str | Path]) -> tuple[list[Path], list[str | Path]]:
    records: list[str | Path] = []
    games: list[str | Path] = []
    for item in inputs:
        (records if is_jsonl(item) else games).append(item)
    return [Path(p) for p in records], games


def iter_inputs(
    inputs: Iterable[str | Path], *, split: str | None = None, workers: int = 0
) -> Iterator[Episode | EpisodeError]:
    """Episodes (or one-line errors) from JSONL files and TEACh game files, dirs and globs.

    JSONL files are read first, in the order given, then the games (sorted by path). `split`
    keeps only games under a directory of that name (`train`, `valid_seen`, ...). With
    `workers`, games are parsed in that many background processes (a few files ahead of the
    consumer, so memory stays flat) while the caller works on the episodes already loaded.
    """
    records, games = _split_inputs(inputs)
    for path in records:
        if not path.is_file():
            yield EpisodeError(str(path), 0, "no such file")
            continue
        yield from iter_jsonl(path)
    if not games:
        return
    if workers < 1:
        yield from iter_games(games, split=split)
        return
    yield from prefetch_games(expand_inputs(games, split=split), split=split, workers=workers)


def _load(path: Path, split: str | None) -> Episode | EpisodeError:
    try:
        return load_game(path, split=split)
    except EpisodeError as exc:
        return exc


def prefetch_games(
    paths: Iterable[Path], *, split: str | None = None, workers: int = 1, ahead: int = 16
) -> Iterator[Episode | EpisodeError]:
    """Load game files in background processes, in order, at most `ahead` files in flight."""
    pending: deque[Future[Episode | EpisodeError]] = deque()
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for path in paths:
            pending.append(pool.submit(_load, path, split))
            if len(pending) >= ahead:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def default_workers() -> int:
    """Loader processes worth starting: one when there is a second core, else none."""
    return 1 if (os.cpu_count() or 1) > 1 else 0


def count_inputs(inputs: Iterable[str | Path], *, split: str | None = None) -> int:
    """How many items `iter_inputs` will yield, at most (for progress bars); cheap to compute."""
    records, games = _split_inputs(inputs)
    total = 0
    for path in records:
        if path.is_file():
            with path.open("rb") as fh:
                total += sum(1 for line in fh if line.strip())
        else:
            total += 1
    return total + len(expand_inputs(games, split=split)) if games else total


def load_episodes(
    inputs: Iterable[str | Path], *, split: str | None = None, skip_errors: bool = False
) -> Iterator[Episode]:
    """Episodes from JSONL and TEACh inputs; the first bad record raises `EpisodeError`
    unless `skip_errors` is set."""
    for item in iter_inputs(inputs, split=split):
        if isinstance(item, EpisodeError):
            if skip_errors:
                continue
            raise item
        yield item


__all__ = [
    "GAME_SUFFIX",
    "count_inputs",
    "default_workers",
    "is_jsonl",
    "iter_inputs",
    "load_episodes",
    "prefetch_games",
]
