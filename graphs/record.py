"""The result record as a graph step: what a served run returns.

`record` runs once the loop has ended (a deferred node) and writes the fields of
`VerificationResult` that are not state channels already: the state's own `goal`,
`input_digest`, `stop_reason`, `history`, `usage` and `warnings` are the record's fields of
those names, and `history`, `usage` and `warnings` have reducers, so writing them again would
add them twice. The values are plain JSON data (what a server sends and its checkpointer stores
without knowing this package's types).
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from planverify.domains import settings_for
from planverify.graphs.context import VerifierContext, settings_of
from planverify.graphs.state import PlanState
from planverify.llm.costs import Spend
from planverify.records.result import VerificationResult

RECORD_ONLY = tuple(
    name for name in VerificationResult.model_fields if name not in PlanState.model_fields
)  # the record's fields that are not state channels: the ones `record` writes


def result_of(state: PlanState, context: VerifierContext) -> VerificationResult:
    """The record of a finished state, with the settings and cost of the run's context, as the
    local `Verifier` makes it."""
    result = VerificationResult.from_state(state)
    result.settings = settings_for(context.settings(), state.domain)
    spend = Spend(
        {
            "judge": result.settings.judge,
            "planner": result.settings.planner,
            "goal": result.settings.planner,
        }
    )
    spend.add(result.usage)
    result.cost_usd = None if spend.unpriced else spend.cost
    return result


async def record(state: PlanState, runtime: Runtime[VerifierContext]) -> dict[str, Any]:
    """Write the result record's own fields (see the module's docstring)."""
    data = result_of(state, settings_of(runtime.context)).model_dump(mode="json")
    return {name: data[name] for name in RECORD_ONLY}
