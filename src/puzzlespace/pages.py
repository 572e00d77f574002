"""Solutions and explorations as pictures: one static SVG of a solution (start, goal and
the path as a strip), a self-contained HTML page that plays it, and a page of an
exploration's depth distribution and antipodes.

Both draw through :mod:`puzzlespace.render` from the family's figures. The page carries
its SVG, its data and its script inline and refers to nothing outside the file. Its
script only steps through frames the renderer made: every spot's label and fill at the
start and what each move changes, and the mark of the move made from each position.
"""

from __future__ import annotations

import json
from html import escape
from typing import TYPE_CHECKING, Sequence

import numpy as np

from . import render

if TYPE_CHECKING:  # the solution's own display (``Solution._repr_html_``) calls these pages
    from .solver import Solution


def _figure(sol: Solution, k: int):
    """The figure of the solution's position ``k``, with the move made from it marked."""
    return sol.puzzle.figure(sol.path[k], sol.moves[k] if k < sol.length else None)


#: Most boards in the SVG strip: longer solutions show this many positions, evenly spaced.
STRIP_BOARDS = 101


def solution_svg(sol: Solution, columns: int = 8) -> str:
    """The start, the positions of the solution with the move made from each marked, and
    the goal, as one SVG strip (every position up to :data:`STRIP_BOARDS`, else that
    many evenly spaced, start and goal among them)."""
    primary = _primary(sol)
    count = min(len(sol.path), STRIP_BOARDS)
    shown = sorted({round(i * sol.length / max(1, count - 1)) for i in range(count)})
    figures = [_figure(sol, k) for k in shown]
    captions = ["start" if k == 0 else f"after {k}: {primary[k - 1]}" for k in shown]
    captions[-1] = "goal" if sol.length == 0 else f"after {sol.length}: {primary[-1]} (goal)"
    return render.strip_svg(figures, captions, columns, title=_title(sol))


def _title(sol: Solution) -> str:
    """``sliding:4x3: 53 moves (36 in the multi-tile metric)``: the puzzle and the length in each metric."""
    return f"{sol.puzzle.spec}: {sol.said_length()}"


def facts(sol: Solution) -> list[tuple[str, str]]:
    """What the page states about the solution, as (name, value)."""
    if sol.optimal:
        quality = "proven optimal"
    else:
        quality = f"not proven optimal: the optimum is at least {sol.proven_lower_bound}"
    rows = [("puzzle", sol.puzzle.spec), ("length", f"{sol.said_length()}, {quality}"),
            ("method", f"{sol.method} {sol.heuristic}".strip())]
    if sol.method != "fast":
        rows.append(("nodes", f"{sol.nodes:,}"))
    rows.append(("time", f"{sol.seconds:.3f} s"))
    return rows


def frames(sol: Solution) -> dict:
    """The page's data: ``first``, each spot's [label, fill] at the start; ``changes``, per
    move, the [spot, label, fill] it changes; ``marks``, the SVG of each different move
    mark, and ``mark``, per position, the index of the one made from it (-1 at the goal);
    the fills' ``colours``.

    Drawn from the start's figure and the cells each move changes (by the figure's
    contract, a cell's look is its value's), so that the work grows with the changes,
    not with the board times the moves."""
    puzzle = sol.puzzle
    first = puzzle.figure(sol.start)
    look = {v: [s.label, s.fill] for v, s in zip(sol.start, first.spots)}
    cells = np.asarray(sol.path, dtype=np.int64)
    changes: list[list] = [[] for _ in sol.moves]
    for k, j in zip(*(a.tolist() for a in np.nonzero(cells[1:] != cells[:-1]))):
        was, now = int(cells[k, j]), int(cells[k + 1, j])
        if now not in look:  # a value the start does not show
            look.update((v, [s.label, s.fill]) for v, s in zip(sol.path[k + 1], puzzle.figure(sol.path[k + 1]).spots))
        if look[now] != look[was]:
            changes[k].append([j, *look[now]])
    marks: dict[str, int] = {}
    mark = []
    for state, move in zip(sol.path, [*sol.moves, None]):
        svg = "".join(render.mark_svg(first, m) for m in puzzle.move_marks(state, move))
        mark.append(marks.setdefault(svg, len(marks)) if svg else -1)
    return {"first": [[s.label, s.fill] for s in first.spots], "changes": changes, "marks": list(marks),
            "mark": mark, "colours": render.COLOURS}


