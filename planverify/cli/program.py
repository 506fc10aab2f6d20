"""The `planverify` command line."""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import AsyncExitStack, ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import orjson
import typer
from rich.table import Table
from rich.text import Text

from planverify import __version__
from planverify.cli.commands import Command, Group
from planverify.cli.options import (
    BaseUrlOption,
    JudgeOutputOption,
    MaxRetriesOption,
    ModelParamOption,
    RpsOption,
    TemperatureOption,
    TimeoutOption,
    TpmOption,
)
from planverify.eventloop.runner import run
from planverify.graphs.context import SettingsError
from planverify.llm.calls import CallLimits
from planverify.llm.models import ModelSpecError, presets
from planverify.llm.params import parse_params
from planverify.noise.injected import GeneratorName
from planverify.records.episode import Episode, EpisodeError, dump_jsonl_line
from planverify.records.evidence import Evidence
from planverify.records.result import GoalSource, VerificationResult
from planverify.records.usage import unknown_note
from planverify.runs.batch import BatchReport, OutputStopped
from planverify.runs.console import err, literal, out, printable, say

app = typer.Typer(
    cls=Group,
    name="planverify",
    help="Verify and clean embodied-AI task plans with an iterative Judge/Planner loop.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
DEFAULT_CHECKPOINT = Path(".planverify") / "checkpoints.sqlite"


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print a one-line error and return the exit to raise."""
    say(err, "error:", "bold red", message)
    return typer.Exit(code)


def _version(value: bool) -> None:
    if value:
        out.print(f"planverify {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Verify and clean embodied-AI task plans with an iterative Judge/Planner loop."""


def check_output(output: Path | None) -> None:
    """A usage error (exit 2) when `--output` cannot be written as a file."""
    if output is None:
        return
    if output.is_dir():
        raise fail(f"--output {output} is a directory; give a file name")
    if output.parent.exists() and not output.parent.is_dir():
        raise fail(f"--output {output}: {output.parent} is not a directory")


def check_clash(
    outputs: Iterable[Path | None], inputs: Iterable[str | Path], split: str | None
) -> None:
    """A usage error (exit 2) when an output is one of the files the inputs name."""
    from planverify.inputs.sources import input_files
    from planverify.stores.files import OutputClash, clash

    try:
        clash([o for o in outputs if o is not None], input_files(inputs, split=split))
    except OutputClash as exc:
        raise fail(str(exc)) from None


@contextmanager
def writing(output: Path | None) -> Iterator[None]:
    """Hold the lock of `output` for the block: exit 2 when another run is writing it."""
    from planverify.stores.files import OutputBusy, output_lock

    with ExitStack() as stack:
        if output is not None:
            try:
                stack.enter_context(output_lock(output))
            except OutputBusy as exc:
                raise fail(str(exc)) from None
        yield


def check_sources(
    inputs: list[str], split: str | None, *, games_only: bool = False, labelled: bool = True
) -> None:
    """A usage error (exit 2) when the inputs name nothing to read, or files of another kind."""
    from planverify.inputs.sources import InputError, check_inputs

    try:
        check_inputs(inputs, split=split, games_only=games_only, labelled=labelled)
    except InputError as exc:
        raise fail(str(exc)) from None


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
            table.add_row("mean Judge passes", f"{sum(r.iterations for r in ok) / len(ok):.2f}")
        reasons = Counter(str(r.stop_reason) for r in ok).most_common()
        table.add_row("stop reasons", ", ".join(f"{k}: {v}" for k, v in reasons))
        tokens = sum(u.total for r in results for u in r.usage.values())
        unknown = unknown_note(sum(u.unknown_calls for r in results for u in r.usage.values()))
        table.add_row("model tokens", f"{tokens} ({unknown})" if unknown else str(tokens))
        if tokens:
            table.add_row("estimated cost", describe_cost([r.cost_usd for r in results if r.usage]))
    if output is not None:
        table.add_row("output", literal(output))
    out.print(table)


@app.command(cls=Command)
def verify(
    inputs: Annotated[
        list[str],
        typer.Argument(
            metavar="INPUTS",
            help="JSONL files of episodes ({id, goal?, actions, scene?} a line), or TEACh game files, directories and globs.",
        ),
    ],
    judge: Annotated[
        str,
        typer.Option(
            "--judge",
            "-j",
            help="Judge: rules (offline, grounded), baseline (the paper's rule baseline), a preset (see `planverify presets`) or provider:model.",
        ),
    ] = "rules",
    planner: Annotated[
        str,
        typer.Option(
            "--planner", "-p", help="Planner: rules (no model), a preset or provider:model."
        ),
    ] = "rules",
    max_iterations: Annotated[
        int, typer.Option(min=1, help="Cap on Judge passes per episode.")
    ] = 5,
    static: Annotated[
        bool,
        typer.Option(
            "--static", help="One Judge pass, no revision (verdicts are the Judge's proposals)."
        ),
    ] = False,
    goal: Annotated[
        GoalSource,
        typer.Option(
            help="Goal source: given (the record's goal; inferred when absent), dialogue (the Commander's words) or infer (ask the planner model)."
        ),
    ] = "given",
    checkpoint: Annotated[
        str,
        typer.Option(
            help="SQLite checkpoint file, or a postgresql:// URL; rerunning the same command resumes from it."
        ),
    ] = str(DEFAULT_CHECKPOINT),
    no_checkpoint: Annotated[
        bool, typer.Option("--no-checkpoint", help="Keep nothing between runs.")
    ] = False,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write results as JSONL here (one record per episode)."
        ),
    ] = None,
    concurrency: Annotated[
        int,
        typer.Option(
            min=1,
            help="Episodes verified at once; also the cap on model calls in flight per provider or server (the limit adapts below it).",
        ),
    ] = 8,
    judge_output: JudgeOutputOption = "text",
    base_url: BaseUrlOption = None,
    limit: Annotated[
        int | None, typer.Option(min=1, help="Verify only the first N episodes.")
    ] = None,
    review: Annotated[
        bool,
        typer.Option(
            "--review", help="Pause after each Judge pass so you can accept or edit the critique."
        ),
    ] = False,
    split: Annotated[
        str | None,
        typer.Option(help="TEACh inputs: keep only games under a directory of this name."),
    ] = None,
    rps: RpsOption = None,
    tpm: TpmOption = None,
    timeout: TimeoutOption = 120.0,
    max_retries: MaxRetriesOption = 5,
    server: Annotated[
        str | None,
        typer.Option(
            help="Run on a LangGraph server (e.g. http://127.0.0.1:2024): one thread per episode; checkpoints live there."
        ),
    ] = None,
    retry_failed: Annotated[
        bool,
        typer.Option(
            "--retry-failed",
            help="Keep the ok records already in --output and verify only the failed or missing episodes.",
        ),
    ] = False,
    accept_skipped: Annotated[
        bool,
        typer.Option(
            "--accept-skipped",
            help="Replace an existing --output even when some input lines were skipped (otherwise the run's results stay in OUTPUT.partial).",
        ),
    ] = False,
    grounding: Annotated[
        bool,
        typer.Option(
            "--grounding",
            help="Give a model Judge the simulator's facts: how objects start, the goal conditions met, steps that change nothing.",
        ),
    ] = False,
    temperature: TemperatureOption = None,
    model_param: ModelParamOption = None,
    certify: Annotated[
        bool | None,
        typer.Option(
            "--certify/--no-certify",
            help="Check the Judge's flags and the Planner's insertions by simulation, vetoing those that lose a goal condition or cannot happen (default: when the episode has a scene or a goal spec).",
        ),
    ] = None,
) -> None:
    """Verify plans: flag unneeded steps, add missing ones, loop until the Judge has no objections."""
    from planverify.api import Verifier, open_checkpointer

    if goal == "infer" and planner == "rules":
        raise fail(
            "--goal infer needs a model planner (--planner provider:model); the rules planner has no model"
        )
    if grounding and judge in ("rules", "baseline"):
        raise fail(f"--grounding is for model judges; the {judge!r} judge needs no prompt")
    try:
        params = parse_params(model_param)
    except ValueError as exc:
        raise fail(str(exc)) from None
    check_sources(inputs, split)
    check_output(output)
    partial = output.with_name(output.name + ".partial") if output else None
    check_clash([output, partial], inputs, split)
    if retry_failed and (output is None or not output.is_file()):
        raise fail("--retry-failed needs the --output file of an earlier run")
    if review and not sys.stdin.isatty():
        raise fail("--review needs an interactive terminal")
    from planverify.inputs.sources import count_inputs

    total = count_inputs(inputs, split=split)
    if limit is not None:
        total = min(total, limit)

    limits = CallLimits(
        rps=rps,
        tpm=tpm,
        timeout=timeout,
        max_retries=max_retries,
        concurrency=1 if review else concurrency,
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
        "temperature": temperature,
        "model_params": params,
    }
    batch = Batch(
        inputs,
        split,
        total,
        limit,
        output,
        1 if review else concurrency,
        retry_failed=retry_failed,
        accept_skipped=accept_skipped,
    )
    if server is not None:
        if review:
            raise fail("--review works with local runs only, not with --server")
        if no_checkpoint or checkpoint != str(DEFAULT_CHECKPOINT):
            raise fail(
                "--checkpoint and --no-checkpoint are for local runs: with --server the "
                "server keeps the checkpoints (its own database)"
            )
        return _verify_on_server(server, batch, limits=limits, settings=settings)
    where = None if no_checkpoint else checkpoint

    async def run() -> BatchReport:
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

    with writing(output):
        _finish(_interruptible(run(), output, where), output)


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
        _finish(_interruptible(run(), batch.output, None), batch.output)


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


