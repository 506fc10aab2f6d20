"""The verification loop: Judge -> Planner -> Judge ... (with review: Judge -> review -> converge).

Each Judge pass and each revision decides itself whether the loop goes on (`next_step`), so a
pass is one graph step, not two; `converge` is that decision as a step of its own: after a review,
and for a thread that an earlier version stored on its way there.

`build_verifier()` returns the compiled graph. `build_verifier(output="result")` adds a last step
that writes the result record, which is then the graph's output: the graph `langgraph.json`
serves (`planverify.graphs.served`). Every node runs from LangGraph's sync API as well as its
async one (`runnable`).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping, Sequence
from functools import lru_cache, wraps
from typing import Any, Literal, TypeAlias, TypeVar, cast, get_args, get_origin, get_type_hints

from langgraph._internal._runnable import (  # LangGraph's node: a sync and an async function
    RunnableCallable,
)
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command, RetryPolicy, interrupt

from planverify.agents import ModelJudge, RulesJudge, resolve_judge, resolve_planner
from planverify.agents.base import Insertion, Judge, JudgeReply, Planner, PlannerReply
from planverify.agents.coverage import spans
from planverify.agents.parsing import StepResolver, add_flag
from planverify.agents.planner import commander_goal, drop_repeats
from planverify.domains import Domain, is_default
from planverify.eventloop.runner import run_sync
from planverify.graphs.context import OutputMode, VerifierContext, settings_of
from planverify.graphs.domains import (
    certify_insertions_in,
    certify_reply,
    judge_reply,
    other_domain,
    planner_reply,
)
from planverify.graphs.edits import (
    grade,
    insert_steps,
    reinstated,
    remove_flagged,
    shift_missing,
)
from planverify.graphs.record import record
from planverify.graphs.review import ReviewAnswerError, apply_review
from planverify.graphs.state import PlanState, VerifyInput
from planverify.llm.calls import CallLimits
from planverify.llm.errors import ModelCallFailed, retryable
from planverify.llm.params import ModelOptions
from planverify.records.critique import Critique, Missing, Veto
from planverify.records.episode import Scene, input_digest
from planverify.records.history import (
    Iteration,
    OptionalStep,
    Step,
    StopReason,
    merge_history,
)
from planverify.records.notation import diagnose, dialogue_lines, parse_action, written
from planverify.records.result import VerificationResult
from planverify.world import Grounding, ground, task_grounding
from planverify.world.certify import certify_flags, certify_insertion

T = TypeVar("T")

# Model calls retry themselves (planverify.llm.calls); the node retries once more only for a
# transient error that escaped them, never one they already gave up on.
MODEL_RETRY = RetryPolicy(
    max_attempts=2,
    initial_interval=1.0,
    retry_on=lambda exc: retryable(exc) and not isinstance(exc, ModelCallFailed),
)


@lru_cache(maxsize=32)
def _cached_judge(
    spec: str,
    output: OutputMode,
    base_url: str | None,
    grounding: bool,
    limits: CallLimits,
    options: ModelOptions,
) -> Judge:
    return resolve_judge(
        spec, output=output, base_url=base_url, grounding=grounding, limits=limits, options=options
    )


@lru_cache(maxsize=32)
def _cached_planner(
    spec: str, output: OutputMode, base_url: str | None, limits: CallLimits, options: ModelOptions
) -> Planner:
    return resolve_planner(spec, output=output, base_url=base_url, limits=limits, options=options)


def judge_of(context: VerifierContext) -> Judge:
    """The Judge a run uses (specs are resolved once per process and settings)."""
    if isinstance(context.judge, str):
        return _cached_judge(
            context.judge,
            context.judge_output,
            context.base_url,
            context.grounding,
            context.limits(),
            context.model_options(),
        )
    limits = context.limits()
    key = ("judge", id(context.judge), context.judge_output, context.grounding, limits)
    return _resolved(
        context.judge,
        key,
        lambda: resolve_judge(
            context.judge, output=context.judge_output, grounding=context.grounding, limits=limits
        ),
    )


def planner_of(context: VerifierContext) -> Planner:
    """The Planner a run uses (specs are resolved once per process and settings)."""
    if isinstance(context.planner, str):
        return _cached_planner(
            context.planner,
            context.judge_output,
            context.base_url,
            context.limits(),
            context.model_options(),
        )
    limits = context.limits()
    key = ("planner", id(context.planner), context.judge_output, limits)
    return _resolved(
        context.planner,
        key,
        lambda: resolve_planner(context.planner, output=context.judge_output, limits=limits),
    )


_RESOLVED: dict[tuple[Any, ...], tuple[Any, Any]] = {}
"""Judges and Planners made of objects (a chat model), by the object's identity and settings."""


