"""Run every Judge x Planner pair over an annotated set and score each run.

Static mode (the paper's Table 1) runs each judge once: one Judge pass, no Planner. Iterative
mode (Table 2) runs the full loop for every judge with every planner. Judges and planners are
specs ("rules", "baseline", a preset, "provider:model"), LangChain chat models, or objects
with the `Judge` / `Planner` protocol; each is resolved once and shared by its runs, so the
per-provider call limits hold across the whole grid. Chat models get the response cache.

Episodes of all runs of a phase are verified concurrently under one bound; static runs go
first, so the iterative runs find their first Judge pass (the same prompt) in the cache.

>>> [run.name for run in plan_runs(["rules", "baseline"], ["rules"], ["static", "iterative"])]
['rules (static)', 'baseline (static)', 'rules / rules', 'baseline / rules']
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.caches import BaseCache
from langchain_core.language_models import BaseChatModel

from planverify.agents import resolve_judge, resolve_planner
from planverify.agents.base import Judge, Planner
from planverify.api import JudgeLike, PlannerLike, Verifier
from planverify.llm.calls import CallLimits
from planverify.llm.params import ModelOptions
from planverify.metrics import Report, score_results
from planverify.records.episode import Episode
from planverify.records.result import VerificationResult
from planverify.records.trim import DEFAULT_TRIM, TrimPolicy

from .cache import with_cache
from .convergence import Convergence, convergence

__all__ = ["NO_PLANNER", "Cell", "Mode", "Run", "arun_grid", "name_of", "plan_runs", "run_cells"]

Mode = Literal["static", "iterative"]
NO_PLANNER = "-"  # the planner column of static runs, where no planner runs


@dataclass
class Run:
    """One run of the grid, ready to go."""

    judge: str  # judge name (its spec, or the model's name)
    planner: str  # planner name; NO_PLANNER in static mode
    mode: Mode  # static: one Judge pass; iterative: the full loop
    verifier: Verifier  # the resolved settings it runs with

    @property
    def name(self) -> str:
        """How tables and plots call the run: `judge / planner`, or `judge (static)`."""
        return (
            f"{self.judge} (static)" if self.mode == "static" else f"{self.judge} / {self.planner}"
        )


@dataclass
class Cell:
    """A finished run: its results, scores against the labels, and convergence."""

    run: Run  # what ran
    results: list[VerificationResult]  # one per episode, in input order
    report: Report  # `planverify.metrics` scores (overall, per error type and task, per episode)
    convergence: Convergence | None  # iterative runs only

    @property
    def judge(self) -> str:
        """The judge's name."""
        return self.run.judge

    @property
    def planner(self) -> str:
        """The planner's name (NO_PLANNER in static mode)."""
        return self.run.planner

    @property
    def mode(self) -> Mode:
        """static or iterative."""
        return self.run.mode

    @property
    def name(self) -> str:
        """The run's name."""
        return self.run.name

    @property
    def failed(self) -> list[str]:
        """Ids of episodes whose verification failed (they count as finding nothing)."""
        return [r.id for r in self.results if r.status == "error"]


def name_of(thing: Any) -> str:
    """A spec as it is; a chat model by its model name; a Judge or Planner by its name.

    >>> name_of("openai:gpt-4o"), name_of(object())
    ('openai:gpt-4o', 'object')
    """
    if isinstance(thing, str):
        return thing
    for attribute in ("name", "model_name", "model"):
        value = getattr(thing, attribute, None)
        if isinstance(value, str) and value:
            return value
    return type(thing).__name__


def _unique_names(things: Sequence[Any]) -> list[str]:
    """Names of the grid's judges or planners; a repeated name gets `#2`, `#3`, ..."""
    names: list[str] = []
    for thing in things:
        base = name_of(thing)
        name, n = base, 1
        while name in names:
            n += 1
            name = f"{base} #{n}"
        names.append(name)
    return names


def _cache_option(thing: Any, cache: BaseCache | None) -> dict[str, Any]:
    # model specs are built by init_chat_model, which takes the cache as a model field
    return {"cache": cache} if cache is not None and isinstance(thing, str) else {}


