"""The loop's steps for a plan of another domain than TEACh (a record's `domain`), through the
registry (`planverify.domains`): its lines are read in its own notation, never TEACh's.

- the rules Judge's critique is the domain's offline Judge, under the run's trim policy;
- a model Judge gets the domain's prompt facts (with grounding on), and its flags are checked by
  the domain's simulator (one veto per refused flag, with why);
- a model Planner is asked, with the domain's Planner instructions, for every missing step the
  Judge described (with or without a step of its own), and its lines are read by the domain's
  reader (those not in the domain's notation are dropped, with why); any other Planner puts in
  exactly the missing steps the Judge named, where it placed them;
- when the run certifies (as set, or whenever the plan's scene is known), the domain's
  simulator checks each insertion where it goes (one veto per refused insertion, with why).
"""

from __future__ import annotations

from collections.abc import Sequence

from planverify.agents import ModelJudge, ModelPlanner, RulesJudge
from planverify.agents.base import Insertion, Judge, JudgeReply, Planner, PlannerReply
from planverify.agents.baseline import BaselineJudge
from planverify.agents.offload import world_work
from planverify.domains import Case, Domain, domain_of, is_default
from planverify.graphs.context import VerifierContext
from planverify.graphs.state import PlanState
from planverify.records.critique import Critique, Dropped, Missing, Veto

CERTIFIED = "each kept flag: the program without its step still runs and meets as much of its goal"


def other_domain(state: PlanState) -> Domain | None:
    """The domain of a plan that is not TEACh's (None for TEACh, whose path is the loop's own)."""
    return None if is_default(state.domain) else domain_of(state.domain)


def case_of(state: PlanState, lines: Sequence[str]) -> Case:
    """What a domain reads of the state, with `lines` as the plan."""
    return Case(lines=list(lines), goal=state.goal or "", program=state.program, task=state.task)


async def judge_reply(
    domain: Domain, verifier: Judge, state: PlanState, settings: VerifierContext
) -> JudgeReply:
    """One Judge pass over the plan of another domain (its flags not yet checked)."""
    lines = state.lines()
    case = case_of(state, lines)
    if isinstance(verifier, RulesJudge):
        return JudgeReply(await world_work(domain.critique, case, settings.trim))
    if isinstance(verifier, BaselineJudge):
        raise ValueError(f"the baseline Judge reads TEACh's notation only, not {domain.name}'s")
    if isinstance(verifier, ModelJudge):
        refused = [v.reason for v in state.history[-1].vetoes] if state.history else []
        facts = await world_work(domain.prompt_facts, case) if settings.grounding else None
        return await verifier.ajudge(
            case.goal, lines, None, vetoes=refused, facts=facts, system=domain.judge_prompt
        )
    return await verifier.ajudge(case.goal, lines, None)


async def certify_reply(
    domain: Domain, state: PlanState, critique: Critique, settings: VerifierContext
) -> tuple[Critique, list[Veto], str | None]:
    """A model Judge's critique with only the flags the domain's simulator accepts (when the
    run certifies: as set, or whenever the plan's scene is known), its vetoes, and the check."""
    case = case_of(state, state.lines())
    wanted = domain.grounded(case) if settings.certify is None else settings.certify
    if not wanted or not critique.flags:
        return critique, [], None
    kept, vetoes = await world_work(domain.certify, case, critique, settings.trim)
    return kept, vetoes, CERTIFIED if kept.flags else None


async def planner_reply(
    domain: Domain, planner: Planner, state: PlanState, plan: list[str], missing: list[Missing]
) -> PlannerReply:
    """The Planner's insertions for the missing steps of a plan of another domain: a model
    Planner's, asked in the domain's notation; else the very steps the Judge named."""
    if isinstance(planner, ModelPlanner):
        goal = state.goal or ""
        return await planner.ainsert(goal, plan, missing, system=domain.planner_prompt)
    return named_insertions(plan, missing)


async def certify_insertions_in(
    domain: Domain,
    state: PlanState,
    plan: list[str],
    insertions: list[Insertion],
    settings: VerifierContext,
) -> tuple[list[Insertion], list[Veto]]:
    """The insertions into `plan` the domain's simulator accepts, and one veto per refusal, when
    the run certifies (as for flags, `certify_reply`); all of them, and none, otherwise."""
    case = case_of(state, plan)
    check = getattr(domain, "certify_insertions", None)
    wanted = domain.grounded(case) if settings.certify is None else settings.certify
    if check is None or not wanted or not insertions:
        return insertions, []
    kept, vetoes = await world_work(check, case, insertions)
    return list(kept), list(vetoes)


def named_insertions(plan: Sequence[str], missing: Sequence[Missing]) -> PlannerReply:
    """The missing steps the Judge named, each where it placed it (the end when it did not)."""
    reply = PlannerReply()
    for item in missing:
        if item.action is None:
            why = "names no concrete action in the domain's notation"
            reply.dropped.append(Dropped(text=item.description, why=why))
            continue
        after = len(plan) - 1 if item.after is None else item.after
        if not -1 <= after < len(plan):
            why = f"position {after + 1} is outside the plan (0-{len(plan)})"
            reply.dropped.append(Dropped(text=item.action, why=why))
            continue
        reply.insertions.append(Insertion(after=after, action=item.action, reason=item.description))
    return reply