def _resolved(thing: Any, key: tuple[Any, ...], make: Callable[[], T]) -> T:
    """The agent `make()` resolves `thing` to, made once per object and settings (as a spec's
    is, `_cached_judge`), not again at every pass of every episode."""
    cached = _RESOLVED.get(key)
    if cached is not None and cached[0] is thing:
        return cast(T, cached[1])
    agent = make()
    if len(_RESOLVED) >= 64:
        _RESOLVED.clear()
    _RESOLVED[key] = (thing, agent)
    return agent


async def prepare(
    state: PlanState, runtime: Runtime[VerifierContext]
) -> Command[Literal["goal", "judge"]]:
    """Parse the input plan into steps (unknown verbs are kept, with a warning) and record the
    digest of the input as given, which ties the result to it."""
    digest = input_digest(
        goal=state.goal,
        actions=state.actions,
        scene=state.scene,
        task=state.task,
        teach_task=state.teach_task,
        domain=state.domain,
        program=state.program,
    )
    if not is_default(state.domain):  # another domain's notation: its lines are kept as given
        return Command(update=_prepared(digest, list(state.actions), [], []), goto="judge")
    actions = [parse_action(line) for line in state.actions]
    lines = [written(line) for line in state.actions]
    warnings = [
        f"step {i + 1}: {why}; kept as is and never edited by the rules"
        for i, a in enumerate(actions)
        if (why := diagnose(a))
    ]
    dialogue = dialogue_lines(actions)
    if len(dialogue) == len(actions):
        warnings.append("the plan has no Driver actions: nothing to verify")
    update = _prepared(digest, lines, dialogue, warnings)
    given = bool(state.goal and state.goal.strip())
    use_given = settings_of(runtime.context).goal_source == "given" and given
    return Command(update=update, goto="judge" if use_given else "goal")


def _prepared(
    digest: str, lines: list[str], dialogue: list[str], warnings: list[str]
) -> dict[str, Any]:
    return {
        "input_digest": digest,
        "actions": lines,
        "plan": [Step(action=line, origin=i) for i, line in enumerate(lines)],
        "dialogue": dialogue,
        "warnings": warnings,
    }


async def goal(state: PlanState, runtime: Runtime[VerifierContext]) -> dict[str, Any]:
    """Set the goal: the Commander's words (`goal_source="dialogue"`), or one inferred from the
    dialogue by the Planner (`"infer"`, or no goal given; without a model, the Commander's
    words)."""
    settings = settings_of(runtime.context)
    if settings.goal_source == "dialogue":
        return {"goal": commander_goal(state.dialogue) or state.goal or "(no goal given)"}
    planner = planner_of(settings)
    text, usage = await planner.agoal(state.dialogue)
    return {"goal": text or "(no goal given)", "usage": {"goal": usage} if usage.calls else {}}


_TASK_GROUNDINGS: dict[int, tuple[Scene, Mapping[str, Any], Grounding | None]] = {}
"""The groundings of the last episodes' task definitions, by the identity of their scene."""


def _task_grounding(scene: Scene | None, teach_task: Mapping[str, Any]) -> Grounding | None:
    """`task_grounding`, once per episode: its passes see the same scene object (the state's
    channels pass it on; a task definition, a dict, is validated into a copy at every step),
    and only the plan, which it does not read, changes between them."""
    if scene is None:
        return task_grounding(scene, teach_task)
    cached = _TASK_GROUNDINGS.get(id(scene))
    if cached is not None and cached[0] is scene and cached[1] == teach_task:
        return cached[2]
    grounding = task_grounding(scene, teach_task)
    if len(_TASK_GROUNDINGS) >= 256:  # more than the episodes in flight
        _TASK_GROUNDINGS.clear()
    _TASK_GROUNDINGS[id(scene)] = (scene, teach_task, grounding)
    return grounding


