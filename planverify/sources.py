"""Where episodes come from: JSONL files of records, and TEACh game files, directories and globs.

Both stream: one record or one game file at a time, so a whole TEACh split never sits in memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from planverify.episode import Episode, EpisodeError, iter_jsonl
from planverify.teach import GAME_SUFFIX, expand_inputs, iter_games

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
    inputs: Iterable[str | Path], *, split: str | None = None
) -> Iterator[Episode | EpisodeError]:
    """Episodes (or one-line errors) from JSONL files and TEACh game files, dirs and globs.

    JSONL files are read first, in the order given, then the games (sorted by path). `split`
    keeps only games under a directory of that name (`train`, `valid_seen`, ...).
    """
    records, games = _split_inputs(inputs)
    for path in records:
        if not path.is_file():
            yield EpisodeError(str(path), 0, "no such file")
            continue
        yield from iter_jsonl(path)
    if games:
        yield from iter_games(games, split=split)


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


__all__ = ["GAME_SUFFIX", "count_inputs", "is_jsonl", "iter_inputs", "load_episodes"]
