"""The result of verifying one plan: exactly one line of the output JSONL."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from typing import Any, Literal, Protocol, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import to_json

from planverify.records.episode import Episode
from planverify.records.evidence import WEAKEST, Evidence
from planverify.records.history import Iteration, Step, StopReason
from planverify.records.redaction import public_url, redacted, scrub, without_secrets
from planverify.records.trim import DEFAULT_TRIM, OptionalNote, TrimPolicy
from planverify.records.usage import TokenUsage


class FinishedState(Protocol):
    """What a result is made from: the verification graph's state once the loop has ended
    (`planverify.graphs.state.PlanState`)."""

    episode_id: str
    input_digest: str | None
    goal: str | None
    actions: list[str]
    plan: list[Step]
    iteration: int
    history: list[Iteration]
    stop_reason: StopReason | None
    usage: dict[str, TokenUsage]
    warnings: list[str]

    def lines(self) -> list[str]: ...


class Verdict(BaseModel):
    """What happened to one input step. Positions in records are 0-based; text for people
    (reasons, warnings, messages) counts steps from 1, so this is step `index + 1`."""

    index: int  # 0-based position in the input plan (step `index + 1` in any text)
    action: str  # the step
    verdict: Literal["keep", "remove"]  # its fate in the refined plan
    reason: str | None = None  # why it was removed
    iteration: int | None = None  # the Judge pass that removed it (optional keeps: first noted it)
    evidence: Evidence | None = (
        None  # removals: how sure (planverify.records.evidence); None on keeps
    )
    optional: OptionalNote | None = None  # a step only `minimal` removes (planverify.records.trim)

    @model_validator(mode="after")
    def _level_of_removals_only(self) -> Self:
        if self.verdict == "keep" and self.evidence is not None:
            raise ValueError(f"step {self.index + 1} is kept: a kept step has no evidence level")
        if self.verdict == "remove" and self.evidence is None:
            self.evidence = WEAKEST  # a record written before removals had levels
        return self


class Inserted(BaseModel):
    """A step of the refined plan that was not in the input."""

    after_index: int  # 0-based input index of the step it follows; -1 = before the first
    action: str  # the new step
    reason: str | None = None  # the critique it answers
    iteration: int  # the Judge pass that asked for it
    evidence: Evidence = WEAKEST  # how sure it is the plan needs it (planverify.records.evidence)

    @field_validator("evidence", mode="before")
    @classmethod
    def _unknown_level_is_weakest(cls, value: object) -> object:
        return WEAKEST if value is None else value


PlanStep = tuple[Literal["input", "inserted"], int]  # where a plan's step comes from


def arranged(
    original: Sequence[str],
    kept: Sequence[bool],
    inserted: Sequence[Inserted],
    dropped: Collection[int] = frozenset(),
) -> list[PlanStep]:
    """Where each step of the plan of the kept input steps and these insertions comes from:
    `("input", i)` for input step i, `("inserted", k)` for `inserted[k]` (unless in `dropped`).
    Each insertion goes after the input step it follows (`after_index`), several after one
    step in their order."""
    after: dict[int, list[int]] = {}
    for k, item in enumerate(inserted):
        if k not in dropped:
            after.setdefault(item.after_index, []).append(k)
    plan: list[PlanStep] = [("inserted", k) for k in after.get(-1, [])]
    for i in range(len(original)):
        if kept[i]:
            plan.append(("input", i))
        plan.extend(("inserted", k) for k in after.get(i, []))
    return plan


def plan_of(
    original: Sequence[str], kept: Sequence[bool], inserted: Sequence[Inserted]
) -> list[str]:
    """The plan of the kept input steps and these insertions (`arranged`), as action lines."""
    return [
        original[k] if source == "input" else inserted[k].action
        for source, k in arranged(original, kept, inserted)
    ]


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
    trim: TrimPolicy = DEFAULT_TRIM  # how much of what the goal does without is removed
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

    @field_validator("error")
    @classmethod
    def _no_secret_in_error(cls, error: str | None) -> str | None:
        """An error's text quotes whatever raised it (an SDK, a server): it never keeps a secret
        value of this process, nor credentials in a URL."""
        return None if error is None else scrub(error)

    @classmethod
    def from_state(cls, state: FinishedState) -> VerificationResult:
        """Summarise a finished graph state."""
        removed: dict[int, Verdict] = {}
        if state.stop_reason == "static" and state.history:
            first = state.history[0]
            for flag in first.critique.flags:
                origin = state.plan[flag.step].origin if flag.step < len(state.plan) else None
                if origin is not None:
                    removed[origin] = Verdict(
                        index=origin,
                        action=state.actions[origin],
                        verdict="remove",
                        reason=flag.reason,
                        iteration=first.iteration,
                        evidence=flag.evidence,
                        optional=flag.optional,
                    )
        optional: dict[int, tuple[int, OptionalNote]] = {}
        for record in state.history:
            for edit in record.edits:
                if edit.kind == "remove" and edit.origin is not None:
                    removed[edit.origin] = Verdict(
                        index=edit.origin,
                        action=state.actions[edit.origin],
                        verdict="remove",
                        reason=edit.reason,
                        iteration=record.iteration,
                        evidence=edit.evidence,
                        optional=edit.optional,
                    )
            for kept in record.optional:  # the first pass to note it counts its input steps
                if kept.origin is not None:
                    optional.setdefault(kept.origin, (record.iteration, kept.note))
        verdicts = [
            removed.get(i)
            or Verdict(
                index=i,
                action=line,
                verdict="keep",
                iteration=optional[i][0] if i in optional else None,
                optional=optional[i][1] if i in optional else None,
            )
            for i, line in enumerate(state.actions)
        ]
        inserted = [
            Inserted(
                after_index=step.after if step.after is not None else -1,
                action=step.action,
                reason=step.reason,
                iteration=step.inserted_at or 0,
                evidence=step.evidence or WEAKEST,
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

    def only(self, levels: Collection[Evidence]) -> VerificationResult:
        """This result as if only its removals and insertions at these evidence levels had been
        made: a step removed at another level is kept (verdict `keep`), an insertion at another
        level is left out, the refined plan is rebuilt accordingly (a static result's stays the
        input), and every pass's critique and edits keep only flags, missing steps and edits at
        these levels. Positions in `inserted` change; the input, settings and usage do not."""
        wanted = frozenset(levels)
        verdicts = [
            v
            if v.evidence is None or v.evidence in wanted
            else Verdict(index=v.index, action=v.action, verdict="keep")
            for v in self.verdicts
        ]
        inserted = [item for item in self.inserted if item.evidence in wanted]
        history = [
            record.model_copy(
                update={
                    "critique": record.critique.model_copy(
                        update={
                            "flags": [f for f in record.critique.flags if f.evidence in wanted],
                            "missing": [m for m in record.critique.missing if m.evidence in wanted],
                        }
                    ),
                    "edits": [e for e in record.edits if e.evidence in wanted],
                }
            )
            for record in self.history
        ]
        if (verdicts, inserted, history) == (self.verdicts, self.inserted, self.history):
            return self
        removed = {v.index for v in verdicts if v.verdict == "remove"}
        kept = [i not in removed for i in range(len(self.original))]
        static = self.stop_reason == "static"
        refined = self.refined if static else plan_of(self.original, kept, inserted)
        return self.model_copy(
            update={
                "verdicts": verdicts,
                "inserted": inserted,
                "history": history,
                "refined": refined,
            }
        )

    @property
    def trim(self) -> TrimPolicy:
        """The trim policy the run was made under (`natural` for records without settings)."""
        return self.settings.trim if self.settings is not None else DEFAULT_TRIM

    def under(self, trim: TrimPolicy) -> VerificationResult:
        """This result as the other trim policy reads it, with no new verification: under
        `natural`, a removal with an `optional` note is kept (its note stays); under `minimal`,
        a kept step with a note is removed, with the note's reason and evidence. The refined
        plan is rebuilt (a static result's stays the input); the history stays as it ran."""
        if trim == "natural":
            verdicts = [
                v.model_copy(update={"verdict": "keep", "reason": None, "evidence": None})
                if v.verdict == "remove" and v.optional is not None
                else v
                for v in self.verdicts
            ]
        else:
            verdicts = [
                v.model_copy(
                    update={
                        "verdict": "remove",
                        "reason": v.optional.reason,
                        "evidence": v.optional.evidence,
                    }
                )
                if v.verdict == "keep" and v.optional is not None
                else v
                for v in self.verdicts
            ]
        if verdicts == self.verdicts:
            return self
        kept = [v.verdict == "keep" for v in verdicts]
        static = self.stop_reason == "static"
        refined = self.refined if static else plan_of(self.original, kept, self.inserted)
        return self.model_copy(update={"verdicts": verdicts, "refined": refined})

    def inconsistency(self) -> str | None:
        """What in a finished result does not fit together (None when all does): one verdict
        per input step, in order and of that step, and insertions after steps the plan has."""
        if self.status == "error":
            return None
        steps = len(self.original)
        if len(self.verdicts) != steps:
            return f"{len(self.verdicts)} verdict(s) for {steps} input step(s)"
        for i, (verdict, line) in enumerate(zip(self.verdicts, self.original, strict=True)):
            if verdict.index != i or verdict.action != line:
                return (
                    f"verdict {i + 1} is on step {verdict.index + 1} {verdict.action!r}, "
                    f"input step {i + 1} is {line!r}"
                )
        for k, item in enumerate(self.inserted):
            if not -1 <= item.after_index < steps:
                return f"insertion {k + 1} follows step {item.after_index + 1} of {steps}"
        return None

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
