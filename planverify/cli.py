"""The `planverify` command line."""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from planverify.calls import CallLimits
from planverify.episode import Episode, EpisodeError, dump_jsonl_line
from planverify.models import ModelSpecError, presets
from planverify.result import VerificationResult
from planverify.runner import run

app = typer.Typer(
    name="planverify",
    help="Verify and clean embodied-AI task plans with an iterative Judge/Planner loop.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err = Console(stderr=True)
out = Console()

DEFAULT_CHECKPOINT = Path(".planverify") / "checkpoints.sqlite"


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print a one-line error and return the exit to raise."""
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


def _summary(results: list[VerificationResult], output: Path | None) -> None:
    ok = [r for r in results if r.status == "ok"]
    table = Table(title="planverify", show_header=False, title_justify="left")
    table.add_row("episodes", f"{len(results)} ({len(ok)} ok, {len(results) - len(ok)} error)")
    if ok:
        removed = sum(sum(v.verdict == "remove" for v in r.verdicts) for r in ok)
        inserted = sum(len(r.inserted) for r in ok)
        before = sum(len(r.original) for r in ok)
        after = sum(len(r.refined) for r in ok)
        reasons = Counter(r.stop_reason for r in ok)
        table.add_row("steps", f"{before} -> {after} ({removed} removed, {inserted} inserted)")
        table.add_row("mean Judge passes", f"{sum(r.iterations for r in ok) / len(ok):.2f}")
        table.add_row("stop reasons", ", ".join(f"{k}: {v}" for k, v in reasons.most_common()))
        tokens = sum(u.total for r in results for u in r.usage.values())
        table.add_row("model tokens", str(tokens))
        if tokens:
            costs = [r.cost_usd for r in results if r.usage]
            known = sum(c for c in costs if c is not None)
            unknown = sum(c is None for c in costs)
            note = f" ({unknown} episode(s) use models without a price)" if unknown else ""
            table.add_row("estimated cost", f"${known:.2f}{note}")
    if output is not None:
        table.add_row("output", str(output))
    out.print(table)


@app.command()
def verify(
    inputs: Annotated[
        list[str],
        typer.Argument(
            help="JSONL files of episodes ({id, goal?, actions, scene?} a line), or TEACh game files, directories and globs."
        ),
    ],
    judge: Annotated[
        str,
        typer.Option(
            help="Judge: rules (offline, grounded), baseline (the paper's rule baseline), a preset (see `planverify presets`) or provider:model."
        ),
    ] = "rules",
    planner: Annotated[
        str, typer.Option(help="Planner: rules (no model), a preset or provider:model.")
    ] = "rules",
    max_iterations: Annotated[
        int, typer.Option(min=1, help="Cap on Judge passes per episode.")
    ] = 5,
    static: Annotated[
        bool,
        typer.Option(
            "--static", help="One Judge pass, no revision (verdicts are the Judge's proposals)."
        ),
    ] = False,
    goal: Annotated[
        str,
        typer.Option(
            help="Goal source: given (the record's goal; inferred when absent), dialogue (the Commander's words) or infer (ask the planner model)."
        ),
    ] = "given",
    checkpoint: Annotated[
        str,
        typer.Option(
            help="SQLite checkpoint file, or a postgresql:// URL; rerunning the same command resumes from it."
        ),
    ] = str(DEFAULT_CHECKPOINT),
    no_checkpoint: Annotated[
        bool, typer.Option("--no-checkpoint", help="Keep nothing between runs.")
    ] = False,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write results as JSONL here (one record per episode)."
        ),
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Episodes verified at once.")] = 8,
    judge_output: Annotated[
        str,
        typer.Option(
            help="How model judges answer: text (the ACTION/ANNOTATION protocol) or structured."
        ),
    ] = "text",
    base_url: Annotated[
        str | None,
        typer.Option(
            help="OpenAI-compatible server for openai:MODEL specs (vLLM, llama.cpp, Ollama)."
        ),
    ] = None,
    limit: Annotated[
        int | None, typer.Option(min=1, help="Verify only the first N episodes.")
    ] = None,
    review: Annotated[
        bool,
        typer.Option(
            "--review", help="Pause after each Judge pass so you can accept or edit the critique."
        ),
    ] = False,
    split: Annotated[
        str | None,
        typer.Option(help="TEACh inputs: keep only games under a directory of this name."),
    ] = None,
    rps: Annotated[
        float | None,
        typer.Option(min=0.01, help="Model requests per second, per provider (default: no limit)."),
    ] = None,
    tpm: Annotated[
        int | None,
        typer.Option(min=1, help="Model tokens per minute, per provider (default: no limit)."),
    ] = None,
    timeout: Annotated[
        float, typer.Option(min=1.0, help="Seconds before a model call is abandoned and retried.")
    ] = 120.0,
    max_retries: Annotated[
        int,
        typer.Option(
            min=0, help="Retries of a model call on rate limits, server errors and timeouts."
        ),
    ] = 5,
    server: Annotated[
        str | None,
        typer.Option(
            help="Run on a LangGraph server (e.g. http://127.0.0.1:2024): one thread per episode; checkpoints live there."
        ),
    ] = None,
    retry_failed: Annotated[
        bool,
        typer.Option(
            "--retry-failed",
            help="Keep the ok records already in --output and verify only the failed or missing episodes.",
        ),
    ] = False,
    grounding: Annotated[
        bool,
        typer.Option(
            "--grounding",
            help="Give a model Judge the simulator's facts: how objects start, steps that change nothing.",
        ),
    ] = False,
) -> None:
    """Verify plans: flag unneeded steps, add missing ones, loop until the Judge has no objections."""
    from planverify.api import Verifier, open_checkpointer

    if goal not in ("given", "dialogue", "infer"):
        raise fail(f"--goal must be given, dialogue or infer, not {goal!r}")
    if judge_output not in ("text", "structured"):
        raise fail(f"--judge-output must be text or structured, not {judge_output!r}")
    if goal == "infer" and planner == "rules":
        raise fail(
            "--goal infer needs a model planner (--planner provider:model); the rules planner has no model"
        )
    if grounding and judge in ("rules", "baseline"):
        raise fail(f"--grounding is for model judges; the {judge!r} judge needs no prompt")
    reuse: dict[str, VerificationResult] = {}
    if retry_failed:
        if output is None or not output.is_file():
            raise fail("--retry-failed needs the --output file of an earlier run")
        from planverify.batch import read_results

        reuse = {k: r for k, r in read_results(output).items() if r.status == "ok"}
    if review and not sys.stdin.isatty():
        raise fail("--review needs an interactive terminal")
    from planverify.sources import count_inputs

    total = count_inputs(inputs, split=split)
    if limit is not None:
        total = min(total, limit)

    limits = CallLimits(rps=rps, tpm=tpm, timeout=timeout, max_retries=max_retries)
    if server is not None:
        if review:
            raise fail("--review works with local runs only, not with --server")
        if no_checkpoint or checkpoint != str(DEFAULT_CHECKPOINT):
            raise fail(
                "--checkpoint and --no-checkpoint are for local runs: with --server the "
                "server keeps the checkpoints (its own database)"
            )
        return _verify_on_server(
            server,
            inputs,
            split=split,
            limit=limit,
            total=total,
            goal=goal,
            output=output,
            concurrency=concurrency,
            reuse=reuse,
            limits=limits,
            settings={
                "judge": judge,
                "planner": planner,
                "max_iterations": max_iterations,
                "static": static,
                "judge_output": judge_output,
                "grounding": grounding,
                "base_url": base_url,
            },
        )

    async def run() -> tuple[list[VerificationResult], int]:
        async with AsyncExitStack() as stack:
            where = None if no_checkpoint else checkpoint
            try:
                saver = await stack.enter_async_context(open_checkpointer(where))
            except Exception as exc:
                raise fail(f"cannot open the checkpoint {where}: {exc}".splitlines()[0]) from None
            try:
                verifier = Verifier(
                    judge=judge,
                    planner=planner,
                    max_iterations=max_iterations,
                    static=static,
                    judge_output=judge_output,  # type: ignore[arg-type]
                    grounding=grounding,
                    base_url=base_url,
                    checkpointer=saver,
                    reviewer=_ask_review if review else None,
                    limits=limits,
                )
            except ModelSpecError as exc:
                raise fail(str(exc)) from None
            return await _stream(
                verifier,
                inputs,
                split,
                total,
                limit,
                goal,
                output,
                1 if review else concurrency,
                reuse,
            )

    results, skipped = _interruptible(run())
    _finish(results, skipped, output)


def _verify_on_server(
    url: str,
    inputs: list[str],
    *,
    split: str | None,
    limit: int | None,
    total: int,
    goal: str,
    output: Path | None,
    concurrency: int,
    reuse: dict[str, VerificationResult],
    limits: CallLimits,
    settings: dict[str, Any],
) -> None:
    from planverify.remote import RemoteError, RemoteVerifier

    async def run() -> tuple[list[VerificationResult], int]:
        try:
            # the API key comes from the environment
            verifier = RemoteVerifier(url, limits=limits, **settings)
        except (TypeError, ValueError) as exc:
            raise fail(str(exc)) from None
        async with verifier:
            try:
                await verifier.check()
            except RemoteError as exc:
                raise fail(str(exc).splitlines()[0]) from None
            return await _stream(
                verifier, inputs, split, total, limit, goal, output, concurrency, reuse
            )

    results, skipped = _interruptible(run())
    _finish(results, skipped, output)


async def _stream(
    verifier: Any,
    inputs: list[str],
    split: str | None,
    total: int,
    limit: int | None,
    goal: str,
    output: Path | None,
    concurrency: int,
    reuse: dict[str, VerificationResult],
) -> tuple[list[VerificationResult], int]:
    """Stream the inputs through a local or remote verifier."""
    from planverify.batch import run_batch
    from planverify.sources import default_workers, iter_inputs

    return await run_batch(
        verifier,
        iter_inputs(inputs, split=split, workers=default_workers()),
        total=total,
        limit=limit,
        goal=goal,  # type: ignore[arg-type]
        output=output,
        concurrency=concurrency,
        reuse=reuse,
    )


def _interruptible(work: Any) -> tuple[list[VerificationResult], int]:
    try:
        return run(work)  # type: ignore[no-any-return]
    except KeyboardInterrupt:
        err.print("interrupted: run the same command again to continue where this run stopped")
        raise typer.Exit(130) from None


def _finish(results: list[VerificationResult], skipped: int, output: Path | None) -> None:
    if not results:
        raise fail("no episodes to verify", 1)
    _summary(results, output)
    if skipped or any(r.status == "error" for r in results):
        for r in results:
            if r.status == "error":
                err.print(f"[red]error[/] {r.id}: {r.error}", highlight=False, soft_wrap=True)
        raise typer.Exit(1)


def _ask_review(payload: dict[str, Any]) -> Any:
    """Terminal review: show the critique; keep, drop or edit flags."""
    plan: list[str] = payload["plan"]
    critique = payload["critique"]
    err.rule(f"{payload['episode_id']} - Judge pass {payload['iteration']}")
    for flag in critique["flags"]:
        err.print(
            f"  [red]REMOVE[/] {flag['step'] + 1}. {flag['action']}  - {flag['reason']}",
            highlight=False,
        )
    for missing in critique["missing"]:
        err.print(f"  [green]MISSING[/] {missing['description']}", highlight=False)
    answer = typer.prompt(
        "accept [a], reject [r], or step numbers to remove (e.g. 3,7)", default="a"
    )
    answer = answer.strip().lower()
    if answer in ("a", "accept", ""):
        return "accept"
    if answer in ("r", "reject"):
        return "reject"
    steps = [
        int(s)
        for s in answer.replace(" ", "").split(",")
        if s.isdigit() and 1 <= int(s) <= len(plan)
    ]
    return {"flags": [{"step": s, "reason": "removed by the reviewer"} for s in steps]}


@app.command()
def show(
    episode_id: Annotated[str, typer.Argument(metavar="ID", help="Episode id.")],
    checkpoint: Annotated[
        str, typer.Option(help="SQLite checkpoint file or postgresql:// URL written by verify.")
    ] = str(DEFAULT_CHECKPOINT),
) -> None:
    """Print an episode's iterations (critiques and edits) from the checkpoint store."""
    from planverify.api import is_postgres_url
    from planverify.checkpoints import episode_threads, load_history

    if not is_postgres_url(checkpoint) and not Path(checkpoint).is_file():
        raise fail(f"no checkpoint file at {checkpoint}")
    threads = episode_threads(checkpoint, episode_id)
    if not threads:
        raise fail(f"episode {episode_id!r} is not in {checkpoint}")
    for thread in threads:
        state, steps = load_history(checkpoint, thread)
        out.rule(f"{episode_id}  (thread {thread}, {steps} checkpoints)")
        out.print(f"goal: {state.goal}", highlight=False)
        for record in state.history:
            out.print(f"[bold]Judge pass {record.iteration}[/]", highlight=False)
            if not record.critique.objections:
                out.print("  no objections", highlight=False)
            for flag in record.critique.flags:
                out.print(
                    f"  flag    {flag.step + 1}. {flag.action}  - {flag.reason}", highlight=False
                )
            for missing in record.critique.missing:
                out.print(f"  missing {missing.description}", highlight=False)
            for dropped in record.critique.dropped + record.dropped:
                out.print(f"  dropped {dropped.text!r}: {dropped.why}", highlight=False)
            for edit in record.edits:
                out.print(
                    f"  [{'red' if edit.kind == 'remove' else 'green'}]{edit.kind:7}[/] {edit.action}",
                    highlight=False,
                )
        out.print(f"stop: {state.stop_reason or 'not finished'}; refined plan:", highlight=False)
        for i, line in enumerate(state.lines(), start=1):
            out.print(f"  {i}. {line}", highlight=False)


@app.command()
def convert(
    inputs: Annotated[
        list[str], typer.Argument(help="TEACh game files (*.game.json), directories or globs.")
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Write the episodes here as JSONL.")
    ],
    split: Annotated[
        str | None,
        typer.Option(
            help="Keep only games under a directory of this name (train, valid_seen, ...)."
        ),
    ] = None,
) -> None:
    """Convert TEACh game files into episode records (the input of verify, corrupt and score)."""
    from planverify.teach import LoadSummary, iter_games

    summary = LoadSummary()
    output.parent.mkdir(parents=True, exist_ok=True)
    partial = output.with_name(output.name + ".partial")
    with partial.open("wb") as sink:
        for item in summary.track(iter_games(inputs, split=split)):
            if isinstance(item, EpisodeError):
                err.print(f"[red]skipped[/] {item}", highlight=False, soft_wrap=True)
            else:
                sink.write(dump_jsonl_line(item))
    partial.replace(output)
    out.print(f"{summary}; wrote {summary.read} episode(s) to {output}", highlight=False)
    if summary.read == 0:
        raise fail("no games found", 1)
    if summary.skipped:
        raise typer.Exit(1)


def _range(text: str) -> tuple[int, int]:
    low, _, high = text.partition("..")
    try:
        bounds = (int(low), int(high or low))
    except ValueError:
        raise fail(f"--errors-per-episode must look like 1..3 or 2, not {text!r}") from None
    if not 0 <= bounds[0] <= bounds[1]:
        raise fail(f"--errors-per-episode must be LOW..HIGH with 0 <= LOW <= HIGH, not {text!r}")
    return bounds


@app.command()
def corrupt(
    inputs: Annotated[
        list[str],
        typer.Argument(help="Episodes: JSONL files, or TEACh game files, directories and globs."),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Write the annotated episodes here as JSONL.")
    ],
    seed: Annotated[
        int, typer.Option(help="Random seed; the same seed gives the same output.")
    ] = 0,
    errors_per_episode: Annotated[
        str, typer.Option(help="Errors injected per corrupted episode, LOW..HIGH.")
    ] = "1..3",
    clean_fraction: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Share of episodes left without errors.")
    ] = 0.2,
    max_steps: Annotated[
        int, typer.Option(min=1, help="Keep episodes with at most this many non-dialogue steps.")
    ] = 25,
    split: Annotated[
        str | None, typer.Option(help="TEACh inputs: keep only games under this directory name.")
    ] = None,
    generator: Annotated[
        str,
        typer.Option(
            help="injected (the paper's error taxonomy) or natural (human-like mistakes)."
        ),
    ] = "injected",
) -> None:
    """Inject labelled errors (detours, misplacements, needless toggles, ...) into real episodes."""
    from planverify.corrupt import GENERATORS, CorruptSummary
    from planverify.sources import iter_inputs

    if generator not in GENERATORS:
        raise fail(f"--generator must be one of {', '.join(GENERATORS)}, not {generator!r}")
    bounds = _range(errors_per_episode)
    skipped = 0

    def episodes() -> Iterator[Episode]:
        nonlocal skipped
        for item in iter_inputs(inputs, split=split):
            if isinstance(item, EpisodeError):
                skipped += 1
                err.print(f"[red]skipped[/] {item}", highlight=False, soft_wrap=True)
            elif item.labels is not None:
                skipped += 1
                err.print(f"[red]skipped[/] {item.id}: already annotated", highlight=False)
            else:
                yield item

    summary = CorruptSummary()
    output.parent.mkdir(parents=True, exist_ok=True)
    partial = output.with_name(output.name + ".partial")
    with partial.open("wb") as sink:
        for episode in GENERATORS[generator](
            episodes(),
            seed=seed,
            errors_per_episode=bounds,
            clean_fraction=clean_fraction,
            max_steps=max_steps,
            summary=summary,
        ):
            sink.write(dump_jsonl_line(episode))
    partial.replace(output)
    out.print(f"{summary}; wrote {summary.clean + summary.corrupted} to {output}", highlight=False)
    if skipped:
        raise typer.Exit(1)