def _finish(report: BatchReport, output: Path | None) -> None:
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


@app.command(cls=Command)
def show(
    episode_id: Annotated[str, typer.Argument(metavar="ID", help="Episode id.")],
    checkpoint: Annotated[
        str, typer.Option(help="SQLite checkpoint file or postgresql:// URL written by verify.")
    ] = str(DEFAULT_CHECKPOINT),
) -> None:
    """Print an episode's iterations (critiques and edits) from the checkpoint store."""
    from planverify.api import is_postgres_url
    from planverify.stores.checkpoints import StoreError, episode_threads, load_history

    if not is_postgres_url(checkpoint) and not Path(checkpoint).is_file():
        raise fail(f"no checkpoint file at {checkpoint}")
    try:
        threads = episode_threads(checkpoint, episode_id)
        if not threads:
            raise fail(f"episode {episode_id!r} is not in {checkpoint}")
        runs = [(thread, load_history(checkpoint, thread)) for thread in threads]
    except StoreError as exc:
        raise fail(str(exc)) from None
    for thread, stored in runs:
        state = stored.state
        out.rule(style="bold")
        lines: list[Text] = [  # whole, never cut to the width: runs differ by these lines
            literal(f"{episode_id}: {stored.label()}", style="bold"),
            literal(f"started {stored.start_time()}"),
            literal(f"input digest {state.input_digest or 'not recorded'}"),
            literal(f"thread {thread}, {stored.checkpoints} checkpoints", style="dim"),
            literal(f"goal: {state.goal}"),
        ]
        for record in state.history:
            lines.append(Text(f"Judge pass {record.iteration}", style="bold"))
            if not record.critique.objections:
                lines.append(Text("  no objections"))
            for flag in record.critique.flags:
                lines.append(literal(f"  flag    {flag.step + 1}. {flag.action}  - {flag.reason}"))
            for missing in record.critique.missing:
                lines.append(literal(f"  missing {missing.description}"))
            for dropped in record.critique.dropped + record.dropped:
                lines.append(literal(f"  dropped {dropped.text!r}: {dropped.why}"))
            for edit in record.edits:
                style = "red" if edit.kind == "remove" else "green"
                action = printable(edit.action)
                lines.append(Text.assemble("  ", (f"{edit.kind:7}", style), f" {action}"))
        lines.append(literal(f"stop: {state.stop_reason or 'not finished'}; refined plan:"))
        lines += [literal(f"  {i}. {line}") for i, line in enumerate(state.lines(), start=1)]
        for line in lines:
            line.overflow = "fold"  # long actions and reasons wrap at the terminal's width
            out.print(line)


