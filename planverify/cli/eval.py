"""`planverify eval`: the paper's evaluation of Judge x Planner pairs on an annotated set.

`eval_command` is a plain Typer command function; the application registers it with
`app.command("eval", cls=Command)(eval_command)`. Exit codes follow the rule of every command
(README, "Exit codes"): 0 when everything ran, 1 when some input records were left out or some
episodes failed, 2 for usage errors (bad option, unknown model spec, missing API key or
matplotlib, a DATASET that holds no annotated episodes), reported before any work.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from planverify.cli.options import (
    BaseUrlOption,
    JudgeOutputOption,
    MaxCallTimeOption,
    MaxIterationsOption,
    MaxRetriesOption,
    ModelParamOption,
    RpsOption,
    TemperatureOption,
    TimeoutOption,
    TpmOption,
    TrimOption,
)
from planverify.eval.cache import DEFAULT_CACHE, SQLiteCache
from planverify.eval.grid import Cell, Mode, Run, is_model, plan_runs, run_cells
from planverify.eval.plots import MissingMatplotlib, require_matplotlib
from planverify.eval.report import EvalSettings, write_report
from planverify.eval.smith import API_KEY_ENV, DatasetSync, Experiment, run_langsmith
from planverify.eventloop.runner import run
from planverify.llm.calls import CallLimits
from planverify.llm.models import ModelSpecError
from planverify.llm.params import parse_params
from planverify.records.episode import Episode, EpisodeError, iter_jsonl
from planverify.records.jsonl import expect
from planverify.records.trim import DEFAULT_TRIM, TrimPolicy
from planverify.runs.console import err, printable, say
from planverify.runs.console import out as console
from planverify.runs.progress import PlainProgress, Tally

__all__ = ["EvalMode", "eval_command", "read_annotated"]


def _print(text: str) -> None:
    """Names and paths print as they are: no markup, no emoji codes, no control characters."""
    console.print(printable(text), markup=False, soft_wrap=True)


class EvalMode(StrEnum):
    """Which tables to compute."""

    static = "static"  # one Judge pass per judge (Table 1)
    iterative = "iterative"  # the full loop for every Judge x Planner pair (Table 2)
    both = "both"  # both of them


def _fail(message: str, code: int = 2) -> typer.Exit:
    say(err, "error:", "bold red", message)
    return typer.Exit(code)


def _specs(values: list[str] | None, default: str) -> list[str]:
    """Repeated options, each possibly a comma-separated list; blanks dropped."""
    specs = [part.strip() for value in values or [default] for part in value.split(",")]
    return [s for s in specs if s]


def read_annotated(path: Path) -> tuple[list[Episode], list[str]]:
    """The annotated episodes of a JSONL file and what was left out (one line each, and why):
    unreadable records, episodes without labels, repeated ids."""
    episodes: list[Episode] = []
    skipped: list[str] = []
    seen: set[str] = set()
    for item in iter_jsonl(path):
        if isinstance(item, EpisodeError):
            skipped.append(str(item))
        elif item.labels is None:
            skipped.append(f"{path}: episode {item.id}: no labels (planverify corrupt makes some)")
        elif item.id in seen:
            skipped.append(f"{path}: episode {item.id}: repeated id, the first one is used")
        else:
            seen.add(item.id)
            episodes.append(item)
    return episodes, skipped


def _progress(runs: list[Run], episodes: int) -> tuple[Progress, list[TaskID]]:
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[failed]} failed"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    )
    tasks = [bar.add_task(escape(run.name), total=episodes, failed=0) for run in runs]
    return bar, tasks


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}"


def _line(cell: Cell) -> str:
    o = cell.report.overall
    c = o.counts
    ci = o.f1_ci
    text = (
        f"{cell.mode:9}  {cell.name}: recall {_pct(o.recall)}, precision {_pct(o.precision)}, "
        f"F1 {_pct(o.f1)}"
        + (f" [{_pct(ci.low)}, {_pct(ci.high)}]" if ci else "")
        + f" (TP {c.tp}, FP {c.fp}, FN {c.fn})"
    )
    flow = cell.convergence
    if flow is not None and flow.episodes:
        shares = ", ".join(f"{k}: {_pct(s)}%" for k, s in enumerate(flow.final_after))
        text += f"; final after k rounds {shares}; executable {_pct(flow.executable)}%"
    if cell.failed:
        text += f"; {len(cell.failed)} failed"
    return text


DatasetArgument = Annotated[
    Path,
    typer.Argument(
        metavar="DATASET",
        help="Annotated episodes: a JSONL file whose records have labels (planverify corrupt writes one).",
    ),
]
ReportOption = Annotated[
    Path,
    typer.Option(
        "--report", help="Folder for report.md, results.json, results/*.jsonl and the PNG figures."
    ),
]
JudgesOption = Annotated[
    list[str] | None,
    typer.Option(
        "--judge",
        "-j",
        help="Judge: rules, baseline, a preset or provider:model. Repeat the option (or give a comma-separated list) for a grid. Default: rules and baseline.",
    ),
]
PlannersOption = Annotated[
    list[str] | None,
    typer.Option(
        "--planner",
        "-p",
        help="Planner: rules, a preset or provider:model. Repeat (or comma-separate) for a grid. Default: rules.",
    ),
]
ModeOption = Annotated[
    EvalMode,
    typer.Option(
        help="static: one Judge pass per judge (Table 1); iterative: the loop for every Judge x Planner pair (Table 2); both."
    ),
]
LimitOption = Annotated[
    int | None, typer.Option(min=1, help="Evaluate only the first N annotated episodes.")
]
SeedOption = Annotated[
    int, typer.Option(help="Seed of the bootstrap resampling behind the 95% intervals.")
]
ResamplesOption = Annotated[int, typer.Option(min=0, help="Bootstrap resamples (0: no intervals).")]
ConcurrencyOption = Annotated[
    int, typer.Option(min=1, help="Episodes verified at once, across all runs.")
]
CacheOption = Annotated[
    Path,
    typer.Option(
        help="SQLite cache of model answers: a rerun makes no model call and gives the same numbers."
    ),
]
NoCacheOption = Annotated[
    bool, typer.Option("--no-cache", help="Ask the models every time; store nothing.")
]
GroundingOption = Annotated[
    bool,
    typer.Option("--grounding", help="Give model judges the simulator's facts about the scene."),
]
LangsmithDatasetOption = Annotated[
    str | None,
    typer.Option(
        help="Create or update this LangSmith dataset from DATASET and evaluate every run on it with LangSmith's evaluate (uploads with LANGSMITH_API_KEY; without it the same evaluators run locally and nothing is sent)."
    ),
]


def eval_command(
    dataset: DatasetArgument,
    report: ReportOption,
    judge: JudgesOption = None,
    planner: PlannersOption = None,
    mode: ModeOption = EvalMode.both,
    limit: LimitOption = None,
    seed: SeedOption = 0,
    resamples: ResamplesOption = 1000,
    max_iterations: MaxIterationsOption = 5,
    concurrency: ConcurrencyOption = 8,
    cache: CacheOption = DEFAULT_CACHE,
    no_cache: NoCacheOption = False,
    judge_output: JudgeOutputOption = "text",
    grounding: GroundingOption = False,
    base_url: BaseUrlOption = None,
    rps: RpsOption = None,
    tpm: TpmOption = None,
    timeout: TimeoutOption = 120.0,
    max_call_time: MaxCallTimeOption = 600.0,
    max_retries: MaxRetriesOption = 5,
    temperature: TemperatureOption = None,
    model_param: ModelParamOption = None,
    trim: TrimOption = DEFAULT_TRIM,
    langsmith_dataset: LangsmithDatasetOption = None,
) -> None:
    """Score Judge x Planner pairs on an annotated set: the paper's tables, convergence,
    per-error-type recall, and a report with plots."""
    params = _model_params(model_param)
    _check_matplotlib()
    episodes, skipped = _annotated(dataset, limit)
    grid = GridOptions(
        judges=_specs(judge, "rules,baseline"),
        planners=_specs(planner, "rules"),
        modes=MODES[mode],
        max_iterations=max_iterations,
        limits=CallLimits(
            rps=rps,
            tpm=tpm,
            timeout=timeout,
            max_call_time=max_call_time,
            max_retries=max_retries,
            concurrency=concurrency,
        ),
        judge_output=judge_output,
        grounding=grounding,
        base_url=base_url,
        temperature=temperature,
        model_params=params,
        trim=trim,
    )
    sampling = Sampling(concurrency=concurrency, seed=seed, resamples=resamples)
    store = None if no_cache else _model_cache(cache, grid.judges, grid.planners, grid.modes)
    try:
        runs = _plan(grid, store)
        err.print(f"{len(episodes)} episodes x {len(runs)} runs", highlight=False)
        cells, sync, experiments = run(
            _evaluate(
                runs,
                episodes,
                sampling,
                langsmith_dataset=langsmith_dataset,
                max_iterations=max_iterations,
                dataset=str(dataset),
            )
        )
    finally:
        if store is not None:
            store.close()
    settings = _report_settings(
        dataset, runs, grid, sampling, skipped, store, cache, langsmith_dataset, sync, experiments
    )
    files = write_report(cells, episodes, report, settings)
    _tell(cells, store, cache, langsmith_dataset, sync, experiments)
    _print(f"report: {files.report}")
    if skipped or any(c.failed for c in cells):
        raise typer.Exit(1)


def _model_params(items: list[str] | None) -> dict[str, Any]:
    """The `--model-param` options by name, after a usage error (exit 2) for a malformed one."""
    try:
        return parse_params(items)
    except ValueError as exc:
        raise _fail(str(exc)) from None


def _check_matplotlib() -> None:
    """A usage error (exit 2) when matplotlib, which draws the report's figures, is missing."""
    try:
        require_matplotlib()
    except MissingMatplotlib as exc:
        raise _fail(str(exc)) from None


