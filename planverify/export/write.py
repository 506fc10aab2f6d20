"""Writing exports: JSONL files, or Parquet in a folder with a Hugging Face dataset card.

JSONL keeps each row as it is. Parquet (`pip install 'planverify[export]'`) gives every column a
fixed type: the known columns are typed, and free-form ones (an episode's `scene`,
`teach_task`, unknown keys, the run settings) are JSON text, so rows of different shapes always
fit one table. The folder is what `datasets.load_dataset("parquet", data_files=...)` or the Hub
read: `data/<split>.parquet` and `README.md`.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson

from planverify.export.curate import Curation
from planverify.export.formats import Format
from planverify.records.evidence import LEVELS, MEANINGS
from planverify.stores.files import replacing

SplitBy = Literal["task", "split"]
UNKNOWN = "unknown"  # the file of rows without a task family or split


NAME_LIMIT = 80  # characters of a file name's stem made from a value


def part_name(value: Any) -> str:
    """A file and split name for a task family or split: `Clean All X` -> `clean_all_x`.

    A name longer than `NAME_LIMIT` is cut, and ends with 8 hex digits of the value's hash, so
    that every file system takes it and values that share a start keep apart.

    >>> part_name("Clean All X"), len(part_name("x" * 400)), part_name("y" * 400)[-9:]
    ('clean_all_x', 80, '_1e672295')
    """
    text = re.sub(r"[^0-9A-Za-z]+", "_", str(value or "")).strip("_").lower() or UNKNOWN
    if len(text) <= NAME_LIMIT:
        return text
    return _suffixed(text, str(value), 8)


def _suffixed(name: str, label: str, digits: int) -> str:
    """`name`, cut to leave room, with `digits` hex digits of the hash of `label`."""
    digest = hashlib.sha256(label.encode()).hexdigest()[:digits]
    return f"{name[: NAME_LIMIT - digits - 1].rstrip('_')}_{digest}"


def label_of(value: Any) -> str:
    """The text of a task family or split (rows without one: "unknown")."""
    return UNKNOWN if value is None or value == "" else str(value)


def part_names(labels: Iterable[str]) -> dict[str, str]:
    """A distinct file name for each label (`part_name`). Labels that `part_name` makes the same
    (`a/b`, `a_b`, `A_B`; names are lower case, so case-insensitive file systems keep them
    apart too) keep that name only for the label written exactly so; the others end with hex
    digits of their hash.

    >>> part_names(["a/b", "a_b", "A_B"])
    {'a/b': 'a_b_c14cddc0', 'a_b': 'a_b', 'A_B': 'a_b_6c1908f9'}
    """
    by_name: dict[str, list[str]] = {}
    for label in dict.fromkeys(labels):
        by_name.setdefault(part_name(label), []).append(label)
    names = {alone[0]: name for name, alone in by_name.items() if len(alone) == 1}
    taken = set(names.values())
    for name, shared in by_name.items():
        if len(shared) == 1:
            continue
        for label in shared:
            if label == name:
                chosen = name
            else:
                chosen = next(
                    candidate
                    for digits in (8, 16, 64)
                    if (candidate := _suffixed(name, label, digits)) not in taken
                )
            names[label] = chosen
            taken.add(chosen)
    return names


def jsonl(rows: Iterable[dict[str, Any]]) -> bytes:
    """Rows as JSONL."""
    return b"".join(orjson.dumps(row) + b"\n" for row in rows)


def group(rows: Sequence[dict[str, Any]], key: str | None) -> dict[str, list[dict[str, Any]]]:
    """Rows by the file they go to (one group, "train", without a key)."""
    if key is None:
        return {"train": list(rows)}
    by_label: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_label.setdefault(label_of(row.get(key)), []).append(row)
    names = part_names(by_label)
    return dict(sorted((names[label], part) for label, part in by_label.items()))


@dataclass
class Written:
    """What an export wrote."""

    files: list[Path] = field(default_factory=list)
    rows: Counter[str] = field(default_factory=Counter)  # file part -> rows


# --- Parquet ---------------------------------------------------------------------------------


def _arrow() -> Any:
    try:
        import pyarrow
    except ImportError:
        raise RuntimeError(
            "Parquet needs pyarrow: pip install 'planverify[export]' (JSONL needs nothing)"
        ) from None
    return pyarrow


def _message(pa: Any) -> Any:
    return pa.struct([("role", pa.string()), ("content", pa.string())])


def _impossible(pa: Any) -> Any:
    """The type of `impossible`: steps decisions left impossible (`feasible.Impossible`)."""
    return pa.list_(
        pa.struct([("index", pa.int64()), ("action", pa.string()), ("problem", pa.string())])
    )


def schema(fmt: Format, rows: Sequence[dict[str, Any]]) -> tuple[Any, set[str]]:
    """The Arrow schema of a format's rows, and the columns stored as JSON text."""
    # a long flat table: one schema per format reads better whole (tests/test_layout.py)
    pa = _arrow()
    if fmt == "sft":
        return pa.schema(
            [
                ("id", pa.string()),
                ("task", pa.string()),
                ("messages", pa.list_(_message(pa))),
                ("impossible", _impossible(pa)),
            ]
        ), set()
    if fmt == "preference":
        chat = pa.list_(_message(pa))
        return pa.schema(
            [
                ("id", pa.string()),
                ("task", pa.string()),
                ("prompt", chat),
                ("chosen", chat),
                ("rejected", chat),
                ("removed", pa.int64()),
                ("inserted", pa.int64()),
                ("impossible", _impossible(pa)),
            ]
        ), set()
    if fmt == "recovery":
        step = pa.struct(
            [
                ("index", pa.int64()),
                ("action", pa.string()),
                ("reason", pa.string()),
                ("evidence", pa.string()),
            ]
        )
        fix = pa.struct(
            [
                ("index", pa.int64()),
                ("action", pa.string()),
                ("kind", pa.string()),
                ("removed", pa.bool_()),
                ("undoes", pa.int64()),
            ]
        )
        return pa.schema(
            [
                ("id", pa.string()),
                ("position", pa.int64()),
                ("task", pa.string()),
                ("goal", pa.string()),
                ("context", pa.list_(pa.string())),
                ("block", pa.list_(step)),
                ("recovery", pa.list_(fix)),
                ("impossible", _impossible(pa)),
            ]
        ), set()
    verdict = pa.struct(
        [
            ("index", pa.int64()),
            ("action", pa.string()),
            ("verdict", pa.string()),
            ("reason", pa.string()),
            ("iteration", pa.int64()),
            ("evidence", pa.string()),
            ("overruled", pa.bool_()),
        ]
    )
    inserted = pa.struct(
        [
            ("after_index", pa.int64()),
            ("action", pa.string()),
            ("reason", pa.string()),
            ("iteration", pa.int64()),
            ("evidence", pa.string()),
            ("overruled", pa.bool_()),
        ]
    )
    verification = pa.struct(
        [
            ("input_digest", pa.string()),
            ("settings", pa.string()),  # JSON text
            ("stop_reason", pa.string()),
            ("iterations", pa.int64()),
            ("revisions", pa.int64()),
            ("verdicts", pa.list_(verdict)),
            ("inserted", pa.list_(inserted)),
            ("decisions", pa.int64()),
            ("min_evidence", pa.string()),
            ("trim", pa.string()),
            ("impossible", _impossible(pa)),
            ("labels", pa.string()),  # JSON text: the input's labels, on its indices
        ]
    )
    typed = [
        ("id", pa.string()),
        ("goal", pa.string()),
        ("actions", pa.list_(pa.string())),
        ("task", pa.string()),
        ("split", pa.string()),
        ("source", pa.string()),
        ("verification", verification),
    ]
    names = {name for name, _ in typed}
    extra = sorted({key for row in rows for key in row} - names)
    return pa.schema(typed + [(key, pa.string()) for key in extra]), set(extra)


