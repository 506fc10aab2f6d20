"""LangSmith datasets and experiments for an annotated set.

The annotated file becomes a LangSmith dataset, one example per episode: inputs `goal`,
`actions`, `scene`; reference outputs `labels`; metadata the episode id and task family.
Example ids derive from the dataset id and the episode id, so creating the dataset again
updates changed examples and adds new ones instead of duplicating them.

Each run of the grid becomes an experiment evaluated with LangSmith's own runner: a
per-example evaluator (`tp`, `fp`, `fn`, from `planverify.metrics.score_episode`) and a
summary evaluator (`recall`, `precision`, `f1` over the summed counts), with metadata naming
judge, planner, mode, prompt version and iteration cap.

- With `LANGSMITH_API_KEY` set, the dataset is created or updated, each experiment runs the
  verification graph again through `aevaluate` (answers come from the model cache when it is
  on) and uploads; graph runs are traced inside the experiment.
- Without it, nothing is sent: `evaluate` runs with `upload_results=False` over local
  `Example` objects, the target returns the grid's own results, and the client it is given
  refuses every request, so no code path can reach the network. (`aevaluate` is not used
  offline: in langsmith 0.15 it still tries to post the target's runs.)
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import uuid
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
import requests
from langsmith import Client, aevaluate, evaluate
from langsmith.schemas import Example, LangSmithInfo
from requests.adapters import BaseAdapter

from planverify.metrics import Counts, score_episode
from planverify.prompts import PROMPT_VERSION
from planverify.records.episode import Episode, Label, Scene
from planverify.records.result import VerificationResult

from .grid import Cell, Mode

__all__ = [
    "API_KEY_ENV",
    "DatasetSync",
    "Experiment",
    "OfflineClientError",
    "example_id",
    "example_inputs",
    "example_outputs",
    "experiment_metadata",
    "experiment_prefix",
    "offline_client",
    "per_example_evaluator",
    "run_langsmith",
    "summary_evaluator",
    "sync_dataset",
]

API_KEY_ENV = "LANGSMITH_API_KEY"
_NAMESPACE = uuid.UUID("5d0f3a52-8f0e-4c3b-9a55-2b7c1f4e9d61")  # example ids: uuid5 under this


# --------------------------------------------------------------------------- examples


def example_inputs(episode: Episode) -> dict[str, Any]:
    """What the target sees: the episode's whole input (goal, plan, scene, task, teach_task),
    so the result it returns is computed on exactly the annotated content."""
    scene = episode.scene.model_dump(mode="json") if episode.scene is not None else None
    return {
        "goal": episode.goal,
        "actions": list(episode.actions),
        "scene": scene,
        "task": episode.task,
        "teach_task": episode.teach_task,
    }


def example_outputs(episode: Episode) -> dict[str, Any]:
    """The reference outputs: the labels."""
    return {
        "labels": [
            label.model_dump(mode="json", exclude_none=True) for label in episode.labels or []
        ]
    }


def example_id(dataset_id: uuid.UUID | str, episode_id: str) -> uuid.UUID:
    """The example id of an episode in a dataset (the same on every upload).

    >>> example_id("00000000-0000-0000-0000-000000000001", "e1") == example_id(
    ...     "00000000-0000-0000-0000-000000000001", "e1")
    True
    """
    return uuid.uuid5(_NAMESPACE, f"{dataset_id}/{episode_id}")


def _episode(
    inputs: dict[str, Any], reference: dict[str, Any] | None = None, id: str = "example"
) -> Episode:
    scene = inputs.get("scene")
    return Episode(
        id=id,
        goal=inputs.get("goal"),
        actions=list(inputs["actions"]),
        scene=Scene.model_validate(scene) if scene else None,
        task=inputs.get("task"),
        teach_task=inputs.get("teach_task"),
        labels=None
        if reference is None
        else [Label.model_validate(x) for x in reference.get("labels", [])],
    )


def _counts(
    mode: Mode, inputs: dict[str, Any], outputs: dict[str, Any], reference: dict[str, Any]
) -> Counts:
    result = VerificationResult.model_validate({**outputs, "id": "example"})
    return score_episode(_episode(inputs, reference), result, mode=mode).counts


# --------------------------------------------------------------------------- evaluators

Evaluator = Callable[[dict[str, Any], dict[str, Any], dict[str, Any]], dict[str, Any]]
SummaryEvaluator = Callable[
    [list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]], dict[str, Any]
]


def per_example_evaluator(mode: Mode) -> Evaluator:
    """A LangSmith evaluator scoring one example: its TP, FP and FN.

    >>> plan = ["Driver.Move(1.0)", "Driver.PickUp('Mug')"]
    >>> evaluator = per_example_evaluator("iterative")
    >>> got = evaluator({"goal": "g", "actions": plan, "scene": None},
    ...     {"original": plan, "refined": plan[1:], "verdicts": [
    ...         {"index": 0, "action": plan[0], "verdict": "remove"},
    ...         {"index": 1, "action": plan[1], "verdict": "keep"}]},
    ...     {"labels": [{"type": "REMOVE", "index": 0}]})
    >>> [(r["key"], r["score"]) for r in got["results"]]
    [('tp', 1), ('fp', 0), ('fn', 0)]
    """

    def tp_fp_fn(
        inputs: dict[str, Any], outputs: dict[str, Any], reference_outputs: dict[str, Any]
    ) -> dict[str, Any]:
        c = _counts(mode, inputs, outputs, reference_outputs)
        return {
            "results": [
                {"key": k, "score": v} for k, v in (("tp", c.tp), ("fp", c.fp), ("fn", c.fn))
            ]
        }

    return tp_fp_fn


def summary_evaluator(mode: Mode, seen: dict[str, Any] | None = None) -> SummaryEvaluator:
    """A LangSmith summary evaluator: recall, precision and F1 over the examples' summed
    counts (None where undefined, as in `planverify.metrics.Counts`). What it returns is also
    stored in `seen`, when given."""

    def recall_precision_f1(
        inputs: list[dict[str, Any]],
        outputs: list[dict[str, Any]],
        reference_outputs: list[dict[str, Any]],
    ) -> dict[str, Any]:
        total = sum(
            (
                _counts(mode, i, o, r)
                for i, o, r in zip(inputs, outputs, reference_outputs, strict=True)
            ),
            Counts(),
        )
        scores = {"recall": total.recall, "precision": total.precision, "f1": total.f1}
        if seen is not None:
            seen.update(scores)
        return {"results": [{"key": k, "score": v} for k, v in scores.items()]}

    return recall_precision_f1


def experiment_prefix(dataset: str, cell: Cell) -> str:
    """The start of an experiment's name: dataset, judge, planner and mode, in safe characters.

    LangSmith appends a short random suffix.
    """
    parts = [dataset, cell.judge] + ([] if cell.mode == "static" else [cell.planner]) + [cell.mode]
    return re.sub(r"[^A-Za-z0-9._:-]+", "_", "-".join(parts))


def experiment_metadata(cell: Cell, *, max_iterations: int, dataset: str) -> dict[str, Any]:
    """What an experiment records about its run."""
    return {
        "judge": cell.judge,
        "planner": cell.planner,
        "mode": cell.mode,
        "prompts": PROMPT_VERSION,
        "max_iterations": max_iterations,
        "dataset_file": dataset,
    }


# --------------------------------------------------------------------------- clients


class OfflineClientError(requests.ConnectionError):
    """A request the offline LangSmith client refused to send."""


class _Refuse(BaseAdapter):
    def send(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        raise OfflineClientError(
            f"LangSmith runs offline here: refused {request.method} {request.url}"
        )

    def close(self) -> None:
        pass


def offline_client() -> Client:
    """A LangSmith client that cannot reach any server: no background tracing thread, no
    server-info request, and every transport of its session refuses to send."""
    client = Client(
        api_url="http://langsmith.offline.invalid",
        api_key="offline",
        auto_batch_tracing=False,
        info=LangSmithInfo(),
    )
    # mounted after construction: the client mounts its own retrying adapter when it starts
    client.session.mount("http://", _Refuse())
    client.session.mount("https://", _Refuse())
    return client


# --------------------------------------------------------------------------- dataset


@dataclass
class DatasetSync:
    """What creating or updating a LangSmith dataset did."""

    name: str  # dataset name
    id: str  # dataset id
    created: bool  # the dataset was new
    added: int = 0  # examples created
    updated: int = 0  # examples whose inputs, outputs or metadata changed
    unchanged: int = 0  # examples already up to date
    examples: list[Any] = field(default_factory=list)  # the episodes' examples, in input order

    def as_dict(self) -> dict[str, Any]:
        """Plain data for results.json (without the examples)."""
        return {k: v for k, v in vars(self).items() if k != "examples"}


def _same(a: Any, b: Any) -> bool:
    return orjson.dumps(a, option=orjson.OPT_SORT_KEYS) == orjson.dumps(
        b, option=orjson.OPT_SORT_KEYS
    )


def sync_dataset(client: Any, name: str, episodes: Sequence[Episode]) -> DatasetSync:
    """Create the dataset `name` or bring it up to date with the episodes; return what was done.

    Examples of other episodes already in the dataset are left alone.
    """
    created = not client.has_dataset(dataset_name=name)
    dataset = (
        client.create_dataset(
            name, description="planverify annotated plans (goal, actions, scene -> labels)"
        )
        if created
        else client.read_dataset(dataset_name=name)
    )
    known = {str(ex.id): ex for ex in client.list_examples(dataset_id=dataset.id)}
    sync = DatasetSync(name=name, id=str(dataset.id), created=created)
    fresh, changed = [], []
    for episode in episodes:
        wanted = {
            "id": example_id(dataset.id, episode.id),
            "inputs": example_inputs(episode),
            "outputs": example_outputs(episode),
            "metadata": {"episode_id": episode.id, "task": episode.task},
        }
        old = known.get(str(wanted["id"]))
        if old is None:
            fresh.append(wanted)
        elif not (
            _same(old.inputs, wanted["inputs"])
            and _same(old.outputs, wanted["outputs"])
            and _same(
                {k: (old.metadata or {}).get(k) for k in ("episode_id", "task")}, wanted["metadata"]
            )
        ):
            changed.append(wanted)
        else:
            sync.unchanged += 1
    if fresh:
        client.create_examples(
            dataset_id=dataset.id,
            examples=[
                {
                    "id": e["id"],
                    "inputs": e["inputs"],
                    "reference_outputs": e["outputs"],
                    "metadata": e["metadata"],
                }
                for e in fresh
            ],
        )
    if changed:
        client.update_examples(dataset_id=dataset.id, updates=changed)
    sync.added, sync.updated = len(fresh), len(changed)
    ids = [example_id(dataset.id, e.id) for e in episodes]
    found = {str(ex.id): ex for ex in client.list_examples(dataset_id=dataset.id, example_ids=ids)}
    sync.examples = [found[str(i)] for i in ids if str(i) in found]
    return sync


def local_examples(name: str, episodes: Sequence[Episode]) -> list[Example]:
    """The dataset's examples built here, for an offline evaluation."""
    dataset_id = uuid.uuid5(_NAMESPACE, f"dataset/{name}")
    return [
        Example(
            id=example_id(dataset_id, e.id),
            dataset_id=dataset_id,
            inputs=example_inputs(e),
            outputs=example_outputs(e),
            metadata={"episode_id": e.id, "task": e.task},
        )
        for e in episodes
    ]