@app.command()
def score(
    annotated: Annotated[Path, typer.Argument(help="Annotated episodes (JSONL with labels).")],
    results: Annotated[Path, typer.Argument(help="Results of verify on those episodes (JSONL).")],
    mode: Annotated[
        str,
        typer.Option(
            help="static (first Judge pass), iterative (refined plan), or auto: static when the results were made with --static."
        ),
    ] = "auto",
    report: Annotated[
        Path | None,
        typer.Option("--json", help="Also write the full report (per episode) as JSON."),
    ] = None,
) -> None:
    """Recall, precision and F1 of results against labels, overall, per error type and per task."""
    from planverify.episode import iter_jsonl
    from planverify.scoring import score_results

    if mode not in ("auto", "static", "iterative"):
        raise fail(f"--mode must be auto, static or iterative, not {mode!r}")
    for path in (annotated, results):
        if not path.is_file():
            raise fail(f"no such file: {path}")
    episodes = [e for e in iter_jsonl(annotated) if isinstance(e, Episode)]
    outcomes: list[VerificationResult] = []
    with results.open("rb") as fh:
        for number, line in enumerate(fh, start=1):
            if line.strip():
                try:
                    outcomes.append(VerificationResult.model_validate_json(line))
                except ValueError as exc:
                    raise fail(
                        f"{results}:{number}: not a result record ({_first_error(exc)})"
                    ) from None
    if mode == "auto":
        mode = (
            "static"
            if outcomes and all(r.stop_reason == "static" for r in outcomes)
            else "iterative"
        )
    scored = score_results(episodes, outcomes, mode=mode)  # type: ignore[arg-type]
    table = Table(title=f"{mode} scores, {scored.overall.episodes} episodes", title_justify="left")
    for column in ("group", "TP", "FP", "FN", "recall", "precision", "F1"):
        table.add_column(column, justify="left" if column == "group" else "right")

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.1f}"

    groups = [("overall", scored.overall)]
    groups += [(f"error: {k}", v) for k, v in sorted(scored.by_error.items())]
    groups += [(f"task: {k}", v) for k, v in sorted(scored.by_task.items())]
    for name, s in groups:
        c = s.counts
        table.add_row(
            name, str(c.tp), str(c.fp), str(c.fn), pct(s.recall), pct(s.precision), pct(s.f1)
        )
    out.print(table)
    levels = Table(title="label and plan level, with and without motion", title_justify="left")
    for column in ("level", "TP", "FP", "FN", "recall", "precision", "F1"):
        levels.add_column(column, justify="left" if column == "level" else "right")
    rows = [
        ("labels, with motion", scored.overall),
        ("labels, without motion", scored.without_motion),
    ]
    rows += [(f"plan, {k.replace('_', ' ')}", v) for k, v in (scored.plan_level or {}).items()]
    for name, s in ((n, v) for n, v in rows if v is not None):
        c = s.counts
        levels.add_row(
            name, str(c.tp), str(c.fp), str(c.fn), pct(s.recall), pct(s.precision), pct(s.f1)
        )
    out.print(levels)
    o = scored.overall
    if o.recall_ci and o.precision_ci:
        out.print(
            f"95% intervals: recall {pct(o.recall_ci.low)}-{pct(o.recall_ci.high)}, "
            f"precision {pct(o.precision_ci.low)}-{pct(o.precision_ci.high)}",
            highlight=False,
        )
    for name, ids in (("failed", scored.failed), ("without result", scored.missing)):
        if ids:
            err.print(f"{name}: {len(ids)} episode(s), e.g. {', '.join(ids[:3])}", highlight=False)
    if report is not None:
        report.write_bytes(orjson.dumps(scored.model_dump(mode="json"), option=orjson.OPT_INDENT_2))


def _first_error(exc: ValueError) -> str:
    if isinstance(exc, ValidationError) and exc.errors():
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "record"
        return f"{where}: {first['msg']}"
    return str(exc).splitlines()[0]


@app.command("presets")
def list_presets() -> None:
    """List the named model presets (override them with a TOML file in $PLANVERIFY_PRESETS)."""
    table = Table("preset", "spec", "paper's model", "note")
    for name, entry in presets(os.environ.get("PLANVERIFY_PRESETS")).items():
        table.add_row(
            name,
            str(entry.get("spec")),
            str(entry.get("paper_model", "")),
            str(entry.get("note", "")),
        )
    out.print(table)


def _register_eval() -> None:
    from planverify.eval.cli import eval_command

    app.command("eval")(eval_command)


_register_eval()


def main() -> None:
    """Entry point of the `planverify` script."""
    app()