def solution_html(sol: Solution, others: Sequence[Solution] = (), count: int | None = None) -> str:
    """The whole page: the board, the controls (play/pause, step, slider, speed), the move
    list with the current move highlighted, and the facts. With ``count`` (how many
    optimal solutions the start has), ``sol`` and ``others`` are some of them, all of the
    same start and length, and the page steps between them ("solution 1 of 40"; buttons,
    and the keys N and P)."""
    solutions = [sol, *others]
    board = render.svg(_figure(sol, 0), ids=True)
    rows = facts(sol) if count is None else _optimal_facts(sol, len(solutions), count)
    table = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in rows)
    data = json.dumps({"solutions": [dict(frames(s), moves=[str(m) for m in _primary(s)]) for s in solutions]},
                      separators=(",", ":")).replace("</", "<\\/")
    choose = "" if count is None else _CHOOSE.format(of=f"{count:,}" if count == len(solutions)
                                                      else f"{len(solutions):,} listed of {count:,}")
    moves = "".join(f'<li data-k="{k}">{k}.&nbsp;{escape(str(m))}</li>' for k, m in enumerate(_primary(sol), 1))
    return _PAGE.format(title=escape(_title(sol) if count is None else _optimal_title(sol, count)), board=board,
                        table=table, data=data, last=sol.length, choose=choose, moves=moves)


def _primary(sol: Solution) -> list:
    """The moves in the family's first notation."""
    return next(iter(sol.notations.values()), sol.moves)


def _optimal_title(sol: Solution, count: int) -> str:
    return f"{sol.puzzle.spec}: {count:,} optimal solution{'' if count == 1 else 's'} of {sol.said_length()}"


def _optimal_facts(sol: Solution, shown: int, count: int) -> list[tuple[str, str]]:
    """What a page of several optimal solutions states."""
    how = {"table": "from a tablebase", "bfs": "by a search of the position's layers",
           "ida": "by IDA*'s passes"}.get(sol.method, sol.method)
    return [("puzzle", sol.puzzle.spec), ("length", f"{sol.said_length()}, proven optimal"),
            ("optimal solutions", f"{count:,}, counted {how}" + ("" if shown == count else f"; the first {shown:,} here"))]


def solution_frame(sol: Solution) -> str:
    """The solution's page in an ``iframe`` (for a notebook: its script and styles kept
    apart from the notebook's), tall enough for the board and the controls."""
    height = render.bounds(_figure(sol, 0))[3] + 300 + 24 * (sol.length // 16)
    return (f'<iframe srcdoc="{escape(solution_html(sol))}" title="{escape(sol.puzzle.spec)} solution" '
            f'style="width: 100%; height: {height:.0f}px; border: 0"></iframe>')


#: Most antipodes drawn on an exploration's page.
PAGE_ANTIPODES = 24


def exploration_html(puzzle, result) -> str:
    """An exploration's page: the summary, the positions per depth as a chart (linear or
    log, per depth or cumulative), the counts as a table, and up to
    :data:`PAGE_ANTIPODES` antipodes drawn."""
    charts = "".join(
        f'<div class="chart" data-log="{int(log)}" data-cumulative="{int(cum)}"{"" if not log and not cum else " hidden"}>'
        f"{render.bar_chart_svg(result.depth_counts, log=log, cumulative=cum)}</div>"
        for log in (False, True) for cum in (False, True))
    summary = [("puzzle", result.puzzle), ("goal", puzzle.format_position(result.goal)),
               ("positions", f"{result.states:,}"), ("God's number", str(result.max_depth)),
               ("antipodes", f"{result.antipode_count:,}"),
               ("time", f"{result.seconds:.2f} s on {result.threads} thread{'s' if result.threads > 1 else ''}"),
               ("peak memory", f"{result.peak_memory_bytes / 2**20:.0f} MiB")]
    table = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in summary)
    running = 0
    rows = []
    for d, c in enumerate(result.depth_counts):
        running += c
        rows.append(f"<tr><td>{d}</td><td>{c:,}</td><td>{running:,}</td></tr>")
    shown = result.antipodes[:PAGE_ANTIPODES]
    boards = "".join(f'<figure>{render.svg(puzzle.figure(s))}<figcaption>{escape(puzzle.format_position(s))}'
                     f"</figcaption></figure>" for s in shown)
    more = f" ({len(shown)} of {result.antipode_count:,} drawn)" if result.antipode_count > len(shown) else ""
    return _EXPLORATION.format(title=escape(f"{result.puzzle}: {result.states:,} positions"), table=table,
                               charts=charts, counts="".join(rows), boards=boards, more=more)


