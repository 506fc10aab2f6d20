"""Verifying on a LangGraph server (`planverify verify --server URL`).

Each episode gets its own thread on the server, with an id derived from the episode id and the
run settings, so a rerun finds the threads of the first run: finished episodes are read back,
unfinished ones continue from their last checkpoint on the server. Runs queue on the server and
are awaited concurrently; `planverify.batch.run_batch` drives a `RemoteVerifier` exactly as it
drives a local `Verifier`, so output and resume guarantees are the same.
"""

from __future__ import annotations

import uuid
from dataclasses import asdict
from typing import Any, Literal

from langgraph_sdk import get_client

from planverify.api import settings_key
from planverify.episode import Episode
from planverify.graphs.context import VerifierContext
from planverify.graphs.state import PlanState
from planverify.result import VerificationResult

GRAPH_ID = "planverify"  # the graph's name in langgraph.json
NAMESPACE = uuid.UUID("5b1f0f1e-8a55-4d0c-9a8a-6c3c1f7d2e10")  # thread ids are uuid5 in it


class RemoteError(RuntimeError):
    """The server cannot be used (unreachable, or it does not serve the planverify graph)."""


class RemoteVerifier:
    """Runs the verification graph on a LangGraph server; same `averify` as `Verifier`."""

    def __init__(
        self,
        url: str,
        *,
        judge: str = "rules",
        planner: str = "rules",
        max_iterations: int = 5,
        static: bool = False,
        judge_output: Literal["text", "structured"] = "text",
        grounding: bool = False,
        base_url: str | None = None,
        api_key: str | None = None,
    ) -> None:
        if not isinstance(judge, str) or not isinstance(planner, str):
            raise TypeError("a server run takes judge and planner specs (strings), not objects")
        self.url = url
        self.context = VerifierContext(
            judge=judge,
            planner=planner,
            max_iterations=max_iterations,
            static=static,
            judge_output=judge_output,
            grounding=grounding,
            base_url=base_url,
        )
        self.key = settings_key(self.context)
        self.models = {"judge": judge, "planner": planner, "goal": planner}
        self.client = get_client(url=url, api_key=api_key)

    async def check(self) -> None:
        """Fail with `RemoteError` unless the server answers and serves the graph."""
        try:
            found = await self.client.assistants.search(graph_id=GRAPH_ID, limit=1)
        except Exception as exc:
            raise RemoteError(f"no LangGraph server at {self.url}: {exc}") from None
        if not found:
            raise RemoteError(f"the server at {self.url} does not serve the {GRAPH_ID!r} graph")

    def thread_of(self, episode_id: str) -> str:
        """The server thread of an episode under these settings."""
        return str(uuid.uuid5(NAMESPACE, f"{episode_id}#{self.key}"))

    async def averify(self, episode: Episode) -> VerificationResult:
        """Verify one episode on the server; failures become a result with status "error"."""
        try:
            return await self._run(episode)
        except Exception as exc:  # one bad episode must not stop a batch
            return VerificationResult.from_exception(
                episode.id, list(episode.actions), exc, episode.goal
            )

    async def _run(self, episode: Episode) -> VerificationResult:
        thread = self.thread_of(episode.id)
        await self.client.threads.create(
            thread_id=thread,
            if_exists="do_nothing",
            metadata={"episode_id": episode.id, "settings": self.key},
        )
        values = await self._values(thread)
        if values.get("stop_reason"):
            return VerificationResult.from_state(PlanState.model_validate(values))
        payload: dict[str, Any] | None = None
        if not values:
            payload = {
                "episode_id": episode.id,
                "goal": episode.goal,
                "actions": list(episode.actions),
                "scene": episode.scene.model_dump(mode="json") if episode.scene else None,
            }
        run = await self.client.runs.create(
            thread,
            GRAPH_ID,
            input=payload,
            context=asdict(self.context),
            multitask_strategy="enqueue",
        )
        await self.client.runs.join(thread, run["run_id"])
        finished = await self.client.runs.get(thread, run["run_id"])
        if finished["status"] != "success":
            raise RuntimeError(f"the server run ended with status {finished['status']}")
        return VerificationResult.from_state(PlanState.model_validate(await self._values(thread)))

    async def _values(self, thread: str) -> dict[str, Any]:
        state = await self.client.threads.get_state(thread)
        values = state.get("values") or {}
        return dict(values) if isinstance(values, dict) else {}
