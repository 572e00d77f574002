"""SVG from :class:`~puzzlespace.drawing.Figure` descriptions: the one renderer behind the
static SVG (``solve --svg``) and the solution page (``solve --html``).

Sizes are in pixels: a board unit is :data:`UNIT` pixels. The output is plain SVG 1.1
with no external reference (fonts are generic families), so a file opens offline.
"""

from __future__ import annotations

from html import escape
from typing import Sequence

from .drawing import Figure, Mark, Spot

UNIT = 44
#: Fill and text colour of each spot role.
COLOURS = {
    "piece": ("#f6d365", "#2b2b2b"),
    "empty": ("#ffffff", "#2b2b2b"),
    "dark": ("#2f3b52", "#ffffff"),
    "light": ("#f3f0e8", "#2b2b2b"),
}
MARK_COLOUR = "#d1495b"
CAPTION = 18  # pixels under each board of a strip, for its caption


def bounds(figure: Figure) -> tuple[float, float, float, float]:
    """(left, top, width, height) of the figure in pixels, half a unit round every spot."""
    xs = [s.x for s in figure.spots]
    ys = [s.y for s in figure.spots]
    left, top = (min(xs) - 0.6) * UNIT, (min(ys) - 0.6) * UNIT
    return left, top, (max(xs) - min(xs) + 1.2) * UNIT, (max(ys) - min(ys) + 1.2) * UNIT


def spot_svg(spot: Spot, index: int | None = None) -> str:
    """One spot: its shape and label (with ``id="s{index}"`` when given, so that a page can
    change its fill and label)."""
    fill, ink = COLOURS[spot.fill]
    x, y, r = spot.x * UNIT, spot.y * UNIT, 0.45 * UNIT
    ident = "" if index is None else f' id="s{index}"'
    if spot.shape == "circle":
        shape = f'<circle cx="{x:g}" cy="{y:g}" r="{r:g}"/>'
    else:
        shape = f'<rect x="{x - r:g}" y="{y - r:g}" width="{2 * r:g}" height="{2 * r:g}" rx="5"/>'
    text = f'<text x="{x:g}" y="{y:g}" fill="{ink}">{escape(spot.label)}</text>'
    return f'<g{ident} class="{spot.fill}" fill="{fill}" stroke="#555">{shape}{text}</g>'


def mark_svg(figure: Figure, mark: Mark) -> str:
    """A move's mark: an arrow bowed to one side (so that jumps over other spots show),
    or an outline round the spots of a line."""
    spots = [figure.spots[i] for i in mark.spots]
    if mark.kind == "line":
        xs, ys = [s.x for s in spots], [s.y for s in spots]
        x, y = (min(xs) - 0.52) * UNIT, (min(ys) - 0.52) * UNIT
        w, h = (max(xs) - min(xs) + 1.04) * UNIT, (max(ys) - min(ys) + 1.04) * UNIT
        return (f'<rect x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" rx="8" fill="none" '
                f'stroke="{MARK_COLOUR}" stroke-width="4"/>')
    (a, b) = spots
    x1, y1, x2, y2 = a.x * UNIT, a.y * UNIT, b.x * UNIT, b.y * UNIT
    dx, dy = x2 - x1, y2 - y1
    cx, cy = (x1 + x2) / 2 + dy * 0.3, (y1 + y2) / 2 - dx * 0.3
    return (f'<path d="M{x1:g},{y1:g} Q{cx:g},{cy:g} {x2:g},{y2:g}" fill="none" stroke="{MARK_COLOUR}" '
            f'stroke-width="3" marker-end="url(#arrow)" opacity="0.85"/>')


def board_svg(figure: Figure, ids: bool = False) -> str:
    """The figure's edges, spots and marks as SVG elements (no ``<svg>`` around them)."""
    edges = "".join(
        f'<line x1="{figure.spots[a].x * UNIT:g}" y1="{figure.spots[a].y * UNIT:g}" '
        f'x2="{figure.spots[b].x * UNIT:g}" y2="{figure.spots[b].y * UNIT:g}"/>' for a, b in figure.edges)
    spots = "".join(spot_svg(s, i if ids else None) for i, s in enumerate(figure.spots))
    marks = "".join(mark_svg(figure, m) for m in figure.marks)
    return (f'<g stroke="#999" stroke-width="2">{edges}</g><g font-family="sans-serif" font-size="{UNIT * 0.4:g}" '
            f'text-anchor="middle" dominant-baseline="central">{spots}</g><g class="marks">{marks}</g>')