@dataclass(frozen=True)
class GridOptions:
    """The grid to evaluate and how its runs verify: what `plan_runs` takes, but the cache."""

    judges: list[str]  # judge specs, in grid order
    planners: list[str]  # planner specs, in grid order
    modes: tuple[Mode, ...]  # static and/or iterative
    max_iterations: int  # cap on Judge passes
    limits: CallLimits  # rate limits, timeouts and retries of model calls
    judge_output: Literal["text", "structured"]  # how model judges answer
    grounding: bool  # model judges get the simulator's facts
    base_url: str | None  # OpenAI-compatible server for openai:MODEL specs
    temperature: float | None  # --temperature of models made from specs; None: default
    model_params: dict[str, Any]  # --model-param, by name
    trim: TrimPolicy  # the trim policy every run verifies and is scored under


def _plan(grid: GridOptions, store: SQLiteCache | None) -> list[Run]:
    """The runs of the grid, after a usage error (exit 2) for a bad spec or a missing key."""
    try:
        runs: list[Run] = plan_runs(
            grid.judges,
            grid.planners,
            grid.modes,
            max_iterations=grid.max_iterations,
            cache=store,
            limits=grid.limits,
            judge_output=grid.judge_output,
            grounding=grid.grounding,
            base_url=grid.base_url,
            temperature=grid.temperature,
            model_params=grid.model_params,
            trim=grid.trim,
        )
    except (ModelSpecError, ValueError) as exc:
        raise _fail(str(exc)) from None
    return runs


