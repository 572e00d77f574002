"""Solutions as pictures: the SVG strip and the page that plays a solution.

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
from puzzles import random_walk

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


@settings(max_examples=30, deadline=None)
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
    assert bad.exit_code == 2 and "cannot write the page" in bad.output and "Traceback" not in bad.output


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
                                   ".map((r) => +r.children[1].textContent);")
    assert cells == facts["depth_counts"]
    browser.save_screenshot(str(tmp_path / "explore.png"))
    assert all(url.startswith("file:") for url in requests_made(browser))