DEFS = (f'<defs><marker id="arrow" viewBox="0 0 10 10" refX="8" refY="5" markerWidth="5" markerHeight="5" '
        f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{MARK_COLOUR}"/></marker></defs>')


def svg(figure: Figure, ids: bool = False) -> str:
    """One position as a whole SVG document."""
    left, top, width, height = bounds(figure)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="{left:g} {top:g} {width:g} {height:g}" '
            f'width="{width:g}" height="{height:g}">{DEFS}{board_svg(figure, ids)}</svg>')


def strip_svg(figures: Sequence[Figure], captions: Sequence[str], columns: int = 8) -> str:
    """Positions side by side, ``columns`` to a row, each with its caption underneath;
    one SVG document."""
    left, top, width, height = bounds(figures[0])
    gap = UNIT * 0.4
    cell_w, cell_h = width + gap, height + CAPTION + gap
    cols = min(columns, len(figures))
    rows = -(-len(figures) // cols)
    parts = []
    for k, (fig, caption) in enumerate(zip(figures, captions)):
        ox, oy = (k % cols) * cell_w - left, (k // cols) * cell_h - top
        parts.append(f'<g transform="translate({ox:g},{oy:g})">{board_svg(fig)}'
                     f'<text x="{left + width / 2:g}" y="{top + height + CAPTION * 0.8:g}" font-family="sans-serif" '
                     f'font-size="13" text-anchor="middle" fill="#333">{escape(caption)}</text></g>')
    total_w, total_h = cols * cell_w - gap, rows * cell_h - gap
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {total_w:g} {total_h:g}" width="{total_w:g}" '
            f'height="{total_h:g}">{DEFS}{"".join(parts)}</svg>')


def bar_chart_svg(counts: Sequence[int], log: bool = False, cumulative: bool = False, width: int = 720,
                  height: int = 280) -> str:
    """Positions per depth as bars (``cumulative``: up to each depth), on a linear or a
    ``log`` axis; every non-zero bar at least 2 pixels tall, so that none is hidden, and
    the last depth's bar labelled with its count."""
    import math

    values = list(counts)
    if cumulative:
        values = [sum(values[: i + 1]) for i in range(len(values))]
    top = max(values) or 1
    left, bottom, right, head = 64, 28, 12, 22
    plot_w, plot_h = width - left - right, height - bottom - head
    bar = plot_w / max(1, len(values))

    def scale(v: int) -> float:
        if v <= 0:
            return 0.0
        share = math.log10(v + 1) / math.log10(top + 1) if log else v / top
        return max(2.0, share * plot_h)

    bars = "".join(
        f'<rect x="{left + i * bar + 0.1 * bar:.1f}" y="{head + plot_h - scale(v):.1f}" width="{0.8 * bar:.1f}" '
        f'height="{scale(v):.1f}"><title>depth {i}: {v:,}</title></rect>' for i, v in enumerate(values))
    step = max(1, round(len(values) / 12))
    ticks = "".join(f'<text x="{left + (i + 0.5) * bar:.1f}" y="{height - 10}">{i}</text>'
                    for i in range(0, len(values), step))
    last = len(values) - 1
    note = (f'<text x="{left + (last + 0.5) * bar:.1f}" y="{head + plot_h - scale(values[last]) - 5:.1f}" '
            f'fill="{MARK_COLOUR}" text-anchor="end">{values[last]:,} at {last}</text>')
    axis = "log scale" if log else "linear scale"
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
            f'font-family="sans-serif" font-size="11"><g fill="#4c72b0">{bars}</g>'
            f'<g text-anchor="middle" fill="#333">{ticks}</g>{note}'
            f'<text x="4" y="14" fill="#333">{top:,} ({axis})</text>'
            f'<line x1="{left}" y1="{head + plot_h}" x2="{width - right}" y2="{head + plot_h}" stroke="#333"/></svg>')
