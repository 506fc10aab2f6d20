"""The result of verifying one plan: exactly one line of the output JSONL."""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import to_json

from planverify.episode import Episode
from planverify.graphs.state import Iteration, PlanState, StopReason
from planverify.redaction import public_url, redacted, scrub, without_secrets
from planverify.usage import TokenUsage


class Verdict(BaseModel):
    """What happened to one input step."""

    index: int  # 0-based position in the input plan
    action: str  # the step
    verdict: Literal["keep", "remove"]  # its fate in the refined plan
    reason: str | None = None  # why it was removed
    iteration: int | None = None  # the Judge pass that removed it


class Inserted(BaseModel):
    """A step of the refined plan that was not in the input."""

    after_index: int  # input index of the step it follows; -1 = before the first
    action: str  # the new step
    reason: str | None = None  # the critique it answers
    iteration: int  # the Judge pass that asked for it


GoalSource = Literal["given", "dialogue", "infer"]


class RunSettings(BaseModel):
    """Everything about a run that can change its results; its hash (`key`) is part of every
    checkpoint thread id and journal line, so a result is never reused under other settings."""

    model_config = ConfigDict(extra="allow", frozen=True)

    judge: str  # judge spec or name
    planner: str  # planner spec or name
    mode: Literal["iterative", "static"] = "iterative"  # static: one Judge pass, no revision
    max_iterations: int = 5  # cap on Judge passes
    judge_output: str = "text"  # protocol of model Judges and Planners
    grounding: bool = False  # simulator facts in model Judge prompts
    review: bool = False  # a person reviews each critique
    goal: GoalSource = "given"  # where the goal comes from
    base_url: str | None = None  # OpenAI-compatible server
    certify: bool | None = None  # flags and insertions checked by simulation (None: when grounded)
    certify_version: str | None = None  # version of those checks (None: certify off)
    world: str | None = None  # version of the world model (simulator, goals, repairs)
    prompts: str | None = None  # version of the prompt templates
    judge_version: str | None = None  # version of the Judge's own logic
    planner_version: str | None = None  # version of the Planner's own logic
    models: dict[str, dict[str, Any]] = Field(default_factory=dict)  # role -> model parameters

    @field_validator("base_url")
    @classmethod
    def _without_user_info(cls, url: str | None) -> str | None:
        return public_url(url) if url else url  # never stored with its credentials

    @field_validator("models")
    @classmethod
    def _secrets_redacted(cls, models: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {role: redacted(params) for role, params in models.items()}

    @property
    def key(self) -> str:
        """A short hash of these settings (secret parameters left out)."""
        data = self.model_dump(mode="json", exclude_none=True)
        if "models" in data:
            data["models"] = {role: without_secrets(p) for role, p in data["models"].items()}
        return hashlib.sha256(to_json(data)).hexdigest()[:10]


class VerificationResult(BaseModel):
    """The outcome of verifying one plan; `model_dump(mode="json")` is its JSONL record."""

    id: str  # episode id
    input_digest: str | None = None  # digest of the input it was computed on (Episode.input_digest)
    settings: RunSettings | None = None  # the run settings it was computed under
    goal: str | None = None  # the goal used (given or inferred)
    status: Literal["ok", "error"] = "ok"  # whether verification finished
    error: str | None = None  # the error message when status is "error"
    original: list[str] = Field(default_factory=list)  # the input plan
    refined: list[str] = Field(default_factory=list)  # the final plan
    verdicts: list[Verdict] = Field(default_factory=list)  # one per input step
    inserted: list[Inserted] = Field(default_factory=list)  # steps added
    iterations: int = 0  # Judge passes
    revisions: int = 0  # revision rounds that changed the plan
    stop_reason: StopReason | None = None  # why the loop ended
    history: list[Iteration] = Field(default_factory=list)  # critiques, edits and drops per pass
    usage: dict[str, TokenUsage] = Field(default_factory=dict)  # tokens per role
    cost_usd: float | None = None  # what the tokens cost; None when a model has no known price
    warnings: list[str] = Field(default_factory=list)  # notes about the input

    @classmethod
    def from_state(cls, state: PlanState) -> VerificationResult:
        """Summarise a finished graph state."""
        removed: dict[int, tuple[str, int]] = {}
        if state.stop_reason == "static" and state.history:
            first = state.history[0]
            for flag in first.critique.flags:
                origin = state.plan[flag.step].origin if flag.step < len(state.plan) else None
                if origin is not None:
                    removed[origin] = (flag.reason, first.iteration)
        for record in state.history:
            for edit in record.edits:
                if edit.kind == "remove" and edit.origin is not None:
                    removed[edit.origin] = (edit.reason, record.iteration)
        verdicts = [
            Verdict(
                index=i,
                action=line,
                verdict="remove",
                reason=removed[i][0],
                iteration=removed[i][1],
            )
            if i in removed
            else Verdict(index=i, action=line, verdict="keep")
            for i, line in enumerate(state.actions)
        ]
        inserted = [
            Inserted(
                after_index=step.after if step.after is not None else -1,
                action=step.action,
                reason=step.reason,
                iteration=step.inserted_at or 0,
            )
            for step in state.plan
            if step.origin is None
        ]
        return cls(
            id=state.episode_id,
            input_digest=state.input_digest,
            goal=state.goal,
            original=list(state.actions),
            refined=state.lines(),
            verdicts=verdicts,
            inserted=inserted,
            iterations=state.iteration,
            revisions=sum(1 for record in state.history if record.edits),
            stop_reason=state.stop_reason,
            history=list(state.history),
            usage=dict(state.usage),
            warnings=list(state.warnings),
        )

    @classmethod
    def failed(
        cls, episode: Episode, message: str, settings: RunSettings | None = None
    ) -> VerificationResult:
        """The record of an episode that could not be verified; the input is kept unchanged."""
        return cls(
            id=episode.id,
            input_digest=episode.input_digest,
            settings=settings,
            goal=episode.goal,
            status="error",
            error=message,
            original=list(episode.actions),
            refined=list(episode.actions),
        )

    @classmethod
    def from_exception(
        cls, episode: Episode, exc: BaseException, settings: RunSettings | None = None
    ) -> VerificationResult:
        """`failed`, with the exception's type and message as the error."""
        return cls.failed(episode, describe_error(exc), settings)

    def belongs_to(self, episode: Episode, settings: RunSettings | None = None) -> bool:
        """Whether this result was computed on exactly this episode's input (and, when given,
        under these settings)."""
        if self.id != episode.id or self.input_digest != episode.input_digest:
            return False
        return settings is None or (self.settings is not None and self.settings.key == settings.key)


def describe_error(exc: BaseException) -> str:
    """`Type: message` of an exception; never empty, even for a bare `TimeoutError()`; URLs
    without their user info."""
    return scrub(f"{type(exc).__name__}: {exc}".strip().removesuffix(":"))
