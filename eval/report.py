"""The evaluation report: `report.md` with the paper's tables, `results.json` with every number,
and PNG figures."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from planverify.episode import Episode
from planverify.prompts import PROMPT_VERSION
from planverify.scoring import Interval, Scores

from . import plots
from .grid import Cell

EXAMPLES_SHOWN = 5  # false positives and misses listed per run


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _ci(interval: Interval | None) -> str:
    return "" if interval is None else f" ({100 * interval.low:.0f}-{100 * interval.high:.0f})"


def _row(name: str, s: Scores) -> str:
    c = s.counts
    return (
        f"| {name} | {_pct(s.recall)}{_ci(s.recall_ci)} | {_pct(s.precision)}{_ci(s.precision_ci)} "
        f"| {_pct(s.f1)}{_ci(s.f1_ci)} | {c.tp} | {c.fp} | {c.fn} |"
    )


SCORE_HEADER = (
    "| run | recall | precision | F1 | TP | FP | FN |\n| --- | --- | --- | --- | --- | --- | --- |"
)


def _examples(cell: Cell, episodes: dict[str, Episode]) -> list[str]:
    results = {r.id: r for r in cell.results}
    false_positives: list[str] = []
    misses: list[str] = []
    for score in cell.report.episodes:
        episode, result = episodes.get(score.id), results.get(score.id)
        if episode is None or result is None:
            continue
        for text in score.false_positives:
            why = ""
            if text.startswith("step "):
                index = int(text.split(":")[0].split()[1])
                if index < len(result.verdicts):
                    why = result.verdicts[index].reason or ""
            false_positives.append(f"- `{score.id}` {text} - *{why or 'inserted'}*")
        for k in score.missed:
            label = (episode.labels or [])[k]
            what = label.action if label.type == "MISSING" else episode.actions[label.index or 0]
            misses.append(f"- `{score.id}` {label.type} {label.error or 'other'}: `{what}`")
    lines = [f"#### {cell.judge} / {cell.planner} ({cell.mode})", "", "False positives:"]
    lines += false_positives[:EXAMPLES_SHOWN] or ["- none"]
    lines += ["", "Misses:"]
    lines += misses[:EXAMPLES_SHOWN] or ["- none"]
    return [*lines, ""]


def write_report(
    cells: Sequence[Cell],
    episodes: Sequence[Episode],
    folder: Path,
    *,
    dataset: str,
    seed: int,
    max_iterations: int,
) -> Path:
    """Write report.md, results.json and the figures into `folder`; return report.md's path."""
    folder.mkdir(parents=True, exist_ok=True)
    by_id = {e.id: e for e in episodes}
    static = [c for c in cells if c.mode == "static"]
    loops = [c for c in cells if c.mode == "iterative"]
    md = [
        "# planverify evaluation",
        "",
        f"Dataset `{dataset}`: {len(episodes)} annotated episodes; prompts {PROMPT_VERSION}; "
        f"iteration cap {max_iterations}; bootstrap seed {seed}. Percentages with 95% intervals.",
        "",
    ]
    if static:
        md += ["## Static: one Judge pass (Table 1)", "", SCORE_HEADER]
        md += [_row(c.judge, c.report.overall) for c in static]
        md.append("")
    if loops:
        planners = list(dict.fromkeys(c.planner for c in loops))
        judges = list(dict.fromkeys(c.judge for c in loops))
        md += ["## Iterative: Judge x Planner (Table 2), recall / precision / F1", ""]
        md += ["| judge \\ planner | " + " | ".join(planners) + " |"]
        md += ["| --- |" + " --- |" * len(planners)]
        for judge in judges:
            row = []
            for planner in planners:
                cell = next((c for c in loops if c.judge == judge and c.planner == planner), None)
                o = cell.report.overall if cell else None
                row.append(f"{_pct(o.recall)} / {_pct(o.precision)} / {_pct(o.f1)}" if o else "-")
            md.append(f"| {judge} | " + " | ".join(row) + " |")
        md += ["", SCORE_HEADER]
        md += [_row(f"{c.judge} / {c.planner}", c.report.overall) for c in loops]
        md += ["", "![grid](grid.png)", ""]
        depth = max(len(c.convergence.final_after) for c in loops)
        md += ["## Convergence (Figure 3)", ""]
        md += [
            "| run | "
            + " | ".join(f"final after {k}" for k in range(depth))
            + " | stop reasons | mean length cut | executable |"
        ]
        md += ["| --- |" + " --- |" * (depth + 3)]
        for c in loops:
            shares = [_pct(s) for s in c.convergence.final_after]
            shares += [_pct(1.0)] * (depth - len(shares))
            reasons = ", ".join(f"{k} {v}" for k, v in sorted(c.convergence.stop_reasons.items()))
            md.append(
                f"| {c.judge} / {c.planner} | "
                + " | ".join(shares)
                + f" | {reasons} | {_pct(c.convergence.mean_length_reduction)} | {_pct(c.convergence.executable)} |"
            )
        md += ["", "![convergence](convergence.png)", ""]
        plots.grid_heatmaps(loops, folder / "grid.png")
        plots.convergence_curve(loops, folder / "convergence.png")
    kinds = sorted({k for c in cells for k in c.report.by_error})
    if kinds:
        md += ["## Recall per error type", ""]
        md += [
            "| error | " + " | ".join(f"{c.judge} / {c.planner} ({c.mode})" for c in cells) + " |"
        ]
        md += ["| --- |" + " --- |" * len(cells)]
        for kind in kinds:
            values = [
                _pct(c.report.by_error[kind].recall) if kind in c.report.by_error else "-"
                for c in cells
            ]
            md.append(f"| {kind} | " + " | ".join(values) + " |")
        md += ["", "![errors](errors.png)", ""]
        plots.error_type_bars(cells, folder / "errors.png")
    md += [f"## False positives and misses (the first {EXAMPLES_SHOWN} of each run)", ""]
    for cell in cells:
        md += _examples(cell, by_id)
    report = folder / "report.md"
    report.write_text("\n".join(md), encoding="utf-8")
    data: dict[str, Any] = {
        "dataset": dataset,
        "seed": seed,
        "prompts": PROMPT_VERSION,
        "max_iterations": max_iterations,
        "runs": [
            {
                "judge": c.judge,
                "planner": c.planner,
                "mode": c.mode,
                "report": c.report.model_dump(mode="json"),
                "convergence": c.convergence.model_dump(mode="json"),
            }
            for c in cells
        ],
    }
    (folder / "results.json").write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2))
    return report
