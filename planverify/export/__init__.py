"""Curated data out of verification results: `planverify export`.

`export_results` joins results with their input episodes (by id and content), applies human
decisions from `planverify review`, and writes one of four formats (`FORMATS`) as JSONL, or as
Parquet in a folder with a dataset card, optionally one file per task family or split.

The command is `planverify.cli.export`. May import `stores` and `records`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

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
from planverify.export.write import SplitBy, Written, card, group, jsonl, parquet, schema
from planverify.records.episode import Episode, EpisodeError
from planverify.records.evidence import Evidence
from planverify.records.result import VerificationResult
from planverify.stores.files import clash, write_atomically

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
) -> ExportReport:
    """Write one export format; see the module docstring.

    JSONL goes to `output` (a file), or with `split_by` to `output/<value>.jsonl`. Parquet goes
    to the folder `output`: `data/<split>.parquet` and `README.md`. Raises `CurationError` when
    results were computed on other content than the episodes given, and `OutputClash` (before
    writing anything) when a file it would write is one of `inputs`. When no row is made,
    nothing is written (`report.written.files` is empty). With `min_evidence`, removals below
    that evidence level are undone and insertions below it left out (`curate`).
    """
    if fmt not in FORMATS:
        raise CurationError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    curation = curate(results, episodes, decisions, min_evidence=min_evidence)
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
    if as_parquet:
        targets = {name: output / "data" / f"{name}.parquet" for name in parts}
        clash([*targets.values(), output / "README.md"], inputs)
    else:
        targets = {name: output / f"{name}.jsonl" for name in parts} if split_by else {}
        clash(list(targets.values()) or [output], inputs)
    written = report.written
    if not as_parquet and split_by is None:
        write_atomically(output, jsonl(made))
        written.files.append(output)
        written.rows["train"] = len(made)
        return report
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
    return report
