"""Run-time settings of the verification graph (LangGraph `context_schema`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from planverify.calls import CallLimits

OutputMode = Literal["text", "structured"]


@dataclass(kw_only=True)
class VerifierContext:
    """Which models to use and how long to loop; given per run, never stored in state."""

    judge: Any = (
        "rules"  # judge spec ("rules", "baseline", "provider:model", preset), model or Judge
    )
    planner: Any = "rules"  # planner spec ("rules", "provider:model", preset), model or Planner
    max_iterations: int = 5  # cap on Judge passes
    static: bool = False  # one Judge pass, no revision
    review: bool = False  # pause after each Judge pass for a person to edit the critique
    judge_output: OutputMode = "text"  # protocol the model Judge answers in
    grounding: bool = False  # give model Judges the simulator's facts about the plan
    base_url: str | None = None  # OpenAI-compatible server for "openai:" specs (vLLM, Ollama...)
    # How model calls of Judges and Planners given as specs go out (objects bring their own):
    rps: float | None = None  # requests per second per provider, None = no limit
    tpm: int | None = None  # tokens per minute per provider, None = no limit
    timeout: float | None = 120.0  # seconds per model call
    max_retries: int = 5  # retries on rate limits, server errors and timeouts

    def with_limits(self, limits: CallLimits | None) -> VerifierContext:
        """These settings with the model-call limits of `limits` (the same when None)."""
        if limits is None:
            return self
        return replace(
            self,
            rps=limits.rps,
            tpm=limits.tpm,
            timeout=limits.timeout,
            max_retries=limits.max_retries,
        )

    def limits(self) -> CallLimits:
        """The call limits these settings describe."""
        return CallLimits(
            rps=self.rps, tpm=self.tpm, timeout=self.timeout, max_retries=self.max_retries
        )