def plan_runs(
    judges: Sequence[JudgeLike],
    planners: Sequence[PlannerLike],
    modes: Sequence[Mode],
    *,
    max_iterations: int = 5,
    cache: BaseCache | None = None,
    limits: CallLimits | None = None,
    judge_output: Literal["text", "structured"] = "text",
    grounding: bool = False,
    base_url: str | None = None,
    temperature: float | None = None,
    model_params: Mapping[str, Any] | None = None,
    trim: TrimPolicy = DEFAULT_TRIM,
) -> list[Run]:
    """Resolve the judges and planners (a bad spec or a missing key raises `ModelSpecError`
    here, before any work) and list the runs: static ones first, then every pair.
    `temperature` and `model_params` override the request parameters of models made from
    specs, as in `Verifier`; every run verifies under the trim policy `trim`."""
    if not judges:
        raise ValueError("the grid needs at least one judge")
    judge_names = _unique_names(judges)
    options = ModelOptions.of(temperature, model_params)
    resolved_judges: list[Judge] = [
        resolve_judge(
            with_cache(j, cache),
            output=judge_output,
            base_url=base_url,
            grounding=grounding,
            limits=limits,
            options=options,
            **_cache_option(j, cache),
        )
        for j in judges
    ]
    runs: list[Run] = []

    def verifier(judge: Judge, planner: Planner | str, static: bool) -> Verifier:
        return Verifier(
            judge=judge,
            planner=planner,
            max_iterations=max_iterations,
            static=static,
            judge_output=judge_output,
            grounding=grounding,
            base_url=base_url,
            limits=limits,
            temperature=temperature,
            model_params=model_params,
            trim=trim,
        )

    if "static" in modes:
        for name, judge in zip(judge_names, resolved_judges, strict=True):
            runs.append(Run(name, NO_PLANNER, "static", verifier(judge, "rules", True)))
    if "iterative" in modes:
        if not planners:
            raise ValueError("iterative runs need at least one planner")
        planner_names = _unique_names(planners)
        resolved_planners: list[Planner] = [
            resolve_planner(
                with_cache(p, cache),
                output=judge_output,
                base_url=base_url,
                limits=limits,
                options=options,
                **_cache_option(p, cache),
            )
            for p in planners
        ]
        for name, judge in zip(judge_names, resolved_judges, strict=True):
            for planner_name, planner in zip(planner_names, resolved_planners, strict=True):
                runs.append(Run(name, planner_name, "iterative", verifier(judge, planner, False)))
    return runs


async def run_cells(
    runs: Sequence[Run],
    episodes: Sequence[Episode],
    *,
    concurrency: int = 8,
    seed: int = 0,
    resamples: int = 1000,
    on_result: Callable[[int, VerificationResult], None] | None = None,
) -> list[Cell]:
    """Verify the episodes under every run and score each run (`planverify.metrics`).

    At most `concurrency` episodes are in flight across all runs of a phase; `on_result`
    hears (run index, result) as each episode finishes. The bootstrap intervals use `seed`.
    """
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    gate = asyncio.Semaphore(concurrency)
    results: dict[int, list[VerificationResult]] = {}

    async def one(index: int, episode: Episode) -> VerificationResult:
        async with gate:
            result = await runs[index].verifier.averify(episode)
        if on_result is not None:
            on_result(index, result)
        return result

    async def whole(index: int) -> None:
        results[index] = list(await asyncio.gather(*(one(index, e) for e in episodes)))

    for phase in ("static", "iterative"):
        await asyncio.gather(*(whole(i) for i, run in enumerate(runs) if run.mode == phase))
    by_id = {e.id: e for e in episodes}
    cells: list[Cell] = []
    for index, run in enumerate(runs):
        found = results[index]
        # found under the run's own trim policy: scored as `planverify score` reads them
        report = score_results(episodes, found, mode=run.mode, resamples=resamples, seed=seed)
        flow = convergence(found, by_id) if run.mode == "iterative" else None
        cells.append(Cell(run=run, results=found, report=report, convergence=flow))
    return cells


async def arun_grid(
    episodes: Sequence[Episode],
    *,
    judges: Sequence[JudgeLike],
    planners: Sequence[PlannerLike] = ("rules",),
    modes: Sequence[Mode] = ("static", "iterative"),
    max_iterations: int = 5,
    concurrency: int = 8,
    seed: int = 0,
    resamples: int = 1000,
    cache: BaseCache | None = None,
    limits: CallLimits | None = None,
    judge_output: Literal["text", "structured"] = "text",
    grounding: bool = False,
    base_url: str | None = None,
    temperature: float | None = None,
    model_params: Mapping[str, Any] | None = None,
    trim: TrimPolicy = DEFAULT_TRIM,
    on_result: Callable[[int, VerificationResult], None] | None = None,
) -> list[Cell]:
    """`plan_runs` then `run_cells`: the whole grid over an annotated set, scored."""
    runs = plan_runs(
        judges,
        planners,
        modes,
        max_iterations=max_iterations,
        cache=cache,
        limits=limits,
        judge_output=judge_output,
        grounding=grounding,
        base_url=base_url,
        temperature=temperature,
        model_params=model_params,
        trim=trim,
    )
    return await run_cells(
        runs,
        episodes,
        concurrency=concurrency,
        seed=seed,
        resamples=resamples,
        on_result=on_result,
    )


def is_model(thing: Any) -> bool:
    """Whether a judge or planner makes model calls (a spec other than the offline ones, or a
    chat model)."""
    if isinstance(thing, str):
        return thing not in ("rules", "baseline")
    return isinstance(thing, BaseChatModel)
