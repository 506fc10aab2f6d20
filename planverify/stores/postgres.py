"""The PostgreSQL checkpointer for many concurrent episodes: writes stored in batches, and every
wait on the server gives the event loop's turn up (`planverify.eventloop.turns`).

LangGraph's `AsyncPostgresSaver` makes a round trip to the server (and a hop to a thread to
serialise) for every checkpoint and every batch of writes, one at a time on its connection.
`BatchedPostgresSaver` writes the same tables and rows but queues them and stores everything
queued in one transaction every `interval` seconds, with the same guarantees as
`planverify.stores.sqlite.BatchedSqliteSaver`: put order kept, reads see every put, a killed process
loses at most the last `interval`, a failed store fails the next put. Like it, it reads the
thread ids once when it opens, so a new episode's thread is looked up without a round trip;
threads another process creates later are not seen (one `planverify verify` per set of
episodes and store at a time).

Needs the `postgres` extra (`pip install 'planverify[postgres]'`); imported only for a
`postgresql://` checkpoint.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from planverify.eventloop.turns import waiting
from planverify.stores.sqlite import Row, WriteQueue, grouped

try:  # delta channels' snapshots are marked in the checkpoint row, as LangGraph's saver does
    from langgraph.checkpoint.serde.types import _DeltaSnapshot
except ImportError:  # a LangGraph without delta channels
    _DeltaSnapshot = type("_NoDeltaSnapshot", (), {})  # type: ignore[misc, assignment]

_INLINE = (str, int, float, bool)  # channel values kept in the checkpoint row, not as blobs


@dataclass(frozen=True)
class _Upsert:
    """One of LangGraph's Postgres inserts, written for many rows in one statement."""

    head: str  # INSERT INTO ... VALUES
    tail: str  # ON CONFLICT ...
    key: tuple[int, ...]  # positions of the conflict key in a row
    replace: bool  # DO UPDATE (the last row of a key wins) or DO NOTHING (the first one does)
    chunk: int = 1000  # rows a statement, well under PostgreSQL's 65,535 parameters

    def statements(self, rows: list[tuple[Any, ...]]) -> Iterator[tuple[str, list[Any]]]:
        """(SQL, flat parameters) storing `rows`; a key is written once per statement, as
        PostgreSQL requires of ON CONFLICT, with the row that executing them in order keeps."""
        unique: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        for row in rows:
            key = tuple(row[i] for i in self.key)
            if self.replace or key not in unique:
                unique[key] = row
        kept = list(unique.values())
        for start in range(0, len(kept), self.chunk):
            part = kept[start : start + self.chunk]
            values = ", ".join("(" + ", ".join(["%s"] * len(row)) + ")" for row in part)
            yield f"{self.head} {values} {self.tail}", [value for row in part for value in row]


_WRITES = (
    "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path,"
    " idx, channel, type, blob) VALUES"
)
# Stored in this order (see `planverify.stores.sqlite.grouped`).
_UPSERTS = {
    "blobs": _Upsert(
        "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) "
        "VALUES",
        "ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING",
        key=(0, 1, 2, 3),
        replace=False,
    ),
    "checkpoints": _Upsert(
        "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
        "checkpoint, metadata) VALUES",
        "ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET "
        "checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata",
        key=(0, 1, 2),
        replace=True,
    ),
    "writes": _Upsert(
        _WRITES,
        "ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO NOTHING",
        key=(0, 1, 2, 3, 5),
        replace=False,
    ),
    "special writes": _Upsert(  # errors, interrupts...: the latest one counts
        _WRITES,
        "ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET "
        "channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob",
        key=(0, 1, 2, 3, 5),
        replace=True,
    ),
}


