"""SVG from :class:`~puzzlespace.drawing.Figure` descriptions: the one renderer behind the
static SVG (``solve --svg``) and the solution page (``solve --html``); and the depth chart
of an exploration's page (``explore --html``) and notebook display.

Sizes are in pixels: a board unit is :data:`UNIT` pixels. The output is plain SVG 1.1
with no external reference (fonts are generic families), so a file opens offline.
"""

from __future__ import annotations

import math
from html import escape
from itertools import accumulate
from typing import Callable, Mapping, Sequence

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
TITLE = 26  # pixels above a strip, for its title
TITLE_CHAR = 8.5  # pixels per character of a 15-pixel title, at most on average: a strip is made as wide as its title


def bounds(figure: Figure) -> tuple[float, float, float, float]:
    """(left, top, width, height) of the figure in pixels, half a unit round every spot."""
    xs = [s.x for s in figure.spots]
    ys = [s.y for s in figure.spots]
    left, top = (min(xs) - 0.6) * UNIT, (min(ys) - 0.6) * UNIT
    return left, top, (max(xs) - min(xs) + 1.2) * UNIT, (max(ys) - min(ys) + 1.2) * UNIT


def spot_svg(spot: Spot, ident: str | None = None) -> str:
    """One spot: its shape and label (with the id ``ident`` when given, so that a page can
    change its fill and label, or click it)."""
    fill, ink = COLOURS[spot.fill]
    x, y, r = spot.x * UNIT, spot.y * UNIT, 0.45 * UNIT
    ident = "" if ident is None else f' id="{ident}"'
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


def board_svg(figure: Figure, ids: bool = False, handles: Mapping[int, Spot] | None = None) -> str:
    """The figure's edges, spots (with ``ids``: ``id="s{index}"``), ``handles`` (spots off the
    board by the move each stands for, ``id="h{move}"``) and marks as SVG elements (no
    ``<svg>`` around them)."""
    edges = "".join(
        f'<line x1="{figure.spots[a].x * UNIT:g}" y1="{figure.spots[a].y * UNIT:g}" '
        f'x2="{figure.spots[b].x * UNIT:g}" y2="{figure.spots[b].y * UNIT:g}"/>' for a, b in figure.edges)
    spots = "".join(spot_svg(s, f"s{i}" if ids else None) for i, s in enumerate(figure.spots))
    spots += "".join(spot_svg(s, f"h{move}") for move, s in (handles or {}).items())
    marks = "".join(mark_svg(figure, m) for m in figure.marks)
    return (f'<g stroke="#999" stroke-width="2">{edges}</g><g font-family="sans-serif" font-size="{UNIT * 0.4:g}" '
            f'text-anchor="middle" dominant-baseline="central">{spots}</g><g class="marks">{marks}</g>')


DEFS = (f'<defs><marker id="arrow" viewBox="0 0 10 10" refX="8" refY="5" markerWidth="5" markerHeight="5" '
        f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{MARK_COLOUR}"/></marker></defs>')


def svg(figure: Figure, ids: bool = False, handles: Mapping[int, Spot] | None = None) -> str:
    """One position as a whole SVG document (``ids`` and ``handles`` as :func:`board_svg` draws them)."""
    left, top, width, height = bounds(Figure(figure.spots + tuple((handles or {}).values())))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="{left:g} {top:g} {width:g} {height:g}" '
            f'width="{width:g}" height="{height:g}">{DEFS}{board_svg(figure, ids, handles)}</svg>')


