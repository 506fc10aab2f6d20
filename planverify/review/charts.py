"""Small inline SVG charts for the review site's summary (no script, no library)."""

from __future__ import annotations

import html
from collections.abc import Sequence

BAR = "#4f6bed"


def bar_chart(items: Sequence[tuple[str, int]], *, width: int = 360) -> str:
    """Horizontal bars with labels and values."""
    if not items:
        return '<p class="empty">nothing to show</p>'
    row, label_width = 22, 150
    top = max(value for _, value in items) or 1
    height = row * len(items) + 4
    parts = [
        f'<svg viewBox="0 0 {width} {height}" width="100%" role="img" '
        f'aria-label="bar chart" preserveAspectRatio="xMinYMin meet">'
    ]
    span = width - label_width - 48
    for k, (label, value) in enumerate(items):
        y = k * row + 2
        size = max(1.0, span * value / top) if value else 0.0
        text = label if len(label) <= 24 else label[:23] + "…"
        parts.append(
            f'<text x="{label_width - 8}" y="{y + 15}" text-anchor="end" class="axis">'
            f"<title>{html.escape(label)}</title>{html.escape(text)}</text>"
            f'<rect x="{label_width}" y="{y + 3}" width="{size:.1f}" height="{row - 8}" rx="3" fill="{BAR}"/>'
            f'<text x="{label_width + size + 6:.1f}" y="{y + 15}" class="count">{value:,}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def column_chart(items: Sequence[tuple[str, int]], *, width: int = 360, height: int = 150) -> str:
    """Vertical columns (a histogram) with labels below and values above."""
    if not items:
        return '<p class="empty">nothing to show</p>'
    top = max(value for _, value in items) or 1
    base = height - 22
    slot = (width - 20) / len(items)
    bar = min(44.0, slot * 0.7)
    parts = [
        f'<svg viewBox="0 0 {width} {height}" width="100%" role="img" '
        f'aria-label="column chart" preserveAspectRatio="xMinYMin meet">',
        f'<line x1="10" y1="{base}" x2="{width - 10}" y2="{base}" class="baseline"/>',
    ]
    for k, (label, value) in enumerate(items):
        x = 10 + slot * k + (slot - bar) / 2
        size = (base - 22) * value / top
        parts.append(
            f'<rect x="{x:.1f}" y="{base - size:.1f}" width="{bar:.1f}" height="{size:.1f}" rx="3" fill="{BAR}"/>'
            f'<text x="{x + bar / 2:.1f}" y="{base - size - 5:.1f}" text-anchor="middle" class="count">{value:,}</text>'
            f'<text x="{x + bar / 2:.1f}" y="{base + 15}" text-anchor="middle" class="axis">{html.escape(label)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