def grounding_of(state: PlanState) -> Grounding:
    """What the episode says about its goal: TEACh's task definition, or the goal text and the
    Commander's words."""
    if state.teach_task and (by_task := _task_grounding(state.scene, state.teach_task)):
        return by_task
    return ground(
        state.goal,
        state.dialogue,
        state.scene,
        task=state.task,
        teach_task=state.teach_task,
        plan=state.lines(),
    )


def certifies(context: VerifierContext, grounding: Grounding) -> bool:
    """Whether flags and insertions are checked by simulation: as set, or (None) whenever the
    episode has a scene or a goal spec to check them against."""
    return grounding.grounded if context.certify is None else context.certify


def certify_insertions(
    plan: list[str], insertions: Sequence[Insertion], grounding: Grounding
) -> tuple[list[Insertion], list[Veto]]:
    """The insertions the simulator accepts, each checked where it goes, in order."""
    kept: list[Insertion] = []
    vetoes: list[Veto] = []
    shift = 0
    current = list(plan)
    for insertion in sorted(insertions, key=lambda i: i.after):
        after = insertion.after + shift
        why = certify_insertion(current, insertion.action, after, grounding)
        if why is None:
            kept.append(insertion)
            current.insert(after + 1, insertion.action)
            shift += 1
        else:
            vetoes.append(
                Veto(kind="insertion", action=insertion.action, after=insertion.after, reason=why)
            )
    return kept, vetoes


def checked(critique: Critique, plan: list[str]) -> Critique:
    """The critique with only flags tied to one real, non-dialogue step of `plan`.

    Model Judges validate their flags when parsing; any `Judge` object may be custom, so its
    flags are checked the same way here: the rest are dropped with why, never applied.
    """
    result = critique.model_copy(update={"flags": [], "dropped": list(critique.dropped)})
    resolver = StepResolver(plan)
    for flag in sorted(critique.flags, key=lambda f: f.step):
        index = resolver.resolve(flag.step + 1, flag.action.strip() or None)
        text = f"{flag.step + 1}. {flag.action}"
        add_flag(
            result,
            resolver.plan,
            index,
            flag.reason,
            text,
            evidence=flag.evidence,
            optional=flag.optional,
        )
    result.flags.sort(key=lambda f: f.step)
    return result


async def judge(
    state: PlanState, runtime: Runtime[VerifierContext]
) -> Command[Literal["review", "planner", "judge", "__end__"]]:
    """One Judge pass over the current plan; on to review when a person reviews critiques.

    A plan without Driver actions (empty, or dialogue only) has nothing to judge: no model call.
    """
    settings = settings_of(runtime.context)
    if (domain := other_domain(state)) is not None:
        return await _judge_other(domain, state, settings)
    lines = state.lines()
    grounding = grounding_of(state)
    vetoes: list[Veto] = []
    certified: str | None = None
    if all(parse_action(line).is_dialogue for line in lines):
        reply = JudgeReply(Critique())
    else:
        verifier = judge_of(settings)
        goal = state.goal or ""
        if isinstance(verifier, ModelJudge):
            refused = [v.reason for v in state.history[-1].vetoes] if state.history else []
            reply = await verifier.ajudge(
                goal, lines, state.scene, grounding=grounding, vetoes=refused
            )
        elif isinstance(verifier, RulesJudge):
            reply = await verifier.ajudge(
                goal,
                lines,
                state.scene,
                grounding=grounding,
                trim=settings.trim,
                noted=_noted(state),
            )
        elif getattr(verifier, "grounded", False):
            grounded: Any = verifier  # a Judge that takes the episode's grounding
            reply = await grounded.ajudge(goal, lines, state.scene, grounding=grounding)
        else:
            reply = await verifier.ajudge(goal, lines, state.scene)
        reply.critique = checked(reply.critique, lines)
        if not isinstance(verifier, RulesJudge) and certifies(settings, grounding):
            reply.critique, vetoes, certified = certify_flags(
                lines, reply.critique, grounding, trim=settings.trim
            )
    return _judged(state, settings, reply, vetoes, certified, note=grounding.note)