@app.command(cls=Command)
def convert(
    inputs: Annotated[
        list[str],
        typer.Argument(
            metavar="INPUTS", help="TEACh game files (*.game.json), directories or globs."
        ),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Write the episodes here as JSONL.")
    ],
    split: Annotated[
        str | None,
        typer.Option(
            help="Keep only games under a directory of this name (train, valid_seen, ...)."
        ),
    ] = None,
) -> None:
    """Convert TEACh game files into episode records (the input of verify, corrupt and score)."""
    from planverify.inputs.teach import LoadSummary, iter_games
    from planverify.stores.files import replacing

    check_sources(inputs, split, games_only=True)
    check_output(output)
    check_clash([output], inputs, split)
    summary = LoadSummary()
    with writing(output), replacing(output) as temporary, temporary.open("wb") as sink:
        for item in summary.track(iter_games(inputs, split=split)):
            if isinstance(item, EpisodeError):
                say(err, "skipped", "red", str(item))
            else:
                sink.write(dump_jsonl_line(item))
        if summary.read == 0:  # an existing output is only replaced by episodes
            raise fail(f"{summary}: no episode to write; {output} is left as it was", 1)
    out.print(literal(f"{summary}; wrote {summary.read} episode(s) to {output}"))
    if summary.skipped:
        raise typer.Exit(1)


