"""Command-line options that commands share: the model server, call limits, request parameters
and trim policies (Typer reads the help and bounds from these annotations; the bounds are those
every run's settings are validated with, `planverify.graphs.context.VerifierContext`)."""

from __future__ import annotations

from typing import Annotated, Literal

import typer

from planverify.graphs.context import MIN_RPS, MIN_TIMEOUT
from planverify.records.trim import TrimPolicy

MaxIterationsOption = Annotated[int, typer.Option(min=1, help="Cap on Judge passes per episode.")]
SplitOption = Annotated[
    str | None,
    typer.Option(help="TEACh inputs: keep only games under a directory of this name."),
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option(help="OpenAI-compatible server for openai:MODEL specs (vLLM, llama.cpp, Ollama)."),
]
RpsOption = Annotated[
    float | None,
    typer.Option(min=MIN_RPS, help="Model requests per second, per provider (default: no limit)."),
]
TpmOption = Annotated[
    int | None,
    typer.Option(min=1, help="Model tokens per minute, per provider (default: no limit)."),
]
TimeoutOption = Annotated[
    float,
    typer.Option(
        min=MIN_TIMEOUT,
        help="Seconds without progress (to the first streamed token, then between chunks) before a model call is abandoned and retried.",
    ),
]
MaxCallTimeOption = Annotated[
    float,
    typer.Option(
        min=MIN_TIMEOUT,
        help="Seconds a whole model call may take, however steadily it streams, before it is abandoned and retried.",
    ),
]
MaxRetriesOption = Annotated[
    int,
    typer.Option(min=0, help="Retries of a model call on rate limits, server errors and timeouts."),
]
TemperatureOption = Annotated[
    float | None,
    typer.Option(
        min=0.0,
        help="Sampling temperature of model judges and planners (default: 0; reasoning models: their own).",
    ),
]
ModelParamOption = Annotated[
    list[str] | None,
    typer.Option(
        "--model-param",
        help="KEY=VALUE sent with every model request (VALUE read as JSON when it parses, e.g. seed=7, max_tokens=2048, top_p=0.9); repeatable.",
    ),
]
JudgeOutputOption = Annotated[
    Literal["text", "structured"],
    typer.Option(
        help="How model judges answer: text (the ACTION/ANNOTATION protocol) or structured."
    ),
]
TrimOption = Annotated[
    TrimPolicy,
    typer.Option(
        help="Trim policy: natural removes only what the demonstrator would not have meant; "
        "minimal also removes every other step the goal does without (searches, devices "
        "switched off and on). Results carry both readings (score and export choose one).",
    ),
]
ReadTrimOption = Annotated[
    TrimPolicy | None,
    typer.Option(
        help="Read the results under this trim policy (natural or minimal), with no new "
        "verification; default: the policy each result was verified under. Applied before "
        "--min-evidence, which then undoes every removal below its level, so a step minimal "
        "removes at a weaker level stays in the plan.",
    ),
]
