"""A SQLite checkpointer for many concurrent episodes: checkpoints stored in batches, no thread.

LangGraph's `AsyncSqliteSaver` hands every checkpoint and every batch of writes to a database
thread, one round trip each under one lock, and commits after each. With many episodes in
flight those round trips cost more than the writes: each wakes the event loop, and the database
thread and the loop take the GIL from each other on every row. `BatchedSqliteSaver` keeps
LangGraph's SQLite tables (a `SqliteSaver` with `planverify.stores.serde.state_serializer()` reads the
file) but queues rows in memory and stores all that is queued in one transaction every
`interval` seconds, on the event loop's own thread: a local SQLite transaction of a few hundred
rows takes about a millisecond.

What this changes, and what it does not:
- order: rows are stored in the order they were put, so the file always holds a prefix of each
  thread's history and a resumed run continues from its last stored checkpoint;
- reads see every row put so far: reading a thread with queued rows stores them first;
- a killed process loses at most the last `interval` of checkpoints, which a rerun redoes;
- a failed store (disk full, a locked file) fails every later put and the final store, never
  silently; nothing is stored after it, so the file still holds a prefix of each history.

It also remembers which threads the file holds (read once when it starts), so looking up a new
thread, as every fresh episode does twice, costs no query. That assumes one process writes the
file at a time, which `planverify verify` needs anyway for its output.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import contextmanager, suppress
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.sqlite import SqliteSaver

_PUT = (
    "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, "
    "parent_checkpoint_id, type, checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_WRITE = (
    "INSERT OR {verb} INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, "
    "idx, channel, type, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_REPLACE_WRITE = _WRITE.format(verb="REPLACE")
_IGNORE_WRITE = _WRITE.format(verb="IGNORE")
_ORDER = (_PUT, _IGNORE_WRITE, _REPLACE_WRITE)  # see `grouped`

Row = tuple[str, tuple[Any, ...]]  # (statement, parameters)


class WriteQueue:
    """Rows a checkpointer has put but not stored yet, in put order, and the background task
    that has them stored every `interval` seconds (by calling `store`).

    When given the threads the store already holds (`know`), it also answers, without a query,
    that a thread neither stored nor queued is absent.
    """

    def __init__(
        self, store: Callable[[], Awaitable[None]], *, interval: float, limit: int = 5000
    ) -> None:
        self.store = store  # stores everything `take()` returns
        self.interval = interval  # seconds between stores
        self.limit = limit  # rows queued before a put has them stored at once
        self.rows: list[Row] = []
        self.threads: set[str] = set()  # threads with queued rows
        self.known: set[str] | None = None  # threads stored or queued, once `know` was called
        self._dirty: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._failure: BaseException | None = None

    def know(self, stored: Iterable[Any]) -> None:
        """Remember the threads the store holds now (their ids)."""
        self.known = {str(thread) for thread in stored}

    def absent(self, config: RunnableConfig | None) -> bool:
        """Whether the thread a read names is known to have no checkpoint."""
        thread = (config or {}).get("configurable", {}).get("thread_id")
        return thread is not None and self.known is not None and str(thread) not in self.known

    def forget(self, thread_id: str) -> None:
        """A thread was deleted."""
        if self.known is not None:
            self.known.discard(str(thread_id))

    def start(self) -> None:
        """Store in the background, in the running event loop."""
        self._dirty = asyncio.Event()
        self._task = asyncio.create_task(self._store_periodically())

    async def stop(self) -> None:
        """Stop the background task and store what is left (unless a store failed)."""
        if self._task is not None:
            self._task.cancel()
            with suppress(asyncio.CancelledError):
                await self._task
            self._task = self._dirty = None
        await self.store()

    def _check(self) -> None:
        """Raise when a store failed: rows put after it cannot be stored in order."""
        if self._failure is not None:
            raise RuntimeError(f"storing checkpoints failed: {self._failure}") from self._failure

    async def _store_periodically(self) -> None:
        assert self._dirty is not None
        while True:
            await self._dirty.wait()
            await asyncio.sleep(self.interval)
            self._dirty.clear()
            try:
                await self.store()
            except Exception as exc:  # reported by the next put, which the graph awaits
                self._failure = exc

    def add(self, thread_id: str, rows: list[Row]) -> bool:
        """Queue rows; True when they should be stored now (no background task, or too many)."""
        self._check()
        self.rows.extend(rows)
        self.threads.add(thread_id)
        if self.known is not None:
            self.known.add(thread_id)
        if self._dirty is None or len(self.rows) >= self.limit:
            return True
        self._dirty.set()
        return False

    def take(self) -> list[Row]:
        """Everything queued, in put order; the queue is left empty."""
        rows, self.rows, self.threads = self.rows, [], set()
        return rows

    @contextmanager
    def taking(self) -> Iterator[list[Row]]:
        """`take()`, to store in the block; when storing fails, every later put and store
        fails too (raises at once when one already did)."""
        self._check()
        rows = self.take()
        try:
            yield rows
        except Exception as exc:
            self._failure = exc
            raise

    def needed_by(self, config: RunnableConfig | None) -> bool:
        """Whether a read of `config` must wait for queued rows to be stored."""
        thread = (config or {}).get("configurable", {}).get("thread_id")
        return bool(self.rows) if thread is None else str(thread) in self.threads


def grouped(rows: list[Row], order: Sequence[str]) -> Iterator[tuple[str, list[tuple[Any, ...]]]]:
    """The rows of each statement in `order`, each statement's in put order: one `executemany`
    a statement per batch. Rows of different tables never depend on each other; on the writes
    table a key in both kinds (a task's special write, idx < 0) ends with the upsert, the
    latest one, as LangGraph intends for errors and interrupts."""
    by_statement: dict[str, list[tuple[Any, ...]]] = {statement: [] for statement in order}
    for statement, params in rows:
        by_statement[statement].append(params)
    for statement in order:
        if by_statement[statement]:
            yield statement, by_statement[statement]


class BatchedSqliteSaver(SqliteSaver):
    """`SqliteSaver` for async graphs, with puts queued and stored in one transaction per
    `interval` seconds.

    Use it as an async context manager, so the background store starts with it and whatever is
    still queued is stored when it closes. Outside an event loop (a sync graph) puts are stored
    at once.
    """

    takes_turns = True  # puts never wait and reads are inline: no wait keeps the turn

    def __init__(self, conn: Any, *, serde: Any = None, interval: float = 0.05) -> None:
        super().__init__(conn, serde=serde)
        self.pending = WriteQueue(self._store, interval=interval)

    async def __aenter__(self) -> BatchedSqliteSaver:
        self.setup()
        with self.cursor(transaction=False) as cur:
            cur.execute("SELECT DISTINCT thread_id FROM checkpoints")
            self.pending.know(row[0] for row in cur.fetchall())
        self.pending.start()
        return self

    async def __aexit__(self, kind: type[BaseException] | None, *exc_info: object) -> None:
        try:
            await self.pending.stop()
        except Exception:
            if kind is None:
                raise  # else the error that ended the block is the one to report

    async def _store(self) -> None:
        self.flush()

    def flush(self) -> None:
        """Store every queued row now, in one transaction."""
        self.setup()
        # the cursor holds the saver's lock and commits at the end
        with self.pending.taking() as queued, self.cursor() as cur:
            for statement, rows in grouped(queued, _ORDER):
                cur.executemany(statement, rows)

    def _enqueue(self, thread_id: str, rows: list[Row]) -> None:
        if self.pending.add(thread_id, rows):
            self.flush()

    def _before_read(self, config: RunnableConfig | None) -> bool:
        """Store queued rows the read needs; False when the thread is known to be absent."""
        if self.pending.absent(config):
            return False
        if self.pending.needed_by(config):
            self.flush()
        return True

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Queue a checkpoint; it is stored with the next batch."""
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        checkpoint_ns = configurable.get("checkpoint_ns", "")
        kind, blob = self.serde.dumps_typed(checkpoint)
        meta = json.dumps(get_checkpoint_metadata(config, metadata), ensure_ascii=False)
        row = (
            thread_id,
            checkpoint_ns,
            checkpoint["id"],
            configurable.get("checkpoint_id"),
            kind,
            blob,
            meta.encode("utf-8", "ignore"),
        )
        self._enqueue(thread_id, [(_PUT, row)])
        return {
            "configurable": {
                "thread_id": configurable["thread_id"],
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": checkpoint["id"],
            }
        }

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Queue a task's writes; they are stored with the next batch."""
        statement = _REPLACE_WRITE if all(w[0] in WRITES_IDX_MAP for w in writes) else _IGNORE_WRITE
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        rows = [
            (
                statement,
                (
                    thread_id,
                    str(configurable["checkpoint_ns"]),
                    str(configurable["checkpoint_id"]),
                    task_id,
                    task_path,
                    WRITES_IDX_MAP.get(channel, idx),
                    channel,
                    *self.serde.dumps_typed(value),
                ),
            )
            for idx, (channel, value) in enumerate(writes)
        ]
        self._enqueue(thread_id, rows)

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return super().get_tuple(config) if self._before_read(config) else None

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        if self._before_read(config):
            yield from super().list(config, filter=filter, before=before, limit=limit)

    def delete_thread(self, thread_id: str) -> None:
        self.flush()
        super().delete_thread(thread_id)
        self.pending.forget(thread_id)

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, Any]:
        self._before_read(config)
        return super().get_delta_channel_history(config=config, channels=channels)

    # The async interface runs the same code: queued puts never wait, and reads are local
    # SQLite queries of a fraction of a millisecond, cheaper inline than a hop to a thread.

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self.get_tuple(config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        for item in self.list(config, filter=filter, before=before, limit=limit):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self.put_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        self.delete_thread(thread_id)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, Any]:
        return self.get_delta_channel_history(config=config, channels=channels)