async def _judge_other(
    domain: Domain, state: PlanState, settings: VerifierContext
) -> Command[Literal["review", "planner", "judge", "__end__"]]:
    """The Judge pass for a plan of another domain than TEACh (`graphs.domains`)."""
    vetoes: list[Veto] = []
    certified: str | None = None
    if not state.plan:
        return _judged(state, settings, JudgeReply(Critique()), vetoes, certified)
    verifier = judge_of(settings)
    reply = await judge_reply(domain, verifier, state, settings)
    reply.critique = checked(reply.critique, state.lines())
    if not isinstance(verifier, RulesJudge):
        reply.critique, vetoes, certified = await certify_reply(
            domain, state, reply.critique, settings
        )
    return _judged(state, settings, reply, vetoes, certified)


def _noted(state: PlanState) -> set[int]:
    """The positions in the current plan of the input steps an earlier Judge pass noted as
    optional."""
    origins = {kept.origin for record in state.history for kept in record.optional}
    return {
        k for k, step in enumerate(state.plan) if step.origin is not None and step.origin in origins
    }


def _newly_optional(state: PlanState, critique: Critique) -> Critique:
    """The critique without the optional steps an earlier pass noted: each is recorded once,
    by the pass that first noted it, which counts the steps of the plan it read."""
    noted = _noted(state) if critique.optional else set()
    if not noted:
        return critique
    fresh = [flag for flag in critique.optional if flag.step not in noted]
    return critique.model_copy(update={"optional": fresh})


def _judged(
    state: PlanState,
    settings: VerifierContext,
    reply: JudgeReply,
    vetoes: list[Veto],
    certified: str | None,
    *,
    note: str | None = None,
) -> Command[Literal["review", "planner", "judge", "__end__"]]:
    """The state update of a Judge pass, and where the loop goes next (`note`: why the goal
    could not be read, said on the first pass)."""
    lines = state.lines()
    iteration = state.iteration + 1
    uncovered = sorted({i for i in reply.uncovered if 0 <= i < len(lines)})
    reply.critique = _newly_optional(state, reply.critique)
    record = Iteration(
        iteration=iteration,
        critique=reply.critique,
        vetoes=vetoes,
        certified=certified,
        judge_output=reply.output,
        incomplete=bool(uncovered),
        uncovered=uncovered,
        optional=[
            OptionalStep(action=lines[f.step], origin=state.plan[f.step].origin, note=f.optional)
            for f in reply.critique.optional
            if f.optional is not None and 0 <= f.step < len(state.plan)
        ],
    )
    update = {
        "iteration": iteration,
        "pending": reply.critique,
        "history": [record],
        "usage": {"judge": reply.usage} if reply.usage.calls else {},
    }
    warnings = [w for w in reply.warnings if w not in state.warnings]
    if iteration == 1 and note:
        warnings.insert(0, f"{note}: steps are judged by the objects the text names")
    if uncovered:
        warnings.append(
            f"Judge pass {iteration} left steps {spans(uncovered)} unjudged, even when asked "
            "again: that pass is incomplete"
        )
    if warnings:
        update["warnings"] = warnings
    if settings.review and reply.critique.objections:
        return Command(update=update, goto="review")
    history = merge_history(state.history, [record])
    return decided(settings, update, iteration, reply.critique, history)


async def review(state: PlanState, runtime: Runtime[VerifierContext]) -> dict[str, Any]:
    """Pause so a person can accept or edit the critique (only reached with review on)."""
    if state.pending is None or not state.pending.objections:
        return {}
    question: dict[str, Any] = {
        "episode_id": state.episode_id,
        "iteration": state.iteration,
        "plan": state.lines(),
        "critique": state.pending.model_dump(mode="json"),
    }
    while True:  # an answer of another shape is asked again, so the thread never sticks on it
        answer = interrupt(question)
        try:
            critique = apply_review(state.pending, answer, state.lines())
            break
        except ReviewAnswerError as exc:
            question = {**question, "problem": str(exc)}
    record = state.history[-1].model_copy(update={"critique": critique})  # keeps the rest
    return {"pending": critique, "history": [record]}


def _stop(reason: StopReason) -> Command[Any]:
    return Command(update={"stop_reason": reason, "pending": None}, goto=END)


def _looked_twice(history: list[Iteration]) -> bool:
    """Whether the last two passes both left steps unjudged on the same plan (the earlier one
    changed nothing): asking a third time would send the same request again."""
    return len(history) >= 2 and all(r.incomplete for r in history[-2:]) and not history[-2].edits


