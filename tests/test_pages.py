"""Solutions as pictures: the SVG strip and the page that plays a solution; explorations
as pictures: the page's depth charts and the matplotlib plot, no label on a bar.

The page is checked in a real browser (headless Chromium through Selenium and Debian's
chromium-driver): stepping it shows path[k] after k moves, and it makes no request
outside its own file. Without that browser those tests skip."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import puzzlespace as ps
from puzzlespace import render
from puzzlespace.cli import app
from puzzlespace.pages import frames, solution_html, solution_svg
from puzzlespace.solver import Solution

from browsing import requests_made
from puzzles import examples, random_walk

CASES = [("3x3", "8 6 7/2 5 4/3 0 1"), ("jump:6", "1 2 0 3 4 5 6"), ("flip:3x3", None),
         ("graph:examples/theta.json", "2 0 1 3 4 5 6")]


@pytest.fixture(params=CASES, ids=[c[0] for c in CASES])
def solution(request, examples, monkeypatch):
    monkeypatch.chdir(examples.parent)
    name, position = request.param
    p = ps.load_puzzle(name)
    if position is None:  # three lines turned over from the goal
        start = p.goal
        for line in (0, 4, 2):
            start = p.apply(start, line)
    else:
        start = p.parse_position(position)
    return ps.solve(p, start)


def expected_spots(p, state) -> list[list[str]]:
    """What each spot shows, from the state itself: a token's number ('' for the blank),
    or a flip cell's face."""
    if p.spec.startswith("flip"):
        return [["", "light" if v else "dark"] for v in state]
    return [[str(t) if t else "", "piece" if t else "empty"] for t in state]


def test_frames_show_each_position_of_the_path(solution):
    """The start, and each move's changes applied in turn, give every position of the path."""
    data = frames(solution)
    assert len(data["changes"]) == solution.length and len(data["mark"]) == len(solution.path)
    shown = [list(s) for s in data["first"]]
    for k, state in enumerate(solution.path):
        if k:
            for j, label, fill in data["changes"][k - 1]:
                shown[j] = [label, fill]
        assert shown == expected_spots(solution.puzzle, state)
        assert (data["mark"][k] >= 0) == (k < solution.length)
    assert all(data["marks"]) and len(set(data["marks"])) == len(data["marks"])


def test_the_svg_strip_is_one_document_with_a_board_per_position(solution):
    root = ET.fromstring(solution_svg(solution))
    captions = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text") if t.text and
                (t.text == "start" or t.text.startswith("after"))]
    assert len(captions) == len(solution.path) and captions[0] == "start" and captions[-1].endswith("(goal)")


def test_the_page_refers_to_nothing_outside_it(solution):
    page = solution_html(solution)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "@import" not in page and "url(http" not in page


def _walk_solution(name: str, moves: int, seed: int) -> Solution:
    """A solution of exactly ``moves`` moves: a random walk from the goal, played back."""
    p = ps.load_puzzle(name)
    path = random_walk(p, p.goal, moves, np.random.default_rng(seed))[::-1]
    moves_made = [next(m for m in p.moves(a) if p.apply(a, m) == b) for a, b in zip(path, path[1:])]
    return Solution(p, path[0], moves_made, path, "ida", 0, 0.0, p.move_notations(path, moves_made))


FIGURED = ["4x3", "jump:7:1,3", "flip:4x3", f"graph:{Path(__file__).resolve().parents[1] / 'examples' / 'petersen.toml'}"]


def _any_walk(name: str, moves: int, seed: int) -> Solution:
    """A "solution" of ``moves`` random legal moves from a random position (frames need
    no goal), for any family."""
    p = ps.load_puzzle(name)
    rng = np.random.default_rng(seed)
    path, made = [p.random_position(rng)], []
    for _ in range(moves):
        legal = list(p.moves(path[-1]))
        made.append(legal[int(rng.integers(len(legal)))])
        path.append(p.apply(path[-1], made[-1]))
    return Solution(p, path[0], made, path, "ida", 0, 0.0, p.move_notations(path, made))