class BatchedPostgresSaver(AsyncPostgresSaver):
    """`AsyncPostgresSaver` with puts queued and stored in one transaction per `interval`.

    Open it with `BatchedPostgresSaver.open(url)`, which starts the background store and stores
    what is still queued when it closes.
    """

    takes_turns = True  # puts never wait; reads and stores give the turn up

    def __init__(self, conn: Any, *, serde: Any = None, interval: float = 0.05) -> None:
        super().__init__(conn, serde=serde)
        self.pending = WriteQueue(self.flush, interval=interval)

    @classmethod
    @asynccontextmanager
    async def open(
        cls, url: str, *, serde: Any = None, interval: float = 0.05
    ) -> AsyncIterator[BatchedPostgresSaver]:
        """A saver on its own connection to `url`, with its tables created if needed."""
        async with await AsyncConnection.connect(
            url, autocommit=True, prepare_threshold=0, row_factory=dict_row
        ) as conn:
            saver = cls(conn, serde=serde, interval=interval)
            await saver.setup()
            async with conn.cursor() as cur:
                await cur.execute("SELECT DISTINCT thread_id FROM checkpoints")
                saver.pending.know(row["thread_id"] for row in await cur.fetchall())
            saver.pending.start()
            try:
                yield saver
            except BaseException:
                with suppress(Exception):  # the error that ended the block is the one to report
                    await saver.pending.stop()
                raise
            await saver.pending.stop()

    async def flush(self) -> None:
        """Store every queued row now, in one transaction."""
        with self.pending.taking() as rows:
            if not rows:
                return
            async with (
                waiting(),
                self.lock,
                self._connection() as conn,
                conn.transaction(),
                conn.cursor() as cur,
            ):
                for kind, params in grouped(rows, list(_UPSERTS)):
                    for statement, flat in _UPSERTS[kind].statements(params):
                        await cur.execute(statement, flat)

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[AsyncConnection[Any]]:
        if isinstance(self.conn, AsyncConnection):
            yield self.conn
        else:  # a connection pool
            async with self.conn.connection() as conn:
                yield conn

    async def _enqueue(self, thread_id: str, rows: list[Row]) -> None:
        if self.pending.add(thread_id, rows):
            await self.flush()

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Queue a checkpoint; it is stored with the next batch."""
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        checkpoint_ns = str(configurable.get("checkpoint_ns", ""))
        inline = {
            k: v
            for k, v in checkpoint["channel_values"].items()
            if v is None or isinstance(v, _INLINE)
        }
        blobs = {k: v for k, v in checkpoint["channel_values"].items() if k not in inline}
        versions = {k: v for k, v in new_versions.items() if k in blobs}
        rows: list[Row] = [
            ("blobs", row) for row in self._dump_blobs(thread_id, checkpoint_ns, blobs, versions)
        ]
        marks = {k: True for k, v in blobs.items() if isinstance(v, _DeltaSnapshot)}
        stored = {**checkpoint, "channel_values": {**inline, **marks}}
        meta = get_serializable_checkpoint_metadata(config, metadata)
        parent = configurable.get("checkpoint_id")
        row = (thread_id, checkpoint_ns, checkpoint["id"], parent, Jsonb(stored), Jsonb(meta))
        rows.append(("checkpoints", row))
        await self._enqueue(thread_id, rows)
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": checkpoint["id"],
            }
        }

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Queue a task's writes; they are stored with the next batch."""
        statement = "special writes" if all(w[0] in WRITES_IDX_MAP for w in writes) else "writes"
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        dumped = self._dump_writes(
            thread_id,
            str(configurable["checkpoint_ns"]),
            str(configurable["checkpoint_id"]),
            task_id,
            task_path,
            writes,
        )
        await self._enqueue(thread_id, [(statement, row) for row in dumped])

    async def _before_read(self, config: RunnableConfig | None) -> bool:
        """Store queued rows the read needs; False when the thread is known to be absent."""
        if self.pending.absent(config):
            return False
        if self.pending.needed_by(config):
            await self.flush()
        return True

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        if not await self._before_read(config):
            return None
        async with waiting():
            return await super().aget_tuple(config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        if not await self._before_read(config):
            return
        async with waiting():
            found = [
                item
                async for item in super().alist(config, filter=filter, before=before, limit=limit)
            ]
        for item in found:
            yield item

    async def adelete_thread(self, thread_id: str) -> None:
        await self.flush()
        async with waiting():
            await super().adelete_thread(thread_id)
        self.pending.forget(thread_id)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, Any]:
        await self._before_read(config)
        async with waiting():
            return await super().aget_delta_channel_history(config=config, channels=channels)
