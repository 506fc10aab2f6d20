"""The graph `langgraph.json` serves: the verification graph whose output is the result record.

`langgraph dev` and LangGraph servers serve `graph`: runs through the SDK return the same JSON
record as `planverify verify` writes (`VerificationResult`, with the run's settings and cost),
and the server's MCP endpoint offers it as a tool (described in `langgraph.json`; the input
fields are documented in `VerifyInput`). Settings travel in the run's context (or in an
assistant's context), never in the input.

A served run's input and settings come from whoever can reach the server, so before the graph
starts they are validated (`VerifyInput`, `VerifierContext`: one readable line per problem)
and held to the operator's rules (`planverify.graphs.policy`: allowed model parameters and
servers, plan size, ceilings); a run that breaks one ends with that error before any model
call. Every run also has a deadline (`PLANVERIFY_RUN_DEADLINE_S`): past it the run stops, its
output is an error record (status `error`, the input unchanged), and a thread keeps its
checkpoints, so a later run continues it.

No text leaving a served run holds a secret of the server's (a provider key, the server token):
an error whose text names one is raised as a `RedactedError` instead, error records are
scrubbed, and every log record of the process is filtered from the moment the server loads
this graph (`planverify.records.redaction`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping
from contextlib import suppress
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config
from langgraph.errors import GraphBubbleUp
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command
from pydantic import ValidationError

from planverify.agents.offload import OFF_THE_LOOP
from planverify.graphs.context import SettingsError, VerifierContext
from planverify.graphs.graph import build_verifier
from planverify.graphs.policy import DEADLINE_ENV, ServingPolicy
from planverify.graphs.review import SHAPE
from planverify.graphs.state import VerifyInput
from planverify.records.episode import input_digest, problems
from planverify.records.redaction import install_log_redaction, scrub, withheld
from planverify.records.result import VerificationResult

install_log_redaction()  # the server's log, from the moment it loads the graph


class InputError(ValueError):
    """A served run's input that cannot be verified; one line per problem."""


def served_input(value: Any) -> VerifyInput | None:
    """The validated input of a run (None when it continues a thread or resumes it)."""
    if isinstance(value, Command) and value.resume is None and not value.update and not value.goto:
        raise InputError(f"resume: null is no review answer; {SHAPE}")
    if value is None or not isinstance(value, Mapping):
        return None
    try:
        return VerifyInput.model_validate(value)
    except ValidationError as exc:
        raise InputError("\n".join(problems(exc))) from None


def served_context(value: Any, policy: ServingPolicy) -> VerifierContext:
    """A run's settings (a dict, or None for the defaults), validated and held to the rules."""
    if isinstance(value, VerifierContext):
        value = value.values()
    if value is not None and not isinstance(value, Mapping):
        raise SettingsError("the context must be a JSON object of settings")
    return policy.admit(VerifierContext.validated(**dict(value or {})))


def error_record(
    values: Mapping[str, Any], context: VerifierContext, message: str
) -> dict[str, Any]:
    """The output of a run that could not finish: status `error`, the plan unchanged."""
    actions = [str(line) for line in values.get("actions") or ()]
    digest = values.get("input_digest") or input_digest(
        goal=values.get("goal"),
        actions=actions,
        scene=values.get("scene"),
        task=values.get("task"),
        teach_task=values.get("teach_task"),
        domain=values.get("domain"),
        program=values.get("program"),
    )
    record = VerificationResult(
        id=str(values.get("episode_id") or "episode"),
        input_digest=digest,
        settings=context.settings(),
        goal=values.get("goal"),
        status="error",
        error=scrub(message),
        original=actions,
        refined=actions,
    )
    return record.model_dump(mode="json")


