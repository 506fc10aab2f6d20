"""Writing output files safely: whole or not at all, one run at a time, never over an input.

- `output_target(path)` is the file an output really is: symlinks resolved, so a link is
  written through (its target replaced), never replaced itself; a path that exists and is not
  a regular file (a device, a FIFO, a socket) is refused with `OutputNotFile`.
- `replacing(path)` gives a unique temporary sibling of that target that is renamed over it
  when the block ends normally and removed on every other exit, so two writers never share a
  temporary file and a reader never sees half a file.
- `output_lock(path)` holds an OS advisory lock (`fcntl.flock`) on `TARGET.lock` while a command
  writes `path`, and on the existing file itself (so two hard links of one file, or a link and
  its target, share one lock): a second run gets `OutputBusy` naming the first one's pid. The
  kernel releases the locks when their holder exits, however it exits (a `kill -9` included);
  the next holder removes the temporary files a killed writer left. A child forked while a
  lock is held closes its copies of the lock's descriptors, so only the holder holds it.
- `clash(outputs, inputs)` finds an output that is one of the inputs (symlinks resolved).
- `disk_full(exc)` finds a full disk (or quota) in an exception and what caused it.
"""

from __future__ import annotations

import errno
import glob
import os
import secrets
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, nullcontext, suppress
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no advisory locks, runs are not guarded against each other
    fcntl = None  # type: ignore[assignment]

_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_HELD: set[int] = set()  # descriptors of the locks this process holds
_SQLITE_FULL = 13  # SQLITE_FULL: "database or disk is full"
_POSTGRES_DISK_FULL = "53100"  # SQLSTATE disk_full


def _close_inherited_locks() -> None:
    """In a forked child: close the copies of the parent's lock descriptors, so that a child
    that outlives its parent (a loader process) never keeps an output locked."""
    for fd in _HELD:
        with suppress(OSError):
            os.close(fd)
    _HELD.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_close_inherited_locks)


class OutputBusy(Exception):
    """Another process holds the lock of an output."""

    def __init__(self, output: Path, pid: int | None) -> None:
        who = f"another run (pid {pid})" if pid else "another run"
        super().__init__(f"{who} is writing {output}")
        self.output, self.pid = output, pid


class OutputClash(ValueError):
    """An output path that is also an input of the same command."""

    def __init__(self, output: Path, source: Path) -> None:
        same = "" if output == source else f" ({source})"
        super().__init__(f"the output {output} is also an input{same}: write it somewhere else")
        self.output, self.source = output, source


class OutputNotFile(ValueError):
    """An output path that exists and is not a regular file (a device, a FIFO, a socket)."""

    def __init__(self, output: Path) -> None:
        super().__init__(f"the output {output} exists and is not a regular file: give a file name")
        self.output = output


def output_target(path: Path) -> Path:
    """The regular file writing `path` means: symlinks resolved (the link stays, its target is
    written); `OutputNotFile` when something other than a regular file is there."""
    target = path.resolve()
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        return target
    if not stat.S_ISREG(mode):
        raise OutputNotFile(path)
    return target


def temporary_sibling(path: Path) -> Path:
    """A fresh, unique temporary file name next to `path` (hidden, ends in `.tmp`): it holds
    the writer's pid, so that one a killed writer left can be told from one being written."""
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


def remove_orphans(path: Path) -> None:
    """Remove the temporary siblings of `path` left by writers that were killed."""
    for temporary in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        pid = temporary.name[len(path.name) + 2 :].split(".")[0]
        if pid.isdigit() and not _alive(int(pid)):
            temporary.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # no signal: only whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:  # it does, and belongs to someone else
        pass
    return True


@contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A new empty temporary file next to `path` (its target, when it is a symlink), to write
    the new content into: renamed over that file (after an fsync) when the block ends normally,
    removed when it raises. `OutputNotFile` when `path` is not a regular file."""
    path = output_target(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = temporary_sibling(path)
    os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        yield temporary
        with temporary.open("rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def write_atomically(path: Path, content: bytes | Iterable[bytes]) -> None:
    """Write a file whole through a unique temporary sibling and a rename."""
    with replacing(path) as temporary, temporary.open("wb") as fh:
        if isinstance(content, bytes):
            fh.write(content)
        else:
            for chunk in content:
                fh.write(chunk)


def lock_path(output: Path) -> Path:
    """The lock file of an output: `OUTPUT.lock`."""
    return output.with_name(output.name + ".lock")


@contextmanager
def output_lock(output: Path) -> Iterator[None]:
    """Hold the advisory lock of `output` for the block; `OutputBusy` when another process does.

    The lock is taken on the output's target (symlinks resolved), and also on the existing
    file itself, so that another name of the same file (a hard link) cannot bypass it. The lock
    file holds the holder's pid and is removed when the block ends. A process that opened the
    file before it was removed finds, once it has the lock, that the name now points elsewhere
    (or nowhere), and locks the new file instead. `OutputNotFile` when `output` is not a
    regular file.
    """
    if fcntl is None:
        yield
        return
    folder = output.is_dir()  # a folder export (--split-by, --parquet): locked by name alone
    output = output.resolve() if folder else output_target(output)
    path = lock_path(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            os.close(fd)
            raise OutputBusy(output, int(holder) if holder.isdigit() else None) from None
        try:
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    _HELD.add(fd)
    try:
        with nullcontext() if folder else _file_lock(output):
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            remove_orphans(output)
            yield
    finally:
        with suppress(OSError):
            path.unlink()
        _HELD.discard(fd)
        os.close(fd)  # releases the lock, after the name is gone


@contextmanager
def _file_lock(output: Path) -> Iterator[None]:
    """Hold a lock on the existing output file itself (its inode), whatever name it is reached
    by; nothing to hold when there is no file yet (then only its own name can reach it)."""
    assert fcntl is not None
    try:
        fd = os.open(output, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except FileNotFoundError:
        fd = -1
    if fd < 0:
        yield
        return
    _HELD.add(fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped in since it was checked
            raise OutputNotFile(output)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise OutputBusy(output, None) from None  # its pid is in another name's lock file
        yield
    finally:
        _HELD.discard(fd)
        os.close(fd)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return (found.st_dev, found.st_ino)


def clash(outputs: Iterable[Path], inputs: Iterable[Path]) -> None:
    """Raise `OutputClash` when an output is one of the inputs: the same path once symlinks
    are resolved, or the same file (a hard link)."""
    by_path: dict[Path, Path] = {}
    by_file: dict[tuple[int, int], Path] = {}
    for source in inputs:
        by_path[source.resolve()] = source
        if (identity := _identity(source)) is not None:
            by_file[identity] = source
    for output in outputs:
        same = by_path.get(output.resolve())
        if same is None and (identity := _identity(output)) is not None:
            same = by_file.get(identity)
        if same is not None:
            raise OutputClash(output, same)


def disk_full(exc: BaseException) -> BaseException | None:
    """The error in `exc` or its causes that says a disk (or quota) is full, if any: `ENOSPC`
    or `EDQUOT` from the OS, `SQLITE_FULL`, PostgreSQL's `disk_full`."""
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in _FULL_ERRNOS:
            return current
        if getattr(current, "sqlite_errorcode", None) == _SQLITE_FULL:
            return current
        if getattr(current, "sqlstate", None) == _POSTGRES_DISK_FULL:
            return current
        if isinstance(current, BaseExceptionGroup):
            todo.extend(current.exceptions)
        todo.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return None
