"""Run-time settings of the verification graph (LangGraph `context_schema`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from planverify.calls import CallLimits
from planverify.params import ModelOptions
from planverify.result import GoalSource, RunSettings
from planverify.world import WORLD_VERSION

OutputMode = Literal["text", "structured"]


def label(thing: Any) -> str:
    """The name of a Judge, Planner or chat model in settings and price lookups."""
    from langchain_core.language_models import BaseChatModel

    if isinstance(thing, str):
        return thing
    model = getattr(thing, "model", None)
    if isinstance(thing, BaseChatModel) or not isinstance(model, BaseChatModel):
        return str(
            getattr(thing, "name", None)
            or getattr(thing, "model_name", None)
            or type(thing).__name__
        )
    return label(model)


def version_of(thing: Any, role: Literal["judge", "planner"]) -> str | None:
    """The version of a Judge's or Planner's own logic (specs resolve to the built-in ones)."""
    from planverify.agents import version_of_spec

    if isinstance(thing, str):
        return version_of_spec(thing, role)
    value = getattr(thing, "version", None)
    return str(value) if value is not None else None


def model_parameters(thing: Any) -> dict[str, Any]:
    """The parameters of a chat model given as an object (temperature, seed, ...) that can
    change its answers: scalar values of LangChain's `_identifying_params`."""
    model = getattr(thing, "model", thing)
    params = getattr(model, "_identifying_params", None)
    if not isinstance(params, dict):
        return {}
    return {
        str(k): v
        for k, v in sorted(params.items())
        if isinstance(v, str | int | float | bool) and "key" not in str(k).lower()
    }


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
    goal_source: GoalSource = "given"  # the record's goal; the Commander's words; or inferred
    certify: bool | None = None  # check flags and insertions by simulation; None: when grounded
    judge_output: OutputMode = "text"  # protocol the model Judge answers in
    grounding: bool = False  # give model Judges the simulator's facts about the plan
    base_url: str | None = None  # OpenAI-compatible server for "openai:" specs (vLLM, Ollama...)
    # How model calls of Judges and Planners given as specs go out (objects bring their own):
    rps: float | None = None  # requests per second per provider, None = no limit
    tpm: int | None = None  # tokens per minute per provider, None = no limit
    timeout: float | None = 120.0  # seconds per model call
    max_retries: int = 5  # retries on rate limits, server errors and timeouts
    concurrency: int = 8  # cap on the adaptive limit of model calls in flight per provider
    # Request parameters of models made from specs (planverify.params):
    temperature: float | None = None  # None: 0, or the model's own for reasoning models
    model_params: dict[str, Any] = field(default_factory=dict)  # more parameters, by name

    def model_options(self) -> ModelOptions:
        """The request-parameter overrides, hashable."""
        return ModelOptions.of(self.temperature, self.model_params)

    def requested(self, thing: Any, role: Literal["judge", "planner"]) -> dict[str, Any]:
        """The parameters a model role is called with: a spec's from `planverify.params`, a
        model object's own."""
        from planverify.models import ModelSpecError, parse_spec
        from planverify.params import tuning

        if not isinstance(thing, str):
            return model_parameters(thing)
        if thing in (("rules", "baseline") if role == "judge" else ("rules",)):
            return {}
        try:
            spec = parse_spec(thing, base_url=self.base_url)
        except ModelSpecError:
            return {}  # resolving the spec reports the error
        return tuning(spec, self.model_options()).settings()

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
            concurrency=limits.concurrency,
        )

    def settings(self) -> RunSettings:
        """What these settings mean for results (Judge and Planner may be specs or objects)."""
        from planverify.prompts import PROMPT_VERSION
        from planverify.world.certify import CERTIFY_VERSION

        roles: tuple[tuple[Literal["judge", "planner"], Any], ...] = (
            ("judge", self.judge),
            ("planner", self.planner),
        )
        models: dict[str, dict[str, Any]] = {
            role: params for role, thing in roles if (params := self.requested(thing, role))
        }
        return RunSettings(
            judge=label(self.judge),
            planner=label(self.planner),
            mode="static" if self.static else "iterative",
            max_iterations=self.max_iterations,
            judge_output=self.judge_output,
            grounding=self.grounding,
            review=self.review,
            goal=self.goal_source,
            base_url=self.base_url,
            prompts=PROMPT_VERSION,
            certify=self.certify,
            certify_version=None if self.certify is False else CERTIFY_VERSION,
            world=WORLD_VERSION,
            judge_version=version_of(self.judge, "judge"),
            planner_version=version_of(self.planner, "planner"),
            models=models,
        )

    def limits(self) -> CallLimits:
        """The call limits these settings describe."""
        return CallLimits(
            rps=self.rps,
            tpm=self.tpm,
            timeout=self.timeout,
            max_retries=self.max_retries,
            concurrency=self.concurrency,
        )
