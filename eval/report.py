"""The evaluation report: `report.md` in the paper's layout, `results.json` with every number,
each run's raw results as JSONL, and the PNG figures the Markdown links to.

`report.md` is meant to be read on its own: a summary of the best runs first, then the static
table per judge (Table 1), the Judge x Planner grid (Table 2), convergence (Figure 3), recall
per error type, F1 per task family, and each run's most frequent false positives and misses
with the Judge's rationale.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, Field, field_validator

from planverify.metrics import OTHER, Interval, Scores, actions_in
from planverify.prompts import PROMPT_VERSION
from planverify.records.episode import Episode
from planverify.records.notation import MOTION_VERBS, NotationError, parse_action
from planverify.records.redaction import redacted
from planverify.records.result import VerificationResult
from planverify.records.trim import DEFAULT_TRIM, TrimPolicy
from planverify.records.usage import unknown_note

from . import plots
from .grid import Cell

__all__ = [
    "EXAMPLES_SHOWN",
    "EvalSettings",
    "Pattern",
    "ReportFiles",
    "false_positive_patterns",
    "miss_patterns",
    "pattern_of",
    "results_json",
    "write_report",
]

EXAMPLES_SHOWN = 8  # rows of the false-positive and miss tables, per run
REASON_CHARS = 160  # longer rationales are cut in report.md (results.json keeps them whole)


class EvalSettings(BaseModel):
    """What an evaluation ran with; the head of report.md and `settings` in results.json."""

    dataset: str  # the annotated file
    judges: list[str] = Field(default_factory=list)  # judge names, in grid order
    planners: list[str] = Field(default_factory=list)  # planner names, in grid order
    modes: list[str] = Field(default_factory=list)  # static and/or iterative
    max_iterations: int = 5  # cap on Judge passes
    trim: TrimPolicy = DEFAULT_TRIM  # the trim policy every run verified and was scored under
    temperature: float | None = None  # --temperature of models made from specs; None: default
    model_params: dict[str, Any] = Field(default_factory=dict)  # --model-param, secrets redacted
    seed: int = 0  # bootstrap seed
    resamples: int = 1000  # bootstrap resamples
    prompts: str = PROMPT_VERSION  # hash of the prompt templates
    cache: str | None = None  # model cache file; None when off or not needed
    cache_hits: int = 0  # model answers read from the cache
    cache_misses: int = 0  # model calls made (answers then stored)
    skipped: list[str] = Field(default_factory=list)  # input records left out, and why
    langsmith: list[dict[str, Any]] | None = None  # LangSmith experiments, when run
    langsmith_dataset: dict[str, Any] | None = None  # the dataset created or updated (uploads)

    @field_validator("model_params")
    @classmethod
    def _secrets_redacted(cls, params: dict[str, Any]) -> dict[str, Any]:
        return redacted(params)  # a key given as a parameter is never written to the report


@dataclass
class ReportFiles:
    """What `write_report` wrote."""

    report: Path  # report.md
    results: Path  # results.json
    figures: list[Path] = field(default_factory=list)  # PNG files
    runs: list[Path] = field(default_factory=list)  # one JSONL of raw results per run


@dataclass
class Pattern:
    """A kind of mistake a run made, how often, and one example."""

    what: str  # the step pattern (verb and object types), or the Judge's words
    count: int  # how many times
    episode: str  # an episode where it happened
    detail: str  # the Judge's rationale there (false positives) or the label's (misses)
    error: str = ""  # misses: the label's error type


# --------------------------------------------------------------------------- formatting


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}"


def _ci(interval: Interval | None) -> str:
    return "" if interval is None else f" ({100 * interval.low:.1f}-{100 * interval.high:.1f})"


def _cell_text(text: str, limit: int = REASON_CHARS) -> str:
    """Text made safe for one Markdown table cell."""
    flat = " ".join(text.split()).replace("|", "\\|")
    return flat if len(flat) <= limit else flat[: limit - 3].rstrip() + "..."


def _code(text: str) -> str:
    return "`" + text.replace("`", "'").replace("|", "\\|") + "`"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return [*lines, ""]


def _scores_row(name: str, s: Scores, failed: int) -> list[str]:
    """One table row: name, metrics with intervals, counts, failed episodes."""
    c = s.counts
    return [
        name,
        f"{_pct(s.recall)}{_ci(s.recall_ci)}",
        f"{_pct(s.precision)}{_ci(s.precision_ci)}",
        f"{_pct(s.f1)}{_ci(s.f1_ci)}",
        str(c.tp),
        str(c.fp),
        str(c.fn),
        str(failed),
    ]


SCORE_HEADER = ("run", "recall", "precision", "F1", "TP", "FP", "FN", "failed")


def _levels(cells: Sequence[Cell]) -> list[str]:
    """Label-level and plan-level scores, each with and without motion steps (plan level needs
    annotated records with a `clean` plan)."""
    if not any(c.report.plan_level for c in cells):
        return []
    rows = []
    for cell in cells:
        r = cell.report
        plan = r.plan_level or {}
        scores = [r.overall, r.without_motion, plan.get("with_motion"), plan.get("without_motion")]
        rows.append(
            [
                cell.name,
                *("-" if s is None else f"{_pct(s.recall)} / {_pct(s.precision)}" for s in scores),
            ]
        )
    return [
        "## Plan-level scores",
        "",
        "Recall / precision. Plan level: errors are the noisy steps outside the longest common "
        "subsequence of the noisy and the clean plan; a removal is a false positive only when it "
        "shortens that subsequence, so removing either of two steps that leave the same plan "
        "scores the same.",
        "",
        *_table(("run", "labels", "labels, no motion", "plan", "plan, no motion"), rows),
    ]


# --------------------------------------------------------------------------- mistakes


def pattern_of(line: str) -> str:
    """A step with its instance numbers and motion amounts dropped: what kind of step it is.

    >>> pattern_of("Driver.PutAOnB('Mug2', 'Sink')"), pattern_of("Driver.Move(-0.5)")
    ('PutAOnB(Mug, Sink)', 'Move')
    """
    try:
        action = parse_action(line)
    except NotationError:
        return line.strip()
    if not action.known:
        return line.strip()
    if action.verb in MOTION_VERBS:
        return action.verb
    return f"{action.verb}({', '.join(action.object_types)})"


_STEP = re.compile(r"^step (\d+): (.*)$", re.S)


def _false_positive(text: str, result: VerificationResult | None, mode: str) -> tuple[str, str]:
    """(pattern, the Judge's rationale) of one false positive as `planverify.metrics` words it."""
    step = _STEP.match(text)
    if step:
        index, line = int(step[1]) - 1, step[2]  # "step N" counts from 1
        why = ""
        if result is not None and mode == "static" and result.history:
            flags = result.history[0].critique.flags
            why = next((f.reason for f in flags if f.step == index), "")
        elif result is not None and index < len(result.verdicts):
            why = result.verdicts[index].reason or ""
        return f"remove {pattern_of(line)}", why
    if text.startswith("inserted: "):
        line = text.removeprefix("inserted: ")
        why = ""
        if result is not None:
            why = next((s.reason or "" for s in result.inserted if s.action == line), "")
        return f"insert {pattern_of(line)}", why
    # a #MISSING critique that matches no label: its own words are the rationale
    described = text.removeprefix("missing: ")
    named = actions_in(described)
    return ("#MISSING " + pattern_of(str(named[0])) if named else "#MISSING (in words)"), described


def _grouped(items: Sequence[tuple[str, str, str, str]], limit: int) -> list[Pattern]:
    """Group (pattern, error, episode, detail) by pattern and error, most frequent first."""
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for what, error, episode, detail in items:
        groups.setdefault((what, error), []).append((episode, detail))
    ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    out = []
    for (what, error), examples in ranked[:limit]:
        episode, detail = next(((e, d) for e, d in examples if d), examples[0])
        out.append(
            Pattern(what=what, count=len(examples), episode=episode, detail=detail, error=error)
        )
    return out


def false_positive_patterns(cell: Cell, limit: int = EXAMPLES_SHOWN) -> list[Pattern]:
    """A run's most frequent false positives, each with an example and the Judge's reason."""
    results = {r.id: r for r in cell.results}
    items = []
    for score in cell.report.episodes:
        for text in score.false_positives:
            what, why = _false_positive(text, results.get(score.id), cell.mode)
            items.append((what, "", score.id, why))
    return _grouped(items, limit)


def miss_patterns(
    cell: Cell, episodes: dict[str, Episode], limit: int = EXAMPLES_SHOWN
) -> list[Pattern]:
    """A run's most frequent misses (labels not found), by error type and step pattern."""
    items = []
    for score in cell.report.episodes:
        episode = episodes.get(score.id)
        if episode is None:
            continue
        labels = episode.labels or []
        for k in score.missed:
            label = labels[k]
            if label.type == "MISSING":
                what = f"add {pattern_of(label.action or '')}"
            else:
                what = f"remove {pattern_of(episode.actions[label.index or 0])}"
            detail = label.reason or ""
            if score.status == "error":
                detail = f"verification failed. {detail}".strip()
            items.append((what, label.error or OTHER, score.id, detail))
    return _grouped(items, limit)


# --------------------------------------------------------------------------- sections


def _usage(cell: Cell) -> tuple[int, float | None]:
    tokens = sum(u.total for r in cell.results for u in r.usage.values())
    costs = [r.cost_usd for r in cell.results if r.usage]
    cost = None if any(c is None for c in costs) else sum(c for c in costs if c is not None)
    return tokens, cost


def _best(cells: Sequence[Cell]) -> Cell | None:
    scored = [c for c in cells if c.report.overall.f1 is not None]
    return max(scored, key=lambda c: c.report.overall.f1 or 0.0, default=None)


def _summary(cells: Sequence[Cell]) -> list[str]:
    static = [c for c in cells if c.mode == "static"]
    loops = [c for c in cells if c.mode == "iterative"]
    lines = ["## Summary", ""]
    for title, group in (("static judge", static), ("Judge x Planner pair", loops)):
        best = _best(group)
        if best is not None:
            o = best.report.overall
            lines.append(
                f"- Best {title} by F1: **{best.name}**, F1 {_pct(o.f1)}{_ci(o.f1_ci)}, "
                f"recall {_pct(o.recall)}, precision {_pct(o.precision)}."
            )
    for c in loops:
        twin = next((s for s in static if s.judge == c.judge), None)
        if twin is not None:
            a, b = twin.report.overall, c.report.overall
            lines.append(
                f"- {c.name} against one pass of the same judge: precision "
                f"{_pct(a.precision)} -> {_pct(b.precision)}, recall {_pct(a.recall)} -> "
                f"{_pct(b.recall)}, F1 {_pct(a.f1)} -> {_pct(b.f1)}."
            )
    for c in loops:
        flow = c.convergence
        if flow is not None and flow.episodes:
            within = flow.final_after[min(1, len(flow.final_after) - 1)]
            lines.append(
                f"- {c.name}: {_pct(within)}% of plans are final after one revision round; "
                f"{_pct(flow.executable)}% of final plans are executable in the simulator."
            )
    for c in cells:
        if c.failed:
            first = next(r for r in c.results if r.status == "error")
            lines.append(
                f"- **{c.name}: {len(c.failed)} episode(s) failed** (they count as finding "
                f"nothing), e.g. `{first.id}`: {_cell_text(first.error or '')}"
            )
    return [*lines, ""]


def _grid(loops: Sequence[Cell]) -> list[str]:
    planners = list(dict.fromkeys(c.planner for c in loops))
    judges = list(dict.fromkeys(c.judge for c in loops))
    rows = []
    for judge in judges:
        row = [judge]
        for planner in planners:
            cell = next((c for c in loops if c.judge == judge and c.planner == planner), None)
            o = cell.report.overall if cell is not None else None
            row.append(f"{_pct(o.recall)} / {_pct(o.precision)} / {_pct(o.f1)}" if o else "-")
        rows.append(row)
    return _table(["judge \\ planner", *planners], rows)


def _convergence(loops: Sequence[Cell]) -> list[str]:
    flows = [(c, c.convergence) for c in loops if c.convergence is not None]
    depth = max((len(f.final_after) for _, f in flows), default=1)
    rows = []
    for cell, flow in flows:
        shares = flow.final_after + [1.0] * (depth - len(flow.final_after)) if flow.episodes else []
        rows.append(
            [
                cell.name,
                *([_pct(s) for s in shares] or ["n/a"] * depth),
                "n/a" if flow.mean_revisions is None else f"{flow.mean_revisions:.2f}",
                ", ".join(f"{k} {v}" for k, v in flow.stop_reasons.items()) or "-",
                "n/a" if flow.mean_steps_removed is None else f"{flow.mean_steps_removed:.2f}",
                _pct(flow.mean_length_reduction),
                f"{_pct(flow.executable_before)} -> {_pct(flow.executable)}",
            ]
        )
    header = [
        "run",
        *(f"final after {k}" for k in range(depth)),
        "mean revisions",
        "stop reasons",
        "mean steps removed",
        "mean length cut (%)",
        "executable (%, input -> final)",
    ]
    lines = _table(header, rows)
    for cell, flow in flows:
        broken = [f for f in flow.per_episode if f.status == "ok" and not f.executable]
        if broken:
            shown = "; ".join(f"`{f.id}` {_cell_text(f.problem or '', 100)}" for f in broken[:3])
            lines.append(f"- {cell.name}: {len(broken)} final plan(s) not executable, e.g. {shown}")
    if any(not f.executable for _, flow in flows for f in flow.per_episode if f.status == "ok"):
        lines.append("")
    return lines


def _errors(cells: Sequence[Cell], episodes: Sequence[Episode]) -> list[str]:
    kinds = sorted({k for c in cells for k in c.report.by_error})
    counts: dict[str, int] = {}
    for e in episodes:
        for label in e.labels or []:
            counts[label.error or OTHER] = counts.get(label.error or OTHER, 0) + 1
    rows = []
    for kind in kinds:
        row = [kind, str(counts.get(kind, 0))]
        for c in cells:
            s = c.report.by_error.get(kind)
            row.append(f"{_pct(s.recall)}{_ci(s.recall_ci)}" if s is not None else "-")
        rows.append(row)
    return _table(["error", "labels", *(c.name for c in cells)], rows)


def _tasks(cells: Sequence[Cell]) -> list[str]:
    tasks = sorted({t for c in cells for t in c.report.by_task})
    rows = []
    for task in tasks:
        episodes = max(
            (c.report.by_task[task].episodes for c in cells if task in c.report.by_task), default=0
        )
        row = [task, str(episodes)]
        for c in cells:
            s = c.report.by_task.get(task)
            row.append(_pct(s.f1) if s is not None else "-")
        rows.append(row)
    return _table(["task", "episodes", *(c.name for c in cells)], rows)


def _mistakes(cell: Cell, episodes: dict[str, Episode]) -> list[str]:
    lines = [f"### {cell.name}", ""]
    fps = false_positive_patterns(cell)
    total_fp = cell.report.overall.counts.fp
    if fps:
        lines += [f"Most frequent false positives ({total_fp} in all):", ""]
        lines += _table(
            ["what", "times", "e.g. episode", "the Judge's reason there"],
            [
                [_code(p.what), str(p.count), _code(p.episode), _cell_text(p.detail) or "-"]
                for p in fps
            ],
        )
    else:
        lines += ["No false positives.", ""]
    misses = miss_patterns(cell, episodes)
    total_fn = cell.report.overall.counts.fn
    if misses:
        lines += [f"Most frequent misses ({total_fn} in all):", ""]
        lines += _table(
            ["error", "what", "times", "e.g. episode", "why it is an error (label)"],
            [
                [
                    p.error,
                    _code(p.what),
                    str(p.count),
                    _code(p.episode),
                    _cell_text(p.detail) or "-",
                ]
                for p in misses
            ],
        )
    else:
        lines += ["No misses.", ""]
    return lines


def _unknown_calls(cell: Cell) -> int:
    return sum(u.unknown_calls for r in cell.results for u in r.usage.values())


def _usage_section(cells: Sequence[Cell]) -> list[str]:
    rows = []
    for c in cells:
        tokens, cost = _usage(c)
        if tokens:
            note = unknown_note(_unknown_calls(c))
            shown = f"{tokens} ({note})" if note else str(tokens)
            rows.append([c.name, shown, "unpriced" if cost is None else f"${cost:.2f}"])
    if not rows:
        return []
    note = "Tokens of answers read from the cache count too: they are what the run would cost."
    return ["## Model usage", "", note, "", *_table(["run", "tokens", "cost"], rows)]


def _langsmith(experiments: list[dict[str, Any]]) -> list[str]:
    rows = [
        [
            f"{e.get('judge')} (static)"
            if e.get("mode") == "static"
            else f"{e.get('judge')} / {e.get('planner')}",
            _code(str(e.get("experiment", ""))),
            "uploaded" if e.get("uploaded") else "local",
            _pct(e.get("recall")),
            _pct(e.get("precision")),
            _pct(e.get("f1")),
        ]
        for e in experiments
    ]
    return [
        "## LangSmith",
        "",
        *_table(["run", "experiment", "where", "recall", "precision", "F1"], rows),
    ]


# --------------------------------------------------------------------------- files


def _slug(index: int, cell: Cell) -> str:
    name = f"{index:02d}-{cell.mode}-{cell.judge}" + (
        "" if cell.mode == "static" else f"-{cell.planner}"
    )
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)