def strip_svg(figures: Sequence[Figure], captions: Sequence[str], columns: int = 8, title: str = "") -> str:
    """Positions side by side, ``columns`` to a row, each with its caption underneath,
    under ``title`` where one is given; one SVG document."""
    left, top, width, height = bounds(figures[0])
    gap = UNIT * 0.4
    cell_w, cell_h = width + gap, height + CAPTION + gap
    cols = min(columns, len(figures))
    rows = -(-len(figures) // cols)
    head = TITLE if title else 0
    parts = [(f'<text x="0" y="{TITLE * 0.7:g}" font-family="sans-serif" font-size="15" fill="#222">'
              f'{escape(title)}</text>')] if title else []
    for k, (fig, caption) in enumerate(zip(figures, captions)):
        ox, oy = (k % cols) * cell_w - left, (k // cols) * cell_h - top + head
        parts.append(f'<g transform="translate({ox:g},{oy:g})">{board_svg(fig)}'
                     f'<text x="{left + width / 2:g}" y="{top + height + CAPTION * 0.8:g}" font-family="sans-serif" '
                     f'font-size="13" text-anchor="middle" fill="#333">{escape(caption)}</text></g>')
    total_w, total_h = max(cols * cell_w - gap, len(title) * TITLE_CHAR), rows * cell_h - gap + head
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {total_w:g} {total_h:g}" width="{total_w:g}" '
            f'height="{total_h:g}">{DEFS}{"".join(parts)}</svg>')


#: Fill of the depth chart's bars (the SVG chart and the plot).
BAR_COLOUR = "#4c72b0"
#: The log axis starts this many decades below 1, so that a count of 1 is a bar.
LOG_FOOT = 0.5
#: Widest character of the chart's 11-pixel tick labels (digits, commas), in pixels, to fit them.
TICK_CHAR = 6.5


def round_step(span: float) -> int:
    """The least of 1, 2 and 5 times a power of ten that is at least ``span`` (1 at least)."""
    power = 1
    while True:
        for multiple in (1, 2, 5):
            if multiple * power >= span:
                return multiple * power
        power *= 10


def y_ticks(top: int, log: bool = False) -> list[int]:
    """The ticks of an axis up to ``top`` (at least 1): on a ``log`` axis the powers of ten
    from 1, every few decades so that there are at most 8; else 0 and the multiples of a
    round step (:func:`round_step`), 3 to 6 ticks."""
    if log:
        decades = len(str(top))  # the powers of ten up to top
        return [10**k for k in range(0, decades, math.ceil(decades / 8))]
    return list(range(0, top + 1, round_step(top / 5)))


def axis_share(value: int, top: int, log: bool = False) -> float:
    """Where a positive ``value`` lies on an axis up to ``top``: 0 at its foot (0, or
    :data:`LOG_FOOT` decades below 1 on a ``log`` axis), 1 at ``top``."""
    if log:
        return (math.log10(value) + LOG_FOOT) / (math.log10(top) + LOG_FOOT)
    return value / top


def y_axis_svg(ticks: Sequence[int], y: Callable[[int], float], left: float, right: float, top: float,
               base: float) -> tuple[str, str]:
    """A chart's y axis from ``top`` to ``base`` at ``left``, with the x axis' line to
    ``right``: (the grid, to draw behind the bars; the lines, tick marks and tick labels,
    with thousands separators, to draw in front), each tick at ``y(tick)``."""
    grid = "".join(f'<line x1="{left:.2f}" y1="{y(t):.2f}" x2="{right:.2f}" y2="{y(t):.2f}"/>' for t in ticks)
    marks = "".join(f'<line x1="{left - 4:.2f}" y1="{y(t):.2f}" x2="{left:.2f}" y2="{y(t):.2f}"/>' for t in ticks)
    labels = "".join(f'<text x="{left - 6:.2f}" y="{y(t):.2f}">{t:,}</text>' for t in ticks)
    return (f'<g class="grid" stroke="#e4e4e4">{grid}</g>',
            f'<g class="axes" stroke="#333"><line x1="{left:.2f}" y1="{top:.2f}" x2="{left:.2f}" y2="{base:.2f}"/>'
            f'<line x1="{left:.2f}" y1="{base:.2f}" x2="{right:.2f}" y2="{base:.2f}"/>{marks}</g>'
            f'<g class="y-ticks" fill="#333" text-anchor="end" dominant-baseline="central">{labels}</g>')


def bar_chart_svg(counts: Sequence[int], log: bool = False, cumulative: bool = False, width: int = 720,
                  height: int = 280) -> str:
    """Positions per depth as bars (``cumulative``: up to each depth) on a linear or
    ``log`` y axis with round ticks (:func:`y_ticks`) and the tallest bar the plot's full
    height; every non-zero bar at least 2 pixels tall, so that none is hidden. The
    caption and the last depth's count stand in a margin above the plot, the count
    joined to its bar by a dotted line, so that no text covers a bar."""
    values = list(accumulate(counts)) if cumulative else list(counts)
    top = max(values) or 1
    ticks = y_ticks(top, log)
    head, foot, right = 32, 24, 12
    left = 14 + TICK_CHAR * max(len(f"{t:,}") for t in ticks)
    plot_w, plot_h = width - left - right, height - head - foot
    base = head + plot_h
    bar = plot_w / max(1, len(values))

    def y(value: int) -> float:
        return base - axis_share(value, top, log) * plot_h if value > 0 else base

    def tall(value: int) -> float:
        return max(2.0, base - y(value)) if value > 0 else 0.0

    bars = "".join(
        f'<rect x="{left + (i + 0.1) * bar:.2f}" y="{base - tall(v):.2f}" width="{0.8 * bar:.2f}" '
        f'height="{tall(v):.2f}"><title>depth {i}: {v:,}</title></rect>' for i, v in enumerate(values))
    grid, axes = y_axis_svg(ticks, y, left, width - right, head, base)
    step = max(1, round(len(values) / 12))
    x_labels = "".join(f'<text x="{left + (i + 0.5) * bar:.2f}" y="{height - 8}">{i}</text>'
                       for i in range(0, len(values), step))
    last = len(values) - 1
    last_x, last_top = left + (last + 0.5) * bar, base - tall(values[last])
    caption = f"positions{' up to each depth' if cumulative else ''} ({'log' if log else 'linear'} scale)"
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
            f'font-family="sans-serif" font-size="11">{grid}<g class="bars" fill="{BAR_COLOUR}">{bars}</g>{axes}'
            f'<g class="x-ticks" fill="#333" text-anchor="middle">{x_labels}</g>'
            f'<text class="caption" x="4" y="{head - 14}" fill="#333">{caption}</text>'
            f'<line class="leader" x1="{last_x:.2f}" y1="{head - 9}" x2="{last_x:.2f}" y2="{last_top:.2f}" '
            f'stroke="{MARK_COLOUR}" stroke-dasharray="2 2"/>'
            f'<text class="note" x="{left + plot_w:.2f}" y="{head - 14}" fill="{MARK_COLOUR}" text-anchor="end">'
            f'{values[last]:,} at {last}</text></svg>')
