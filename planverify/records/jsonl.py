"""Reading JSON records from files, and telling what kind of file a file is.

Every reader of JSONL goes through `records`: a UTF-8 byte order mark is accepted, bytes that
are not UTF-8 are named by value and offset, and each line is parsed on its own, so one bad line
costs that line only. `file_kind` names what a file holds (episodes, annotated episodes, results
of `planverify verify`, a TEACh game) from its first record of a known kind; every command says
what a file is, and what it expected, from it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

BOM = b"\xef\xbb\xbf"
RESULT_KEYS = frozenset({"original", "refined", "verdicts"})  # what `verify` writes

Kind = Literal["episodes", "annotated episodes", "results", "TEACh game", "empty"]
DESCRIPTIONS: dict[Kind | None, str] = {
    "episodes": "episodes without labels (records with `actions`)",
    "annotated episodes": "annotated episodes (records with `actions` and `labels`)",
    "results": "results of `planverify verify` (records with original/refined/verdicts)",
    "TEACh game": "a TEACh game (`tasks` with their episodes)",
    "empty": "no records",
    None: "no record of a known kind",
}
SCAN = 100  # records `file_kind` looks at before it gives up
Model = TypeVar("Model", bound=BaseModel)


class UnusableFile(ValueError):
    """A file the user named that cannot be used as the kind the command expects: a usage
    error (exit 2), said in one line."""


@dataclass
class Record:
    """One non-blank line of a JSONL file: its JSON value, or why it could not be read."""

    line: int  # 1-based line number
    data: Any = None  # the parsed value
    problem: str | None = None  # set when the line is not JSON text


def loads(raw: bytes, *, offset: int = 0, line: bool = False) -> Any:
    """Parse JSON bytes; a `ValueError` that says what is wrong (`offset`: where `raw` starts
    in its file, for the byte a non-UTF-8 message names; `line`: `raw` is one line of a file,
    whose number the caller gives, so only the column is named)."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as bad:
            byte = raw[bad.start]
            raise ValueError(
                f"not UTF-8 text (byte 0x{byte:02x} at offset {offset + bad.start})"
            ) from None
        where = f"column {exc.colno}" if line else f"line {exc.lineno}, column {exc.colno}"
        raise ValueError(f"malformed JSON: {exc.msg} at {where}") from None
    if _may_repeat_a_key(raw, data):
        json.loads(raw, object_pairs_hook=_unique_keys)
    return data


def _may_repeat_a_key(raw: bytes, data: Any) -> bool:
    """Whether `raw` may hold an object with a key twice, which `orjson` takes silently (the
    last value wins). Written again, the parsed value has one `:` per key it kept and the
    colons of its text; `raw` has as many unless a key repeats (or a colon is escaped)."""
    return raw.count(b":") != orjson.dumps(data).count(b":") or b"\\u003" in raw


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object of a JSON text: `ValueError` naming a key it holds twice."""
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise ValueError(f"malformed JSON: the key {key!r} appears twice in one object")
        data[key] = value
    return data


def records(path: Path) -> Iterator[Record]:
    """The non-blank lines of a JSONL file, each parsed on its own."""
    offset = 0
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            start = offset
            offset += len(raw)
            if number == 1 and raw.startswith(BOM):
                raw, start = raw[len(BOM) :], start + len(BOM)
            if not raw.strip():
                continue
            try:
                yield Record(number, loads(raw.rstrip(b"\r\n"), offset=start, line=True))
            except ValueError as exc:
                yield Record(number, problem=str(exc))


def load_json(path: Path) -> Any:
    """A whole JSON file (a BOM accepted); `ValueError` saying what is wrong."""
    raw = path.read_bytes()
    if raw.startswith(BOM):
        return loads(raw[len(BOM) :], offset=len(BOM))
    return loads(raw)


def record_kind(data: Any) -> Kind | None:
    """What a JSON record is, when it is a known kind."""
    if not isinstance(data, dict):
        return None
    if "actions" in data:
        return "annotated episodes" if data.get("labels") is not None else "episodes"
    if data.keys() >= RESULT_KEYS:
        return "results"
    if isinstance(data.get("tasks"), list):
        return "TEACh game"
    return None


def file_kind(path: Path) -> Kind | None:
    """What a file holds: the kind of its first record of a known kind (among the first
    `SCAN`), or of the file as one JSON value (a game file); "empty" for a file without a
    record; None when the kind is not known."""
    looked = -1
    for looked, record in enumerate(records(path)):
        if record.problem is not None and looked == 0:
            break  # not JSONL: perhaps one JSON value over several lines
        kind = record_kind(record.data)
        if kind is not None or looked + 1 >= SCAN:
            return kind
    if looked < 0:
        return "empty"
    try:
        return record_kind(load_json(path))
    except ValueError:
        return None


def describe(path: Path) -> str:
    """`PATH holds ...`: what a file is, for messages."""
    if path.is_dir():
        return f"{path} is a directory"
    return f"{path} holds {DESCRIPTIONS[file_kind(path)]}"


def expect(path: Path, wanted: Kind, role: str) -> str | None:
    """None when `path` is a file of the `wanted` kind (or empty: the command says it has
    nothing to do), else a one-line usage error naming what it holds and what `role` expects."""
    if not path.exists():
        return f"no such file: {path}"
    if path.is_file() and file_kind(path) in (wanted, "empty"):
        return None
    return f"{describe(path)}; {role} expects {DESCRIPTIONS[wanted]}"


def location(loc: Sequence[int | str]) -> str:
    """Where in a record a validation error is, for people: field names joined by dots, and a
    list item counted from 1 under the singular of its list's name (`("actions", 0)` is
    "action 1", `("scene", "objects", 2, "type")` is "scene.object 3, type").

    >>> location(("decisions", 3, "verdict"))
    'decision 4, verdict'
    """
    parts: list[str] = []  # dotted runs of names, each ended by a numbered item
    for part in loc:
        if not parts:
            parts.append("")
        if isinstance(part, int):
            head, dot, name = parts[-1].rpartition(".")
            single = name[:-1] if name.endswith("s") and not name.endswith("ss") else name
            parts[-1] = f"{head}{dot}{single or 'item'} {part + 1}"
            parts.append("")
        else:
            parts[-1] = f"{parts[-1]}.{part}" if parts[-1] else str(part)
    return ", ".join(p for p in parts if p)


def first_error(exc: ValueError) -> str:
    """The first problem a validation error names, as `field: why` (one line)."""
    if isinstance(exc, ValidationError) and exc.errors():
        first = exc.errors()[0]
        where = location(first["loc"]) or "record"
        return f"{where}: {first['msg'].removeprefix('Value error, ')}"
    return str(exc).splitlines()[0]


def read_all(path: Path, model: type[Model], what: str) -> Iterator[tuple[Record, Model]]:
    """Every record of a file that must be whole (a results file): each with its value as
    `model`; `UnusableFile` at the first line that is not one (`PATH:LINE: not a WHAT (why)`)."""
    for record in records(path):
        try:
            if record.problem is not None:
                raise ValueError(record.problem)
            yield record, model.model_validate(record.data)
        except ValueError as exc:  # a pydantic ValidationError is one
            raise UnusableFile(f"{path}:{record.line}: not {what} ({first_error(exc)})") from None
