"""The PostgreSQL checkpointer, against a real server on loopback.

The URL comes from PLANVERIFY_TEST_POSTGRES_URL, else the local default; without a reachable
server the tests skip and say why."""

from __future__ import annotations

import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from planverify import averify_many
from planverify.agents.base import JudgeReply
from planverify.cli import app
from planverify.records.critique import Critique, Flag
from planverify.records.episode import Episode, Scene

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/test"


@pytest.fixture(scope="module")
def postgres_url() -> str:
    url = os.environ.get("PLANVERIFY_TEST_POSTGRES_URL", DEFAULT_URL)
    psycopg = pytest.importorskip(
        "psycopg", reason="psycopg is not installed (planverify[postgres])"
    )
    try:
        with psycopg.connect(url, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        pytest.skip(
            f"no PostgreSQL at {url} (set PLANVERIFY_TEST_POSTGRES_URL): {exc}".splitlines()[0]
        )
    return url


class CountingJudge:
    """Flags the first Move; counts its calls."""

    name = "counting"

    def __init__(self) -> None:
        self.calls = 0

    async def ajudge(self, goal: str, plan: Sequence[str], scene: Scene | None) -> JudgeReply:
        self.calls += 1
        moves = [i for i, line in enumerate(plan) if ".Move(" in line]
        flags = [Flag(step=moves[0], action=plan[moves[0]], reason="not needed")] if moves else []
        return JudgeReply(Critique(flags=flags))


def episodes(tag: str) -> list[Episode]:
    plan = ["Driver.PickUp('Mug')", "Driver.Move(1.0)", "Driver.PutAOnB('Mug', 'Sink')"]
    return [
        Episode(id=f"{tag}-{n}", goal="Put the mug in the sink.", actions=plan) for n in range(3)
    ]


async def test_results_are_checkpointed_and_reused(postgres_url: str) -> None:
    batch = episodes(uuid.uuid4().hex)
    judge = CountingJudge()
    first = await averify_many(batch, judge=judge, checkpoint=postgres_url)
    assert [r.refined for r in first] == [
        ["Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'Sink')"]
    ] * 3
    assert judge.calls == 6
    again = CountingJudge()
    second = await averify_many(batch, judge=again, checkpoint=postgres_url)
    assert second == first and again.calls == 0


def test_the_cli_takes_a_postgres_url(postgres_url: str, tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(e.model_dump_json() for e in episodes(uuid.uuid4().hex)) + "\n")
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(
        app, ["verify", str(source), "--checkpoint", postgres_url, "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert len(out.read_text().splitlines()) == 3


def test_a_nul_character_costs_its_episode_only(postgres_url: str, tmp_path: Path) -> None:
    """PostgreSQL refuses NUL in text: it is refused at input, naming the episode, so that it
    never fails the checkpoint batch other episodes share."""
    tag = uuid.uuid4().hex
    good = [e.model_dump(mode="json", exclude_none=True) for e in episodes(tag)]
    bad = {**good[0], "id": f"{tag}-nul", "goal": "Put the mug\x00 in the sink."}
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [good[0], bad, *good[1:]]))
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(
        app, ["verify", str(source), "--checkpoint", postgres_url, "-o", str(out)]
    )
    assert isinstance(result.exception, SystemExit) and result.exit_code == 1, result.output
    assert f"episode '{tag}-nul': goal holds a NUL character" in " ".join(result.stderr.split())
    done = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert [(r["id"], r["status"]) for r in done] == [(e["id"], "ok") for e in good]


def test_show_reads_a_postgres_store(postgres_url: str, tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    source = tmp_path / "in.jsonl"
    source.write_text("".join(e.model_dump_json() + "\n" for e in episodes(tag)), encoding="utf-8")
    runner = CliRunner()
    done = runner.invoke(
        app, ["verify", str(source), "--checkpoint", postgres_url, "--no-checkpoint"]
    )
    assert done.exit_code == 0
    runner.invoke(app, ["verify", str(source), "--checkpoint", postgres_url])
    shown = runner.invoke(app, ["show", f"{tag}-0", "--checkpoint", postgres_url])
    assert shown.exit_code == 0, shown.output
    assert "Judge pass 1" in shown.stdout and "stop: no_objections" in shown.stdout
    missing = runner.invoke(app, ["show", f"{tag}-9", "--checkpoint", postgres_url])
    assert missing.exit_code == 2 and "is not in" in missing.stderr


async def test_the_batched_saver_queues_puts_and_reads_see_them(postgres_url: str) -> None:
    import psycopg
    from langgraph.checkpoint.base import empty_checkpoint
    from langgraph.checkpoint.postgres import PostgresSaver

    from planverify.stores.postgres import BatchedPostgresSaver

    thread = uuid.uuid4().hex

    def stored() -> int:
        with psycopg.connect(postgres_url) as db:
            row = db.execute(
                "SELECT COUNT(*) FROM checkpoints WHERE thread_id = %s", (thread,)
            ).fetchone()
        return int(row[0]) if row else 0

    async with BatchedPostgresSaver.open(postgres_url, interval=3600) as saver:
        ids: list[str] = []
        for step in range(3):
            checkpoint = empty_checkpoint()
            checkpoint["channel_values"] = {"plan": [f"step {step}"], "iteration": step}
            checkpoint["channel_versions"] = {"plan": f"{step + 1}", "iteration": f"{step + 1}"}
            configurable: dict[str, Any] = {"thread_id": thread, "checkpoint_ns": ""}
            if ids:
                configurable["checkpoint_id"] = ids[-1]
            await saver.aput(
                {"configurable": configurable}, checkpoint, {"step": step}, {"plan": f"{step + 1}"}
            )
            ids.append(checkpoint["id"])
        assert stored() == 0, "nothing is stored before the batch"
        latest = await saver.aget_tuple(
            {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
        )
        assert latest is not None and latest.checkpoint["id"] == ids[-1]
        assert latest.checkpoint["channel_values"] == {"plan": ["step 2"], "iteration": 2}
        assert stored() == 3, "reading a thread with queued rows stores them"
    with PostgresSaver.from_conn_string(postgres_url) as plain:  # LangGraph's own reader
        history = list(plain.list({"configurable": {"thread_id": thread}}))
    assert [h.checkpoint["id"] for h in history] == ids[::-1]
    assert history[0].checkpoint["channel_values"]["plan"] == ["step 2"]
