"""Run every Judge x Planner pair over an annotated set and score each run."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from planverify.api import averify_many
from planverify.episode import Episode
from planverify.result import VerificationResult
from planverify.scoring import Report, score_results

from .convergence import Convergence, convergence

Mode = Literal["static", "iterative"]


class Cell(BaseModel):
    """One run of the grid: a judge, a planner, a mode, its results and their scores."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    judge: str  # judge spec or name
    planner: str  # planner spec or name ("-" in static mode, where no planner runs)
    mode: Mode  # static: one Judge pass; iterative: the full loop
    report: Report  # scores against the labels
    convergence: Convergence  # iterative runs only (empty for static)
    results: list[VerificationResult]  # one per episode, in input order


def name_of(thing: Any) -> str:
    """A spec string as it is; a model or Judge/Planner object by its name."""
    if isinstance(thing, str):
        return thing
    return str(
        getattr(thing, "name", None) or getattr(thing, "model_name", None) or type(thing).__name__
    )


def plan_runs(
    judges: Sequence[Any], planners: Sequence[Any], modes: Sequence[Mode]
) -> list[tuple[Any, Any, Mode]]:
    """The runs of a grid: static once per judge, iterative for every judge x planner pair.

    >>> plan_runs(["a", "b"], ["p", "q"], ["static", "iterative"])[:3]
    [('a', '-', 'static'), ('b', '-', 'static'), ('a', 'p', 'iterative')]
    """
    runs: list[tuple[Any, Any, Mode]] = []
    if "static" in modes:
        runs += [(judge, "-", "static") for judge in judges]
    if "iterative" in modes:
        runs += [(judge, planner, "iterative") for judge in judges for planner in planners]
    return runs


async def arun_grid(
    episodes: Sequence[Episode],
    *,
    judges: Sequence[Any],
    planners: Sequence[Any],
    modes: Sequence[Mode] = ("static", "iterative"),
    max_iterations: int = 5,
    concurrency: int = 8,
    seed: int = 0,
    on_result: Callable[[VerificationResult], None] | None = None,
) -> list[Cell]:
    """Verify the episodes under every run of the grid and score each run.

    Judges and planners are specs ("rules", "o4-mini", "openai:..."), chat models or
    Judge/Planner objects; runs go one after another, episodes within a run concurrently.
    """
    by_id = {e.id: e for e in episodes}
    cells = []
    for judge, planner, mode in plan_runs(judges, planners, modes):
        results = await averify_many(
            episodes,
            judge=judge,
            planner="rules" if isinstance(planner, str) and planner == "-" else planner,
            max_iterations=max_iterations,
            static=mode == "static",
            concurrency=concurrency,
            on_result=on_result,
        )
        report = score_results(episodes, results, mode=mode, seed=seed)
        flow = convergence(results, by_id) if mode == "iterative" else Convergence()
        cells.append(
            Cell(
                judge=name_of(judge),
                planner=name_of(planner),
                mode=mode,
                report=report,
                convergence=flow,
                results=results,
            )
        )
    return cells
