"""What a verification run did, pass by pass: the plan's steps, the edits, each Judge pass."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from planverify.records.critique import Critique, Dropped, Veto
from planverify.records.evidence import WEAKEST, Evidence
from planverify.records.trim import OptionalNote

# `incomplete`: the cap was reached, and the last Judge pass left Driver steps unjudged
StopReason = Literal["no_objections", "no_change", "max_iterations", "incomplete", "static"]


class Step(BaseModel):
    """One step of the current plan and where it came from."""

    action: str  # the step in the action notation
    origin: int | None = None  # 0-based index in the input plan; None when inserted
    inserted_at: int | None = None  # iteration that inserted it
    after: int | None = None  # inserted steps: input index it follows (-1 = before the first)
    reason: str | None = None  # inserted steps: why
    evidence: Evidence | None = None  # inserted steps: how sure it is the plan needs them


class Edit(BaseModel):
    """One change the Planner made to the plan."""

    kind: Literal["remove", "insert"]  # what was done
    action: str  # the step removed or inserted
    origin: int | None = None  # removals of input steps: their 0-based input index
    after: int | None = None  # insertions: input index the step follows (-1 = before the first)
    reason: str  # the critique behind the edit
    evidence: Evidence = WEAKEST  # how sure the critique behind it is (planverify.records.evidence)
    optional: OptionalNote | None = None  # removals `natural` would keep: of which kind, and why


class OptionalStep(BaseModel):
    """A step of the judged plan that only `minimal` removes, kept under a `natural` run."""

    action: str  # the step
    origin: int | None = None  # its 0-based input index; None when inserted
    note: OptionalNote  # of which kind it is, and why `minimal` removes it


class Iteration(BaseModel):
    """The record of one Judge pass and the revision that followed it."""

    iteration: int  # 1-based Judge pass
    critique: Critique  # what the Judge said (with flags it dropped)
    edits: list[Edit] = Field(default_factory=list)  # what the Planner changed
    dropped: list[Dropped] = Field(default_factory=list)  # Planner output that was not applied
    vetoes: list[Veto] = Field(default_factory=list)  # flags and insertions the simulator refused
    certified: str | None = None  # the check the flags the simulator accepted passed, together
    judge_output: str | None = (
        None  # model Judges: output method of the answer (text, json_schema...)
    )
    planner_output: str | None = None  # model Planners that answered: their output method
    incomplete: bool = False  # the Judge's answer left Driver steps unjudged, even asked again
    uncovered: list[int] = Field(default_factory=list)  # those steps, 0-based in the judged plan
    optional: list[OptionalStep] = Field(
        default_factory=list
    )  # steps kept under `natural` that `minimal` removes


def merge_history(left: list[Iteration], right: list[Iteration]) -> list[Iteration]:
    """Reducer: add iterations, replacing an earlier record of the same iteration (an update
    sent through a server's API carries them as JSON objects)."""
    merged = {item.iteration: item for item in _iterations(left)}
    merged.update({item.iteration: item for item in _iterations(right)})
    return [merged[k] for k in sorted(merged)]


def _iterations(items: list[Any]) -> list[Iteration]:
    return [i if isinstance(i, Iteration) else Iteration.model_validate(i) for i in items]