@examples(30)
@given(name=st.sampled_from(FIGURED), moves=st.integers(0, 60), seed=st.integers(0, 2**32 - 1))
def test_frames_agree_with_every_positions_own_figure(name, moves, seed):
    """The reference: every position's whole figure, with its move's marks."""
    sol = _any_walk(name, moves, seed)
    data = frames(sol)
    shown = [list(s) for s in data["first"]]
    for k, (state, move) in enumerate(zip(sol.path, [*sol.moves, None])):
        if k:
            for j, label, fill in data["changes"][k - 1]:
                shown[j] = [label, fill]
        figure = sol.puzzle.figure(state, move)
        assert shown == [[s.label, s.fill] for s in figure.spots]
        marks = "".join(render.mark_svg(figure, m) for m in figure.marks)
        assert (data["marks"][data["mark"][k]] if data["mark"][k] >= 0 else "") == marks


@pytest.mark.parametrize("name", FIGURED, ids=lambda n: n.split("/")[-1])
def test_a_figure_draws_each_value_alike_wherever_it_is(name):
    """The figure contract the frames rely on: a spot's look is its cell's value's; places,
    shapes and edges do not depend on the position."""
    p = ps.load_puzzle(name)
    rng = np.random.default_rng(5)
    base, look = p.figure(p.goal), {}
    for _ in range(20):
        state = p.random_position(rng)
        figure = p.figure(state)
        assert figure.edges == base.edges
        assert [(s.x, s.y, s.shape) for s in figure.spots] == [(s.x, s.y, s.shape) for s in base.spots]
        for v, spot in zip(state, figure.spots):
            assert look.setdefault(v, (spot.label, spot.fill)) == (spot.label, spot.fill)


def test_a_long_solution_gets_a_strip_of_evenly_spaced_positions():
    from puzzlespace.pages import STRIP_BOARDS

    sol = _walk_solution("5x5", 400, 2)
    root = ET.fromstring(solution_svg(sol))
    captions = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text") if t.text and
                (t.text == "start" or t.text.startswith("after"))]
    assert len(captions) == STRIP_BOARDS and captions[0] == "start" and captions[1] == "after 4: " + str(
        sol.notations["tiles"][3]) and captions[-1].startswith("after 400:")


def test_a_100_move_page_is_small():
    for name in ("4x4", "6x6"):
        page = solution_html(_walk_solution(name, 100, 1))
        assert len(page.encode()) < 200_000, (name, len(page))


def test_cli_writes_both(tmp_path):
    page, picture = tmp_path / "s.html", tmp_path / "s.svg"
    result = CliRunner().invoke(app, ["solve", "3x3", "8 6 7/2 5 4/3 0 1", "-q", "--html", str(page), "--svg",
                                      str(picture)])
    assert result.exit_code == 0, result.output
    assert "page written to" in result.output and "picture written to" in result.output
    assert page.read_text().startswith("<!doctype html>") and ET.fromstring(picture.read_text()) is not None
    bad = CliRunner().invoke(app, ["solve", "3x3", "8 6 7/2 5 4/3 0 1", "-q", "--html", str(tmp_path / "no" / "s.html")])
    assert bad.exit_code == 2 and "--html" in bad.output and "does not exist" in bad.output, bad.output
    assert "Traceback" not in bad.output and not (tmp_path / "no").exists()


# ---- in a browser ---------------------------------------------------------------------

def _shown(browser, n: int) -> list[list[str]]:
    return browser.execute_script(
        "return Array.from({length: arguments[0]}, (_, j) => {const g = document.getElementById('s' + j);"
        " return [g.querySelector('text').textContent, g.getAttribute('class')];});", n)


def test_the_page_plays_the_solution_in_a_browser(browser, solution, tmp_path):
    page = tmp_path / "solution.html"
    page.write_text(solution_html(solution))
    browser.get_log("performance")  # drop what came before
    browser.get(page.as_uri())
    p, n = solution.puzzle, solution.puzzle.n_cells
    click = lambda which: browser.find_element("id", which).click()  # noqa: E731
    assert _shown(browser, n) == expected_spots(p, solution.path[0])
    for k in range(1, solution.length + 1):
        click("next")
        assert browser.find_element("id", "board").get_attribute("data-step") == str(k)
        assert _shown(browser, n) == expected_spots(p, solution.path[k])
    click("first")
    assert _shown(browser, n) == expected_spots(p, solution.path[0])
    click("last")
    assert _shown(browser, n) == expected_spots(p, p.goal)
    assert browser.find_element("css selector", "#moves li.current").get_attribute("data-k") == str(solution.length)
    browser.save_screenshot(str(tmp_path / "goal.png"))
    assert all(url.startswith("file:") for url in requests_made(browser))


