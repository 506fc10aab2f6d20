"""`planverify export`: a Typer command function, registered by `planverify.cli.program`.

Exit codes follow the rule of every command (README, "Exit codes"): 0 when the export was
written (results with status `error` or without an input episode are left out, counted and
named), 1 when results were refused (computed on other content: nothing is written), when no row
was made (an existing output is left as it was) or some inputs could not be read, 2 for usage
errors and files that cannot be used as what they are named for (RESULTS not a results file or
with a line that is not a result, a decisions file that is not one, an output that is an input).
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from planverify.cli.options import ReadTrimOption, SplitOption
from planverify.cli.shared import fail
from planverify.export.formats import Format
from planverify.export.write import SplitBy
from planverify.records.evidence import Evidence
from planverify.records.trim import TrimPolicy
from planverify.runs.console import err, literal, out, say

if TYPE_CHECKING:
    from planverify.export import Curation, ExportReport, Options


def episode_inputs(arguments: list[str], episodes: list[str] | None) -> tuple[Path, list[str]]:
    """RESULTS and the episode inputs: `--episodes a b c` leaves `b c` among the arguments
    (an option takes one value), so the arguments after RESULTS are episode inputs too."""
    results, *more = arguments
    if more and not episodes:
        raise fail(f"unexpected arguments {' '.join(more)}: give episode inputs after --episodes")
    return Path(results), [*(episodes or []), *more]


ResultsArgument = Annotated[
    list[str], typer.Argument(metavar="RESULTS", help="Results of `planverify verify` (JSONL).")
]
EpisodesOption = Annotated[
    list[str],
    typer.Option(
        "--episodes",
        help="The input episodes the results were computed on: JSONL files, TEACh game "
        "files, directories or globs (one or more: --episodes a.jsonl games/).",
    ),
]
OutputOption = Annotated[
    Path, typer.Option("--output", "-o", help="JSONL file; a folder with --parquet or --split-by.")
]
FormatOption = Annotated[
    Format,
    typer.Option(
        "--format",
        "-f",
        help="episodes (cleaned plans), sft (chats), preference (pairs) or recovery "
        "(error-and-recovery blocks).",
    ),
]
ParquetOption = Annotated[
    bool,
    typer.Option(
        "--parquet",
        help="Write Parquet and a dataset card into the --output folder (needs "
        + escape("pip install 'planverify[export]')."),
    ),
]
SplitByOption = Annotated[
    SplitBy | None,
    typer.Option("--split-by", help="One file per task family (task) or split (split)."),
]
InterleaveOption = Annotated[
    bool,
    typer.Option(
        "--interleave",
        help="sft, preference: keep the Say lines in the assistant turn, in order with the "
        "actions (for dialogue-conditioned models).",
    ),
]
MinRemovedOption = Annotated[
    int, typer.Option(min=0, help="preference: only episodes with at least N steps removed.")
]
DecisionsOption = Annotated[
    Path | None,
    typer.Option(
        "--decisions",
        help="Decisions downloaded from `planverify review`: they overrule the verdicts.",
    ),
]
LicenseOption = Annotated[
    str, typer.Option(help="--parquet: the license the dataset card declares.")
]
MinEvidenceOption = Annotated[
    Evidence | None,
    typer.Option(
        "--min-evidence",
        help="Keep only removals and insertions at this evidence level or stronger "
        "(proven > goal-text > heuristic): removals below it are undone (the step stays "
        "in the plan), insertions below it left out. Applied after --trim; decisions "
        "still overrule.",
    ),
]


def export_command(
    arguments: ResultsArgument,
    episodes: EpisodesOption,
    output: OutputOption,
    fmt: FormatOption = "episodes",
    parquet: ParquetOption = False,
    split_by: SplitByOption = None,
    interleave: InterleaveOption = False,
    min_removed: MinRemovedOption = 0,
    decisions: DecisionsOption = None,
    split: SplitOption = None,
    license: LicenseOption = "other",
    min_evidence: MinEvidenceOption = None,
    trim: ReadTrimOption = None,
) -> None:
    """Export curated data: cleaned episodes, SFT chats, preference pairs or recovery blocks."""
    from planverify.cli.shared import writing
    from planverify.export import Options
    from planverify.inputs.sources import InputError, check_inputs, input_files
    from planverify.records.jsonl import expect
    from planverify.stores.files import OutputClash, clash

    results_path, inputs = episode_inputs(arguments, episodes)
    output = _check_target(output, folder=parquet or split_by is not None)
    if parquet:
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise fail("--parquet needs pyarrow: pip install 'planverify[export]'") from None
    try:
        check_inputs(inputs, split=split)
    except InputError as exc:
        raise fail(str(exc)) from None
    if (wrong := expect(results_path, "results", "RESULTS")) is not None:
        raise fail(wrong)
    read = [results_path, *input_files(inputs, split=split)]
    read += [decisions] if decisions is not None else []
    try:
        clash([output], read)
    except OutputClash as exc:
        raise fail(str(exc)) from None
    with writing(output):
        report = _export(
            results_path,
            inputs,
            split,
            fmt,
            output,
            options=Options(interleave=interleave, min_removed=min_removed),
            decisions=decisions,
            split_by=split_by,
            parquet=parquet,
            license=license,
            read=read,
            min_evidence=min_evidence,
            trim=trim,
        )
    curation = report.curation
    _tell(curation, results_path)
    if not report.written.files:
        raise fail(f"{curation.describe()}: no {fmt} row to write; {output} is left as it was", 1)
    where = ", ".join(str(p) for p in report.written.files[:4])
    if len(report.written.files) > 4:
        where += f" and {len(report.written.files) - 4} more"
    out.print(literal(f"{curation.describe()}; wrote {report.rows} {fmt} row(s) to {where}"))
    if curation.skipped_inputs:
        raise typer.Exit(1)


def _check_target(output: Path, *, folder: bool) -> Path:
    """Where to write: a file, or a folder (`folder`: --parquet or --split-by), named; a usage
    error (exit 2) when the output is of the other sort or has no name of its own."""
    if output.name in ("", ".."):  # `.`: the lock and messages need the folder's own name
        output = Path(os.path.abspath(output))
    if not output.name:
        raise fail(f"--output {output} has no name: give a folder below it")
    if folder and output.exists() and not output.is_dir():
        raise fail(f"--output {output} is a file; --parquet and --split-by write into a folder")
    if not folder and output.is_dir():
        raise fail(f"--output {output} is a directory; give a file name")
    return output


def _tell(curation: Curation, results_path: Path) -> None:
    """What the export skipped, could not apply, marked or left out: a line each."""
    for problem in curation.skipped_inputs:
        say(err, "skipped", "red", str(problem))
    for note in curation.unmatched_decisions:
        say(err, "decision not applied:", "yellow", note)
    for item in curation.impossible:
        steps = "; ".join(step.describe() for step in item.impossible)
        say(
            err,
            "warning:",
            "yellow",
            f"{item.result.id!r}: after the decisions the simulator finds {steps}; exported "
            "all the same, marked in `impossible` (the simulator may be wrong)",
        )
    for reason, count in sorted(curation.left_out.items()):
        examples = ", ".join(curation.examples.get(reason, []))
        if reason == "no result":  # inputs verify never read: more inputs than results
            what = (
                f"{count} input episode(s) with no result in {results_path} (not verified), "
                f"e.g. {examples}; give --episodes (and --split) as verify read them"
            )
        else:
            what = f"{count} ({reason}), e.g. {examples}"
        say(err, "left out:", "yellow", what)


def _export(
    results_path: Path,
    inputs: list[str],
    split: str | None,
    fmt: Format,
    output: Path,
    *,
    options: Options,
    decisions: Path | None,
    split_by: SplitBy | None,
    parquet: bool,
    license: str,
    read: list[Path],
    min_evidence: Evidence | None,
    trim: TrimPolicy | None,
) -> ExportReport:
    """Run the export; its errors as one-line exits (see the module docstring)."""
    from planverify.export import CurationError, export_results
    from planverify.export.curate import read_decisions, read_results
    from planverify.inputs.sources import iter_inputs
    from planverify.records.jsonl import UnusableFile
    from planverify.stores.files import OutputClash

    try:
        results = read_results(results_path)
        chosen = read_decisions(decisions) if decisions is not None else []
        return export_results(
            results,
            iter_inputs(inputs, split=split),
            fmt,
            output,
            options=options,
            decisions=chosen,
            split_by=split_by,
            as_parquet=parquet,
            license=license,
            command=" ".join(["planverify", *map(shlex.quote, sys.argv[1:])])
            if sys.argv and sys.argv[0].endswith("planverify")
            else f"planverify export RESULTS --episodes ... --format {fmt}",
            inputs=read,
            min_evidence=min_evidence,
            trim=trim,
        )
    except (OutputClash, UnusableFile) as exc:
        raise fail(str(exc)) from None
    except CurationError as exc:
        raise fail(str(exc), 1) from None
