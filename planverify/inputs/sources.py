"""Where episodes come from: JSONL files of records, and TEACh game files, directories and globs.

Both stream: one record or one game file at a time, so a whole TEACh split never sits in memory.
A source that cannot be read never stops the others: it becomes an `EpisodeError` naming the file
(and line), which `iter_inputs` yields in its place and `load_episodes` keeps in `skipped`.
"""

from __future__ import annotations

import glob
import os
import threading
import time
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Literal

from planverify.inputs.teach import GAME_SUFFIX, SPLITS, expand_inputs, iter_games, load_game
from planverify.records.episode import EXPECTED, OTHER_FILES, Episode, EpisodeError, iter_jsonl
from planverify.records.jsonl import DESCRIPTIONS, describe, file_kind

JSONL_SUFFIXES = (".jsonl", ".ndjson")
READ_SUFFIXES = (*JSONL_SUFFIXES, GAME_SUFFIX)  # what a directory contributes
_GLOB_CHARS = frozenset("*?[")
_SWITCH_WORDS = frozenset({"true", "false", "yes", "no", "on", "off"})  # `--static true`
PARENT_POLL_S = 0.5  # how often a loader process checks that its parent is alive
FLAG_HINT = " (a flag takes no value: --static, not --static true)"


class InputError(ValueError):
    """Inputs that cannot be used at all (a usage error, reported before any work)."""


def is_jsonl(item: str | Path) -> bool:
    """Whether an input names a JSONL file of records (rather than TEACh games)."""
    return str(item).endswith(JSONL_SUFFIXES)


def _jsonl_under(item: str | Path) -> list[Path]:
    """The JSONL files an input names: itself, or those in a directory or glob (sorted)."""
    text = str(item)
    path = Path(text)
    if is_jsonl(text) and (path.exists() or not _GLOB_CHARS & set(text)):
        return [path]  # a file named `in[1].jsonl` is that file, not a pattern
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if is_jsonl(p) and p.is_file())
    if _GLOB_CHARS & set(text) and not path.exists():
        matches = sorted(Path(m) for m in glob.glob(text, recursive=True))
        return [p for m in matches for p in (_jsonl_under(m) if m.is_dir() else [m]) if is_jsonl(p)]
    return []


def _split_inputs(inputs: Iterable[str | Path]) -> tuple[list[Path], list[str | Path]]:
    """JSONL files (named, or found in directories and globs) and the game inputs."""
    records: list[Path] = []
    games: list[str | Path] = []
    for item in inputs:
        records += [p for p in _jsonl_under(item) if p not in records]
        if not is_jsonl(item):
            games.append(item)
    return records, games


def input_files(inputs: Iterable[str | Path], *, split: str | None = None) -> list[Path]:
    """Every existing file the inputs name (JSONL files and game files, through directories
    and globs): what an output must never be."""
    records, games = _split_inputs(inputs)
    found = [*records, *(expand_inputs(games, split=split) if games else [])]
    return [path for path in found if path.is_file()]


def check_inputs(
    inputs: Iterable[str | Path],
    *,
    split: str | None = None,
    games_only: bool = False,
    labelled: bool = True,
) -> None:
    """Raise `InputError` (one line, with a hint) when the inputs cannot be what the user meant:
    a missing file, a glob matching nothing, a directory with nothing to read, a JSONL file
    named that holds another kind of records (results, a TEACh game; annotated episodes unless
    `labelled`), a `split` that matches no game. Cheap: a file's first records at most."""
    items = list(inputs)
    if not items:
        raise InputError("no inputs given")
    suffixes = (GAME_SUFFIX,) if games_only else READ_SUFFIXES
    names = [f"*{s}" for s in suffixes]
    kinds = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
    for item in items:
        text = str(item)
        path = Path(text)
        if _GLOB_CHARS & set(text) and not path.exists():
            if not glob.glob(text, recursive=True):
                raise InputError(f"no file matches {text}")
        elif not path.exists():
            hint = FLAG_HINT if text.lower() in _SWITCH_WORDS else ""
            raise InputError(f"no such file or directory: {text}{hint}")
        elif path.is_dir() and not any(
            p.is_file() and p.name.endswith(suffixes) for p in path.rglob("*")
        ):
            raise InputError(f"{text} holds nothing to read: looked for {kinds} files below it")
        elif games_only and is_jsonl(text):
            raise InputError(f"{text} is a JSONL file; this command reads TEACh {kinds} files")
        elif is_jsonl(text) and path.is_file():
            kind = file_kind(path)
            if kind in OTHER_FILES or (kind == "annotated episodes" and not labelled):
                wanted = EXPECTED if labelled else f"expected {DESCRIPTIONS['episodes']}"
                raise InputError(f"{describe(path)}; {wanted}")
        elif path.is_file() and not text.endswith(GAME_SUFFIX):
            _check_game(path, games_only=games_only)
    if split is None:
        return
    _, games = _split_inputs(items)
    if expand_inputs(games, split=split):
        return
    found = sorted(
        {part for p in expand_inputs(games) for part in p.parent.parts if part in SPLITS}
    )
    hint = f"splits found: {', '.join(found)}" if found else "no split directories found"
    raise InputError(f"--split {split} matches no game file ({hint})")