async def converge(
    state: PlanState, runtime: Runtime[VerifierContext]
) -> Command[Literal["planner", "judge", "__end__"]]:
    """Decide whether the loop goes on after a review (the Judge and the Planner decide it
    themselves, `decided`, so a pass takes no step of its own for it)."""
    return next_step(settings_of(runtime.context), state.iteration, state.pending, state.history)


def next_step(
    context: VerifierContext,
    iteration: int,
    pending: Critique | None,
    history: list[Iteration],
) -> Command[Any]:
    """Whether the loop goes on after a Judge pass (`pending` its critique) or a Planner's
    revision (`pending` None), and why it stops.

    A pass that left Driver steps unjudged (`Iteration.incomplete`) never ends the loop as
    `no_objections` or `no_change`: the Judge looks again, once for the same plan, and the loop
    stops as `incomplete` when that look is incomplete too or the cap comes first.
    """
    last = history[-1]
    capped = iteration >= context.max_iterations
    if pending is not None:
        if context.static:  # whatever the Judge said: a static result is always marked so
            return _stop("static")
        if pending.objections:
            return Command(goto="planner")
        if not last.incomplete:
            return _stop("no_objections")
        return _stop("incomplete") if capped or _looked_twice(history) else Command(goto="judge")
    if not last.edits and not last.incomplete:
        return _stop("no_change")
    if capped or (not last.edits and _looked_twice(history)):
        return _stop("incomplete" if last.incomplete else "max_iterations")
    return Command(goto="judge")


def decided(
    context: VerifierContext,
    update: dict[str, Any],
    iteration: int,
    pending: Critique | None,
    history: list[Iteration],
) -> Command[Any]:
    """A node's `update` and where the loop goes after it (`next_step`, with `pending` and
    `history` as they stand once the update is applied): one graph step, not two."""
    then = next_step(context, iteration, pending, history)
    return Command(update={**update, **(then.update or {})}, goto=then.goto)


GROWTH_WARNING = "the model Planner grew the plan by more than half"
"""How a plan's growth warning starts (the run's summary counts the records that carry it)."""


def growth_warning(state: PlanState, plan: Sequence[Step], planner: Planner) -> list[str]:
    """A warning, once, when a model Planner has made the plan more than half again as long
    as the input: a small model inserting steps the Judge never named (their evidence is
    `heuristic`) should be seen, not found later."""
    before = len(state.actions)
    if not planner.uses_model or 2 * len(plan) <= 3 * before:
        return []
    if any(w.startswith(GROWTH_WARNING) for w in state.warnings):
        return []
    return [
        f"{GROWTH_WARNING}: {before} steps became {len(plan)} by pass {state.iteration}; "
        "check its insertions (those the Judge did not name have evidence `heuristic`)"
    ]


async def planner(
    state: PlanState, runtime: Runtime[VerifierContext]
) -> Command[Literal["judge", "__end__"]]:
    """Apply the pending critique: removals deterministically, insertions via the Planner;
    then the Judge looks again, or the loop stops (`next_step`)."""
    settings = settings_of(runtime.context)
    critique = state.pending or Critique()
    kept, edits = remove_flagged(state.plan, critique.flags)
    usage: dict[str, Any] = {}
    warnings: list[str] = []
    record = state.history[-1].model_copy()
    if critique.missing:
        removed = {flag.step for flag in critique.flags}
        missing = shift_missing(critique.missing, removed)
        reply = await _planner_reply(state, settings, [s.action for s in kept], missing)
        insertions = grade(reply.insertions, missing)
        if (domain := other_domain(state)) is not None:  # by its simulator, when certifying
            insertions, refused = await certify_insertions_in(
                domain, state, [s.action for s in kept], insertions, settings
            )
            record.vetoes = [*record.vetoes, *refused]
        elif certifies(settings, grounding := grounding_of(state)):
            insertions, refused = certify_insertions(
                [s.action for s in kept], insertions, grounding
            )
            record.vetoes = [*record.vetoes, *refused]
        flags, insertions, back = reinstated(critique.flags, insertions)
        if back:  # flagged and inserted back where it stands: no edit, the step is kept
            kept, edits = remove_flagged(state.plan, flags)
            record.dropped = [*record.dropped, *back]
        kept, inserts = insert_steps(kept, insertions, state.iteration)
        edits += inserts
        record.dropped = [*record.dropped, *reply.dropped]
        record.planner_output = reply.output
        if reply.usage.calls:
            usage = {"planner": reply.usage}
        warnings = growth_warning(state, kept, planner_of(settings))
    record.edits = edits
    update: dict[str, Any] = {"plan": kept, "pending": None, "history": [record], "usage": usage}
    if warnings:
        update["warnings"] = warnings
    history = merge_history(state.history, [record])
    return decided(settings, update, state.iteration, None, history)


