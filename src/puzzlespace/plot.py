"""An exploration's depth distribution as a matplotlib plot (PNG or SVG), for the ``plot``
extra: matplotlib is imported only here, inside the functions that need it.

The figure is built outside pyplot (no backend chosen, no figure kept anywhere), so that
drawing one changes nothing in a notebook or program that uses matplotlib itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .errors import PuzzleError
from .render import BAR_COLOUR, MARK_COLOUR

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .explore.engine import ExploreResult

#: The kinds of file a plot is written as, by extension.
PLOT_SUFFIXES = (".png", ".svg")


def check_plot_file(path: Path) -> None:
    """Refuse, before any work, a plot that could not be written: without matplotlib, or
    to a file that is neither PNG nor SVG (:class:`PuzzleError`, one line)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise PuzzleError("plots need matplotlib: pip install 'puzzlespace[plot]'") from None
    if path.suffix.lower() not in PLOT_SUFFIXES:
        raise PuzzleError(f"a plot is PNG or SVG, not {path.suffix or 'a file without extension'}")


def depth_figure(result: ExploreResult, log: bool = False) -> Figure:
    """The positions per depth as bars on a linear or ``log`` axis (labelled with
    thousands separators), each non-zero count also a dot, so that a bar too small to see
    on a linear axis still shows. God's number is a dotted line behind the bars, named
    with its antipodes above the axes, under the title: no text stands inside the axes."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import LogFormatter, MaxNLocator, StrMethodFormatter

    counts, god = result.depth_counts, result.max_depth
    fig = Figure(figsize=(8, 4.5), layout="constrained")
    ax = fig.subplots()
    ax.bar(range(len(counts)), counts, color=BAR_COLOUR)
    ax.plot(*zip(*((d, c) for d, c in enumerate(counts) if c)), "o", color=BAR_COLOUR, markersize=3)
    if log:
        ax.set_yscale("log")
        ax.yaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False))  # within a decade: plain minor labels
    else:
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    ax.axvline(god, color=MARK_COLOUR, linestyle=":", linewidth=1, zorder=0.5)
    antipodes = f"{result.antipode_count:,} antipode{'s' if result.antipode_count != 1 else ''}"
    ax.set_title(f"God's number {god}: {antipodes}", loc="right", color=MARK_COLOUR, fontsize="medium")
    fig.suptitle(f"{result.puzzle}: {result.states:,} positions")
    ax.set_xlabel("moves from the goal")
    ax.set_ylabel("positions" + (" (log scale)" if log else ""))
    return fig


def write_depth_plot(result: ExploreResult, path: Path, log: bool = False) -> None:
    """Write :func:`depth_figure` to ``path``, PNG or SVG by its extension; a file that
    cannot be written is a :class:`PuzzleError` naming it."""
    try:
        depth_figure(result, log).savefig(path)
    except OSError as exc:
        raise PuzzleError(f"cannot write the plot {str(path)!r}: {exc.strerror or exc}") from None