# --------------------------------------------------------------------------- experiments


@dataclass
class Experiment:
    """One run of the grid evaluated as a LangSmith experiment."""

    experiment: str  # experiment name (local runs: the prefix it would have had)
    judge: str  # judge name
    planner: str  # planner name
    mode: str  # static or iterative
    uploaded: bool  # results went to LangSmith
    url: str | None = None  # where to see them, when uploaded
    recall: float | None = None  # from the summary evaluator
    precision: float | None = None
    f1: float | None = None
    per_example: dict[str, dict[str, Any]] = field(default_factory=dict)  # episode id -> counts

    def as_dict(self) -> dict[str, Any]:
        """Plain data for results.json."""
        return dict(vars(self))


def _key(inputs: dict[str, Any]) -> bytes:
    return orjson.dumps([inputs.get("goal"), inputs.get("actions")])


def _scores(row: Any) -> tuple[str, dict[str, Any]]:
    example = row["example"]
    found = {r.key: r.score for r in row["evaluation_results"]["results"]}
    return str((example.metadata or {}).get("episode_id", example.id)), found


def _quiet() -> contextlib.ExitStack:
    """LangSmith prints the experiment's name on stdout and warns that local runs are beta."""
    stack = contextlib.ExitStack()
    stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
    stack.enter_context(warnings.catch_warnings())
    warnings.simplefilter("ignore")  # inside catch_warnings: undone when the stack closes
    return stack


