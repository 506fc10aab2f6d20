"""The PostgreSQL checkpointer, made to give up the event loop's turn while it waits on the server.

Needs the `postgres` extra (`pip install 'planverify[postgres]'`); imported only for a
`postgresql://` checkpoint.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

from planverify.turns import waiting


class TurnTakingPostgresSaver(AsyncPostgresSaver):
    """`AsyncPostgresSaver` whose round trips to the server let other episodes compute
    (`planverify.turns`); what it stores is unchanged."""

    takes_turns = True  # every wait on the server gives the turn up

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
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
        async with waiting():
            found = [
                item
                async for item in super().alist(config, filter=filter, before=before, limit=limit)
            ]
        for item in found:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        async with waiting():
            return await super().aput(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        async with waiting():
            await super().aput_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        async with waiting():
            await super().adelete_thread(thread_id)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, Any]:
        async with waiting():
            return await super().aget_delta_channel_history(config=config, channels=channels)
