"""The Python API: verify one plan or many, with optional checkpointing and resume."""

from __future__ import annotations

import asyncio
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Mapping,
    Sequence,
)
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from pathlib import Path
from typing import Any, Literal, TypeAlias

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import BaseModel

from planverify.agents import resolve_judge, resolve_planner
from planverify.agents.base import Judge, Planner
from planverify.agents.baseline import BaselineJudge
from planverify.agents.judge import ModelJudge
from planverify.agents.planner import ModelPlanner, RulesPlanner
from planverify.agents.rules import RulesJudge
from planverify.domains import DomainUnavailable, UnknownDomain, settings_for
from planverify.eventloop.runner import fewer_collections, run_sync
from planverify.eventloop.turns import Turns, waiting
from planverify.graphs.context import VerifierContext
from planverify.graphs.graph import build_verifier, recursion_limit
from planverify.graphs.state import PlanState
from planverify.llm.calls import CallLimits
from planverify.llm.concurrency import describe_gates
from planverify.llm.costs import Spend
from planverify.llm.errors import ModelCallFailed, causes, unreachable_provider
from planverify.records.episode import Domain, Episode
from planverify.records.result import GoalSource, RunSettings, VerificationResult
from planverify.records.trim import DEFAULT_TRIM, TrimPolicy
from planverify.records.usage import TokenUsage
from planverify.stores.files import disk_full
from planverify.stores.serde import state_serializer
from planverify.stores.sqlite import BatchedSqliteSaver

JudgeLike: TypeAlias = str | BaseChatModel | Judge
PlannerLike: TypeAlias = str | BaseChatModel | Planner
Checkpoint: TypeAlias = str | Path | BaseCheckpointSaver[Any] | None
Reviewer: TypeAlias = Callable[[dict[str, Any]], Any | Awaitable[Any]]


def thread_id(episode: Episode, key: str, digest: str | None = None) -> str:
    """The checkpoint thread of an episode under settings with hash `key`: its id, the settings
    and a digest of its content (`digest`: its `input_digest`, when already computed), so an
    edited episode under the same id starts afresh."""
    return f"{episode.id}#{key}.{(digest or episode.input_digest)[:16]}"


def as_episode(item: Episode | Mapping[str, Any] | BaseModel) -> Episode:
    """Accept an `Episode`, a dict with the JSONL keys, or any model with them."""
    if isinstance(item, Episode):
        return item
    if isinstance(item, BaseModel):
        item = item.model_dump()
    return Episode.model_validate(item)


@asynccontextmanager
async def open_checkpointer(
    checkpoint: Checkpoint,
) -> AsyncIterator[BaseCheckpointSaver[Any] | None]:
    """A checkpointer for a SQLite path (created if needed), a `postgresql://` URL, an existing
    saver, or None."""
    if checkpoint is None or isinstance(checkpoint, BaseCheckpointSaver):
        yield checkpoint
        return
    if is_postgres_url(checkpoint):
        async with _postgres(str(checkpoint)) as saver:
            yield saver
        return
    import sqlite3

    path = Path(checkpoint)
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), check_same_thread=False)
    try:
        # WAL with synchronous=NORMAL: a killed process loses no committed checkpoint and the
        # file never corrupts; only a power cut may drop the last few. It saves an fsync per batch.
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        async with BatchedSqliteSaver(conn, serde=state_serializer()) as saver:
            yield saver
    finally:
        conn.close()


def is_postgres_url(checkpoint: object) -> bool:
    """Whether a checkpoint setting names a PostgreSQL database."""
    return isinstance(checkpoint, str) and checkpoint.startswith(("postgresql://", "postgres://"))


@asynccontextmanager
async def _postgres(url: str) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    try:
        from planverify.stores.postgres import BatchedPostgresSaver
    except ImportError:
        raise RuntimeError(
            "a postgresql:// checkpoint needs: pip install 'planverify[postgres]'"
        ) from None
    async with BatchedPostgresSaver.open(url, serde=state_serializer()) as saver:
        yield saver