def results_json(
    cells: Sequence[Cell], settings: EvalSettings, runs: Sequence[str]
) -> dict[str, Any]:
    """Every number of the evaluation (scores per episode included) as plain JSON data."""
    out: list[dict[str, Any]] = []
    for cell, path in zip(cells, runs, strict=True):
        tokens, cost = _usage(cell)
        out.append(
            {
                "name": cell.name,
                "judge": cell.judge,
                "planner": cell.planner,
                "mode": cell.mode,
                "results_file": path,
                "failed": cell.failed,
                "tokens": tokens,
                "unknown_calls": _unknown_calls(cell),  # timed out: tokens are a lower bound
                "cost_usd": cost,
                "report": cell.report.model_dump(mode="json"),
                "convergence": None
                if cell.convergence is None
                else cell.convergence.model_dump(mode="json"),
                "false_positive_patterns": [vars(p) for p in false_positive_patterns(cell, 10**9)],
            }
        )
    return {"settings": settings.model_dump(mode="json"), "runs": out}


def _figures(cells: Sequence[Cell], folder: Path) -> dict[str, Path]:
    figures: dict[str, Path] = {}
    loops = [c for c in cells if c.mode == "iterative"]
    if loops:
        figures["grid"] = plots.grid_heatmaps(loops, folder / "grid.png")
        figures["convergence"] = plots.convergence_curve(loops, folder / "convergence.png")
    if any(c.report.by_error for c in cells):
        figures["errors"] = plots.error_type_bars(cells, folder / "errors.png")
    return figures