async def _planner_reply(
    state: PlanState, settings: VerifierContext, plan: list[str], missing: list[Missing]
) -> PlannerReply:
    """The Planner's insertions for the missing steps (on another domain than TEACh, a model
    Planner's in its notation, else the very steps its Judge named: `graphs.domains`)."""
    if (domain := other_domain(state)) is not None:
        return await planner_reply(domain, planner_of(settings), state, plan, missing)
    reply = await planner_of(settings).ainsert(state.goal or "", plan, missing)
    return drop_repeats(plan, reply)


Node: TypeAlias = Callable[[Any, Runtime[VerifierContext]], Coroutine[Any, Any, Any]]
"""A step of the loop: an async function of the state and the run."""


def destinations(node: Node) -> tuple[str, ...]:
    """Where a node that returns a `Command` may go (its return annotation), for drawing."""
    returns = get_type_hints(node).get("return")
    if get_origin(returns) is not Command:
        return ()
    return tuple(get_args(get_args(returns)[0]))


def runnable(node: Node, name: str) -> RunnableCallable:
    """The node as LangGraph runs it: as it is from the async API (`ainvoke`, `astream`), and
    from the sync API (`invoke`, `stream`) on an event loop of its own, also when the caller's
    thread runs one already (`run_sync`)."""

    @wraps(node)
    def call(state: Any, runtime: Runtime[VerifierContext]) -> Any:
        return run_sync(node(state, runtime))

    return RunnableCallable(call, node, name=name, trace=False)


LOOP: tuple[tuple[str, Node, RetryPolicy | None], ...] = (
    ("prepare", prepare, None),
    ("goal", goal, MODEL_RETRY),
    ("judge", judge, MODEL_RETRY),
    ("review", review, None),
    ("converge", converge, None),
    ("planner", planner, MODEL_RETRY),
)  # the loop's nodes: name, step, retry policy


def add_loop(
    builder: StateGraph[Any, VerifierContext, Any, Any],
    *,
    last: tuple[str, Node] | None = None,
    wrap: Callable[[Node], Node] = lambda node: node,
) -> None:
    """Add the loop's nodes (each `wrap`ped) and edges; `last` runs once the loop has ended."""
    for name, node, retry in LOOP:
        action = runnable(wrap(node), name)
        builder.add_node(name, action, retry_policy=retry, destinations=destinations(node))
    builder.add_edge(START, "prepare")
    builder.add_edge("goal", "judge")
    builder.add_edge("review", "converge")
    if last is not None:  # deferred: runs when nothing else is left to run
        name, node = last
        builder.add_node(name, runnable(wrap(node), name), defer=True)
        builder.add_edge("prepare", name)


def build_verifier(
    *,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    name: str = "planverify",
    output: Literal["state", "result"] = "state",
) -> CompiledStateGraph[PlanState, VerifierContext, VerifyInput, Any]:
    """The compiled verification graph; give a checkpointer to persist every step.

    Its output is the final state, or with `output="result"` the `VerificationResult` record,
    written by one more step once the loop has ended (`planverify.graphs.record`). To run it
    inside another graph, `planverify.graphs.subgraph.graph` is the one to use: its channels
    never reach the parent's.
    """
    builder = StateGraph(
        PlanState,
        context_schema=VerifierContext,
        input_schema=VerifyInput,
        output_schema=VerificationResult if output == "result" else PlanState,
    )
    add_loop(builder, last=("record", record) if output == "result" else None)
    return builder.compile(checkpointer=checkpointer, name=name)


def recursion_limit(max_iterations: int) -> int:
    """Enough graph steps for `max_iterations` Judge passes on the longest path (prepare, goal,
    then judge, review, converge and planner a pass, and the record step of `output="result"`),
    and no more."""
    return 3 + 4 * max(max_iterations, 1)