def _range(text: str) -> tuple[int, int]:
    low, _, high = text.partition("..")
    try:
        bounds = (int(low), int(high or low))
    except ValueError:
        raise fail(f"--errors-per-episode must look like 1..3 or 2, not {text!r}") from None
    if not 0 <= bounds[0] <= bounds[1]:
        raise fail(f"--errors-per-episode must be LOW..HIGH with 0 <= LOW <= HIGH, not {text!r}")
    return bounds


@app.command(cls=Command)
def corrupt(
    inputs: Annotated[
        list[str],
        typer.Argument(
            metavar="INPUTS",
            help="Episodes: JSONL files, or TEACh game files, directories and globs.",
        ),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Write the annotated episodes here as JSONL.")
    ],
    seed: Annotated[
        int, typer.Option(help="Random seed; the same seed gives the same output.")
    ] = 0,
    errors_per_episode: Annotated[
        str, typer.Option(help="Errors injected per corrupted episode, LOW..HIGH.")
    ] = "1..3",
    clean_fraction: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Share of episodes left without errors.")
    ] = 0.2,
    max_steps: Annotated[
        int, typer.Option(min=1, help="Keep episodes with at most this many non-dialogue steps.")
    ] = 25,
    split: Annotated[
        str | None, typer.Option(help="TEACh inputs: keep only games under this directory name.")
    ] = None,
    generator: Annotated[
        GeneratorName,
        typer.Option(
            help="injected (the paper's error taxonomy) or natural (human-like mistakes)."
        ),
    ] = "injected",
) -> None:
    """Inject labelled errors (detours, misplacements, needless toggles, ...) into real episodes."""
    from planverify.inputs.sources import iter_inputs
    from planverify.noise.injected import GENERATORS, CorruptSummary
    from planverify.stores.files import replacing

    bounds = _range(errors_per_episode)
    check_sources(inputs, split, labelled=False)
    check_output(output)
    check_clash([output], inputs, split)
    skipped = 0
    seen: dict[str, str] = {}

    def episodes() -> Iterator[Episode]:
        nonlocal skipped
        for item in iter_inputs(inputs, split=split):
            problem = None
            if isinstance(item, EpisodeError):
                problem = str(item)
            elif item.labels is not None:
                problem = f"{item.origin}: {item.id} is already annotated"
            elif item.id in seen:
                problem = f"{item.origin}: episode id {item.id!r} appears more than once (first at {seen[item.id]})"
            if problem is not None:
                skipped += 1
                say(err, "skipped", "red", problem)
                continue
            assert isinstance(item, Episode)
            seen[item.id] = item.origin
            yield item

    summary = CorruptSummary()
    with writing(output), replacing(output) as temporary, temporary.open("wb") as sink:
        for episode in GENERATORS[generator](
            episodes(),
            seed=seed,
            errors_per_episode=bounds,
            clean_fraction=clean_fraction,
            max_steps=max_steps,
            summary=summary,
        ):
            sink.write(dump_jsonl_line(episode))
        written = summary.clean + summary.corrupted
        if not written:  # an existing output is only replaced by episodes
            raise fail(f"{summary}: no episode to write; {output} is left as it was", 1)
    out.print(literal(f"{summary}; wrote {written} to {output}"))
    if skipped:
        raise typer.Exit(1)


