"""How the Judge/Planner loop converges (the paper's Figure 3) and whether its plans can run.

A plan is *final after k rounds* when the loop made at most k revision rounds that changed it
(`VerificationResult.revisions`); the curve is the cumulative share over k = 0, 1, 2, ...
Plan length counts the Driver's steps (dialogue lines are never removed, so they are left
out). A plan is *executable* when `planverify.world.simulate` finds no step impossible in the
episode's scene (nothing held to put or pour, the hands already full, ...). Results with
status "error" are counted apart and left out of every share.

>>> from planverify.records.result import VerificationResult
>>> runs = [VerificationResult(id="a", revisions=0, stop_reason="no_objections"),
...         VerificationResult(id="b", revisions=2, stop_reason="max_iterations")]
>>> flow = convergence(runs)
>>> flow.rounds, flow.final_after, flow.stop_reasons
([1, 0, 1], [0.5, 0.5, 1.0], {'max_iterations': 1, 'no_objections': 1})
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from planverify.domains import Case, domain_of, is_default
from planverify.records.episode import Episode, Scene
from planverify.records.notation import NotationError, parse_action
from planverify.records.result import VerificationResult
from planverify.world import simulate

__all__ = ["Convergence", "EpisodeFlow", "convergence", "first_problem", "plan_length"]


class EpisodeFlow(BaseModel):
    """How the loop went for one episode."""

    id: str  # episode id
    status: str  # "ok" or "error"
    revisions: int  # revision rounds that changed the plan
    iterations: int  # Judge passes
    stop_reason: str | None  # why the loop ended
    length_before: int  # Driver steps of the input plan
    length_after: int  # Driver steps of the final plan
    executable: bool  # the simulator can carry out the final plan
    executable_before: bool  # the simulator can carry out the input plan
    problem: str | None = None  # the first impossible step of the final plan, when there is one


class Convergence(BaseModel):
    """Convergence figures of one iterative run over a set of episodes."""

    episodes: int = 0  # results with status ok (the base of every share)
    failed: int = 0  # results with status error, left out
    rounds: list[int] = Field(default_factory=list)  # episodes with exactly k revisions
    final_after: list[float] = Field(default_factory=list)  # share final after <= k revisions
    mean_revisions: float | None = None  # revision rounds per episode
    mean_iterations: float | None = None  # Judge passes per episode
    stop_reasons: dict[str, int] = Field(default_factory=dict)  # how the loops ended
    mean_steps_removed: float | None = None  # mean (input - final) Driver steps
    mean_length_reduction: float | None = None  # mean (input - final) / input, plans with steps
    executable: float | None = None  # share of final plans the simulator can carry out
    executable_before: float | None = None  # the same for the input plans
    per_episode: list[EpisodeFlow] = Field(default_factory=list)  # in result order


def plan_length(plan: Sequence[str]) -> int:
    """The number of Driver steps in a plan (lines outside the notation count as steps).

    >>> plan_length(["Commander.Say('hi')", "Driver.PickUp('Mug')", "Driver.Move(1.0)"])
    2
    """
    count = 0
    for line in plan:
        try:
            count += not parse_action(line).is_dialogue
        except NotationError:
            count += 1
    return count


def first_problem(plan: Sequence[str], scene: Scene | None) -> str | None:
    """Why the simulator cannot carry out a plan (its first impossible step), or None.

    >>> first_problem(["Driver.PutAOnB('Mug', 'Sink')"], None)
    "step 1 (Driver.PutAOnB('Mug', 'Sink')): nothing is held, so Mug cannot be put down"
    >>> first_problem(["Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'Sink')"], None) is None
    True
    """
    try:
        _, outcomes = simulate(list(plan), scene)
    except NotationError as exc:
        return f"not in the notation: {exc}"
    for i, outcome in enumerate(outcomes):
        if outcome.problem is not None:
            return f"step {i + 1} ({plan[i]}): {outcome.problem}"
    return None


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _problem(plan: Sequence[str], episode: Episode | None) -> str | None:
    """`first_problem` in the episode's own domain (TEACh's simulator, or its domain's)."""
    if episode is None or is_default(episode.domain):
        return first_problem(plan, episode.scene if episode is not None else None)
    return domain_of(episode.domain).first_problem(Case(lines=plan, program=episode.program))


def _flow(result: VerificationResult, episode: Episode | None) -> EpisodeFlow:
    before = result.original or (episode.actions if episode is not None else [])
    problem = _problem(result.refined, episode)
    return EpisodeFlow(
        id=result.id,
        status=result.status,
        revisions=result.revisions,
        iterations=result.iterations,
        stop_reason=result.stop_reason,
        length_before=plan_length(before),
        length_after=plan_length(result.refined),
        executable=problem is None,
        executable_before=_problem(before, episode) is None,
        problem=problem,
    )


def convergence(
    results: Sequence[VerificationResult], episodes: Mapping[str, Episode] | None = None
) -> Convergence:
    """Convergence figures of a run; `episodes` (by id) give the scenes the plans run in."""
    episodes = episodes or {}
    flows = [_flow(r, episodes.get(r.id)) for r in results]
    ok = [f for f in flows if f.status == "ok"]
    failed = len(flows) - len(ok)
    if not ok:
        return Convergence(failed=failed, per_episode=flows)
    rounds = [0] * (max(f.revisions for f in ok) + 1)
    for f in ok:
        rounds[f.revisions] += 1
    cumulative, final_after = 0, []
    for count in rounds:
        cumulative += count
        final_after.append(cumulative / len(ok))
    return Convergence(
        episodes=len(ok),
        failed=failed,
        rounds=rounds,
        final_after=final_after,
        mean_revisions=_mean([f.revisions for f in ok]),
        mean_iterations=_mean([f.iterations for f in ok]),
        stop_reasons=dict(sorted(Counter(str(f.stop_reason) for f in ok).items())),
        mean_steps_removed=_mean([f.length_before - f.length_after for f in ok]),
        mean_length_reduction=_mean(
            [(f.length_before - f.length_after) / f.length_before for f in ok if f.length_before]
        ),
        executable=_mean([f.executable for f in ok]),
        executable_before=_mean([f.executable_before for f in ok]),
        per_episode=flows,
    )