def test_play_runs_to_the_goal(browser, tmp_path):
    sol = _walk_solution("4x3", 12, 3)
    page = tmp_path / "play.html"
    page.write_text(solution_html(sol))
    browser.get(page.as_uri())
    browser.execute_script("document.getElementById('speed').value = '150';")
    browser.find_element("id", "play").click()
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 10).until(lambda b: b.find_element("id", "board").get_attribute("data-step") == "12")
    assert _shown(browser, 12) == expected_spots(sol.puzzle, sol.puzzle.goal)
    assert browser.find_element("id", "play").text == "play"


def primary(sol) -> list:
    """A solution's moves in its family's first notation, as the page lists them."""
    return next(iter(sol.notations.values()))


def test_the_page_of_every_optimal_solution_steps_between_them(browser, tmp_path):
    """``solve --count --html``: "solution 1 of 30", the next and previous solutions (the
    buttons and the keys N, P, wrapping round), each played to the goal path[k] by path[k],
    in the order the command lists them."""
    page = tmp_path / "all.html"
    args = ["jump:4", "1 2 3 4 0", "--goal", "0 4 3 2 1"]
    got = CliRunner().invoke(app, ["solve", *args, "--count", "--html", str(page)])
    assert got.exit_code == 0 and got.stdout.startswith("jump:4:1,2: 30 optimal solutions of 12 moves")
    p = ps.load_puzzle("jump:4", "0 4 3 2 1")
    listed = list(ps.optimal_solutions(p, p.parse_position("1 2 3 4 0")))
    browser.get(page.as_uri())
    chosen = lambda: int(browser.find_element("id", "solutions").get_attribute("data-chosen"))  # noqa: E731
    assert "solution 1 of 30 optimal solutions" in browser.find_element("id", "solutions").text
    for i, key in ((1, None), (2, "n"), (1, "p"), (0, "p"), (29, "p"), (0, "n")):
        if key:
            browser.find_element("tag name", "body").send_keys(key)
        else:
            browser.find_element("id", "next-solution").click()
        assert chosen() == i and browser.find_element("id", "chosen").text == str(i + 1)
        said = [li.text for li in browser.find_elements("css selector", "#moves li")]  # the space: no-break
        assert said == [f"{k}. {m}" for k, m in enumerate(primary(listed[i]), 1)]
        for k in range(13) if i in (0, 1) else (0,):  # two solutions played through, the others' starts
            assert _shown(browser, 5) == expected_spots(p, listed[i].path[k])
            browser.find_element("id", "next").click()
    assert all(url.startswith("file:") for url in requests_made(browser))


def test_a_page_of_more_optimal_solutions_than_listed_says_so():
    p = ps.load_puzzle("jump:4", "0 4 3 2 1")
    listed = [s.solution(p, s.path[0], "bfs") for s in ps.optimal_solutions(p, p.parse_position("1 2 3 4 0"))]
    page = solution_html(listed[0], listed[1:5], 30)
    assert "solution <span id=\"chosen\">1</span> of 5 listed of 30 optimal solutions" in page
    assert "30 optimal solutions of 12 moves" in page and "the first 5 here" in page
    data = json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>', page).group(1))
    assert [d["moves"] for d in data["solutions"]] == [[str(m) for m in primary(s)] for s in listed[:5]]
    assert "id=\"solutions\"" not in solution_html(listed[0])


