"""Run-time settings of the verification graph (LangGraph `context_schema`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
)

from planverify.agents import label, version_of
from planverify.llm.calls import CallLimits, Ceilings
from planverify.llm.params import ModelOptions
from planverify.records.episode import problems
from planverify.records.result import GoalSource, RunSettings
from planverify.records.trim import DEFAULT_TRIM, TrimPolicy
from planverify.world import WORLD_VERSION

OutputMode = Literal["text", "structured"]


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


# Bounds of the numeric settings: the command line's options (planverify.cli.options) and every
# context, local or served, are held to the same ones.
MIN_RPS = 0.01  # requests per second
MIN_TIMEOUT = 1.0  # seconds per model call


class SettingsError(ValueError):
    """Run settings that cannot be used; one line per problem (which field, what is wrong)."""


def _agent(value: Any) -> Any:
    """A Judge or Planner: a spec string, or an object (a chat model, a Judge, a Planner)."""
    data = value is None or isinstance(value, int | float | bool | list | tuple | dict)
    if data or (isinstance(value, str) and not value.strip()):
        raise ValueError("give a spec such as 'rules', a preset or 'provider:model'")
    return value


def _http_url(value: str) -> str:
    from urllib.parse import urlsplit

    try:
        host = urlsplit(value).hostname
    except ValueError:
        host = None
    if not host or not value.startswith(("http://", "https://")):
        raise ValueError("must be an http:// or https:// URL with a host")
    return value


Agent = Annotated[Any, AfterValidator(_agent)]
Finite = Annotated[float, Field(allow_inf_nan=False)]
HttpUrl = Annotated[str, AfterValidator(_http_url)]


class VerifierContext(BaseModel):
    """Which models to use and how long to loop; given per run, never stored in state.

    The one model of run settings: the command line, the Python API and every served run
    (`planverify.graphs.served`) validate them here, so a bad value is refused with the same
    rule and message everywhere (`validated`).
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    judge: Agent = "rules"  # judge spec ("rules", "baseline", preset, provider:model) or object
    planner: Agent = "rules"  # planner spec ("rules", preset, provider:model) or object
    max_iterations: Annotated[int, Field(ge=1)] = 5  # cap on Judge passes
    static: bool = False  # one Judge pass, no revision
    review: bool = False  # pause after each Judge pass for a person to edit the critique
    goal_source: GoalSource = "given"  # the record's goal; the Commander's words; or inferred
    trim: TrimPolicy = DEFAULT_TRIM  # remove only what was not meant (natural), or all (minimal)
    certify: bool | None = None  # check flags and insertions by simulation; None: when grounded
    judge_output: OutputMode = "text"  # protocol the model Judge answers in
    grounding: bool = False  # give model Judges the simulator's facts about the plan
    base_url: HttpUrl | None = None  # OpenAI-compatible server for "openai:" specs (vLLM...)
    # How model calls of Judges and Planners given as specs go out (objects bring their own);
    # a rate of None is no limit:
    rps: Annotated[Finite | None, Field(ge=MIN_RPS)] = None  # requests per second per provider
    tpm: Annotated[int | None, Field(ge=1)] = None  # tokens per minute per provider
    timeout: Annotated[Finite | None, Field(ge=MIN_TIMEOUT)] = 120.0  # seconds without progress
    max_call_time: Annotated[Finite | None, Field(ge=MIN_TIMEOUT)] = 600.0  # seconds per call
    max_retries: Annotated[int, Field(ge=0)] = 5  # retries on rate limits, errors, timeouts
    concurrency: Annotated[int, Field(ge=1)] = 8  # cap on model calls in flight per provider
    # Request parameters of models made from specs (planverify.llm.params):
    temperature: Annotated[Finite | None, Field(ge=0.0)] = None  # None: 0, or the model's own
    model_params: dict[str, Any] = Field(default_factory=dict)  # more parameters, by name
    # the operator's limits over all runs of a served process (never given by a run)
    _ceilings: Ceilings | None = PrivateAttr(default=None)

    @classmethod
    def validated(cls, **values: Any) -> VerifierContext:
        """Settings from keyword values; `SettingsError` (one line per problem) when invalid."""
        try:
            return cls(**values)
        except ValidationError as exc:
            raise SettingsError("\n".join(problems(exc))) from None

    def values(self) -> dict[str, Any]:
        """The settings by name, as they are (Judge and Planner objects included)."""
        return {name: getattr(self, name) for name in type(self).model_fields}

    def model_options(self) -> ModelOptions:
        """The request-parameter overrides, hashable."""
        return ModelOptions.of(self.temperature, self.model_params)

    def requested(self, thing: Any, role: Literal["judge", "planner"]) -> dict[str, Any]:
        """The parameters a model role is called with: a spec's from `planverify.llm.params`, a
        model object's own."""
        from planverify.llm.models import ModelSpecError, parse_spec
        from planverify.llm.params import tuning

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
        changed = VerifierContext.validated(
            **{
                **self.values(),
                "rps": limits.rps,
                "tpm": limits.tpm,
                "timeout": limits.timeout,
                "max_call_time": limits.max_call_time,
                "max_retries": limits.max_retries,
                "concurrency": limits.concurrency,
            }
        )
        changed._ceilings = limits.ceilings or self._ceilings
        return changed

    def with_ceilings(self, ceilings: Ceilings) -> VerifierContext:
        """These settings under the operator's ceilings: rates and calls in flight no higher
        than theirs (a run may only lower them), and all runs together held to them."""

        def lower(value: Any, top: Any) -> Any:
            return top if value is None else value if top is None else min(value, top)

        changed = self.model_copy(
            update={
                "rps": lower(self.rps, ceilings.rps),
                "tpm": lower(self.tpm, ceilings.tpm),
                "concurrency": lower(self.concurrency, ceilings.concurrency),
            }
        )
        changed._ceilings = ceilings
        return changed

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
            trim=self.trim,
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
            max_call_time=self.max_call_time,
            max_retries=self.max_retries,
            concurrency=self.concurrency,
            ceilings=self._ceilings,
        )


def settings_of(context: Any) -> VerifierContext:
    """The settings of a run, whatever context its graph (or a parent graph) was given: the
    defaults for none, the object itself for `VerifierContext`, else the settings read by name
    (the keys of a dict, the attributes of an object). Names that are not settings belong to a
    parent graph and are ignored.
    """
    if isinstance(context, VerifierContext):
        return context
    if context is None:
        return VerifierContext()
    names = VerifierContext.model_fields
    if isinstance(context, Mapping):
        given = {k: v for k, v in context.items() if k in names}
    else:
        given = {k: getattr(context, k) for k in names if hasattr(context, k)}
    return VerifierContext.validated(**given)