def write_report(
    cells: Sequence[Cell],
    episodes: Sequence[Episode],
    folder: Path,
    settings: EvalSettings,
    *,
    figures: Callable[[Sequence[Cell], Path], dict[str, Path]] = _figures,
) -> ReportFiles:
    """Write report.md, results.json, results/*.jsonl and the figures into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    drawn = figures(cells, folder)
    run_files = [_write_run(folder, index, cell) for index, cell in enumerate(cells, start=1)]
    md = _introduction(cells, episodes, settings)
    md += _static_section(cells) + _iterative_section(cells, drawn)
    md += _levels(cells)
    if any(c.report.by_error for c in cells):
        md += ["## Recall per error type", ""]
        md += _errors(cells, episodes)
        if "errors" in drawn:
            md += ["![Recall per error type](errors.png)", ""]
    if any(c.report.by_task for c in cells):
        md += ["## F1 per task family", ""]
        md += _tasks(cells)
    md += ["## Most frequent false positives and misses", ""]
    by_id = {e.id: e for e in episodes}
    for cell in cells:
        md += _mistakes(cell, by_id)
    md += _usage_section(cells)
    if settings.langsmith:
        md += _langsmith(settings.langsmith)
    md += [
        "## Files",
        "",
        "- `results.json`: every number above, per episode too.",
        "- `results/*.jsonl`: each run's results, one record per episode "
        "(`planverify score DATASET FILE` rescores one).",
        "",
    ]
    report = folder / "report.md"
    report.write_text("\n".join(md), encoding="utf-8")
    relative = [str(p.relative_to(folder)) for p in run_files]
    data = results_json(cells, settings, relative)
    results = folder / "results.json"
    results.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2))
    return ReportFiles(report=report, results=results, figures=list(drawn.values()), runs=run_files)


def _write_run(folder: Path, index: int, cell: Cell) -> Path:
    """One run's results as JSONL under `results/`."""
    path = folder / "results" / f"{_slug(index, cell)}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(
        b"".join(orjson.dumps(r.model_dump(mode="json")) + b"\n" for r in cell.results)
    )
    return path