def _offline(
    name: str,
    episodes: Sequence[Episode],
    cells: Sequence[Cell],
    *,
    max_iterations: int,
    dataset: str,
) -> list[Experiment]:
    examples = local_examples(name, episodes)
    client = offline_client()
    out = []
    for cell in cells:
        answers = {
            _key(example_inputs(e)): r
            for e, r in zip(episodes, _in_order(cell, episodes), strict=True)
        }

        def target(
            inputs: dict[str, Any], answers: dict[bytes, VerificationResult] = answers
        ) -> dict[str, Any]:
            return answers[_key(inputs)].model_dump(mode="json")

        seen: dict[str, Any] = {}
        with _quiet():
            results = evaluate(
                target,
                data=examples,
                evaluators=[per_example_evaluator(cell.mode)],
                summary_evaluators=[summary_evaluator(cell.mode, seen)],  # type: ignore[list-item]
                experiment_prefix=experiment_prefix(name, cell),
                metadata=experiment_metadata(cell, max_iterations=max_iterations, dataset=dataset),
                client=client,
                upload_results=False,
            )
            rows = dict(_scores(row) for row in results)
        out.append(
            Experiment(
                # a local run has no LangSmith name of its own (0.15 names it at random)
                experiment=experiment_prefix(name, cell),
                judge=cell.judge,
                planner=cell.planner,
                mode=cell.mode,
                uploaded=False,
                per_example=rows,
                **{k: seen.get(k) for k in ("recall", "precision", "f1")},
            )
        )
    return out