def _for_parquet(fmt: Format, row: dict[str, Any], as_json: set[str]) -> dict[str, Any]:
    out = dict(row)
    for key in as_json:
        if out.get(key) is not None:
            out[key] = orjson.dumps(out[key]).decode()
    if fmt == "episodes":
        check = dict(out["verification"])
        for key in ("settings", "labels"):
            if check.get(key) is not None:
                check[key] = orjson.dumps(check[key]).decode()
        out["verification"] = check
        for key in ("split", "source"):  # typed as text whatever the input held
            if out.get(key) is not None and not isinstance(out[key], str):
                out[key] = orjson.dumps(out[key]).decode()
    return out


def parquet(fmt: Format, rows: Sequence[dict[str, Any]], path: Path, table_schema: Any) -> None:
    """Write rows as one Parquet file."""
    pa = _arrow()
    import pyarrow.parquet as pq

    _, as_json = schema(fmt, rows) if fmt == "episodes" else (None, set())
    table = pa.Table.from_pylist(
        [_for_parquet(fmt, row, as_json) for row in rows], schema=table_schema
    )
    with replacing(path) as temporary:
        pq.write_table(table, temporary)


# --- dataset card ----------------------------------------------------------------------------


def feature(kind: Any) -> dict[str, Any]:
    """A Hugging Face `dataset_info.features` entry (without its name) for an Arrow type."""
    pa = _arrow()
    if pa.types.is_list(kind):
        inner = kind.value_type
        if pa.types.is_struct(inner):
            return {"list": [{"name": f.name, **feature(f.type)} for f in inner]}
        return {"list": feature(inner).get("dtype", feature(inner))}
    if pa.types.is_struct(kind):
        return {"struct": [{"name": f.name, **feature(f.type)} for f in kind]}
    names = {"string": "string", "int64": "int64", "bool": "bool", "double": "float64"}
    return {"dtype": names.get(str(kind), str(kind))}