def _report_settings(
    dataset: Path,
    runs: list[Run],
    grid: GridOptions,
    sampling: Sampling,
    skipped: list[str],
    store: SQLiteCache | None,
    cache: Path,
    langsmith_dataset: str | None,
    sync: DatasetSync | None,
    experiments: list[Experiment],
) -> EvalSettings:
    """What the evaluation ran with, for the head of the report and results.json."""
    return EvalSettings(
        dataset=str(dataset),
        judges=list(dict.fromkeys(r.judge for r in runs)),
        planners=list(dict.fromkeys(r.planner for r in runs if r.mode == "iterative")),
        modes=list(grid.modes),
        max_iterations=grid.max_iterations,
        trim=grid.trim,
        temperature=grid.temperature,
        model_params=grid.model_params,
        seed=sampling.seed,
        resamples=sampling.resamples,
        cache=str(cache) if store is not None else None,
        cache_hits=store.hits if store is not None else 0,
        cache_misses=store.misses if store is not None else 0,
        skipped=skipped,
        langsmith=[e.as_dict() for e in experiments] if langsmith_dataset else None,
        langsmith_dataset=sync.as_dict() if sync is not None else None,
    )


MODES: dict[EvalMode, tuple[Mode, ...]] = {
    EvalMode.static: ("static",),
    EvalMode.iterative: ("iterative",),
    EvalMode.both: ("static", "iterative"),
}


