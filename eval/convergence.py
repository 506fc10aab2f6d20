"""How the loop converges (the paper's Figure 3) and whether the final plans can be carried out.

>>> from planverify.result import VerificationResult
>>> runs = [VerificationResult(id="a", revisions=0, stop_reason="no_objections"),
...         VerificationResult(id="b", revisions=2, stop_reason="no_objections")]
>>> convergence(runs).final_after
[0.5, 0.5, 1.0]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from planverify.episode import Episode
from planverify.result import VerificationResult
from planverify.world import simulate


class Convergence(BaseModel):
    """Convergence of one run over a set of episodes."""

    episodes: int = 0  # finished episodes counted
    final_after: list[float] = Field(default_factory=list)  # share final after 0, 1, 2... revisions
    stop_reasons: dict[str, int] = Field(default_factory=dict)  # how the loops ended
    mean_length_reduction: float | None = None  # mean (input - refined) / input length
    executable: float | None = None  # share of final plans the simulator can carry out


def convergence(
    results: Sequence[VerificationResult], episodes: Mapping[str, Episode] | None = None
) -> Convergence:
    """Convergence figures of the results with status ok."""
    ok = [r for r in results if r.status == "ok"]
    if not ok:
        return Convergence()
    top = max(r.revisions for r in ok)
    final_after = [sum(r.revisions <= k for r in ok) / len(ok) for k in range(top + 1)]
    sized = [r for r in ok if r.original]
    reduction = (
        sum((len(r.original) - len(r.refined)) / len(r.original) for r in sized) / len(sized)
        if sized
        else None
    )
    executable = None
    if episodes is not None:
        runnable = 0
        for r in ok:
            scene = episodes[r.id].scene if r.id in episodes else None
            _, outcomes = simulate(r.refined, scene)
            runnable += all(o.problem is None for o in outcomes)
        executable = runnable / len(ok)
    return Convergence(
        episodes=len(ok),
        final_after=final_after,
        stop_reasons=dict(Counter(str(r.stop_reason) for r in ok)),
        mean_length_reduction=reduction,
        executable=executable,
    )