@app.command(cls=Command)
def score(
    annotated: Annotated[
        Path, typer.Argument(metavar="ANNOTATED", help="Annotated episodes (JSONL with labels).")
    ],
    results: Annotated[
        Path,
        typer.Argument(metavar="RESULTS", help="Results of verify on those episodes (JSONL)."),
    ],
    mode: Annotated[
        Literal["auto", "static", "iterative"],
        typer.Option(
            help="static (first Judge pass), iterative (refined plan), or auto: static when the results were made with --static."
        ),
    ] = "auto",
    report: Annotated[
        Path | None,
        typer.Option("--json", help="Also write the full report (per episode) as JSON."),
    ] = None,
    min_evidence: Annotated[
        Evidence | None,
        typer.Option(
            "--min-evidence",
            help="Score only removals and insertions at this evidence level or stronger "
            "(proven > goal-text > heuristic); those below count as not made: the step kept, "
            "the insertion left out.",
        ),
    ] = None,
) -> None:
    """Recall, precision and F1 of results against labels, overall, per error type and per task."""
    from planverify.metrics.scoring import BELOW_LEVEL, infer_mode, score_results
    from planverify.records.episode import iter_jsonl
    from planverify.records.jsonl import UnusableFile, expect, read_all

    for problem in (
        expect(annotated, "annotated episodes", "ANNOTATED (as `planverify corrupt` writes)"),
        expect(results, "results", "RESULTS"),
    ):
        if problem is not None:
            raise fail(problem)
    if report is not None:
        check_clash([report], [annotated, results], None)
    try:
        outcomes = [r for _, r in read_all(results, VerificationResult, "a result record")]
    except UnusableFile as exc:
        raise fail(str(exc)) from None
    episodes: list[Episode] = []
    skipped = 0
    for item in iter_jsonl(annotated):
        if isinstance(item, EpisodeError):
            skipped += 1
            say(err, "skipped", "red", str(item))
        else:
            episodes.append(item)
    _check_pairing(episodes, outcomes, annotated, results)
    if mode == "auto":
        try:
            mode = infer_mode(outcomes)
        except ValueError as exc:
            raise fail(f"{exc} (or pass --mode)") from None
    scored = score_results(episodes, outcomes, mode=mode, min_evidence=min_evidence)
    title = f"{mode} scores, {scored.overall.episodes} episodes"
    if min_evidence is not None:
        title += f", evidence {min_evidence} or stronger"
        out.print(literal(f"evidence: {BELOW_LEVEL.format(level=min_evidence)}"))
    table = Table(title=title, title_justify="left")
    for column in ("group", "TP", "FP", "FN", "recall", "precision", "F1"):
        table.add_column(column, justify="left" if column == "group" else "right")

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.1f}"

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
            pct(s.recall),
            pct(s.precision),
            pct(s.f1),
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
            name, str(c.tp), str(c.fp), str(c.fn), pct(s.recall), pct(s.precision), pct(s.f1)
        )
    out.print(levels)
    o = scored.overall
    if o.recall_ci and o.precision_ci:
        out.print(
            f"95% intervals: recall {pct(o.recall_ci.low)}-{pct(o.recall_ci.high)}, "
            f"precision {pct(o.precision_ci.low)}-{pct(o.precision_ci.high)}",
            highlight=False,
        )
    if scored.failed:
        say(
            err,
            "failed:",
            "red",
            f"{len(scored.failed)} episode(s) have an error result, counted as finding nothing, e.g. {', '.join(scored.failed[:3])}",
        )
    if scored.mismatched:
        raise fail(
            f"{len(scored.mismatched)} result(s) were computed on other content than the "
            f"annotated episodes, e.g. {', '.join(scored.mismatched[:3])}: verify {annotated} again",
            1,
        )
    if report is not None:
        from planverify.stores.files import write_atomically

        write_atomically(
            report, orjson.dumps(scored.model_dump(mode="json"), option=orjson.OPT_INDENT_2)
        )
    if skipped:
        raise typer.Exit(1)


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


