"""`planverify score`: score results against annotated episodes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import orjson
import typer
from rich.table import Table

from planverify.cli.options import ReadTrimOption
from planverify.cli.shared import (
    check_clash,
    check_output,
    fail,
)
from planverify.records.episode import Episode, EpisodeError
from planverify.records.evidence import Evidence
from planverify.records.result import VerificationResult
from planverify.runs.console import err, literal, out, say

if TYPE_CHECKING:
    from planverify.metrics import Mode, Report


AnnotatedArgument = Annotated[
    Path, typer.Argument(metavar="ANNOTATED", help="Annotated episodes (JSONL with labels).")
]
ResultsArgument = Annotated[
    Path,
    typer.Argument(metavar="RESULTS", help="Results of verify on those episodes (JSONL)."),
]
ModeOption = Annotated[
    Literal["auto", "static", "iterative"],
    typer.Option(
        help="static (first Judge pass), iterative (refined plan), or auto: static when the results were made with --static."
    ),
]
JsonOption = Annotated[
    Path | None,
    typer.Option("--json", help="Also write the full report (per episode) as JSON."),
]
MinEvidenceOption = Annotated[
    Evidence | None,
    typer.Option(
        "--min-evidence",
        help="Score only removals and insertions at this evidence level or stronger "
        "(proven > goal-text > heuristic); those below count as not made: the step kept, "
        "the insertion left out. Applied after --trim.",
    ),
]


def score(
    annotated: AnnotatedArgument,
    results: ResultsArgument,
    mode: ModeOption = "auto",
    report: JsonOption = None,
    min_evidence: MinEvidenceOption = None,
    trim: ReadTrimOption = None,
) -> None:
    """Recall, precision and F1 of results against labels, overall, per error type and per task."""
    from planverify.metrics import score_results
    from planverify.metrics.report import BELOW_LEVEL

    _check_files(annotated, results, report)
    outcomes = _read_results(results)
    episodes, skipped = _annotated(annotated)
    _check_pairing(episodes, outcomes, annotated, results)
    if mode == "auto":
        mode = _infer_mode(outcomes)
    scored = score_results(episodes, outcomes, mode=mode, min_evidence=min_evidence, trim=trim)
    title = f"{mode} scores, {scored.overall.episodes} episodes"
    if trim is not None:
        title += f", trim {trim}"
    if min_evidence is not None:
        title += f", evidence {min_evidence} or stronger"
        out.print(literal(f"evidence: {BELOW_LEVEL.format(level=min_evidence)}"))
    _print_scores(scored, title)
    if scored.failed:
        say(
            err,
            "failed:",
            "red",
            f"{len(scored.failed)} episode(s) have an error result, counted as finding nothing, e.g. {', '.join(scored.failed[:3])}",
        )
    _check_mismatched(scored, annotated)
    if report is not None:
        from planverify.stores.files import write_atomically

        write_atomically(
            report, orjson.dumps(scored.model_dump(mode="json"), option=orjson.OPT_INDENT_2)
        )
    if skipped:
        raise typer.Exit(1)


def _check_files(annotated: Path, results: Path, report: Path | None) -> None:
    """A usage error (exit 2) when ANNOTATED or RESULTS is no file of its kind, or when the
    `--json` report cannot be written or would write over one of them."""
    from planverify.records.jsonl import expect

    for problem in (
        expect(annotated, "annotated episodes", "ANNOTATED (as `planverify corrupt` writes)"),
        expect(results, "results", "RESULTS"),
    ):
        if problem is not None:
            raise fail(problem)
    if report is not None:
        check_output(report)
        check_clash([report], [annotated, results], None)


def _read_results(results: Path) -> list[VerificationResult]:
    """The result records of RESULTS, after a usage error (exit 2) when it cannot be read."""
    from planverify.records.jsonl import UnusableFile, read_all

    try:
        return [r for _, r in read_all(results, VerificationResult, "a result record")]
    except UnusableFile as exc:
        raise fail(str(exc)) from None


def _infer_mode(results: list[VerificationResult]) -> Mode:
    """The mode the results were made in, after a usage error (exit 2) when they mix both."""
    from planverify.metrics import infer_mode

    try:
        return infer_mode(results)
    except ValueError as exc:
        raise fail(f"{exc} (or pass --mode)") from None


def _check_mismatched(scored: Report, annotated: Path) -> None:
    """An error (exit 1) when results were computed on other content than their episodes."""
    if scored.mismatched:
        raise fail(
            f"{len(scored.mismatched)} result(s) were computed on other content than the "
            f"annotated episodes, e.g. {', '.join(scored.mismatched[:3])}: verify {annotated} again",
            1,
        )


def _check_pairing(
    episodes: list[Episode], results: list[VerificationResult], annotated: Path, path: Path
) -> None:
    """Fail when results and annotated episodes do not belong together; warn about a partial
    overlap (what is left out is said)."""
    labelled = {e.id: e for e in episodes if e.labels is not None}
    by_id = {r.id: r for r in results}
    common = labelled.keys() & by_id.keys()
    if not common:
        raise fail(
            f"{path} and {annotated} share no episode id ({len(by_id)} result(s), "
            f"{len(labelled)} annotated episode(s)): were the results made from this file?",
            1,
        )
    other = [i for i in sorted(common) if not _same_content(labelled[i], by_id[i])]
    if other:
        raise fail(
            f"{len(other)} of {len(common)} result(s) were computed on other content than the "
            f"annotated episodes with their ids (e.g. {', '.join(other[:3])}): verify {annotated} "
            "again",
            1,
        )
    left_out = sorted(labelled.keys() - by_id.keys())
    if left_out:
        say(
            err,
            "warning:",
            "yellow",
            f"{len(left_out)} annotated episode(s) have no result and are left out, e.g. {', '.join(left_out[:3])}",
        )
    extra = sorted(by_id.keys() - labelled.keys())
    if extra:
        say(
            err,
            "warning:",
            "yellow",
            f"{len(extra)} result(s) have no annotated episode and are left out, e.g. {', '.join(extra[:3])}",
        )


def _same_content(episode: Episode, result: VerificationResult) -> bool:
    if result.input_digest is not None:
        return result.input_digest == episode.input_digest
    return not result.original or result.original == episode.actions


def _annotated(path: Path) -> tuple[list[Episode], int]:
    """The episodes of an annotated file, and how many lines were skipped (each said why)."""
    from planverify.records.episode import iter_jsonl

    episodes: list[Episode] = []
    skipped = 0
    for item in iter_jsonl(path):
        if isinstance(item, EpisodeError):
            skipped += 1
            say(err, "skipped", "red", str(item))
        else:
            episodes.append(item)
    return episodes, skipped


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _print_scores(scored: Report, title: str) -> None:
    """The scores by group (overall, error type, task), then by level, then the intervals."""
    table = Table(title=title, title_justify="left")
    for column in ("group", "TP", "FP", "FN", "recall", "precision", "F1"):
        table.add_column(column, justify="left" if column == "group" else "right")
    groups = [("overall", scored.overall)]
    groups += [(f"error: {k}", v) for k, v in sorted(scored.by_error.items())]
    groups += [(f"task: {k}", v) for k, v in sorted(scored.by_task.items())]
    for name, s in groups:
        c = s.counts
        table.add_row(
            literal(name),
            str(c.tp),
            str(c.fp),
            str(c.fn),
            _pct(s.recall),
            _pct(s.precision),
            _pct(s.f1),
        )
    out.print(table)
    levels = Table(title="label and plan level, with and without motion", title_justify="left")
    for column in ("level", "TP", "FP", "FN", "recall", "precision", "F1"):
        levels.add_column(column, justify="left" if column == "level" else "right")
    rows = [
        ("labels, with motion", scored.overall),
        ("labels, without motion", scored.without_motion),
    ]
    rows += [(f"plan, {k.replace('_', ' ')}", v) for k, v in (scored.plan_level or {}).items()]
    for name, s in ((n, v) for n, v in rows if v is not None):
        c = s.counts
        levels.add_row(
            name, str(c.tp), str(c.fp), str(c.fn), _pct(s.recall), _pct(s.precision), _pct(s.f1)
        )
    out.print(levels)
    o = scored.overall
    if o.recall_ci and o.precision_ci:
        out.print(
            f"95% intervals: recall {_pct(o.recall_ci.low)}-{_pct(o.recall_ci.high)}, "
            f"precision {_pct(o.precision_ci.low)}-{_pct(o.precision_ci.high)}",
            highlight=False,
        )