def _in_order(cell: Cell, episodes: Sequence[Episode]) -> list[VerificationResult]:
    by_id = {r.id: r for r in cell.results}
    return [by_id[e.id] for e in episodes]


async def _online(
    client: Any,
    name: str,
    episodes: Sequence[Episode],
    cells: Sequence[Cell],
    *,
    max_iterations: int,
    dataset: str,
    concurrency: int,
) -> tuple[DatasetSync, list[Experiment]]:
    sync = sync_dataset(client, name, episodes)
    out = []
    for cell in cells:
        verifier = cell.run.verifier

        async def target(inputs: dict[str, Any], verifier: Any = verifier) -> dict[str, Any]:
            episode = _episode(inputs, id="langsmith")
            result: VerificationResult = await verifier.averify(episode)
            return result.model_dump(mode="json")

        seen: dict[str, Any] = {}
        with _quiet():
            results = await aevaluate(
                target,
                data=sync.examples,
                evaluators=[per_example_evaluator(cell.mode)],
                summary_evaluators=[summary_evaluator(cell.mode, seen)],  # type: ignore[list-item]
                experiment_prefix=experiment_prefix(name, cell),
                metadata=experiment_metadata(cell, max_iterations=max_iterations, dataset=dataset),
                client=client,
                max_concurrency=concurrency,
            )
            rows = dict([_scores(row) async for row in results])
        out.append(
            Experiment(
                experiment=results.experiment_name,
                judge=cell.judge,
                planner=cell.planner,
                mode=cell.mode,
                uploaded=True,
                url=results.url,
                per_example=rows,
                **{k: seen.get(k) for k in ("recall", "precision", "f1")},
            )
        )
    return sync, out


async def run_langsmith(
    name: str,
    episodes: Sequence[Episode],
    cells: Iterable[Cell],
    *,
    max_iterations: int,
    dataset: str,
    concurrency: int = 8,
    client: Any = None,
) -> tuple[DatasetSync | None, list[Experiment]]:
    """Evaluate the grid's runs as LangSmith experiments on the dataset `name`.

    Uploads (creating or updating the dataset) when `client` is given or `LANGSMITH_API_KEY`
    is set; otherwise runs the same evaluators locally and returns no dataset sync.
    """
    cells = list(cells)
    if client is None and not os.environ.get(API_KEY_ENV):
        return None, _offline(name, episodes, cells, max_iterations=max_iterations, dataset=dataset)
    return await _online(
        client if client is not None else Client(),
        name,
        episodes,
        cells,
        max_iterations=max_iterations,
        dataset=dataset,
        concurrency=concurrency,
    )