# ---- explorations ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def explored(tmp_path_factory):
    """explore 3x3 with --html, --csv and --plot --log, once for the tests below."""
    folder = tmp_path_factory.mktemp("explore")
    files = {k: folder / f"e.{k}" for k in ("html", "csv", "png")}
    result = CliRunner().invoke(app, ["explore", "3x3", "--antipodes", "5", "--json", "--html", str(files["html"]),
                                      "--csv", str(files["csv"]), "--plot", str(files["png"]), "--log"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), files


def test_explore_writes_counts_page_and_plot(explored):
    facts, files = explored
    rows = files["csv"].read_text().splitlines()
    assert rows[0] == "depth,positions" and [int(r.split(",")[1]) for r in rows[1:]] == facts["depth_counts"]
    page = files["html"].read_text()
    assert f"{facts['states']:,} positions" in page and page.count("<figure>") == facts["antipode_count"] == 2
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert files["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = re.findall(r"<tr><td>(\d+)</td><td>([\d,]+)</td><td>([\d,]+)</td></tr>", page)
    assert [r[1] for r in rows] == [f"{c:,}" for c in facts["depth_counts"]] and rows[-1][2] == f"{facts['states']:,}"


#: Positions per depth of real explorations (``explore 3x3 --json``, ``explore flip:5x5 --json``).
DEPTHS = {"3x3": [1, 2, 4, 8, 16, 20, 39, 62, 116, 152, 286, 396, 748, 1024, 1893, 2512, 4485, 5638, 9529, 10878, 16993,
                  17110, 23952, 20224, 24047, 15578, 14560, 6274, 3910, 760, 221, 2],
          "flip:5x5": [1, 10, 69, 408, 2062, 7961, 25090, 63541, 119258, 164080, 156432, 91168, 28864, 4608]}
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(params=["3x3", "flip:5x5", "4x3"])
def depths(request, seeds) -> list[int]:
    """A real depth distribution: 3x3's and flip:5x5's, and 4x3's from the seed pages."""
    if request.param == "4x3":
        return seeds["sliding"]["4x3_depth_counts"]["counts"]
    return DEPTHS[request.param]


def _text_boxes(node: ET.Element, inherited: dict | None = None) -> list[tuple[str, float, float, float, float]]:
    """(text, left, top, right, bottom) of every text in ``node``, its box taken generously:
    0.6 em a character, 0.8 em above the baseline and 0.25 em below it (half an em either
    side of a central one)."""
    attrs = {**(inherited or {}), **node.attrib}
    if node.tag != SVG + "text":
        return [box for child in node for box in _text_boxes(child, attrs)]
    size, x, y = float(attrs.get("font-size", 11)), float(attrs["x"]), float(attrs["y"])
    wide = 0.6 * size * len(node.text)
    left = x - {"start": 0, "middle": wide / 2, "end": wide}[attrs.get("text-anchor", "start")]
    top, bottom = (y - size / 2, y + size / 2) if attrs.get("dominant-baseline") == "central" else (
        y - 0.8 * size, y + 0.25 * size)
    return [(node.text, left, top, left + wide, bottom)]


def _bars(root: ET.Element) -> list[tuple[float, float, float, float]]:
    """(left, top, right, bottom) of each bar of a chart."""
    return [(float(r.get("x")), float(r.get("y")), float(r.get("x")) + float(r.get("width")),
             float(r.get("y")) + float(r.get("height"))) for r in root.iter(SVG + "rect")]


def _overlap(a, b) -> bool:
    """Whether boxes (left, top, right, bottom) share some area."""
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _covered(root: ET.Element) -> list:
    """The texts of a chart that meet one of its bars or another text, with what they meet."""
    texts = _text_boxes(root)
    return ([(t, b) for t in texts for b in _bars(root) if b[3] > b[1] and _overlap(t[1:], b)]
            + [(s, t) for i, s in enumerate(texts) for t in texts[:i] if _overlap(s[1:], t[1:])])


@pytest.mark.parametrize("cumulative", [False, True], ids=["per-depth", "cumulative"])
@pytest.mark.parametrize("log", [False, True], ids=["linear", "log"])
def test_no_text_of_the_depth_chart_covers_a_bar(depths, log, cumulative):
    """Every text (ticks, caption, the last depth's count) stands clear of every bar and of
    every other text, and the last depth's count and the scale are said."""
    root = ET.fromstring(render.bar_chart_svg(depths, log=log, cumulative=cumulative))
    assert _covered(root) == []
    texts = _text_boxes(root)
    last = sum(depths) if cumulative else depths[-1]
    shown = [t[0] for t in texts]
    assert f"{last:,} at {len(depths) - 1}" in shown and any(("log scale" in t) == log for t in shown)


@pytest.mark.parametrize("cumulative", [False, True], ids=["per-depth", "cumulative"])
@pytest.mark.parametrize("log", [False, True], ids=["linear", "log"])
def test_the_depth_charts_bars_stand_where_its_y_axis_says(depths, log, cumulative):
    """The y axis has round ticks (powers of ten on a log axis) labelled with thousands
    separators; the tallest bar is the plot's full height and every bar's top is at its
    count on that axis (2 pixels at least)."""
    values = list(np.cumsum(depths)) if cumulative else depths
    root = ET.fromstring(render.bar_chart_svg(depths, log=log, cumulative=cumulative))
    labels = [(t.text, float(t.get("y"))) for g in root.iter(SVG + "g") if g.get("class") == "y-ticks" for t in g]
    assert len(labels) >= 3 and all(re.fullmatch(r"\d{1,3}(,\d{3})*", text) for text, _ in labels)
    ticks = [(int(text.replace(",", "")), y) for text, y in labels]
    step = ticks[1][0]
    if log:
        assert re.fullmatch(r"10+", str(step)) and [t for t, _ in ticks] == [step**k for k in range(len(ticks))]
    else:
        assert re.fullmatch(r"[125]0*", str(step)) and [t for t, _ in ticks] == [k * step for k in range(len(ticks))]
    (spine,) = [line for line in root.iter(SVG + "line") if line.get("x1") == line.get("x2") and not line.get("class")]
    top, foot = float(spine.get("y1")), float(spine.get("y2"))
    scale = np.log10 if log else np.asarray
    (t0, y0), (t1, y1) = ticks[0], ticks[-1]
    for value, (_, bar_top, _, bar_foot) in zip(values, _bars(root)):
        assert bar_foot == pytest.approx(foot, abs=0.01)
        if value:
            at = y0 + (y1 - y0) * (scale(value) - scale(t0)) / (scale(t1) - scale(t0))
            assert bar_foot - bar_top == pytest.approx(max(2.0, foot - at), abs=0.05)
        else:
            assert bar_top == bar_foot
    tallest = _bars(root)[int(np.argmax(values))]
    assert tallest[1] == pytest.approx(top, abs=0.01) and all(top <= y <= foot for _, y in ticks)


@settings(deadline=None)
@given(counts=st.lists(st.integers(0, 10**15), max_size=80), log=st.booleans(), cumulative=st.booleans())
def test_any_depth_chart_keeps_its_texts_off_its_bars(counts, log, cumulative):
    """Any counts (the goal's 1 first): no text meets a bar or another text."""
    assert _covered(ET.fromstring(render.bar_chart_svg([1, *counts], log=log, cumulative=cumulative))) == []


def _plotted(counts: list[int], log: bool):
    """The plot of an exploration of "sample" with these counts, drawn: (figure, renderer,
    pixels)."""
    pytest.importorskip("matplotlib", reason="no matplotlib: pip install 'puzzlespace[plot]'")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from puzzlespace.explore.engine import ExploreResult
    from puzzlespace.plot import depth_figure

    result = ExploreResult(puzzle="sample", goal=(), states=sum(counts), max_depth=len(counts) - 1, depth_counts=counts,
                           antipode_count=counts[-1], antipodes=[], seconds=0.0, peak_memory_bytes=0, scheme="",
                           rank_space=sum(counts), threads=1)
    canvas = FigureCanvasAgg(depth_figure(result, log))
    canvas.draw()
    return canvas.figure, canvas.get_renderer(), np.asarray(canvas.buffer_rgba())[..., :3]


def _drawn_bars(fig, renderer):
    """Each bar's box on the canvas, cut to the axes (a log axis cuts its foot)."""
    from matplotlib.transforms import Bbox

    (ax,) = fig.axes
    return [Bbox.intersection(bar.get_window_extent(renderer), ax.bbox) for bar in ax.patches]


@pytest.mark.parametrize("log", [False, True], ids=["linear", "log"])
def test_the_plot_draws_each_bar_whole_to_its_count(depths, log):
    """On the canvas, each bar's top is at its count on the y axis, and the bar's own colour
    shows just under that top and not just over it: nothing is drawn over a bar."""
    fig, renderer, pixels = _plotted(depths, log)
    (ax,) = fig.axes
    colour = [round(255 * c) for c in ax.patches[0].get_facecolor()[:3]]
    rows = pixels.shape[0]
    for depth, (count, box) in enumerate(zip(depths, _drawn_bars(fig, renderer))):
        top = ax.transData.transform((depth, count))[1]
        assert box.y1 == pytest.approx(top, abs=0.5), depth
        x = int(box.x0 + 0.3 * box.width)
        if box.height > 6:
            assert list(pixels[int(rows - (top - 3)), x]) == colour, depth
        assert list(pixels[int(rows - (top + 3)), x]) != colour, depth


@pytest.mark.parametrize("log", [False, True], ids=["linear", "log"])
def test_no_label_of_the_plot_covers_a_bar(depths, log):
    """No text's box (titles, God's number, ticks, axis labels) meets a bar's, and the
    title and God's number with its antipodes are there."""
    from matplotlib.text import Text

    fig, renderer, _ = _plotted(depths, log)
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text()]
    bars = [b for b in _drawn_bars(fig, renderer) if b.height > 0]
    covering = [(t.get_text(), b) for t in texts for b in bars
                if _overlap(tuple(t.get_window_extent(renderer).extents), tuple(b.extents))]
    assert covering == []
    said = [t.get_text() for t in texts]
    antipodes = f"{depths[-1]:,} antipode{'s' if depths[-1] != 1 else ''}"
    assert f"God's number {len(depths) - 1}: {antipodes}" in said
    assert f"sample: {sum(depths):,} positions" in said


def test_the_depth_chart_hides_no_bar():
    """On a linear axis a count of 1 beside 10^6 is still a visible bar."""
    from puzzlespace.render import bar_chart_svg

    root = ET.fromstring(bar_chart_svg([1, 10**6, 3, 0]))
    heights = [float(r.get("height")) for r in root.iter("{http://www.w3.org/2000/svg}rect")]
    assert heights[0] >= 2 and heights[2] >= 2 and heights[3] == 0 and heights[1] > 200


def test_the_exploration_page_in_a_browser(browser, explored, tmp_path):
    facts, files = explored
    browser.get_log("performance")
    browser.get(files["html"].as_uri())
    visible = "return Array.from(document.querySelectorAll('.chart')).filter((c) => !c.hidden)" \
              ".map((c) => c.dataset.log + c.dataset.cumulative);"
    assert browser.execute_script(visible) == ["00"]
    browser.find_element("id", "log").click()
    assert browser.execute_script(visible) == ["10"]
    browser.find_element("id", "cumulative").click()
    assert browser.execute_script(visible) == ["11"]
    cells = browser.execute_script("return Array.from(document.querySelectorAll('#counts tbody tr'))"
                                   ".map((r) => r.children[1].textContent);")
    assert cells == [f"{c:,}" for c in facts["depth_counts"]]
    browser.save_screenshot(str(tmp_path / "explore.png"))
    assert all(url.startswith("file:") for url in requests_made(browser))
    charts = browser.execute_script(_DRAWN_CHARTS)
    assert len(charts) == 4 and all(len(c["bars"]) == len(facts["depth_counts"]) for c in charts)
    assert [(t, b) for c in charts for t in c["texts"] for b in c["bars"] if b[3] > b[1] and _overlap(t[1:], b)] == []


#: Every chart of the page shown, and the boxes the browser drew of its bars and its texts.
_DRAWN_CHARTS = """
document.querySelectorAll(".chart").forEach((c) => { c.hidden = false; });
const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
return Array.from(document.querySelectorAll(".chart svg")).map((svg) => ({
  bars: Array.from(svg.querySelectorAll("rect")).map(box),
  texts: Array.from(svg.querySelectorAll("text")).map((t) => [t.textContent, ...box(t)])}));
"""
