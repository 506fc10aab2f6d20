"""Checkpoints of the verification loop, parametrized over savers (in memory, SQLite).

Every Judge pass is a checkpoint; a finished episode is read back instead of verified again; an
episode that stopped midway continues from its last checkpoint without redoing finished passes;
other settings live in other threads; a SQLite file reads back with the sync saver.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from planverify import verify_many
from planverify.agents.base import JudgeReply
from planverify.api import Verifier, open_checkpointer, thread_id
from planverify.graphs.context import VerifierContext
from planverify.graphs.graph import build_verifier
from planverify.graphs.state import PlanState
from planverify.records.critique import Critique, Flag
from planverify.records.episode import Episode, Scene
from planverify.records.history import Iteration, Step
from planverify.records.result import VerificationResult
from planverify.stores.checkpoints import episode_threads, load_history
from planverify.stores.serde import state_serializer

from .conftest import scripted

GOAL = "Make a mug of coffee."
PLAN = [
    "Driver.PickUp('Mug')",
    "Driver.Move(1.0)",
    "Driver.Move(2.0)",
    "Driver.TurnLeft(90)",
    "Driver.PutAOnB('Mug', 'CoffeeMachine')",
]
REFINED = [PLAN[0], PLAN[4]]
EPISODE = Episode(id="ep-1", goal=GOAL, actions=PLAN)


def judged(plan: Sequence[str], remove: int | None = None) -> str:
    """A text-protocol Judge answer that flags the 1-based step `remove`, if any."""
    lines = []
    for n, action in enumerate(plan, start=1):
        note = "a detour #REMOVE: not needed for the goal" if n == remove else "needed"
        lines += [f"ACTION: {n}. {action}", f"ANNOTATION: {note}"]
    return "\n".join(lines)


# One pass per detour: the scripted Judge removes step 2 three times, then finds nothing.
PASSES = [
    judged(PLAN, 2),
    judged([PLAN[0], *PLAN[2:]], 2),
    judged([PLAN[0], *PLAN[3:]], 2),
    judged(REFINED),
]


class MoveHater:
    """A Judge object that flags the first motion of the plan, and counts its calls."""

    def __init__(self, name: str = "move-hater") -> None:
        self.name = name
        self.calls = 0

    async def ajudge(self, goal: str, plan: Sequence[str], scene: Scene | None) -> JudgeReply:
        self.calls += 1
        moves = [i for i, line in enumerate(plan) if ".Move(" in line or ".Turn" in line]
        flags = [Flag(step=i, action=plan[i], reason="a detour") for i in moves[:1]]
        return JudgeReply(Critique(flags=flags))


@pytest.fixture(params=["memory", "sqlite", "sqlite-api"])
async def saver(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """An in-memory saver, an AsyncSqliteSaver on a file, or the one `checkpoint=path` opens."""
    if request.param == "memory":
        yield InMemorySaver(serde=state_serializer())
    elif request.param == "sqlite":
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "cp.sqlite")) as sqlite:
            sqlite.serde = state_serializer()
            yield sqlite
    else:
        async with open_checkpointer(tmp_path / "cp.sqlite") as opened:
            assert opened is not None
            yield opened


async def checkpoints(saver: BaseCheckpointSaver[Any], thread: str | None = None) -> list[Any]:
    config: Any = {"configurable": {"thread_id": thread}} if thread else None
    return [c async for c in saver.alist(config)]


async def test_every_judge_pass_is_in_the_state_history(saver: BaseCheckpointSaver[Any]) -> None:
    judge = scripted(*PASSES)
    verifier = Verifier(judge=judge, checkpointer=saver)
    result = await verifier.averify(EPISODE)
    assert result.status == "ok", result.error
    assert (result.refined, result.iterations, result.revisions) == (REFINED, 4, 3)

    config = verifier.config(EPISODE)
    history = [s async for s in verifier.graph.aget_state_history(config)]
    latest = history[0]
    assert latest.next == () and latest.values["stop_reason"] == "no_objections"
    summary = VerificationResult.from_state(PlanState.model_validate(latest.values))
    excluded = {"cost_usd", "settings"}  # added by the Verifier
    assert summary.model_dump(exclude=excluded) == result.model_dump(exclude=excluded)

    judged_at = {  # the last pass also ends the loop, in the same step: nothing is pending
        s.values["iteration"]: len(s.values["plan"])
        for s in history
        if s.values.get("pending") is not None or s.values.get("stop_reason")
    }
    assert judged_at == {1: 5, 2: 4, 3: 3, 4: 2}, "a checkpoint right after every Judge pass"
    assert {s.values.get("iteration", 0) for s in history} == {0, 1, 2, 3, 4}

    # newest first, each pointing at the one before it
    for newer, older in pairwise(history):
        assert newer.parent_config is not None
        assert (
            newer.parent_config["configurable"]["checkpoint_id"]
            == older.config["configurable"]["checkpoint_id"]
        )
        assert newer.metadata["step"] == older.metadata["step"] + 1

    # the serializer restores the state's own types, not dicts
    assert all(isinstance(step, Step) for step in latest.values["plan"])
    assert all(isinstance(record, Iteration) for record in latest.values["history"])
    assert [r.iteration for r in latest.values["history"]] == [1, 2, 3, 4]


async def test_a_finished_episode_comes_from_the_checkpoint(
    saver: BaseCheckpointSaver[Any],
) -> None:
    judge = scripted(*PASSES)
    first = await Verifier(judge=judge, checkpointer=saver).averify(EPISODE)
    assert first.status == "ok", first.error
    assert len(judge.prompts) == 4
    stored = len(await checkpoints(saver))

    # the same fake again: it has no reply left, so any model call would fail the episode
    again = await Verifier(judge=judge, checkpointer=saver).averify(EPISODE)
    assert again == first
    assert len(judge.prompts) == 4, "no model call"
    assert len(await checkpoints(saver)) == stored, "nothing was run or written again"
    assert again.usage["judge"].calls == 4, "usage is the stored one, not counted twice"


async def test_an_episode_that_failed_midway_continues_from_its_last_checkpoint(
    saver: BaseCheckpointSaver[Any],
) -> None:
    crashing = scripted(PASSES[0])  # its second call fails: it has one reply only
    failed = await Verifier(judge=crashing, checkpointer=saver).averify(EPISODE)
    assert failed.status == "error" and failed.refined == PLAN

    verifier = Verifier(judge=crashing, checkpointer=saver)
    stopped = await verifier.graph.aget_state(verifier.config(EPISODE))
    assert stopped.next == ("judge",)
    assert stopped.values["iteration"] == 1 and len(stopped.values["plan"]) == 4

    rest = scripted(*PASSES[1:])
    resumed = await Verifier(judge=rest, checkpointer=saver).averify(EPISODE)
    assert resumed.status == "ok", resumed.error
    assert (resumed.refined, resumed.iterations, resumed.revisions) == (REFINED, 4, 3)
    assert len(rest.prompts) == 3, "pass 1 was not redone"
    assert "Driver.Move(1.0)" not in str(rest.prompts[0][-1].content)
    assert resumed.usage["judge"].calls == 4, "the first run's pass is still counted"
    assert [v.iteration for v in resumed.verdicts if v.verdict == "remove"] == [1, 2, 3]


async def test_a_run_paused_before_a_node_continues_on_rerun(
    saver: BaseCheckpointSaver[Any],
) -> None:
    judge = scripted(*PASSES)
    verifier = Verifier(judge=judge, checkpointer=saver)
    config = verifier.config(EPISODE)
    payload = {"episode_id": EPISODE.id, "goal": GOAL, "actions": PLAN}
    await verifier.graph.ainvoke(
        payload, config, context=verifier.context, interrupt_before=["planner"]
    )
    paused = await verifier.graph.aget_state(config)
    assert paused.next == ("planner",)
    assert len(judge.prompts) == 1

    result = await verifier.averify(EPISODE)
    assert result.status == "ok", result.error
    assert (result.refined, result.iterations) == (REFINED, 4)
    assert len(judge.prompts) == 4, "the first pass was not run twice"
    fresh = await Verifier(judge=scripted(*PASSES)).averify(EPISODE)
    assert result.model_dump(exclude={"cost_usd"}) == fresh.model_dump(exclude={"cost_usd"})


async def test_other_settings_get_other_threads_and_no_stale_result(
    saver: BaseCheckpointSaver[Any],
) -> None:
    capped_verifier = Verifier(judge=MoveHater(), max_iterations=1, checkpointer=saver)
    capped = await capped_verifier.averify(EPISODE)
    assert (capped.stop_reason, capped.iterations, capped.refined) == (
        "max_iterations",
        1,
        [PLAN[0], *PLAN[2:]],
    )

    judge = MoveHater()
    full_verifier = Verifier(judge=judge, max_iterations=5, checkpointer=saver)
    full = await full_verifier.averify(EPISODE)
    assert (full.stop_reason, full.iterations, full.refined) == ("no_objections", 4, REFINED)
    assert judge.calls == 4, "verified from scratch, not continued from the capped run"

    other_judge = MoveHater(name="another-judge")
    other = await Verifier(judge=other_judge, max_iterations=1, checkpointer=saver).averify(EPISODE)
    assert other_judge.calls == 1 and other.iterations == 1

    baseline = await Verifier(judge="baseline", checkpointer=saver).averify(EPISODE)
    assert (baseline.refined, baseline.iterations) == (PLAN, 1), "no cancelling moves to cut"

    threads = {c.config["configurable"]["thread_id"] for c in await checkpoints(saver)}
    expected = {
        thread_id(EPISODE, VerifierContext(judge=MoveHater(), max_iterations=1).settings().key),
        thread_id(EPISODE, VerifierContext(judge=MoveHater(), max_iterations=5).settings().key),
        thread_id(
            EPISODE,
            VerifierContext(judge=MoveHater("another-judge"), max_iterations=1).settings().key,
        ),
        thread_id(EPISODE, VerifierContext(judge="baseline").settings().key),
    }
    assert threads == expected and len(expected) == 4
    for verifier in (capped_verifier, full_verifier):
        tid = verifier.config(EPISODE)["configurable"]["thread_id"]
        assert tid == thread_id(EPISODE, verifier.key)
        assert tid.startswith(f"{EPISODE.id}#")


def key(context: VerifierContext) -> str:
    return context.settings().key


def test_thread_ids_are_stable_and_cover_every_setting_and_the_content() -> None:
    base = VerifierContext(judge="baseline", planner="rules")
    ep = Episode(id="ep", goal=GOAL, actions=PLAN)
    assert thread_id(ep, key(base)) == thread_id(ep, key(VerifierContext(judge="baseline")))
    assert thread_id(ep, key(base)) != thread_id(ep.model_copy(update={"id": "ep2"}), key(base))
    for change in (
        {"goal": "Another goal."},
        {"actions": PLAN[:-1]},
        {"task": "Coffee"},
        {"teach_task": {"task_name": "Coffee"}},
        {"scene": {"objects": [{"id": "Mug|1", "type": "Mug"}]}},
    ):
        edited = Episode.model_validate({**ep.model_dump(), **change})
        assert thread_id(edited, key(base)) != thread_id(ep, key(base)), change
    annotated = Episode.model_validate({**ep.model_dump(), "labels": [], "clean": PLAN})
    assert thread_id(annotated, key(base)) == thread_id(ep, key(base)), "annotations are not input"
    variants = [
        VerifierContext(judge="rules"),
        VerifierContext(judge="baseline", planner="openai:gpt-4o-mini"),
        VerifierContext(judge="baseline", max_iterations=2),
        VerifierContext(judge="baseline", static=True),
        VerifierContext(judge="baseline", judge_output="structured"),
        VerifierContext(judge="baseline", grounding=True),
        VerifierContext(judge="baseline", base_url="http://localhost:8000/v1"),
        VerifierContext(judge="baseline", review=True),
        VerifierContext(judge="baseline", goal_source="dialogue"),
        VerifierContext(judge="baseline", goal_source="infer"),
    ]
    ids = {thread_id(ep, key(c)) for c in variants} | {thread_id(ep, key(base))}
    assert len(ids) == len(variants) + 1


def test_a_sqlite_file_reads_back_episode_threads_and_history(tmp_path: Path) -> None:
    path = tmp_path / "cp.sqlite"
    episodes = [
        Episode(id=name, goal=GOAL, actions=PLAN) for name in ("ep_1", "epX1", "ep", "ep#2")
    ]
    baseline = verify_many(episodes, judge="baseline", checkpoint=path)
    capped = verify_many(episodes, judge="rules", max_iterations=1, checkpoint=path)
    assert all(r.status == "ok" for r in [*baseline, *capped])

    by_id = {e.id: e for e in episodes}
    first = thread_id(by_id["ep_1"], key(VerifierContext(judge="baseline")))
    second = thread_id(by_id["ep_1"], key(VerifierContext(judge="rules", max_iterations=1)))
    assert episode_threads(path, "ep_1") == [first, second], "oldest first, no LIKE wildcard"
    assert episode_threads(path, "ep") == [
        thread_id(by_id["ep"], key(VerifierContext(judge="baseline"))),
        thread_id(by_id["ep"], key(VerifierContext(judge="rules", max_iterations=1))),
    ], "not the threads of 'ep#2'"
    assert len(episode_threads(path, "ep#2")) == 2
    assert episode_threads(path, "missing") == []

    stored = load_history(path, second)
    state, count = stored.state, stored.checkpoints
    assert [s.action for s in state.plan] == capped[0].refined
    assert (state.stop_reason, state.iteration) == (capped[0].stop_reason, capped[0].iterations)
    assert state.history == capped[0].history

    with SqliteSaver.from_conn_string(str(path)) as sync_saver:
        sync_saver.serde = state_serializer()
        graph = build_verifier(checkpointer=sync_saver)
        history = list(graph.get_state_history({"configurable": {"thread_id": second}}))
    assert count == len(history) >= 4
    with sqlite3.connect(path) as db:
        (rows,) = db.execute(
            "SELECT COUNT(*) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''",
            (second,),
        ).fetchone()
    assert rows == count
