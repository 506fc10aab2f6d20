"""What a Judge says about a plan: flags on steps and missing steps, plus what was dropped."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from planverify.records.evidence import WEAKEST, Evidence
from planverify.records.trim import OptionalNote


class Flag(BaseModel):
    """A step the Judge wants removed."""

    step: int  # 0-based position in the plan the Judge was shown
    action: str  # the flagged step, as it reads in that plan
    reason: str  # the Judge's rationale
    evidence: Evidence = WEAKEST  # how sure the removal is (planverify.records.evidence)
    optional: OptionalNote | None = None  # a step only `minimal` removes: of which kind, and why


class Missing(BaseModel):
    """A step the Judge says the plan lacks."""

    description: str  # what is needed, in the Judge's words
    action: str | None = None  # a concrete action, when the Judge gave one
    after: int | None = None  # 0-based step it should follow (-1 = first), when known
    evidence: Evidence = (
        WEAKEST  # how sure it is that the plan needs it (planverify.records.evidence)
    )


class Dropped(BaseModel):
    """Something a Judge or Planner said that could not be applied, and why."""

    text: str  # the offending fragment
    why: str  # why it was dropped


class Critique(BaseModel):
    """One Judge pass over a plan."""

    flags: list[Flag] = Field(default_factory=list)  # steps to remove, at most one per step
    missing: list[Missing] = Field(default_factory=list)  # steps to add
    dropped: list[Dropped] = Field(default_factory=list)  # flags that were not tied to a step
    optional: list[Flag] = Field(
        default_factory=list
    )  # steps only `minimal` removes, kept under the run's `natural` trim policy (no objection)

    @property
    def objections(self) -> bool:
        """Whether the Judge asks for any change."""
        return bool(self.flags or self.missing)


class Veto(BaseModel):
    """A flag or an insertion the simulator refused (`certify`), and why."""

    kind: Literal["flag", "insertion"]  # what was vetoed
    action: str  # the step flagged or inserted
    step: int | None = None  # flags: 0-based position in the plan the Judge saw
    after: int | None = None  # insertions: the plan position it was to follow
    reason: str  # the simulator's reason
