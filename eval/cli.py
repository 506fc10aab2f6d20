"""`planverify eval`: the paper's evaluation on an annotated set, as a report."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

import typer
from langchain_core.globals import get_llm_cache, set_llm_cache
from rich.console import Console

from planverify.episode import Episode, EpisodeError, iter_jsonl

from .cache import SQLiteCache
from .grid import Mode, arun_grid, plan_runs
from .report import write_report
from .smith import run_langsmith

DEFAULT_CACHE = Path(".planverify") / "model-cache.sqlite"
err = Console(stderr=True)
out = Console()


def _fail(message: str, code: int = 2) -> typer.Exit:
    err.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


def eval_command(
    dataset: Annotated[Path, typer.Argument(help="Annotated episodes (JSONL with labels).")],
    judge: Annotated[
        list[str],
        typer.Option(
            help="Judge spec; repeat for a grid (rules, baseline, presets, provider:model)."
        ),
    ] = ["rules", "baseline"],  # noqa: B006 - typer reads the default, nobody mutates it
    planner: Annotated[
        list[str],
        typer.Option(help="Planner spec; repeat for a grid (rules, presets, provider:model)."),
    ] = ["rules"],  # noqa: B006
    mode: Annotated[str, typer.Option(help="static, iterative or both.")] = "both",
    report: Annotated[
        Path, typer.Option(help="Folder for report.md, results.json and plots.")
    ] = Path("report"),
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N episodes.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap intervals.")] = 0,
    max_iterations: Annotated[int, typer.Option(min=1, help="Cap on Judge passes.")] = 5,
    concurrency: Annotated[int, typer.Option(min=1, help="Episodes verified at once.")] = 8,
    cache: Annotated[Path, typer.Option(help="Model response cache (SQLite).")] = DEFAULT_CACHE,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Always ask the models.")] = False,
    langsmith_dataset: Annotated[
        str | None,
        typer.Option(
            help="Also evaluate in LangSmith under this dataset name (local without LANGSMITH_API_KEY)."
        ),
    ] = None,
) -> None:
    """Score Judge x Planner pairs on an annotated set: the paper's tables, convergence, plots."""
    modes: tuple[Mode, ...] = {
        "static": ("static",),
        "iterative": ("iterative",),
        "both": ("static", "iterative"),
    }.get(mode, ())  # type: ignore[assignment]
    if not modes:
        raise _fail(f"--mode must be static, iterative or both, not {mode!r}")
    if not dataset.is_file():
        raise _fail(f"no such file: {dataset}")
    episodes: list[Episode] = []
    for item in iter_jsonl(dataset):
        if isinstance(item, EpisodeError):
            raise _fail(str(item))
        if item.labels is None:
            raise _fail(
                f"{dataset}: episode {item.id!r} has no labels (make some with planverify corrupt)"
            )
        episodes.append(item)
    episodes = episodes[:limit]
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise _fail("plots need matplotlib: pip install 'planverify[eval]'") from None
    from planverify.agents import resolve_judge, resolve_planner
    from planverify.models import ModelSpecError

    try:
        for spec in judge:
            resolve_judge(spec)
        for spec in planner:
            resolve_planner(spec)
    except ModelSpecError as exc:
        raise _fail(str(exc)) from None

    previous = get_llm_cache()
    store = None if no_cache else SQLiteCache(cache)
    set_llm_cache(store)
    runs = plan_runs(judge, planner, modes)
    err.print(f"{len(episodes)} episodes x {len(runs)} runs", highlight=False)
    try:
        cells = asyncio.run(
            arun_grid(
                episodes,
                judges=judge,
                planners=planner,
                modes=modes,
                max_iterations=max_iterations,
                concurrency=concurrency,
                seed=seed,
            )
        )
    finally:
        set_llm_cache(previous)
        if store is not None:
            store.close()
    path = write_report(
        cells, episodes, report, dataset=str(dataset), seed=seed, max_iterations=max_iterations
    )
    for cell in cells:
        o = cell.report.overall
        out.print(
            f"{cell.mode:9} {cell.judge} / {cell.planner}: recall {_pct(o.recall)}, "
            f"precision {_pct(o.precision)}, F1 {_pct(o.f1)}",
            highlight=False,
        )
    if store is not None:
        out.print(
            f"model cache: {store.hits} hits, {store.misses} misses ({cache})", highlight=False
        )
    if langsmith_dataset:
        experiments: list[dict[str, Any]] = run_langsmith(
            langsmith_dataset, episodes, cells, max_iterations=max_iterations
        )
        where = (
            "LangSmith"
            if any(e.get("uploaded") for e in experiments)
            else "locally (no LANGSMITH_API_KEY)"
        )
        out.print(
            f"LangSmith evaluators ran {where} for {len(experiments)} experiment(s)",
            highlight=False,
        )
    out.print(f"report: {path}", highlight=False)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"
