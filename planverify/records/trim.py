"""Trim policies: how much of what a plan can do without a Judge removes.

- `minimal` removes every step the goal does without (the shortest plan that still meets it);
- `natural` (the default) removes only what the demonstrator would not have meant. It is defined
  from `minimal`: every `natural` removal is a `minimal` removal, and a step only `minimal`
  removes is kept under `natural` with an `OptionalNote` saying of which kind it is (a search for
  where things are, a running device switched off and on around loading...).

A result carries the notes whichever policy it ran under (on the kept steps of a `natural` run, on
the removals of a `minimal` run), so one results file answers for both (`VerificationResult.under`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

from pydantic import BaseModel

from planverify.records.episode import Label
from planverify.records.evidence import Evidence

TrimPolicy = Literal["natural", "minimal"]
TRIM_POLICIES: tuple[TrimPolicy, ...] = get_args(TrimPolicy)
DEFAULT_TRIM: TrimPolicy = "natural"


class OptionalNote(BaseModel):
    """Why a step that `minimal` removes is one `natural` keeps."""

    kind: str  # the kind of step `natural` keeps (a domain's table names them, e.g. "search")
    reason: str  # why `minimal` removes it: the goal does without it
    evidence: Evidence  # how sure that removal is (planverify.records.evidence)


def labels_under(labels: Sequence[Label], trim: TrimPolicy) -> list[Label]:
    """The labels that are errors under a trim policy: under `minimal` all of them; under
    `natural` those without `"policy": "minimal"` (steps `natural` keeps as optional)."""
    if trim == "minimal":
        return list(labels)
    return [label for label in labels if (label.model_extra or {}).get("policy") != "minimal"]