def _yaml(value: Any, indent: int = 0) -> list[str]:
    """A small YAML writer for the card header (mappings, lists, scalars)."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, dict | list) and item:
                lines.append(f"{pad}{key}:")
                lines += _yaml(item, indent + 2)
            else:
                lines.append(f"{pad}{key}: {_scalar(item)}")
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict) and item:
                inner = _yaml(item, indent + 2)
                lines.append(f"{pad}- {inner[0].lstrip()}")
                lines += inner[1:]
            else:
                lines.append(f"{pad}- {_scalar(item)}")
    return lines


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, list | dict):
        return "[]" if isinstance(value, list) else "{}"
    return orjson.dumps(str(value)).decode()  # a JSON string is a YAML string


def size_category(n: int) -> str:
    """The Hub's size category of a dataset of `n` rows."""
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < limit:
            return name
    return "100K<n<1M" if n < 1_000_000 else "n>1M"


DESCRIPTIONS: dict[Format, str] = {
    "episodes": "Cleaned episodes in planverify's input format: every input key is kept, "
    "`actions` is the refined plan, `verification` holds the per-step verdicts (with the "
    "Judge's reasons), the inserted steps, the run settings and the stop reason.",
    "sft": "Chat-format supervised fine-tuning data: `messages` = [system, user, assistant]. "
    "The user turn holds the goal and the dialogue, the assistant turn the cleaned plan's "
    "actions, one per line.",
    "preference": "Preference pairs in TRL's DPO columns: `prompt` (system and user turns), "
    "`chosen` (the cleaned plan) and `rejected` (the original plan), for episodes the "
    "verification changed.",
    "recovery": "Human error-recovery patterns: one record per block of removed steps, with the "
    "steps before it (`context`), the block with the Judge's reasons (`block`) and the steps "
    "that undo or correct it (`recovery`).",
}


EVIDENCE_FIELDS: dict[Format, str] = {
    "episodes": "`verification.verdicts[*].evidence` and `verification.inserted[*].evidence`",
    "recovery": "`block[*].evidence`",
}  # where a format's rows carry levels


def evidence_section(fmt: Format, curation: Curation) -> list[str]:
    """The card's account of evidence levels: what they mean, where the rows carry them, which
    level the export kept, and the removals that stand at each level."""
    lines = [
        "",
        "## Evidence",
        "",
        "planverify gives every removal and insertion an evidence level, strongest first:",
        "",
        *(f"- `{level}`: {MEANINGS[level]}" for level in LEVELS),
        "",
    ]
    if fmt in EVIDENCE_FIELDS:
        lines += [
            f"The rows carry it in {EVIDENCE_FIELDS[fmt]} (null on kept steps and on steps "
            "only a reviewer's decision removed).",
            "",
        ]
    policy = curation.trim
    lines.append(
        "Trim policy: each result's own (no `--trim`)."
        if policy is None
        else f"Trim policy: `{policy}` (`--trim {policy}`), applied before the level below."
    )
    floor = curation.min_evidence
    if floor is None:
        lines.append("Level used: all (no `--min-evidence`): changes at every level were kept.")
    else:
        lines.append(
            f"Level used: `{floor}` (`--min-evidence {floor}`): only removals and insertions at "
            f"`{floor}` or stronger were kept; {curation.restored} removal(s) below it were "
            f"undone (the steps stay in the plans) and {curation.withheld} insertion(s) below it "
            "left out."
        )
    standing = Counter(
        level
        for item in curation.curated
        for i in item.removed
        if (level := item.evidence(i)) is not None
    )
    lines.append(
        "Steps removed by the Judge, by level: "
        + ", ".join(f"{level} {standing[level]}" for level in LEVELS)
        + "."
    )
    return lines