def _check_game(path: Path, *, games_only: bool) -> None:
    """`InputError` when a file named as a game (any name but `*.game.json`, which is read as
    one) is not a TEACh game: say what it holds and what was expected."""
    kind = file_kind(path)
    if kind == "TEACh game":
        return
    what = "it has no `tasks` list" if kind is None else f"it holds {DESCRIPTIONS[kind]}"
    hint = f" (name it {path.stem}.jsonl)" if kind in ("episodes", "annotated episodes") else ""
    wanted = "TEACh *.game.json files"
    if not games_only:
        wanted = f'*.jsonl episodes (one {{"id", "goal"?, "actions": [...]}} a line) or {wanted}'
    raise InputError(f"{path} is not a TEACh game: {what}{hint}; expected {wanted}")


def iter_inputs(
    inputs: Iterable[str | Path], *, split: str | None = None, workers: int = 0
) -> Iterator[Episode | EpisodeError]:
    """Episodes (or one-line errors) from JSONL files and TEACh game files, dirs and globs.

    JSONL files are read first, in the order given (those in a directory sorted by path), then
    the games (sorted by path). `split` keeps only games under a directory of that name
    (`train`, `valid_seen`, ...). With `workers`, games are parsed in that many background
    processes (a few files ahead of the consumer, so memory stays flat) while the caller works
    on the episodes already loaded.
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
    """Load one game in a worker process; any failure comes back as an `EpisodeError`."""
    try:
        return load_game(path, split=split)
    except EpisodeError as exc:
        return exc
    except Exception as exc:  # whatever it is, it must reach the parent as one line
        return EpisodeError(str(path), 0, f"{type(exc).__name__}: {exc}".strip())


def exit_with_parent(parent: int, interval: float = PARENT_POLL_S) -> None:
    """Make this loader process end when `parent` does (killed, say): a thread checks its parent
    pid every `interval` seconds (the parent's end reparents the process), so a loader is never
    left behind waiting for work that will not come."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        os._exit(0)  # nothing to flush: the loader only ever answers its parent

    threading.Thread(target=watch, name="planverify-parent-watch", daemon=True).start()


def prefetch_games(
    paths: Iterable[Path], *, split: str | None = None, workers: int = 1, ahead: int = 16
) -> Iterator[Episode | EpisodeError]:
    """Load game files in background processes, in order, at most `ahead` files in flight."""
    pending: deque[tuple[Path, Future[Episode | EpisodeError]]] = deque()

    def take() -> Episode | EpisodeError:
        path, future = pending.popleft()
        try:
            return future.result()
        except Exception as exc:  # the worker died (out of memory, killed): name the file
            return EpisodeError(str(path), 0, f"could not be loaded ({type(exc).__name__})")

    # a forked loader closes the output locks it inherits (planverify.stores.files), and ends
    # when this process does
    with ProcessPoolExecutor(
        max_workers=workers, initializer=exit_with_parent, initargs=(os.getpid(),)
    ) as pool:
        for path in paths:
            pending.append((path, pool.submit(_load, path, split)))
            if len(pending) >= ahead:
                yield take()
        while pending:
            yield take()


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


class LoadedEpisodes:
    """The episodes of some inputs, read lazily each time it is iterated.

    Sources that could not be read are skipped and kept in `skipped` (as `EpisodeError`s naming
    file and line), so one bad file never stops a batch; with `errors="raise"` the first one is
    raised instead.

    >>> episodes = load_episodes(["no-such-dir/"])
    >>> list(episodes), [str(e) for e in episodes.skipped]
    ([], ['no-such-dir: no such file or directory'])
    """

    def __init__(
        self,
        inputs: Iterable[str | Path],
        *,
        split: str | None = None,
        errors: Literal["skip", "raise"] = "skip",
    ) -> None:
        self.inputs = list(inputs)
        self.split = split
        self.errors = errors
        self.skipped: list[EpisodeError] = []  # sources and records left out, with why

    def __iter__(self) -> Iterator[Episode]:
        self.skipped = []
        for item in iter_inputs(self.inputs, split=self.split):
            if isinstance(item, Episode):
                yield item
            elif self.errors == "raise":
                raise item
            else:
                self.skipped.append(item)

    def skipped_by_reason(self) -> Counter[str]:
        """How many sources were skipped, by the kind of problem."""
        from planverify.inputs.teach import reason_of

        return Counter(reason_of(error) for error in self.skipped)


def load_episodes(
    inputs: Iterable[str | Path],
    *,
    split: str | None = None,
    errors: Literal["skip", "raise"] = "skip",
) -> LoadedEpisodes:
    """The episodes of JSONL and TEACh inputs (files, directories, globs), read lazily.

    Bad sources are skipped and recorded in the returned object's `skipped` list, so
    `verify_many(load_episodes(["games/"]))` verifies every good episode; pass
    `errors="raise"` to stop at the first bad one instead.
    """
    return LoadedEpisodes(inputs, split=split, errors=errors)


__all__ = [
    "GAME_SUFFIX",
    "InputError",
    "LoadedEpisodes",
    "check_inputs",
    "count_inputs",
    "default_workers",
    "input_files",
    "is_jsonl",
    "iter_inputs",
    "load_episodes",
    "prefetch_games",
]