def _introduction(
    cells: Sequence[Cell], episodes: Sequence[Episode], settings: EvalSettings
) -> list[str]:
    """The report's title, what was evaluated and how, and the summary."""
    labels = sum(len(e.labels or []) for e in episodes)
    cache = (
        f"model cache `{settings.cache}`: {settings.cache_hits} answers reused, "
        f"{settings.cache_misses} model calls"
        if settings.cache
        else "no model cache"
    )
    md = [
        "# planverify evaluation",
        "",
        f"Dataset `{settings.dataset}`: {len(episodes)} annotated episodes, {labels} labelled "
        f"errors. Prompts {settings.prompts}; iteration cap {settings.max_iterations}; "
        f"trim policy {settings.trim}; {cache}. Percentages, with bootstrap 95% intervals in parentheses "
        f"({settings.resamples} resamples over episodes, seed {settings.seed}).",
        "",
    ]
    if settings.skipped:
        md += [
            f"{len(settings.skipped)} input record(s) left out: "
            + "; ".join(_cell_text(s, 120) for s in settings.skipped[:5])
            + ("; ..." if len(settings.skipped) > 5 else ""),
            "",
        ]
    return md + _summary(cells)


def _static_section(cells: Sequence[Cell]) -> list[str]:
    """Table 1: one Judge pass per judge."""
    static = [c for c in cells if c.mode == "static"]
    if not static:
        return []
    md = ["## Static: one Judge pass per judge (Table 1)", ""]
    return md + _table(
        ("judge", *SCORE_HEADER[1:]),
        [_scores_row(c.judge, c.report.overall, len(c.failed)) for c in static],
    )


def _iterative_section(cells: Sequence[Cell], drawn: dict[str, Path]) -> list[str]:
    """Table 2 (Judge x Planner) and Figure 3 (convergence)."""
    loops = [c for c in cells if c.mode == "iterative"]
    if not loops:
        return []
    md = ["## Iterative: Judge x Planner (Table 2)", "", "Recall / precision / F1:", ""]
    md += _grid(loops)
    md += _table(
        SCORE_HEADER,
        [_scores_row(c.name, c.report.overall, len(c.failed)) for c in loops],
    )
    if "grid" in drawn:
        md += ["![Recall, precision and F1 of each Judge x Planner pair](grid.png)", ""]
    md += [
        "## Convergence (Figure 3)",
        "",
        "Share of episodes (%) whose plan is final after k revision rounds; plan length "
        "counts Driver steps; executable: the simulator can carry the plan out in the "
        "episode's scene.",
        "",
    ]
    md += _convergence(loops)
    if "convergence" in drawn:
        md += ["![Share of final plans by revision round](convergence.png)", ""]
    return md
