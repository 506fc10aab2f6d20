"""Curated data out of verification results: `planverify export`.

`export_results` joins results with their input episodes (by id and content), applies human
decisions from `planverify review`, and writes one of four formats (`FORMATS`) as JSONL, or as
Parquet in a folder with a dataset card, optionally one file per task family or split.

The command is `planverify.cli.export`. May import `stores`, `records` and `world` (the
simulator, which replays the plans decisions leave: `feasible`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planverify.export.curate import (
    Curated,
    Curation,
    CurationError,
    Decision,
    curate,
    read_decisions,
    read_results,
    rebuild,
)
from planverify.export.formats import FORMATS, Format, Options, rows
from planverify.export.manifest import listed, mark, remove_stale
from planverify.export.write import SplitBy, Written, card, group, jsonl, parquet, schema
from planverify.records.episode import Episode, EpisodeError
from planverify.records.evidence import Evidence
from planverify.records.result import VerificationResult
from planverify.records.trim import TrimPolicy
from planverify.stores.files import OutputClash, clash, write_atomically

MARKER = ".planverify-export.json"  # in a folder export wrote: the files it wrote there
MARKER_FORMAT = "planverify-export"

__all__ = [
    "FORMATS",
    "Curated",
    "Curation",
    "CurationError",
    "Decision",
    "ExportReport",
    "Format",
    "Options",
    "curate",
    "export_results",
    "read_decisions",
    "read_results",
    "rebuild",
]


@dataclass
class ExportReport:
    """What an export did."""

    curation: Curation
    written: Written = field(default_factory=Written)

    @property
    def rows(self) -> int:
        """Rows written, in all files."""
        return sum(self.written.rows.values())


def export_results(
    results: Sequence[VerificationResult],
    episodes: Iterable[Episode | EpisodeError],
    fmt: Format,
    output: Path,
    *,
    options: Options | None = None,
    decisions: Sequence[Decision] = (),
    split_by: SplitBy | None = None,
    as_parquet: bool = False,
    license: str = "other",
    command: str = "planverify export",
    inputs: Sequence[Path] = (),
    min_evidence: Evidence | None = None,
    trim: TrimPolicy | None = None,
) -> ExportReport:
    """Write one export format; see the module docstring.

    JSONL goes to `output` (a file), or with `split_by` to `output/<value>.jsonl` (`part_names`:
    distinct values get distinct files). Parquet goes to the folder `output`:
    `data/<split>.parquet` and `README.md`. A folder's `MARKER` lists the files written there;
    of those an earlier export wrote, the ones this export does not write again are removed
    (never an input, nor a file export did not write). Raises `CurationError` when
    results were computed on other content than the episodes given, and `OutputClash` (before
    writing anything) when a file it would write is one of `inputs`. When no row is made,
    nothing is written (`report.written.files` is empty). With `trim`, the results are read
    under that trim policy (none is verified again), then with `min_evidence` removals below
    that evidence level are undone and insertions below it left out (`curate`).
    """
    if fmt not in FORMATS:
        raise CurationError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    curation = curate(results, episodes, decisions, min_evidence=min_evidence, trim=trim)
    report = ExportReport(curation)
    made = list(rows(fmt, curation.curated, options or Options()))
    if not made:
        return report
    if split_by is not None:  # the rows of every format carry what they are split by
        by_id = {item.result.id: item for item in curation.curated}
        for row in made:
            item = by_id[row["id"]]
            row.setdefault(split_by, item.task if split_by == "task" else item.extra("split"))
    parts = group(made, split_by)
    written = report.written
    if not as_parquet and split_by is None:
        clash([output], inputs)
        write_atomically(output, jsonl(made))
        written.files.append(output)
        written.rows["train"] = len(made)
        return report
    _into_folder(report, fmt, parts, output, inputs, as_parquet, license, command)
    return report


def _into_folder(
    report: ExportReport,
    fmt: Format,
    parts: dict[str, list[dict[str, Any]]],
    output: Path,
    inputs: Sequence[Path],
    as_parquet: bool,
    license: str,
    command: str,
) -> None:
    """Write the parts into the folder `output` (see `export_results`)."""
    written, curation = report.written, report.curation
    made = [row for part in parts.values() for row in part]
    where = {name: f"data/{name}.parquet" if as_parquet else f"{name}.jsonl" for name in parts}
    names = [*where.values(), *(["README.md"] if as_parquet else [])]
    clash([output / name for name in names], inputs)
    earlier = [name for name in listed(output, MARKER, MARKER_FORMAT) or [] if name not in names]
    earlier = [name for name in earlier if not _is_input(output / name, inputs)]
    output.mkdir(parents=True, exist_ok=True)
    mark(output, MARKER, MARKER_FORMAT, [*earlier, *names])  # an export cut short knows all
    targets = {name: output / relative for name, relative in where.items()}
    table_schema, as_json = schema(fmt, made) if as_parquet else (None, set())
    for name, part in parts.items():
        if as_parquet:
            parquet(fmt, part, targets[name], table_schema)
        else:
            write_atomically(targets[name], jsonl(part))
        written.files.append(targets[name])
        written.rows[name] = len(part)
    if as_parquet:
        readme = output / "README.md"
        text = card(
            fmt,
            table_schema,
            written.rows,
            curation,
            license=license,
            command=command,
            json_columns=sorted(as_json),
        )
        write_atomically(readme, text.encode())
        written.files.append(readme)
    remove_stale(output, earlier, names)
    mark(output, MARKER, MARKER_FORMAT, names)


def _is_input(path: Path, inputs: Sequence[Path]) -> bool:
    """Whether `path` is one of the inputs (never removed, even when an export wrote it)."""
    try:
        clash([path], inputs)
    except OutputClash:
        return True
    return False
