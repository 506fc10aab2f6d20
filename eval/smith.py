"""LangSmith datasets and experiments for an annotated set.

With `LANGSMITH_API_KEY` set, the annotated file becomes (or updates) a LangSmith dataset —
inputs: goal, actions, scene; reference outputs: labels — and each Judge x Planner pair runs as
an experiment through LangSmith's `evaluate`, with per-example and summary evaluators and
metadata naming judge, planner, prompts and iteration cap. Without a key, nothing is sent: the
same evaluator functions run here on the local results.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from planverify.episode import Episode, Label
from planverify.prompts import PROMPT_VERSION
from planverify.result import VerificationResult
from planverify.scoring import Counts, score_iterative

from .grid import Cell


def example_scores(episode: Episode, result: VerificationResult) -> dict[str, int]:
    """Per-example evaluator: TP, FP and FN of one refined plan against its labels."""
    counts = score_iterative(episode, result).counts
    return {"tp": counts.tp, "fp": counts.fp, "fn": counts.fn}


def summary_scores(per_example: Sequence[dict[str, int]]) -> dict[str, float | None]:
    """Summary evaluator: recall, precision and F1 over the examples' summed counts."""
    total = Counts(
        tp=sum(e["tp"] for e in per_example),
        fp=sum(e["fp"] for e in per_example),
        fn=sum(e["fn"] for e in per_example),
    )
    return {"recall": total.recall, "precision": total.precision, "f1": total.f1}


def _local(cells: Sequence[Cell], episodes: Sequence[Episode]) -> list[dict[str, Any]]:
    by_id = {e.id: e for e in episodes}
    experiments = []
    for cell in cells:
        if cell.mode != "iterative":
            continue
        scores = [example_scores(by_id[r.id], r) for r in cell.results if r.id in by_id]
        experiments.append(
            {
                "judge": cell.judge,
                "planner": cell.planner,
                "uploaded": False,
                **summary_scores(scores),
            }
        )
    return experiments


def run_langsmith(
    dataset: str,
    episodes: Sequence[Episode],
    cells: Sequence[Cell],
    *,
    max_iterations: int,
) -> list[dict[str, Any]]:
    """Evaluate the grid's iterative runs as LangSmith experiments (locally without a key)."""
    if not os.environ.get("LANGSMITH_API_KEY"):
        return _local(cells, episodes)
    from langsmith import Client, evaluate

    from planverify import verify_plan

    client = Client()
    if client.has_dataset(dataset_name=dataset):
        target = client.read_dataset(dataset_name=dataset)
        known = {
            ex.metadata.get("episode_id")
            for ex in client.list_examples(dataset_id=target.id)
            if ex.metadata
        }
    else:
        target, known = client.create_dataset(dataset_name=dataset), set()
    fresh = [e for e in episodes if e.id not in known]
    if fresh:
        client.create_examples(
            dataset_id=target.id,
            inputs=[
                {
                    "goal": e.goal,
                    "actions": e.actions,
                    "scene": e.scene.model_dump() if e.scene else None,
                }
                for e in fresh
            ],
            outputs=[{"labels": [label.model_dump() for label in e.labels or []]} for e in fresh],
            metadata=[{"episode_id": e.id} for e in fresh],
        )
    experiments = []
    for cell in cells:
        if cell.mode != "iterative":
            continue

        def run(inputs: dict[str, Any], cell: Cell = cell) -> dict[str, Any]:
            result = verify_plan(
                inputs["actions"],
                inputs.get("goal"),
                scene=inputs.get("scene"),
                judge=cell.judge,
                planner=cell.planner,
                max_iterations=max_iterations,
            )
            return result.model_dump(mode="json")

        def per_example(
            inputs: dict[str, Any], outputs: dict[str, Any], reference_outputs: dict[str, Any]
        ) -> dict[str, Any]:
            episode = Episode(
                id="x",
                goal=inputs.get("goal"),
                actions=inputs["actions"],
                labels=[Label.model_validate(x) for x in reference_outputs["labels"]],
            )
            scores = example_scores(
                episode, VerificationResult.model_validate({**outputs, "id": "x"})
            )
            return {"results": [{"key": k, "score": v} for k, v in scores.items()]}

        def summary(
            outputs: list[dict[str, Any]],
            reference_outputs: list[dict[str, Any]],
            inputs: list[dict[str, Any]],
        ) -> dict[str, Any]:
            rows = [
                per_example(i, o, r)["results"]
                for i, o, r in zip(inputs, outputs, reference_outputs, strict=True)
            ]
            flat = [{d["key"]: d["score"] for d in row} for row in rows]
            return {"results": [{"key": k, "score": v} for k, v in summary_scores(flat).items()]}

        evaluate(
            run,
            data=dataset,
            evaluators=[per_example],
            summary_evaluators=[summary],  # type: ignore[list-item]  # langsmith accepts this signature at run time
            experiment_prefix=f"{cell.judge}-{cell.planner}",
            metadata={
                "judge": cell.judge,
                "planner": cell.planner,
                "prompts": PROMPT_VERSION,
                "max_iterations": max_iterations,
            },
        )
        experiments.append({"judge": cell.judge, "planner": cell.planner, "uploaded": True})
    return experiments
