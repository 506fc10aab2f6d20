"""The batched SQLite checkpointer: queued puts, reads that see them, a stored prefix, failures
reported, the file readable by LangGraph's own SqliteSaver."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver

from planverify.api import Verifier, open_checkpointer
from planverify.records.episode import Episode
from planverify.stores.serde import state_serializer
from planverify.stores.sqlite import BatchedSqliteSaver

from .conftest import COFFEE_PLAN, COFFEE_REFINED


def config(thread: str, checkpoint_id: str | None = None) -> Any:
    configurable = {"thread_id": thread, "checkpoint_ns": ""}
    if checkpoint_id is not None:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def stored(path: Path, thread: str) -> list[str]:
    """Checkpoint ids of a thread as another connection sees the file, oldest first."""
    with sqlite3.connect(path) as db:
        rows = db.execute(
            "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id",
            (thread,),
        ).fetchall()
    return [row[0] for row in rows]


@pytest.fixture
async def opened(tmp_path: Path) -> AsyncIterator[tuple[BatchedSqliteSaver, Path]]:
    path = tmp_path / "cp.sqlite"
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = BatchedSqliteSaver(conn, serde=state_serializer(), interval=3600)  # stores on demand
    async with saver:
        yield saver, path
    conn.close()


async def put_chain(saver: BatchedSqliteSaver, thread: str, count: int) -> list[str]:
    """Put `count` checkpoints, each the child of the one before; return their ids."""
    ids: list[str] = []
    for _ in range(count):
        checkpoint = empty_checkpoint()
        parent = config(thread, ids[-1] if ids else None)
        await saver.aput(parent, checkpoint, {"step": len(ids)}, {})
        await saver.aput_writes(
            config(thread, checkpoint["id"]), [("plan", len(ids))], task_id=f"t{len(ids)}"
        )
        ids.append(checkpoint["id"])
    return ids


async def test_puts_wait_for_the_batch_but_reads_see_them_at_once(
    opened: tuple[BatchedSqliteSaver, Path],
) -> None:
    saver, path = opened
    ids = await put_chain(saver, "t", 3)
    assert stored(path, "t") == [], "nothing is stored before the batch"
    latest = await saver.aget_tuple(config("t"))
    assert latest is not None and latest.checkpoint["id"] == ids[-1]
    assert latest.pending_writes == [("t2", "plan", 2)]
    assert stored(path, "t") == ids, "reading a thread with queued rows stores them"


async def test_the_file_holds_a_prefix_of_what_was_put(
    opened: tuple[BatchedSqliteSaver, Path],
) -> None:
    saver, path = opened
    first = await put_chain(saver, "t", 2)
    saver.flush()
    await put_chain(saver, "u", 2)  # queued, as a killed process would leave them
    assert stored(path, "t") == first
    assert stored(path, "u") == []


async def test_the_background_store_runs_every_interval(tmp_path: Path) -> None:
    path = tmp_path / "cp.sqlite"
    conn = sqlite3.connect(path, check_same_thread=False)
    async with BatchedSqliteSaver(conn, interval=0.01) as saver:
        ids = await put_chain(saver, "t", 2)
        for _ in range(200):
            if stored(path, "t") == ids:
                break
            await asyncio.sleep(0.01)
        assert stored(path, "t") == ids
    conn.close()


async def test_closing_stores_what_is_queued_and_sqlite_saver_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "cp.sqlite"
    async with open_checkpointer(path) as saver:
        verifier = Verifier(checkpointer=saver)
        episode = Episode(id="coffee", goal="Coffee.", actions=COFFEE_PLAN)
        result = await verifier.averify(episode)
        assert result.refined == COFFEE_REFINED
        thread = verifier.config(episode)["configurable"]["thread_id"]
    with SqliteSaver.from_conn_string(str(path)) as plain:
        plain.serde = state_serializer()
        history = list(plain.list({"configurable": {"thread_id": thread}}))
    assert history and history[0].checkpoint["channel_values"]["stop_reason"] == "no_objections"


async def test_a_thread_from_an_earlier_run_is_found(tmp_path: Path) -> None:
    path = tmp_path / "cp.sqlite"
    conn = sqlite3.connect(path, check_same_thread=False)
    async with BatchedSqliteSaver(conn) as saver:
        ids = await put_chain(saver, "old", 2)
    conn.close()
    conn = sqlite3.connect(path, check_same_thread=False)
    async with BatchedSqliteSaver(conn) as saver:
        found = await saver.aget_tuple(config("old"))
    conn.close()
    assert found is not None and found.checkpoint["id"] == ids[-1]


async def test_new_threads_are_looked_up_without_a_query(
    opened: tuple[BatchedSqliteSaver, Path],
) -> None:
    saver, _ = opened
    statements: list[str] = []
    saver.conn.set_trace_callback(statements.append)
    assert await saver.aget_tuple(config("never-seen")) is None
    assert [c async for c in saver.alist(config("never-seen"))] == []
    assert statements == []


async def test_a_failed_store_fails_every_later_put_and_the_close(tmp_path: Path) -> None:
    path = tmp_path / "cp.sqlite"
    conn = sqlite3.connect(path, check_same_thread=False)
    with pytest.raises(RuntimeError, match="storing checkpoints failed"):  # the close
        async with BatchedSqliteSaver(conn, interval=0.01) as saver:
            with sqlite3.connect(path) as other:
                other.execute("DROP TABLE writes")
            await put_chain(saver, "t", 1)
            with pytest.raises(RuntimeError, match="storing checkpoints failed"):
                for _ in range(200):
                    await asyncio.sleep(0.01)
                    await put_chain(saver, "t", 1)
            # nothing is stored after a failed store: the file keeps a prefix of each history
            with pytest.raises(RuntimeError, match="storing checkpoints failed"):
                await put_chain(saver, "t", 1)
    conn.close()


def test_without_an_event_loop_puts_are_stored_at_once(tmp_path: Path) -> None:
    path = tmp_path / "cp.sqlite"
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = BatchedSqliteSaver(conn)
    checkpoint = empty_checkpoint()
    saver.put(config("t"), checkpoint, {"step": 0}, {})
    assert stored(path, "t") == [checkpoint["id"]]
    conn.close()


def test_postgres_batches_write_each_key_once_per_statement() -> None:
    postgres = pytest.importorskip(
        "planverify.stores.postgres", reason="needs planverify[postgres]"
    )
    upsert = postgres._UPSERTS["checkpoints"]  # DO UPDATE: the last row of a key wins
    rows = [("t", "", "c1", None, "old", "m"), ("t", "", "c2", "c1", "x", "m")]
    rows.append(("t", "", "c1", None, "new", "m"))
    [(sql, flat)] = list(upsert.statements(rows))
    assert sql.count("(%s, %s, %s, %s, %s, %s)") == 2 and "ON CONFLICT" in sql
    assert flat == ["t", "", "c1", None, "new", "m", "t", "", "c2", "c1", "x", "m"]
    ignore = postgres._UPSERTS["blobs"]  # DO NOTHING: the first row of a key stays
    blobs = [("t", "", "plan", "1", "msgpack", b"a"), ("t", "", "plan", "1", "msgpack", b"b")]
    assert [flat for _, flat in ignore.statements(blobs)] == [list(blobs[0])]
    many = [("t", "", "plan", str(n), "msgpack", b"") for n in range(2500)]
    assert [len(flat) // 6 for _, flat in ignore.statements(many)] == [1000, 1000, 500]
