"""The report's figures (matplotlib, written as PNG files)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .grid import Cell


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise RuntimeError("plots need matplotlib: pip install 'planverify[eval]'") from None
    matplotlib.use("Agg")  # files only, no screen
    import matplotlib.pyplot as plt

    return plt


def convergence_curve(cells: Sequence[Cell], path: Path) -> None:
    """Share of episodes whose plan is final after k revision rounds, one line per run."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for cell in cells:
        shares = cell.convergence.final_after
        ax.plot(
            range(len(shares)),
            [100 * s for s in shares],
            marker="o",
            label=f"{cell.judge} / {cell.planner}",
        )
    depth = max((len(c.convergence.final_after) for c in cells), default=1)
    ax.set_xticks(range(depth))
    ax.set_xlabel("revision rounds")
    ax.set_ylabel("episodes with a final plan (%)")
    ax.set_ylim(0, 101)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def grid_heatmaps(cells: Sequence[Cell], path: Path) -> None:
    """Recall, precision and F1 of every Judge x Planner pair."""
    plt = _pyplot()
    judges = list(dict.fromkeys(c.judge for c in cells))
    planners = list(dict.fromkeys(c.planner for c in cells))
    fig, axes = plt.subplots(1, 3, figsize=(4 + 3 * len(planners), 1.5 + 0.6 * len(judges)))
    for ax, metric in zip(axes, ("recall", "precision", "f1"), strict=True):
        grid = [[float("nan")] * len(planners) for _ in judges]
        for c in cells:
            value = getattr(c.report.overall, metric)
            grid[judges.index(c.judge)][planners.index(c.planner)] = (
                100 * value if value is not None else float("nan")
            )
        ax.imshow(grid, vmin=0, vmax=100, cmap="viridis")
        ax.set_title(metric)
        ax.set_xticks(range(len(planners)), planners, rotation=30, ha="right", fontsize=8)
        ax.set_yticks(range(len(judges)), judges, fontsize=8)
        for i, row in enumerate(grid):
            for j, value in enumerate(row):
                ax.text(
                    j,
                    i,
                    "-" if value != value else f"{value:.0f}",
                    ha="center",
                    va="center",
                    color="white",
                )
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def error_type_bars(cells: Sequence[Cell], path: Path) -> None:
    """Recall per error type, one group of bars per type."""
    plt = _pyplot()
    kinds = sorted({k for c in cells for k in c.report.by_error})
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(kinds)), 4))
    width = 0.8 / max(len(cells), 1)
    for n, cell in enumerate(cells):
        values = [
            100 * (cell.report.by_error[k].recall or 0) if k in cell.report.by_error else 0
            for k in kinds
        ]
        ax.bar(
            [i + n * width for i in range(len(kinds))],
            values,
            width,
            label=f"{cell.judge} / {cell.planner} ({cell.mode})",
        )
    ax.set_xticks(
        [i + 0.4 - width / 2 for i in range(len(kinds))], kinds, rotation=30, ha="right", fontsize=8
    )
    ax.set_ylabel("recall (%)")
    ax.set_ylim(0, 101)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