_EXPLORATION = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 1.5em; color: #222; max-width: 60em; }}
table {{ border-collapse: collapse; }} th {{ text-align: left; padding-right: 1em; font-weight: normal; color: #666; }}
#counts td {{ text-align: right; padding: 0 .8em; font-family: monospace; }}
#antipodes {{ display: flex; flex-wrap: wrap; gap: 1em; }} figure {{ margin: 0; }}
figcaption {{ font-family: monospace; font-size: .8em; text-align: center; }}
svg {{ max-width: 100%; height: auto; }}
</style></head>
<body>
<h1>{title}</h1>
<table id="summary">{table}</table>
<h2>Positions by distance from the goal</h2>
<label><input type="checkbox" id="log"> log scale</label>
<label><input type="checkbox" id="cumulative"> cumulative</label>
{charts}
<h2>Antipodes{more}</h2>
<div id="antipodes">{boards}</div>
<h2>Counts</h2>
<table id="counts"><thead><tr><th>depth</th><th>positions</th><th>up to here</th></tr></thead>
<tbody>{counts}</tbody></table>
<script>
"use strict";
function pick() {{
  const log = +document.getElementById("log").checked, cum = +document.getElementById("cumulative").checked;
  document.querySelectorAll(".chart").forEach((c) => {{ c.hidden = +c.dataset.log !== log || +c.dataset.cumulative !== cum; }});
}}
document.getElementById("log").onchange = pick;
document.getElementById("cumulative").onchange = pick;
</script>
</body></html>
"""


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 1.5em; color: #222; max-width: 60em; }}
#board svg {{ max-width: 100%; height: auto; }}
.controls {{ margin: .8em 0; display: flex; gap: .4em; align-items: center; flex-wrap: wrap; }}
button {{ font-size: 1em; padding: .2em .7em; }}
#moves {{ list-style: none; display: flex; flex-wrap: wrap; gap: .3em .9em; padding: 0; font-family: monospace; }}
#moves li {{ cursor: pointer; padding: 0 .2em; }}
#moves li.current {{ background: #d1495b; color: #fff; border-radius: 3px; }}
table {{ border-collapse: collapse; }} th {{ text-align: left; padding-right: 1em; font-weight: normal; color: #666; }}
</style></head>
<body>
<h1>{title}</h1>
<table id="facts">{table}</table>
<div id="board" data-step="0">{board}</div>
<div class="controls">
<button id="first" title="start (Home)">|&#x25C0;</button><button id="prev" title="back (Left)">&#x25C0;</button>
<button id="play" title="play or pause (Space)">play</button>
<button id="next" title="forward (Right)">&#x25B6;</button><button id="last" title="goal (End)">&#x25B6;|</button>
<input id="slider" type="range" min="0" max="{last}" value="0" aria-label="position">
<label>speed <select id="speed"><option value="900">slow</option><option value="450" selected>normal</option>
<option value="150">fast</option></select></label>
<span id="where">0 / {last}</span>
</div>{choose}
<ol id="moves">{moves}</ol>
<script id="data" type="application/json">{data}</script>
<script>
"use strict";
const solutions = JSON.parse(document.getElementById("data").textContent).solutions;
const $ = (id) => document.getElementById(id);
let data, frames, last, k = 0, chosen = 0, timer = null;
function choose(i) {{
  pause();
  chosen = (i + solutions.length) % solutions.length;
  data = solutions[chosen];
  frames = [data.first];
  data.changes.forEach((change) => {{
    const next = frames[frames.length - 1].slice();
    change.forEach(([j, label, fill]) => {{ next[j] = [label, fill]; }});
    frames.push(next);
  }});
  last = frames.length - 1;
  $("moves").replaceChildren(...data.moves.map((m, j) => {{
    const li = document.createElement("li");
    li.dataset.k = j + 1; li.textContent = (j + 1) + ".\u00a0" + m;
    li.onclick = () => {{ pause(); show(j + 1); }};
    return li;
  }}));
  if ($("solutions")) {{ $("chosen").textContent = chosen + 1; $("solutions").dataset.chosen = chosen; }}
  show(0);
}}
function show(i) {{
  k = Math.max(0, Math.min(last, i));
  frames[k].forEach(([label, fill], j) => {{
    const g = $("s" + j), colours = data.colours[fill];
    g.setAttribute("class", fill); g.setAttribute("fill", colours[0]);
    const text = g.querySelector("text"); text.textContent = label; text.setAttribute("fill", colours[1]);
  }});
  document.querySelector("#board .marks").innerHTML = data.mark[k] < 0 ? "" : data.marks[data.mark[k]];
  $("board").dataset.step = k; $("slider").value = k; $("where").textContent = k + " / " + last;
  document.querySelectorAll("#moves li").forEach((li) => li.classList.toggle("current", +li.dataset.k === k));
  if (k === last) pause();
}}
function pause() {{ clearInterval(timer); timer = null; $("play").textContent = "play"; }}
function play() {{
  if (timer) return pause();
  if (k === last) show(0);
  $("play").textContent = "pause";
  timer = setInterval(() => show(k + 1), +$("speed").value);
}}
$("first").onclick = () => {{ pause(); show(0); }};
$("prev").onclick = () => {{ pause(); show(k - 1); }};
$("next").onclick = () => {{ pause(); show(k + 1); }};
$("last").onclick = () => {{ pause(); show(last); }};
$("play").onclick = play;
$("slider").oninput = (e) => {{ pause(); show(+e.target.value); }};
$("speed").onchange = () => {{ if (timer) {{ pause(); play(); }} }};
if ($("solutions")) {{
  $("prev-solution").onclick = () => choose(chosen - 1);
  $("next-solution").onclick = () => choose(chosen + 1);
}}
document.addEventListener("keydown", (e) => {{
  const keys = {{ArrowLeft: () => show(k - 1), ArrowRight: () => show(k + 1), Home: () => show(0), End: () => show(last)}};
  const other = $("solutions") ? {{n: 1, p: -1}}[e.key] : undefined;
  if (e.key === " ") {{ e.preventDefault(); play(); }} else if (keys[e.key]) {{ pause(); keys[e.key](); }}
  else if (other) choose(chosen + other);
}});
choose(0);
</script>
</body></html>
"""


#: The page's choice among several optimal solutions.
_CHOOSE = """
<div class="controls" id="solutions" data-chosen="0">
<button id="prev-solution" title="the previous solution (P)">&#x25C0; solution</button>
<span>solution <span id="chosen">1</span> of {of} optimal solutions</span>
<button id="next-solution" title="the next solution (N)">solution &#x25B6;</button>
</div>"""

