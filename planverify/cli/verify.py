"""`planverify verify`: verify episodes (locally or on a server) and write their results."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from planverify.cli.options import (
    BaseUrlOption,
    JudgeOutputOption,
    MaxCallTimeOption,
    MaxIterationsOption,
    MaxRetriesOption,
    ModelParamOption,
    RpsOption,
    SplitOption,
    TemperatureOption,
    TimeoutOption,
    TpmOption,
    TrimOption,
)
from planverify.cli.shared import (
    DEFAULT_CHECKPOINT,
    check_clash,
    check_output,
    check_sources,
    fail,
    writing,
)
from planverify.eventloop.runner import run
from planverify.graphs.context import SettingsError
from planverify.llm.calls import CallLimits
from planverify.llm.models import ModelSpecError
from planverify.llm.params import parse_params
from planverify.records.evidence import LEVELS
from planverify.records.result import GoalSource, VerificationResult
from planverify.records.trim import DEFAULT_TRIM
from planverify.records.usage import unknown_note
from planverify.runs.batch import BatchReport, OutputStopped
from planverify.runs.console import err, literal, out, say


def describe_cost(costs: list[float | None]) -> str:
    """The estimated cost of episodes that used models; never `$0.00` for unpriced models.

    >>> describe_cost([0.5, None]), describe_cost([None, None]), describe_cost([0.25])
    ('$0.50 + unpriced: 1 episode', 'unknown (unpriced: 2 episodes)', '$0.25')
    """
    known = sum(c for c in costs if c is not None)
    unpriced = sum(c is None for c in costs)
    if not unpriced:
        return f"${known:.2f}"
    episodes = f"{unpriced} episode" + ("" if unpriced == 1 else "s")
    if unpriced == len(costs):
        return f"unknown (unpriced: {episodes})"
    return f"${known:.2f} + unpriced: {episodes}"


def _summary(report: BatchReport, output: Path | None) -> None:
    results = report.results
    ok = [r for r in results if r.status == "ok"]
    table = Table(title="planverify", show_header=False, title_justify="left")
    table.add_row("episodes", f"{len(results)} ({len(ok)} ok, {len(results) - len(ok)} error)")
    if report.skipped:
        reasons = report.skipped_by_reason().most_common()
        table.add_row(
            "skipped inputs",
            literal(f"{len(report.skipped)} (" + ", ".join(f"{k}: {v}" for k, v in reasons) + ")"),
        )
    if report.not_started:
        table.add_row("not started", str(report.not_started))
    if ok:
        removed = sum(sum(v.verdict == "remove" for v in r.verdicts) for r in ok)
        inserted = sum(len(r.inserted) for r in ok)
        before = sum(len(r.original) for r in ok)
        after = sum(len(r.refined) for r in ok)
        static = [r for r in ok if r.stop_reason == "static"]
        if len(static) == len(ok):
            proposed = sum(len(r.history[0].critique.missing) for r in ok if r.history)
            table.add_row(
                "Judge proposed",
                f"removing {removed} of {before} steps, adding {proposed} "
                "(static run: plans left as they are)",
            )
        else:
            table.add_row("steps", f"{before} -> {after} ({removed} removed, {inserted} inserted)")
            if inserted:
                table.add_row("insertions by evidence", _by_level(ok))
            table.add_row("mean Judge passes", f"{sum(r.iterations for r in ok) / len(ok):.2f}")
        reasons = Counter(str(r.stop_reason) for r in ok).most_common()
        table.add_row("stop reasons", ", ".join(f"{k}: {v}" for k, v in reasons))
        from planverify.graphs.graph import GROWTH_WARNING

        grown = [r.id for r in ok if any(w.startswith(GROWTH_WARNING) for w in r.warnings)]
        if grown:
            table.add_row(
                Text("plans grown by half", style="yellow"),
                literal(f"{len(grown)} by the model Planner (see their warnings), e.g. ")
                + literal(", ".join(grown[:3])),
            )
        if any(r.usage for r in results):  # offline agents spend none: no row to read
            _spend_rows(table, results)
    if output is not None:
        table.add_row("output", literal(output))
    out.print(table)


def _by_level(results: list[VerificationResult]) -> str:
    """The insertions by evidence level, strongest first: `2 goal-text, 5 heuristic`."""
    levels = Counter(step.evidence for r in results for step in r.inserted)
    return ", ".join(f"{levels[level]} {level}" for level in LEVELS if levels[level])


def _spend_rows(table: Table, results: list[VerificationResult]) -> None:
    """The model tokens of a run and their estimated cost."""
    tokens = sum(u.total for r in results for u in r.usage.values())
    uncounted = sum(u.unknown_calls for r in results for u in r.usage.values())
    unknown = unknown_note(uncounted)
    if not tokens and uncounted:  # never `0`: nothing was counted (a server that sends no usage)
        calls = "1 call" if uncounted == 1 else f"{uncounted} calls"
        shown = f"unknown: no usage reported for {calls} (some local servers leave it out of streamed answers)"
    else:
        shown = f"{tokens} ({unknown})" if unknown else str(tokens)
    table.add_row("model tokens", shown)
    if tokens:
        table.add_row("estimated cost", describe_cost([r.cost_usd for r in results if r.usage]))


InputsArgument = Annotated[
    list[str],
    typer.Argument(
        metavar="INPUTS",
        help="JSONL files of episodes ({id, goal?, actions, scene?} a line), or TEACh game files, directories and globs.",
    ),
]
JudgeOption = Annotated[
    str,
    typer.Option(
        "--judge",
        "-j",
        help="Judge: rules (offline, grounded), baseline (the paper's rule baseline), a preset (see `planverify presets`) or provider:model.",
    ),
]
PlannerOption = Annotated[
    str,
    typer.Option("--planner", "-p", help="Planner: rules (no model), a preset or provider:model."),
]
StaticOption = Annotated[
    bool,
    typer.Option(
        "--static", help="One Judge pass, no revision (verdicts are the Judge's proposals)."
    ),
]
GoalOption = Annotated[
    GoalSource,
    typer.Option(
        help="Goal source: given (the record's goal; inferred when absent), dialogue (the Commander's words) or infer (ask the planner model)."
    ),
]
CheckpointOption = Annotated[
    str,
    typer.Option(
        help="SQLite checkpoint file, or a postgresql:// URL; rerunning the same command resumes from it."
    ),
]
NoCheckpointOption = Annotated[
    bool, typer.Option("--no-checkpoint", help="Keep nothing between runs.")
]
OutputOption = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Write results as JSONL here (one record per episode)."),
]
ConcurrencyOption = Annotated[
    int,
    typer.Option(
        min=1,
        help="Episodes verified at once; also the cap on model calls in flight per provider or server (the limit adapts below it).",
    ),
]
LimitOption = Annotated[int | None, typer.Option(min=1, help="Verify only the first N episodes.")]
ReviewOption = Annotated[
    bool,
    typer.Option(
        "--review", help="Pause after each Judge pass so you can accept or edit the critique."
    ),
]
ServerOption = Annotated[
    str | None,
    typer.Option(
        help="Run on a LangGraph server (e.g. http://127.0.0.1:2024): one thread per episode; checkpoints live there."
    ),
]
RetryFailedOption = Annotated[
    bool,
    typer.Option(
        "--retry-failed",
        help="Keep the ok records already in --output and verify only the failed or missing episodes.",
    ),
]
AcceptSkippedOption = Annotated[
    bool,
    typer.Option(
        "--accept-skipped",
        help="Replace an existing --output even when some input lines were skipped (otherwise the run's results stay in OUTPUT.partial).",
    ),
]
GroundingOption = Annotated[
    bool,
    typer.Option(
        "--grounding",
        help="Give a model Judge the simulator's facts: how objects start, the goal conditions met, steps that change nothing.",
    ),
]
CertifyOption = Annotated[
    bool | None,
    typer.Option(
        "--certify/--no-certify",
        help="Check the Judge's flags and the Planner's insertions by simulation, vetoing those that lose a goal condition or cannot happen (default: when the episode has a scene or a goal spec).",
    ),
]


def verify(
    inputs: InputsArgument,
    judge: JudgeOption = "rules",
    planner: PlannerOption = "rules",
    max_iterations: MaxIterationsOption = 5,
    static: StaticOption = False,
    goal: GoalOption = "given",
    checkpoint: CheckpointOption = str(DEFAULT_CHECKPOINT),
    no_checkpoint: NoCheckpointOption = False,
    output: OutputOption = None,
    concurrency: ConcurrencyOption = 8,
    judge_output: JudgeOutputOption = "text",
    base_url: BaseUrlOption = None,
    limit: LimitOption = None,
    review: ReviewOption = False,
    split: SplitOption = None,
    rps: RpsOption = None,
    tpm: TpmOption = None,
    timeout: TimeoutOption = 120.0,
    max_call_time: MaxCallTimeOption = 600.0,
    max_retries: MaxRetriesOption = 5,
    server: ServerOption = None,
    retry_failed: RetryFailedOption = False,
    accept_skipped: AcceptSkippedOption = False,
    grounding: GroundingOption = False,
    temperature: TemperatureOption = None,
    model_param: ModelParamOption = None,
    certify: CertifyOption = None,
    trim: TrimOption = DEFAULT_TRIM,
) -> None:
    """Verify plans: flag unneeded steps, add missing ones, loop until the Judge has no objections."""
    _check_models(judge, planner, goal=goal, grounding=grounding)
    params = _model_params(model_param)
    if server is not None:
        _check_server_run(
            review=review, keeps_checkpoints=no_checkpoint or checkpoint != str(DEFAULT_CHECKPOINT)
        )
    where = None if server is not None or no_checkpoint else checkpoint
    output = _check_outputs(inputs, split, output, where)
    _check_retry_failed(retry_failed, output)
    _check_review(review)
    in_flight = 1 if review else concurrency
    limits = CallLimits(
        rps=rps,
        tpm=tpm,
        timeout=timeout,
        max_call_time=max_call_time,
        max_retries=max_retries,
        concurrency=in_flight,
    )
    settings: dict[str, Any] = {
        "judge": judge,
        "planner": planner,
        "max_iterations": max_iterations,
        "static": static,
        "judge_output": judge_output,
        "grounding": grounding,
        "base_url": base_url,
        "goal_source": goal,
        "certify": certify,
        "trim": trim,
        "temperature": temperature,
        "model_params": params,
    }
    batch = Batch(
        inputs,
        split,
        _total(inputs, split, limit),
        limit,
        output,
        in_flight,
        retry_failed=retry_failed,
        accept_skipped=accept_skipped,
    )
    if server is not None:
        return _verify_on_server(server, batch, limits=limits, settings=settings)
    _verify_here(batch, where, settings, limits=limits, review=review)


def _model_params(items: list[str] | None) -> dict[str, Any]:
    """The `--model-param` options by name, after a usage error (exit 2) for a malformed one."""
    try:
        return parse_params(items)
    except ValueError as exc:
        raise fail(str(exc)) from None


def _check_models(judge: str, planner: str, *, goal: GoalSource, grounding: bool) -> None:
    """A usage error (exit 2) for options the chosen Judge or Planner cannot serve."""
    if goal == "infer" and planner == "rules":
        raise fail(
            "--goal infer needs a model planner (--planner provider:model); the rules planner has no model"
        )
    if grounding and judge in ("rules", "baseline"):
        raise fail(f"--grounding is for model judges; the {judge!r} judge needs no prompt")


def _check_server_run(*, review: bool, keeps_checkpoints: bool) -> None:
    """A usage error (exit 2) for local-only options given with `--server`
    (`keeps_checkpoints`: --checkpoint or --no-checkpoint was given)."""
    if review:
        raise fail("--review works with local runs only, not with --server")
    if keeps_checkpoints:
        raise fail(
            "--checkpoint and --no-checkpoint are for local runs: with --server the "
            "server keeps the checkpoints (its own database)"
        )


def _check_outputs(
    inputs: list[str], split: str | None, output: Path | None, checkpoint: str | None
) -> Path | None:
    """The results file to write (a symlink's target), after a usage error (exit 2) when it or
    its journal (`OUTPUT.partial`) is no regular file, is an input, or is the local checkpoint
    store (`checkpoint`; None when the run keeps none here)."""
    check_sources(inputs, split)
    check_output(output)
    partial = output.with_name(output.name + ".partial") if output else None
    check_clash([output, partial], inputs, split)
    if output is not None and output.resolve() != output.absolute():
        output = output.resolve()  # a symlink: its target is written, the journal beside it
        partial = output.with_name(output.name + ".partial")
        check_clash([partial], inputs, split)
    if checkpoint is not None:
        _check_store_clash(checkpoint, [output, partial])
    check_output(partial)  # the journal, too, is a regular file or nothing yet
    return output


def _check_retry_failed(retry_failed: bool, output: Path | None) -> None:
    """A usage error (exit 2) for `--retry-failed` without the results file of an earlier run."""
    if retry_failed and (output is None or not output.is_file()):
        raise fail("--retry-failed needs the --output file of an earlier run")


def _check_review(review: bool) -> None:
    """A usage error (exit 2) for `--review` without an interactive terminal to review on."""
    if review and not sys.stdin.isatty():
        raise fail("--review needs an interactive terminal")


def _total(inputs: list[str], split: str | None, limit: int | None) -> int:
    """How many episodes the run verifies: those of the inputs, at most `limit`."""
    from planverify.inputs.sources import count_inputs

    total = count_inputs(inputs, split=split)
    return total if limit is None else min(total, limit)


def _check_store_clash(checkpoint: str, outputs: list[Path | None]) -> None:
    """A usage error (exit 2) when an output is the SQLite checkpoint store: the store is an
    input of the run, and writing results over it would destroy it."""
    from planverify.api import is_postgres_url
    from planverify.stores.files import OutputClash, clash

    if is_postgres_url(checkpoint):
        return
    try:
        clash([o for o in outputs if o is not None], [Path(checkpoint)])
    except OutputClash as exc:
        raise fail(
            f"the output {exc.output} is the checkpoint store {checkpoint}: write the results "
            "somewhere else"
        ) from None


@dataclass
class Batch:
    """The inputs and output of a `verify` run, for a local or a remote verifier."""

    inputs: list[str]
    split: str | None
    total: int
    limit: int | None
    output: Path | None
    concurrency: int
    retry_failed: bool  # reuse the ok records of `output`
    accept_skipped: bool  # replace `output` even when inputs were skipped
    report: BatchReport | None = None  # what the batch did, once it is done

    async def stream(self, verifier: Any) -> BatchReport:
        """Stream the inputs through the verifier (read `output` first for `retry_failed`:
        the caller holds its lock)."""
        from planverify.inputs.sources import default_workers, iter_inputs
        from planverify.runs.batch import read_results, run_batch

        reuse: list[VerificationResult] = []
        if self.retry_failed and self.output is not None:
            reuse = [r for r in read_results(self.output) if r.status == "ok"]
        self.report = await run_batch(
            verifier,
            iter_inputs(self.inputs, split=self.split, workers=default_workers()),
            total=self.total,
            limit=self.limit,
            output=self.output,
            concurrency=self.concurrency,
            reuse=reuse,
            accept_skipped=self.accept_skipped,
        )
        return self.report


def _closing_store(
    batch: Batch, where: str | None
) -> Callable[[type[BaseException] | None, BaseException | None, Any], Awaitable[bool]]:
    """An exit callback for the checkpoint store: a full disk when it closes, once the batch
    is done (its output written), goes into the report instead of a traceback."""

    async def closed(kind: Any, exc: BaseException | None, traceback: Any) -> bool:
        from planverify.stores.files import disk_full

        if exc is None or batch.report is None or disk_full(exc) is None:
            return False
        batch.report.unsaved = f"cannot store the last checkpoints in {where}: the disk is full"
        return True

    return closed


def _verify_on_server(
    url: str, batch: Batch, *, limits: CallLimits, settings: dict[str, Any]
) -> None:
    from planverify.runs.remote import RemoteError, RemoteVerifier

    async def run() -> BatchReport:
        try:
            # the API key comes from the environment
            verifier = RemoteVerifier(url, limits=limits, **settings)
        except (TypeError, ValueError) as exc:
            raise fail(str(exc)) from None
        async with verifier:
            try:
                await verifier.check()
            except RemoteError as exc:
                raise fail(str(exc).splitlines()[0]) from None
            return await batch.stream(verifier)

    with writing(batch.output):
        _finish(_interruptible(run(), batch.output, None), batch.output, "the server")


def _verify_here(
    batch: Batch, where: str | None, settings: dict[str, Any], *, limits: CallLimits, review: bool
) -> None:
    """Verify the batch in this process and report it: `_verify_on_server`'s local twin."""
    with writing(batch.output):
        local = _verify_locally(batch, where, settings, limits=limits, review=review)
        _finish(_interruptible(local, batch.output, where), batch.output, where or "")


def _interruptible(work: Any, output: Path | None, checkpoint: str | None) -> BatchReport:
    try:
        return run(work)  # type: ignore[no-any-return]
    except KeyboardInterrupt:
        err.print("interrupted: run the same command again to continue where this run stopped")
        raise typer.Exit(130) from None
    except OutputStopped as exc:
        raise _stopped_writing(exc, output, checkpoint) from None


def _stopped_writing(exc: OutputStopped, output: Path | None, checkpoint: str | None) -> typer.Exit:
    """The one line for a run stopped by a file or store it could not write."""
    from planverify.records.result import describe_error
    from planverify.stores.files import disk_full

    full = disk_full(exc)
    what = f"write {exc.target}" if exc.target else f"store checkpoints in {checkpoint}"
    cause = full or exc.__cause__ or exc
    why = "the disk is full" if full else describe_error(cause).splitlines()[0]
    kept = []
    if output is not None and output.exists():
        kept.append(f"{output} as it was")
    if exc.journal is not None and exc.journaled:
        kept.append(f"{exc.journaled} finished result(s) in {exc.journal}")
    if checkpoint is not None and exc.target is not None:
        kept.append(f"the checkpoints in {checkpoint}")
    then = "free some space, then run" if full else "run"
    return fail(
        f"cannot {what}: {why}; kept: {', '.join(kept) or 'nothing'}; {then} the same "
        "command again to continue",
        1,
    )


def _no_file_note(kept: str) -> str:
    """Where the results of a run without `--output` are (`kept`: the checkpoint store,
    "the server", or "" when nothing keeps them)."""
    how = "add -o results.jsonl to write them to a file"
    if not kept:
        return f"no results file was written and --no-checkpoint kept nothing: {how}"
    if kept == "the server":
        return f"no results file was written (no -o): the results are on the server; {how}"
    store = "" if kept == str(DEFAULT_CHECKPOINT) else f" --checkpoint {kept}"
    return (
        f"no results file was written (no -o): the results are in the checkpoint store {kept} "
        f"(`planverify show ID{store}` prints one); {how}"
    )


def _finish(report: BatchReport, output: Path | None, kept: str) -> None:
    if not report.results:
        why = "no episodes to verify"
        if report.skipped:
            why += f": every input was skipped ({len(report.skipped)})"
        if output is not None and output.exists():
            why += f"; {output} is left as it was"
        raise fail(why, 1)
    _summary(report, output)
    for r in report.results:
        if r.status == "error":
            say(err, "error", "red", f"{r.id}: {r.error}")
    if report.kept_over_errors:
        say(
            err,
            "kept:",
            "yellow",
            f"{len(report.kept_over_errors)} episode(s) failed in this run; {output} keeps "
            f"their earlier ok records, e.g. {', '.join(report.kept_over_errors[:3])}",
        )
    if report.stopped is not None:
        say(
            err,
            "stopped:",
            "bold red",
            f"{report.stopped}; {report.not_started} episode(s) not started. Finished results "
            "are kept: check the URL or server, then rerun with --retry-failed",
        )
    if report.kept_output is not None:
        say(
            err,
            "not replaced:",
            "bold red",
            f"{output} is left as it was because {report.kept_output}; this run's "
            f"{len(report.results)} result(s) are in {output}.partial, where the next run "
            "finds them",
        )
    if report.unsaved is not None:
        say(err, "error:", "bold red", f"{report.unsaved}; the batch had finished")
    if output is None:
        say(err, "note:", "yellow", _no_file_note(kept))
    failed = report.stopped or report.kept_over_errors or report.kept_output or report.unsaved
    if report.skipped or failed or any(r.status == "error" for r in report.results):
        raise typer.Exit(1)


def _ask_review(payload: dict[str, Any]) -> Any:
    """Terminal review: show the critique; keep, drop or edit flags."""
    plan: list[str] = payload["plan"]
    critique = payload["critique"]
    err.rule(literal(f"{payload['episode_id']} - Judge pass {payload['iteration']}"))
    for flag in critique["flags"]:
        say(err, "  REMOVE", "red", f"{flag['step'] + 1}. {flag['action']}  - {flag['reason']}")
    for missing in critique["missing"]:
        say(err, "  MISSING", "green", str(missing["description"]))
    answer = typer.prompt(
        "accept [a], reject [r], or step numbers to remove (e.g. 3,7)", default="a"
    )
    answer = answer.strip().lower()
    if answer in ("a", "accept", ""):
        return "accept"
    if answer in ("r", "reject"):
        return "reject"
    steps = [
        int(s)
        for s in answer.replace(" ", "").split(",")
        if s.isdigit() and 1 <= int(s) <= len(plan)
    ]
    return {"flags": [{"step": s, "reason": "removed by the reviewer"} for s in steps]}


async def _verify_locally(
    batch: Batch,
    where: str | None,
    settings: dict[str, Any],
    *,
    limits: CallLimits,
    review: bool,
) -> BatchReport:
    """Verify the batch in this process, checkpointing to `where` (None: no checkpoints)."""
    from planverify.api import Verifier, open_checkpointer

    async with AsyncExitStack() as stack:
        stack.push_async_exit(_closing_store(batch, where))
        try:
            saver = await stack.enter_async_context(open_checkpointer(where))
        except Exception as exc:
            raise fail(f"cannot open the checkpoint {where}: {exc}".splitlines()[0]) from None
        try:
            verifier = Verifier(
                **settings,
                checkpointer=saver,
                reviewer=_ask_review if review else None,
                limits=limits,
            )
        except (ModelSpecError, SettingsError) as exc:
            raise fail(str(exc)) from None
        return await batch.stream(verifier)
