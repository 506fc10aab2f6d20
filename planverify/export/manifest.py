"""The files a command wrote into a folder, listed in a marker file there, so that writing the
folder again removes the files it no longer writes, and nothing it did not write.

`planverify review --html` and `planverify export` into a folder (`--parquet`, `--split-by`)
use it. A marker is only trusted so far: a name that leaves the folder, or names a folder, is
never removed.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import orjson

from planverify.stores.files import write_atomically


def listed(directory: Path, marker: str, kind: str) -> list[str] | None:
    """The files the marker `directory/marker` of this `kind` lists; None when there is no
    such marker (missing, unreadable, or of another kind)."""
    try:
        data = orjson.loads((directory / marker).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(data, dict) or data.get("format") != kind:
        return None
    files = data.get("files")
    return [f for f in files if isinstance(f, str)] if isinstance(files, list) else []


def mark(directory: Path, marker: str, kind: str, files: Iterable[str]) -> None:
    """Write the marker: these files (relative to `directory`) were written by `kind`."""
    record = {"format": kind, "files": sorted(set(files))}
    write_atomically(directory / marker, orjson.dumps(record, option=orjson.OPT_INDENT_2))


def inside(directory: Path, name: str) -> Path | None:
    """`directory / name` when that is a file (or a link) inside the folder, else None."""
    path = directory / name
    root = directory.resolve()
    try:
        where = path.parent.resolve() / path.name
    except (OSError, RuntimeError):  # a loop of links
        return None
    if not where.is_relative_to(root) or where == root or path.name in ("", ".", ".."):
        return None
    return path if path.is_symlink() or path.is_file() else None


def remove_stale(directory: Path, earlier: Iterable[str], files: Iterable[str]) -> list[Path]:
    """Remove the files listed `earlier` that are not among `files` (see `inside`); returns
    what was removed."""
    removed = []
    for name in sorted(set(earlier) - set(files)):
        if (stale := inside(directory, name)) is not None:
            stale.unlink(missing_ok=True)
            removed.append(stale)
    return removed