def made(fmt: Format, curation: Curation, parts: dict[str, int]) -> list[str]:
    """The card's counts: episodes and rows, changes and decisions, what was left out."""
    curated = curation.curated
    removed = sum(len(i.removed) for i in curated)
    inserted = sum(i.insertions for i in curated)
    changed = sum(i.changed for i in curated)
    lines = [
        f"- episodes exported: {len(curated)} ({changed} changed), rows: {sum(parts.values())}"
        + (f" ({', '.join(f'{k}: {v}' for k, v in parts.items())})" if len(parts) > 1 else ""),
        f"- steps removed: {removed}, inserted: {inserted}; human decisions applied: "
        f"{curation.decisions}",
    ]
    if marked := curation.impossible:
        where = "`verification.impossible`" if fmt == "episodes" else "`impossible`"
        lines.append(
            f"- episodes whose decisions left steps the simulator finds impossible: "
            f"{len(marked)} (exported all the same; the steps in {where})"
        )
    if curation.left_out:
        lines.append(
            "- left out: "
            + ", ".join(f"{reason} {n}" for reason, n in sorted(curation.left_out.items()))
        )
    return lines


def card(
    fmt: Format,
    table_schema: Any,
    parts: Counter[str],
    curation: Curation,
    *,
    license: str,
    command: str,
    json_columns: Sequence[str] = (),
) -> str:
    """The dataset card: YAML header (license, features, size, configs) and how it was made."""
    total = sum(parts.values())
    settings: Counter[str] = Counter()
    for item in curation.curated:
        s = item.result.settings
        settings[s.model_dump_json(exclude_none=True) if s else "unknown"] += 1
    header: dict[str, Any] = {"license": license}
    if license == "other":
        header["license_name"] = "same-as-source"
    header |= {
        "pretty_name": f"planverify {fmt}",
        "tags": ["planverify", "embodied-ai", "task-planning", "teach"],
        "size_categories": [size_category(total)],
        "dataset_info": {
            "features": [{"name": f.name, **feature(f.type)} for f in table_schema],
            "splits": [{"name": name, "num_examples": count} for name, count in parts.items()],
        },
        "configs": [
            {
                "config_name": "default",
                "data_files": [{"split": name, "path": f"data/{name}.parquet"} for name in parts],
            }
        ],
    }
    lines = ["---", *_yaml(header), "---", "", f"# planverify: {fmt}", "", DESCRIPTIONS[fmt], ""]
    json_text = [
        *json_columns,
        *(["verification.settings", "verification.labels"] if fmt == "episodes" else []),
    ]
    if json_text:
        lines += [
            "Free-form values are stored as JSON text (decode with `json.loads`): "
            + ", ".join(f"`{name}`" for name in json_text)
            + ".",
            "",
        ]
    lines += [
        "## How it was made",
        "",
        "Plans were verified with planverify: a Judge "
        "flags unneeded steps (with reasons) and names missing ones, a Planner applies the "
        "critique, and the loop repeats until the Judge has no objections. The results were "
        "joined with their input episodes by id and content digest and exported with",
        "",
        f"    {command}",
        "",
        *made(fmt, curation, parts),
    ]
    lines += evidence_section(fmt, curation)
    lines += [
        "",
        "Run settings (judge, planner, mode, iteration cap, ...), with episode counts:",
        "",
    ]
    for text, count in settings.most_common():
        lines.append(f"- {count} episode(s): `{text}`")
    lines += [
        "",
        "## License",
        "",
        "The plans, dialogue and scenes come from the input episodes (for TEACh, the TEACh "
        "release and its license); the verdicts and reasons are planverify's output. Use the "
        "data under the source's terms"
        + ("." if license == "other" else f"; this card declares `{license}`."),
        "",
    ]
    return "\n".join(lines)