@app.command("presets", cls=Command)
def list_presets() -> None:
    """List the named model presets (override them with a TOML file in $PLANVERIFY_PRESETS)."""
    table = Table.grid(padding=(0, 2))
    table.add_column(no_wrap=True, style="bold")
    table.add_column(overflow="fold", ratio=1)  # the spec line is whole; the note wraps
    for name, entry in presets(os.environ.get("PLANVERIFY_PRESETS")).items():
        details = literal(entry.get("spec"), style="bold")
        if paper := entry.get("paper_model"):
            details.append(f"\npaper's model: {printable(paper)}")
        if note := entry.get("note"):
            details.append(f"\n{printable(note)}", style="dim")
        table.add_row(literal(name), details)
        table.add_row("", "")
    out.print(table)


@app.command("goal", cls=Command)
def read_goal_command(
    text: Annotated[str, typer.Argument(metavar="TEXT", help="The goal, in words.")],
    dialogue: Annotated[
        list[str] | None,
        typer.Option(
            "--dialogue",
            metavar="LINE",
            help='A line of dialogue, "Commander: ..." or "Driver: ..." (repeatable).',
        ),
    ] = None,
    task: Annotated[
        str | None, typer.Option(metavar="FAMILY", help='TEACh task family, e.g. "Coffee".')
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the reading as JSON.")] = False,
) -> None:
    """Print the goal spec read from a goal text and the Commander's words (exit 1: none)."""
    from planverify.world.text_goals import FAMILIES, read_goal

    if task is not None and " ".join(task.split()).lower() not in {f.lower() for f in FAMILIES}:
        raise fail(f"unknown task family {task!r}; known: {', '.join(FAMILIES)}")
    reading = read_goal(text, dialogue or [], task=task)
    if as_json:
        record = {
            "spec": reading.spec.model_dump(mode="json") if reading.spec else None,
            "focus": reading.focus,
            "request": reading.request,
            "note": reading.note,
        }
        out.print(literal(orjson.dumps(record).decode()), soft_wrap=True)
    elif reading.spec is None:
        out.print(literal(reading.note or "no spec read"), soft_wrap=True)
        if reading.focus:
            out.print(literal(f"objects named: {', '.join(reading.focus)}"), soft_wrap=True)
    else:
        spec = reading.spec
        lines = [f"{spec.task}: {spec.text}", "components:"]
        lines += [f"  {c.describe()}" for c in spec.components]
        if spec.relations:
            lines += ["relations:"] + [f"  {r.describe()}" for r in spec.relations]
        for line in lines:
            out.print(literal(line), soft_wrap=True)
    if reading.spec is None:
        raise typer.Exit(1)


def _register_eval() -> None:
    from planverify.cli.eval import eval_command

    app.command("eval", cls=Command)(eval_command)


_register_eval()


def _register_curation() -> None:
    from planverify.cli.export import export_command
    from planverify.cli.review import review_command

    app.command("export", cls=Command)(export_command)
    app.command("review", cls=Command)(review_command)


_register_curation()


def main() -> None:
    """Entry point of the `planverify` script."""
    app()
