"""The report's figures, drawn with matplotlib's Agg canvas straight into PNG files.

Figures are built as `matplotlib.figure.Figure` objects on an Agg canvas, never through
pyplot, so nothing opens a window or touches a global backend and drawing is thread-safe.
matplotlib is the `eval` extra: `require_matplotlib` says how to install it when it is missing.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .grid import Cell

__all__ = [
    "INSTALL_HINT",
    "MissingMatplotlib",
    "convergence_curve",
    "error_type_bars",
    "grid_heatmaps",
    "require_matplotlib",
]

INSTALL_HINT = "plots need matplotlib: pip install 'planverify[eval]'"
DPI = 120
METRICS = ("recall", "precision", "f1")


class MissingMatplotlib(RuntimeError):
    """matplotlib is not installed; the message says how to install it."""


def require_matplotlib() -> None:
    """Raise `MissingMatplotlib` (message: `INSTALL_HINT`) unless matplotlib can be imported."""
    try:
        importlib.import_module("matplotlib.figure")
        importlib.import_module("matplotlib.backends.backend_agg")
    except ImportError:
        raise MissingMatplotlib(INSTALL_HINT) from None


def _figure(width: float, height: float) -> Any:
    require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _save(figure: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="png")
    return path


def convergence_curve(cells: Sequence[Cell], path: Path) -> Path:
    """Share of episodes whose plan is final after k revision rounds, one line per run."""
    flows = [(c, c.convergence) for c in cells if c.convergence is not None]
    depth = max((len(f.final_after) for _, f in flows), default=1)
    figure = _figure(6.4, 4.0)
    ax = figure.add_subplot()
    drawn = 0
    for cell, flow in flows:
        if not flow.final_after:
            continue
        drawn += 1
        # once every plan is final the share stays at 100%
        shares = flow.final_after + [1.0] * (depth - len(flow.final_after))
        ax.plot(
            range(depth),
            [100 * s for s in shares],
            marker="o",
            label=f"{cell.name} (n={flow.episodes})",
        )
    ax.set_xlabel("revision rounds")
    ax.set_ylabel("episodes whose plan is final (%)")
    ax.set_xticks(range(depth))
    ax.set_xlim(-0.2, max(depth - 1, 1) + 0.2)
    ax.set_ylim(0, 103)
    ax.grid(alpha=0.3)
    if drawn:
        ax.legend(fontsize=8, loc="lower right")
    ax.set_title("Convergence of the Judge/Planner loop")
    return _save(figure, path)


def grid_heatmaps(cells: Sequence[Cell], path: Path) -> Path:
    """Recall, precision and F1 (%) of every iterative Judge x Planner pair, one panel each."""
    loops = [c for c in cells if c.mode == "iterative"]
    judges = list(dict.fromkeys(c.judge for c in loops))
    planners = list(dict.fromkeys(c.planner for c in loops))
    width = 1.6 + len(METRICS) * (1.2 + 1.1 * len(planners))
    figure = _figure(width, 1.6 + 0.55 * max(len(judges), 2))
    axes = figure.subplots(1, len(METRICS), squeeze=False, sharey=True)[0]
    image = None
    for ax, metric in zip(axes, METRICS, strict=True):
        values = [[math.nan] * len(planners) for _ in judges]
        for c in loops:
            value = getattr(c.report.overall, metric)
            if value is not None:
                values[judges.index(c.judge)][planners.index(c.planner)] = 100 * value
        image = ax.imshow(values, vmin=0, vmax=100, cmap="viridis", aspect="auto")
        ax.set_title("F1" if metric == "f1" else metric)
        ax.set_xticks(range(len(planners)), planners, rotation=30, ha="right", fontsize=8)
        ax.set_yticks(range(len(judges)), judges, fontsize=8)
        ax.set_xlabel("planner", fontsize=8)
        for i, row in enumerate(values):
            for j, value in enumerate(row):
                missing = math.isnan(value)
                ax.text(
                    j,
                    i,
                    "n/a" if missing else f"{value:.1f}",
                    ha="center",
                    va="center",
                    color="black" if not missing and value > 60 else "white",
                    fontsize=9,
                )
    axes[0].set_ylabel("judge", fontsize=8)
    if image is not None:
        figure.colorbar(image, ax=list(axes), shrink=0.9, label="%")
    figure.suptitle("Judge x Planner, iterative loop", fontsize=10)
    return _save(figure, path)


def error_type_bars(cells: Sequence[Cell], path: Path) -> Path:
    """Recall (%) per error type, one bar per run in each group; label counts under the types."""
    kinds = sorted({k for c in cells for k in c.report.by_error})
    labelled = {
        k: max(
            c.report.by_error[k].counts.tp + c.report.by_error[k].counts.fn
            for c in cells
            if k in c.report.by_error
        )
        for k in kinds
    }
    figure = _figure(min(13.0, max(6.4, 1.0 + len(kinds) * (0.5 + 0.3 * len(cells)))), 4.6)
    ax = figure.add_subplot()
    width = 0.8 / max(len(cells), 1)
    for n, cell in enumerate(cells):
        heights = []
        for k in kinds:
            recall = cell.report.by_error[k].recall if k in cell.report.by_error else None
            heights.append(100 * recall if recall is not None else 0.0)
        offset = (n - (len(cells) - 1) / 2) * width
        bars = ax.bar([i + offset for i in range(len(kinds))], heights, width, label=cell.name)
        ax.bar_label(bars, fmt="%.0f", fontsize=6, padding=1)
    ax.set_xticks(
        range(len(kinds)),
        [f"{k}\n(n={labelled[k]})" for k in kinds],
        rotation=30,
        ha="right",
        fontsize=8,
    )
    ax.set_ylabel("recall (%)")
    ax.set_ylim(0, 110)
    ax.grid(axis="y", alpha=0.3)
    if cells:
        ax.legend(
            fontsize=7,
            loc="upper center",
            bbox_to_anchor=(0.5, -0.32),
            ncols=min(4, len(cells)),
            frameon=False,
        )
    ax.set_title("Recall per error type")
    return _save(figure, path)