def as_chunk(record: dict[str, Any], options: Mapping[str, Any]) -> Iterator[Any]:
    """The final output of a run, as the stream that was asked for carries it: a `values` (and
    an `updates`) part, in the stream's format (version, modes, subgraph namespaces)."""
    modes = options.get("stream_mode") or "values"
    wanted = [modes] if isinstance(modes, str) else list(modes)
    for mode, data in (("updates", {"record": record}), ("values", record)):
        if mode not in wanted:
            continue
        if options.get("version") == "v2":
            yield {"type": mode, "ns": (), "data": data, "interrupts": ()}
            continue
        parts: tuple[Any, ...] = (mode, data) if not isinstance(modes, str) else (data,)
        if options.get("subgraphs"):
            parts = ((), *parts)
        yield parts if len(parts) > 1 else parts[0]


class ServedGraph(CompiledStateGraph[Any, Any, Any, Any]):
    """The compiled graph, with the checks and the deadline of served runs, minus one warning.

    A LangGraph server passes a durability mode to every run, also to runs without a thread
    (stateless runs, MCP tool calls), which have no checkpointer: there the mode means nothing,
    and LangGraph would warn about it on every call. It is dropped for those runs only.
    """

    def _durability(self, config: RunnableConfig | None, options: dict[str, Any]) -> None:
        durable = options.get("durability") is not None
        if durable and self._resolve_checkpointer(ensure_config(config)) is None:
            options["durability"] = None

    def _admit(
        self, input: Any, config: RunnableConfig | None, options: dict[str, Any]
    ) -> tuple[VerifyInput | None, ServingPolicy]:
        """Check a run before it starts (input, settings, rules); the settings it runs with go
        into `options`."""
        self._durability(config, options)
        policy = ServingPolicy.from_env()
        given = served_input(input)
        if given is not None:
            policy.check_size(len(given.actions))
        options["context"] = served_context(options.get("context"), policy)
        return given, policy

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **options: Any
    ) -> Iterator[Any]:
        """As `CompiledStateGraph.stream`, for a checked run (servers run graphs with `astream`,
        which adds the deadline)."""
        self._admit(input, config, options)
        return super().stream(input, config, **options)

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **options: Any
    ) -> AsyncIterator[Any]:
        """As `CompiledStateGraph.astream`, for a checked run that ends by its deadline."""
        given, policy = self._admit(input, config, options)
        # the world model's work runs beside the loop, which stays free for other clients; the
        # graph's tasks copy this context when the first step creates them
        off_the_loop = OFF_THE_LOOP.set(True)
        stream = aiter(super().astream(input, config, **options))
        deadline = asyncio.get_running_loop().time() + policy.deadline
        try:
            while True:
                # a server may run each step of this generator in a task of its own (langgraph-api
                # does), whose context is a fresh copy: set the flag again where the step runs
                OFF_THE_LOOP.set(True)
                scope = asyncio.timeout_at(deadline)
                try:
                    async with scope:
                        chunk = await anext(stream)
                except StopAsyncIteration:
                    return
                except Exception as exc:
                    if isinstance(exc, TimeoutError) and scope.expired():
                        break  # the deadline, not a timeout of the run's own
                    if isinstance(exc, GraphBubbleUp) or (shown := withheld(exc)) is exc:
                        raise  # an interrupt is control flow, not an error text
                    raise shown from None
                yield chunk
        finally:
            if isinstance(stream, AsyncGenerator):
                await stream.aclose()
            with suppress(ValueError):  # closed from another context: that one never had it
                OFF_THE_LOOP.reset(off_the_loop)
        message = (
            f"the run did not finish within its deadline of {policy.deadline:g} s "
            f"({DEADLINE_ENV}); a thread keeps its checkpoints, and a new run continues it"
        )
        if given is not None:
            values: Mapping[str, Any] = given.model_dump()
        else:
            snapshot = await self.aget_state(ensure_config(config)) if self.checkpointer else None
            values = snapshot.values if snapshot is not None else {}
        for chunk in as_chunk(error_record(values, options["context"], message), options):
            yield chunk


def served_graph() -> ServedGraph:
    """The verification graph with the result record as its output, without a checkpointer
    (the server brings its own)."""
    compiled = build_verifier(output="result")
    return ServedGraph(**{k: v for k, v in compiled.__dict__.items() if k != "__orig_class__"})


graph = served_graph()
