"""Playing a multi-tile board (``3x3:mtm``): a click on a tile in line with the blank
slides the whole line in one move, an arrow key one tile, and distances and hints count
multi-tile moves; through the game (:mod:`puzzlespace.play`) and in headless Chromium."""

from __future__ import annotations

import pytest

import puzzlespace as ps
from puzzlespace.play import Games

from reference import mtm_distances_reference
from test_serve import server_process

#: The goal, and the blank gone two cells left from it: one multi-tile move away (two
#: single-tile moves).
GOAL = "1 2 3/4 5 6/7 8 0"
AFTER = "1 2 3/4 5 6/0 7 8"


@pytest.fixture
def games():
    g = Games(time_limit=20)
    yield g
    g.close()


@pytest.fixture(scope="module")
def reference() -> dict:
    p = ps.load_puzzle("3x3:mtm")
    return mtm_distances_reference(p.width, p.height, p.goal)


def test_a_click_on_a_tile_in_line_slides_the_line(games):
    opened = games.open(name="3x3:mtm")
    assert "row or column" in opened["help"] and "arrow key" in opened["help"]
    here = games.describe(opened["game"], AFTER)
    far = next(m for m in here["moves"] if m["target"] == "s8")  # tile 8, two cells right of the blank
    assert far["labels"] == {"directions": "R2", "tiles": "7,8"} and far["say"] == "slide 7 8 left"
    assert far["key"] is None  # an arrow key makes the one-cell move
    near = next(m for m in here["moves"] if m["target"] == "s7")
    assert near["key"] == "ArrowLeft" and near["say"] == "slide 7 left (←)"
    assert len({m["target"] for m in here["moves"]}) == len(here["moves"]) == 4
    after = games.move(opened["game"], AFTER, far["move"])
    assert after["position"] == GOAL and after["goal"]


def test_distances_and_hints_count_multi_tile_moves(games, reference):
    key = games.open(name="3x3:mtm")["game"]
    p = ps.load_puzzle("3x3:mtm")
    for text in (AFTER, "8 7 6/5 4 3/2 1 0", "0 1 2/3 4 5/6 7 8"):
        answer = games.solve(key, text)
        start = p.parse_position(text)
        assert answer["optimal"] and answer["distance"] == reference[start]
        hinted = p.apply(start, answer["hint"]["move"])
        assert reference[hinted] == reference[start] - 1


def _distance(browser):
    value = browser.find_element("id", "distance").get_attribute("data-value")
    return int(value) if value else None


def _shown(browser) -> str:
    return browser.find_element("id", "board").get_attribute("data-position")


def test_the_page_slides_a_line_in_one_move_and_hints_in_the_metric(browser):
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 30, poll_frequency=0.05)
    with server_process() as (_, url):
        browser.get(url)
        wait.until(lambda b: _distance(b) == 0 and not b.find_element("tag name", "body").get_attribute("data-busy"))
        field = browser.find_element("id", "name")
        field.clear()
        field.send_keys("3x3:mtm")
        browser.find_element("id", "open").click()
        wait.until(lambda b: b.find_element("id", "note").text.startswith("sliding:3x3:mtm:") and _distance(b) == 0)
        assert "row or column" in browser.find_element("id", "help").text
        browser.find_element("id", "s6").click()  # tile 7, two cells left of the blank
        wait.until(lambda b: _shown(b) == AFTER and _distance(b) is not None)
        assert _distance(browser) == 1  # one multi-tile move (two single-tile ones)
        browser.find_element("id", "hint").click()
        wait.until(lambda b: b.find_element("id", "message").text.startswith("hint: "))
        assert browser.find_element("id", "message").text == "hint: slide 7 8 left"
        browser.find_element("css selector", "#moves button.hinted").click()
        wait.until(lambda b: _shown(b) == GOAL and _distance(b) == 0)
        browser.find_element("tag name", "body").send_keys(Keys.ARROW_RIGHT)  # one tile: 8 right
        wait.until(lambda b: _shown(b) == "1 2 3/4 5 6/7 0 8" and _distance(b) == 1)
        assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