class Verifier:
    """Runs the verification graph for episodes under one set of settings.

    Judge and Planner are resolved when it is created, so a bad spec or a missing API key fails
    before any work is done. `trim` is the trim policy (`planverify.records.trim`): `natural`
    (the default) removes only what the demonstrator would not have meant, `minimal` every step
    the goal does without; a result records it in `settings.trim`, and either reading of it is
    `VerificationResult.under`.
    """

    def __init__(
        self,
        *,
        judge: JudgeLike = "rules",
        planner: PlannerLike = "rules",
        max_iterations: int = 5,
        static: bool = False,
        judge_output: Literal["text", "structured"] = "text",
        grounding: bool = False,
        base_url: str | None = None,
        goal_source: GoalSource = "given",
        certify: bool | None = None,
        trim: TrimPolicy = DEFAULT_TRIM,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
        reviewer: Reviewer | None = None,
        limits: CallLimits | None = None,
        temperature: float | None = None,
        model_params: Mapping[str, Any] | None = None,
    ) -> None:
        self.context = VerifierContext.validated(  # SettingsError: one line per bad value
            judge=judge,
            planner=planner,
            max_iterations=max_iterations,
            static=static,
            review=reviewer is not None,
            judge_output=judge_output,
            grounding=grounding,
            base_url=base_url,
            goal_source=goal_source,
            certify=certify,
            trim=trim,
            temperature=temperature,
            model_params=dict(model_params or {}),
        )
        self.context = self.context.with_limits(limits)
        options = self.context.model_options()
        self.settings = self.context.settings()  # what the results are computed under
        self.key = self.settings.key
        self._domain_settings: dict[str | None, RunSettings] = {}  # by domain (`settings_for`)
        self.context.judge = resolve_judge(
            judge,
            output=judge_output,
            base_url=base_url,
            grounding=grounding,
            limits=limits,
            options=options,
        )
        self.context.planner = resolve_planner(
            planner, output=judge_output, base_url=base_url, limits=limits, options=options
        )
        self.models = {
            "judge": self.settings.judge,
            "planner": self.settings.planner,
            "goal": self.settings.planner,
        }  # role -> model name, for prices
        self.reviewer = reviewer
        if reviewer is not None and checkpointer is None:
            checkpointer = InMemorySaver(
                serde=state_serializer()
            )  # interrupts need somewhere to pause
        self.checkpointer = checkpointer
        self.graph = build_verifier(checkpointer=checkpointer)
        self.takes_turns = self._can_take_turns()  # episodes take turns on the event loop
        self._turns: tuple[asyncio.AbstractEventLoop, Turns] | None = None
        self.unreachable: str | None = None  # set when a model server could not be reached

    def describe_limits(self) -> str:
        """The adaptive limits of model calls in flight, for the progress line (`limit 3/8`)."""
        return describe_gates(self.context.judge, self.context.planner)

    def settings_for(self, domain: str | None) -> RunSettings:
        """The settings the results of a domain's episodes are computed under: the run's, with
        the domain's package version (`domains`) for any domain but TEACh (whose settings, and
        key, are the run's own)."""
        if domain not in self._domain_settings:
            self._domain_settings[domain] = settings_for(self.settings, domain)
        return self._domain_settings[domain]

    def key_for(self, episode: Episode) -> str:
        """The settings key of an episode's result (the run's `key` for TEACh)."""
        return self._settings_or_run(episode).key

    def config(self, episode: Episode, digest: str | None = None) -> RunnableConfig:
        """The run config of an episode: its thread (id, settings, content), the settings as
        checkpoint metadata (for `planverify show`) and a recursion limit from the cap."""
        settings = self.settings_for(episode.domain)
        return {
            "configurable": {"thread_id": thread_id(episode, settings.key, digest)},
            # checkpoint metadata keeps only scalar values, so the settings travel as JSON text
            "metadata": {"settings": settings.model_dump_json(exclude_none=True)},
            "recursion_limit": recursion_limit(self.context.max_iterations),
        }

    async def _review(self, values: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        while values.get("__interrupt__"):
            assert self.reviewer is not None
            question = values["__interrupt__"][0].value
            if "problem" in question:  # the reviewer's last answer was of another shape
                raise ValueError(question["problem"])
            answer = self.reviewer(question)
            if asyncio.iscoroutine(answer) or isinstance(answer, Awaitable):
                answer = await answer
            values = await self.graph.ainvoke(Command(resume=answer), config, context=self.context)
        return values

    def _can_take_turns(self) -> bool:
        """Whether episodes can take turns on the event loop (`planverify.eventloop.turns`): only when
        every wait inside an episode is known to give the turn up (model calls through a call
        policy, checkpoints in memory, queued for SQLite or sent to PostgreSQL by our savers),
        never with a reviewer or custom agents."""
        own = (ModelJudge, RulesJudge, BaselineJudge, ModelPlanner, RulesPlanner)
        return (
            self.reviewer is None
            and isinstance(self.context.judge, own)
            and isinstance(self.context.planner, own)
            and (
                self.checkpointer is None
                or type(self.checkpointer) is InMemorySaver  # never waits
                or getattr(self.checkpointer, "takes_turns", False)  # ours: waits give it up
            )
        )

    def _turn(self) -> AbstractAsyncContextManager[None]:
        if not self.takes_turns:
            return nullcontext()
        loop = asyncio.get_running_loop()
        if self._turns is None or self._turns[0] is not loop:
            self._turns = (loop, Turns())
        return self._turns[1].hold()

    async def averify(self, episode: Episode) -> VerificationResult:
        """Verify one episode; errors become a result with status "error", never an exception."""
        try:
            digest = episode.input_digest  # hashes the whole scene: computed once
            async with self._turn():
                result = await self._run(episode, digest)
            if result.input_digest != digest:
                raise RuntimeError(
                    f"the checkpoint thread of {episode.id!r} holds a run on other content"
                )
            result.settings = self.settings_for(episode.domain)
            spend = Spend(self.models)
            spend.add(result.usage)
            result.cost_usd = None if spend.unpriced else spend.cost
            return result
        except Exception as exc:  # one bad episode must not stop a batch
            if disk_full(exc) is not None:
                raise  # a full disk stops every episode: the batch stops and says so
            if (down := unreachable_provider(exc)) is not None:
                self.unreachable = str(down)  # a batch starts no further episode
            failed = VerificationResult.from_exception(episode, exc, self._settings_or_run(episode))
            failed.usage = self._lost_usage(exc)
            failed.cost_usd = 0.0 if failed.usage else None  # no tokens known
            return failed

    def _settings_or_run(self, episode: Episode) -> RunSettings:
        """The episode's settings, or the run's when its domain cannot say its version."""
        try:
            return self.settings_for(episode.domain)
        except (DomainUnavailable, UnknownDomain):
            return self.settings

    def _lost_usage(self, exc: BaseException) -> dict[str, TokenUsage]:
        """The timed-out attempts of the model call an episode failed on, by role: their tokens
        are unknown, but they were calls (the usage of the episode's earlier calls is lost)."""
        failed = next((e for e in causes(exc) if isinstance(e, ModelCallFailed)), None)
        if failed is None or not failed.unknown_calls:
            return {}
        role = next((r for r, name in self.models.items() if name == failed.model), "judge")
        n = failed.unknown_calls
        return {role: TokenUsage(calls=n, unknown_calls=n)}

    async def _run(self, episode: Episode, digest: str) -> VerificationResult:
        config = self.config(episode, digest)
        payload: Any = graph_input(episode)
        options: dict[str, Any] = {}
        if self.checkpointer is not None:
            # The live snapshot includes the output of steps that finished after the last
            # checkpoint; a stop reason means the loop ended, anything else is resumed.
            async with waiting():
                snapshot = await self.graph.aget_state(config)
            if snapshot.values.get("stop_reason") and not snapshot.interrupts:
                return VerificationResult.from_state(PlanState.model_validate(snapshot.values))
            if snapshot.values:
                payload = None  # continue from the last checkpoint
            # each step's checkpoint is stored before the next step starts, in order
            options["durability"] = "sync"
        values = await self.graph.ainvoke(payload, config, context=self.context, **options)
        if self.reviewer is not None:
            values = await self._review(values, config)
        elif values.get("__interrupt__"):
            raise RuntimeError("the graph paused for review but no reviewer was given")
        return VerificationResult.from_state(PlanState.model_validate(values))


def graph_input(episode: Episode) -> dict[str, Any]:
    """The graph's input for an episode: every field that is part of its content."""
    return {
        "episode_id": episode.id,
        "goal": episode.goal,
        "actions": list(episode.actions),
        "scene": episode.scene,
        "task": episode.task,
        "teach_task": episode.teach_task,
        "domain": episode.domain,
        "program": episode.program,
    }


async def averify_plan(
    actions: Sequence[str],
    goal: str | None = None,
    *,
    id: str | None = None,
    scene: Mapping[str, Any] | None = None,
    task: str | None = None,
    teach_task: Mapping[str, Any] | None = None,
    domain: Domain | None = None,
    program: str | None = None,
    judge: JudgeLike = "rules",
    planner: PlannerLike = "rules",
    max_iterations: int = 5,
    static: bool = False,
    judge_output: Literal["text", "structured"] = "text",
    grounding: bool = False,
    base_url: str | None = None,
    goal_source: GoalSource = "given",
    certify: bool | None = None,
    trim: TrimPolicy = DEFAULT_TRIM,
    checkpoint: Checkpoint = None,
    reviewer: Reviewer | None = None,
    temperature: float | None = None,
    model_params: Mapping[str, Any] | None = None,
) -> VerificationResult:
    """Verify one plan (async). See `verify_plan`."""
    episode = Episode.model_validate(
        {
            "id": id or "plan",
            "goal": goal,
            "actions": list(actions),
            "scene": scene,
            "task": task,
            "teach_task": teach_task,
            "domain": domain,
            "program": program,
        }
    )
    async with open_checkpointer(checkpoint) as saver:
        verifier = Verifier(
            judge=judge,
            planner=planner,
            max_iterations=max_iterations,
            static=static,
            judge_output=judge_output,
            grounding=grounding,
            base_url=base_url,
            goal_source=goal_source,
            certify=certify,
            trim=trim,
            temperature=temperature,
            model_params=model_params,
            checkpointer=saver,
            reviewer=reviewer,
        )
        return await verifier.averify(episode)


def verify_plan(
    actions: Sequence[str],
    goal: str | None = None,
    *,
    id: str | None = None,
    scene: Mapping[str, Any] | None = None,
    task: str | None = None,
    teach_task: Mapping[str, Any] | None = None,
    domain: Domain | None = None,
    program: str | None = None,
    judge: JudgeLike = "rules",
    planner: PlannerLike = "rules",
    max_iterations: int = 5,
    static: bool = False,
    judge_output: Literal["text", "structured"] = "text",
    grounding: bool = False,
    base_url: str | None = None,
    goal_source: GoalSource = "given",
    certify: bool | None = None,
    trim: TrimPolicy = DEFAULT_TRIM,
    checkpoint: Checkpoint = None,
    reviewer: Reviewer | None = None,
    temperature: float | None = None,
    model_params: Mapping[str, Any] | None = None,
) -> VerificationResult:
    """Verify one plan with the Judge/Planner loop.

    The keyword settings are `Verifier`'s; `trim` chooses how much of what the goal does
    without is removed: `natural` (the default) or `minimal` (recorded in `settings.trim`).
    `domain="virtualhome"` with a `program` verifies VirtualHome script lines against that
    installed program's scene graph and goal (`planverify.domains`).

    >>> result = verify_plan(
    ...     ["Driver.PickUp('Mug')", "Driver.Move(1.0)", "Driver.Move(-1.0)",
    ...      "Driver.PutAOnB('Mug', 'CoffeeMachine')", "Driver.ToggleOn('CoffeeMachine')"],
    ...     goal="Make a mug of coffee.",
    ... )
    >>> result.refined
    ["Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'CoffeeMachine')", "Driver.ToggleOn('CoffeeMachine')"]
    >>> result.stop_reason, result.revisions
    ('no_objections', 1)
    """
    return run_sync(
        averify_plan(
            actions,
            goal,
            id=id,
            scene=scene,
            task=task,
            teach_task=teach_task,
            domain=domain,
            program=program,
            judge=judge,
            planner=planner,
            max_iterations=max_iterations,
            static=static,
            judge_output=judge_output,
            grounding=grounding,
            base_url=base_url,
            goal_source=goal_source,
            certify=certify,
            trim=trim,
            checkpoint=checkpoint,
            reviewer=reviewer,
            temperature=temperature,
            model_params=model_params,
        )
    )


async def averify_many(
    episodes: Iterable[Episode | Mapping[str, Any] | BaseModel],
    *,
    judge: JudgeLike = "rules",
    planner: PlannerLike = "rules",
    max_iterations: int = 5,
    concurrency: int = 8,
    checkpoint: Checkpoint = None,
    static: bool = False,
    judge_output: Literal["text", "structured"] = "text",
    grounding: bool = False,
    base_url: str | None = None,
    goal_source: GoalSource = "given",
    certify: bool | None = None,
    trim: TrimPolicy = DEFAULT_TRIM,
    on_result: Callable[[VerificationResult], None] | None = None,
    temperature: float | None = None,
    model_params: Mapping[str, Any] | None = None,
) -> list[VerificationResult]:
    """Verify many plans concurrently (async); results come back in input order."""
    items = [as_episode(e) for e in episodes]
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    async with open_checkpointer(checkpoint) as saver:
        verifier = Verifier(
            judge=judge,
            planner=planner,
            max_iterations=max_iterations,
            static=static,
            judge_output=judge_output,
            grounding=grounding,
            base_url=base_url,
            goal_source=goal_source,
            certify=certify,
            trim=trim,
            temperature=temperature,
            model_params=model_params,
            checkpointer=saver,
            limits=CallLimits(concurrency=concurrency),
        )
        gate = asyncio.Semaphore(concurrency)

        async def one(episode: Episode) -> VerificationResult:
            async with gate:
                result = await verifier.averify(episode)
            if on_result is not None:
                on_result(result)
            return result

        with fewer_collections():
            return list(await asyncio.gather(*(one(e) for e in items)))


def verify_many(
    episodes: Iterable[Episode | Mapping[str, Any] | BaseModel],
    *,
    judge: JudgeLike = "rules",
    planner: PlannerLike = "rules",
    max_iterations: int = 5,
    concurrency: int = 8,
    checkpoint: Checkpoint = None,
    static: bool = False,
    judge_output: Literal["text", "structured"] = "text",
    grounding: bool = False,
    base_url: str | None = None,
    goal_source: GoalSource = "given",
    certify: bool | None = None,
    trim: TrimPolicy = DEFAULT_TRIM,
    on_result: Callable[[VerificationResult], None] | None = None,
    temperature: float | None = None,
    model_params: Mapping[str, Any] | None = None,
) -> list[VerificationResult]:
    """Verify many plans; each episode is a dict or model with the JSONL input keys.

    >>> results = verify_many([
    ...     {"id": "a", "goal": "Water the plant.", "actions": ["Driver.Move(0.5)", "Driver.Move(-0.5)"]},
    ...     {"id": "b", "goal": "Water the plant.", "actions": ["Driver.Move(0.5)"]},
    ... ])
    >>> [(r.id, r.refined) for r in results]
    [('a', []), ('b', ['Driver.Move(0.5)'])]
    """
    return run_sync(
        averify_many(
            episodes,
            judge=judge,
            planner=planner,
            max_iterations=max_iterations,
            concurrency=concurrency,
            checkpoint=checkpoint,
            static=static,
            judge_output=judge_output,
            grounding=grounding,
            base_url=base_url,
            goal_source=goal_source,
            certify=certify,
            trim=trim,
            on_result=on_result,
            temperature=temperature,
            model_params=model_params,
        )
    )
