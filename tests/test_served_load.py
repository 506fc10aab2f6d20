"""One long plan does not hold a served graph: the rules Judge's work runs beside the event loop,
so health checks and other clients are answered while it runs, and a run's deadline stops the
work itself, not only the wait for it (`planverify.agents.offload`)."""

from __future__ import annotations

import asyncio
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from planverify.agents import rules as rules_judge
from planverify.graphs.policy import DEADLINE_ENV, MAX_ACTIONS_ENV
from planverify.records.episode import Episode, iter_jsonl
from planverify.records.result import VerificationResult
from planverify.world.deadline import current

from . import test_server as dev

pytest.importorskip("langgraph_sdk", reason="langgraph-sdk is not installed")

pytestmark = [dev.pytestmark, pytest.mark.usefixtures("no_proxy")]
no_proxy = dev.no_proxy

LONG = 40_000  # actions of the long run: a plan far longer than any real one
SHARE = 0.5  # the most of the long run's own time that one health check may wait
ID = "apple-slices-bowl"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "episodes.jsonl"


def long_input(length: int) -> dict[str, Any]:
    """The README's apple-slices example with its plan repeated to `length` actions: every
    repetition has steps to remove, so the Judge works for the whole plan."""
    example = next(e for e in iter_jsonl(EXAMPLES) if isinstance(e, Episode) and e.id == ID)
    plan = (example.actions * (length // len(example.actions) + 1))[:length]
    fields = example.model_dump(mode="json", include={"goal", "scene", "task", "teach_task"})
    return {**fields, "episode_id": "long", "actions": plan}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env = {MAX_ACTIONS_ENV: str(LONG), DEADLINE_ENV: "600"}
    with dev.launch(tmp_path_factory.mktemp("load"), env=env) as url:
        yield url


def health_time(url: str) -> float:
    """Seconds `/ok` takes to answer (a failed answer counts as infinitely slow)."""
    started = time.monotonic()
    try:
        with urllib.request.urlopen(f"{url}/ok", timeout=600) as answer:
            answer.read()
    except OSError:
        return float("inf")
    return time.monotonic() - started


def test_health_checks_answer_while_a_long_plan_is_verified(served: str) -> None:
    outcome: dict[str, Any] = {}

    def long_run() -> None:
        with dev.sdk_client(served, timeout=600) as sdk:
            given = long_input(LONG)
            context = {"judge": "rules", "planner": "rules", "max_iterations": 2}
            outcome["record"] = sdk.runs.wait(None, dev.GRAPH, input=given, context=context)

    runner = threading.Thread(target=long_run)
    started = time.monotonic()
    runner.start()
    waits: list[float] = []
    while runner.is_alive() and len(waits) < 600:  # at most about five minutes of checks
        waits.append(health_time(served))
        time.sleep(0.5)
    runner.join(timeout=600)
    took = time.monotonic() - started
    record = VerificationResult.model_validate(outcome["record"])
    assert record.status == "ok" and len(record.original) == LONG
    assert len(waits) >= 3, "the run ended before the checks could say anything"
    # relative to the run itself, so a slow machine slows both: were the Judge's work on the
    # server's event loop, a check would wait for most of the run
    assert max(waits) < SHARE * took, f"a health check waited {max(waits):.1f} of {took:.1f} s"


async def test_a_deadline_stops_the_judges_work_not_only_the_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A review that would never end by itself: the served run's deadline must stop it."""
    from planverify.graphs.served import served_graph

    stopped = threading.Event()

    def endless(*args: Any, **kwargs: Any) -> Any:
        deadline = current()
        assert deadline is not None, "the served graph's review runs without a deadline"
        try:
            for _ in range(6000):  # a minute at most, should the stop never come
                deadline.check()
                time.sleep(0.01)
        finally:
            stopped.set()
        raise AssertionError("the review was never stopped")

    monkeypatch.setattr(rules_judge, "review", endless)
    monkeypatch.setenv(DEADLINE_ENV, "1")
    graph = served_graph()
    given = {"episode_id": "late", "goal": "Go.", "actions": ["Driver.Move(1.0)"]}
    async with asyncio.timeout(60):
        record = await graph.ainvoke(given, context={"judge": "rules", "planner": "rules"})
    result = VerificationResult.model_validate(record)
    assert result.status == "error" and "deadline of 1 s" in (result.error or "")
    assert await asyncio.to_thread(stopped.wait, 30), "the review went on after the deadline"