def _model_cache(
    path: Path, judges: list[str], planners: list[str], modes: tuple[Mode, ...]
) -> SQLiteCache | None:
    """The cache of model answers at `path`, when some run calls a model (None otherwise)."""
    models = any(map(is_model, judges)) or ("iterative" in modes and any(map(is_model, planners)))
    return SQLiteCache(path) if models else None


@dataclass(frozen=True)
class Sampling:
    """How the grid runs and how its scores are resampled."""

    concurrency: int  # episodes verified at once
    seed: int  # seed of the bootstrap
    resamples: int  # bootstrap resamples


def _annotated(dataset: Path, limit: int | None) -> tuple[list[Episode], list[str]]:
    """The first `limit` annotated episodes of the dataset, and the lines skipped."""
    if (problem := expect(dataset, "annotated episodes", "DATASET")) is not None:
        raise _fail(problem)
    episodes, skipped = read_annotated(dataset)
    for line in skipped:
        say(err, "skipped:", "yellow", line)
    if not episodes:
        raise _fail(f"{dataset}: no annotated episodes (planverify corrupt makes some)")
    return episodes[:limit], skipped


async def _evaluate(
    runs: list[Run],
    episodes: list[Episode],
    sampling: Sampling,
    *,
    langsmith_dataset: str | None,
    max_iterations: int,
    dataset: str,
) -> tuple[list[Cell], DatasetSync | None, list[Experiment]]:
    """Every run over every episode with a progress bar, then the LangSmith experiments."""
    bar, tasks = _progress(runs, len(episodes))
    tally = Tally(total=len(episodes) * len(runs))
    plain = PlainProgress(tally, stream=err.file) if not err.is_terminal else None

    def advance(index: int, result: object) -> None:
        failed = getattr(result, "status", "ok") == "error"
        task = bar.tasks[index]
        bar.update(tasks[index], advance=1, failed=task.fields["failed"] + failed)
        tally.done += 1
        tally.failed += failed
        if plain is not None:
            plain.refresh()  # a plain line every few seconds where there is no terminal

    with bar, plain or contextlib.nullcontext():
        cells = await run_cells(
            runs,
            episodes,
            concurrency=sampling.concurrency,
            seed=sampling.seed,
            resamples=sampling.resamples,
            on_result=advance,
        )
    if not langsmith_dataset:
        return cells, None, []
    sync, experiments = await run_langsmith(
        langsmith_dataset,
        episodes,
        cells,
        max_iterations=max_iterations,
        dataset=dataset,
        concurrency=sampling.concurrency,
    )
    return cells, sync, experiments


def _tell(
    cells: list[Cell],
    store: SQLiteCache | None,
    cache: Path,
    langsmith_dataset: str | None,
    sync: DatasetSync | None,
    experiments: list[Experiment],
) -> None:
    """One line per cell, then what the model cache and LangSmith did."""
    for cell in cells:
        _print(_line(cell))
    if store is not None:
        _print(f"model cache: {store.hits} answers reused, {store.misses} model calls ({cache})")
    if langsmith_dataset:
        where = (
            f"uploaded to dataset {sync.name!r} ({sync.added} examples added, {sync.updated} updated)"
            if sync is not None
            else f"run locally (no {API_KEY_ENV}; nothing sent)"
        )
        _print(f"LangSmith: {len(experiments)} experiment(s) {where}")
