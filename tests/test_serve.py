"""The page to play on (``puzzlespace serve``): the game without a web framework, its HTTP
answers (every error a 4xx JSON object), a search cancelled when its page goes away, and
the page itself played in headless Chromium against a real server process."""

from __future__ import annotations

import http.client
import json
import re
import socket
import subprocess
import sys
import threading
import time
from urllib.parse import urlsplit

import pytest
from click.testing import CliRunner

import puzzlespace as ps
from puzzlespace.cli import app
from puzzlespace.errors import PuzzleError, SearchStopped, Unsolvable
from puzzlespace.play import Games, UnknownGame

from browsing import requests_made

#: Puzzles a page can open, with a position of each to solve.
OPENED = [({"name": "3x3"}, "8 6 7/2 5 4/3 0 1"), ({"name": "jump:6"}, "1 2 0 3 4 5 6"),
          ({"name": "flip:3x3"}, None), ({"graph": "petersen.toml"}, None)]


@pytest.fixture
def games():
    g = Games(time_limit=20)
    yield g
    g.close()


def _open(games, what, examples):
    if "graph" in what:
        text = (examples / what["graph"]).read_text()
        return games.open(graph=text, filename=what["graph"])
    return games.open(name=what["name"])


@pytest.mark.parametrize("what,position", OPENED, ids=[next(iter(w.values())) for w, _ in OPENED])
def test_a_hint_is_an_optimal_move_and_lowers_the_distance_by_one(games, examples, what, position):
    opened = _open(games, what, examples)
    key = opened["game"]
    p = games.game(key).puzzle
    here = games.scramble(key, seed=7) if position is None else games.describe(key, position)
    answer = games.solve(key, here["position"])
    assert answer["optimal"] and answer["distance"] == ps.solve(p, p.parse_position(here["position"])).length
    assert answer["path"][0] == here["position"] and answer["path"][-1] == p.format_position(p.goal)
    after = games.move(key, here["position"], answer["hint"]["move"])
    assert after["distance"] == answer["distance"] - 1  # known at once from the solution just found
    assert games.solve(key, after["position"])["distance"] == answer["distance"] - 1
    assert opened["goal"]["goal"] and opened["goal"]["distance"] in (None, 0)


def test_a_move_away_is_solved_afresh(games):
    key = games.open(name="3x3")["game"]
    start = "8 6 7/2 5 4/3 0 1"
    answer = games.solve(key, start)
    wrong = next(m for m in games.describe(key, start)["moves"] if m["move"] != answer["hint"]["move"])
    after = games.move(key, start, wrong["move"])
    assert after["distance"] is None  # not on the solution: not known until solved
    p = games.game(key).puzzle
    distance = games.solve(key, after["position"])["distance"]
    assert distance == ps.solve(p, p.parse_position(after["position"])).length
    assert distance in (answer["distance"] - 1, answer["distance"] + 1)  # every move changes the parity


def test_described_moves_are_the_legal_ones(games):
    key = games.open(name="4x3")["game"]
    d = games.describe(key, "1 2 3 4/5 0 6 7/8 9 10 11")
    p = games.game(key).puzzle
    state = p.parse_position(d["position"])
    assert sorted(m["move"] for m in d["moves"]) == sorted(p.moves(state))
    for m in d["moves"]:
        assert m["from"] == m["move"] and m["mark"].startswith("<path")  # click the tile that moves
        by_label = games.move(key, d["position"], m["labels"]["directions"])
        assert by_label["position"] == p.format_position(p.apply(state, m["move"]))
    assert 'id="s0"' in d["svg"] and d["picture"] == p.draw(state)


def test_an_exact_depth_scramble_reads_the_cached_tablebase(games):
    result = CliRunner().invoke(app, ["explore", "2x3", "--save", "cache", "--json"])
    assert result.exit_code == 0, result.output
    counts = json.loads(result.stdout)["depth_counts"]
    opened = games.open(name="2x3")
    assert opened["method"] == "table"
    for depth in (1, 7, len(counts) - 1):
        here = games.scramble(opened["game"], depth=depth, seed=depth)
        assert games.solve(opened["game"], here["position"])["distance"] == depth


@pytest.mark.parametrize("call,message", [
    (lambda g: g.open(name="graph:/etc/passwd"), "from its file's text"),
    (lambda g: g.open(), "give the puzzle's 'name'"),
    (lambda g: g.open(name="3x3", graph="x"), "give the puzzle's 'name'"),
    (lambda g: g.open(graph="nodes = [", filename="g.toml"), "TOML syntax error"),
    (lambda g: g.open(name="9x9x9"), "unknown puzzle"),
    (lambda g: g.describe("sliding:3x3", "1 2 3"), "3 cells, expected 9"),
    (lambda g: g.move("sliding:3x3", None, 0), "not legal"),
    (lambda g: g.move("sliding:3x3", None, "Q"), "not legal"),
    (lambda g: g.move("sliding:3x3", None, 1.5), "code or label"),
    (lambda g: g.scramble("sliding:3x3", depth=4), "needs the tablebase"),
    (lambda g: g.scramble("sliding:3x3", depth=-1), "at least 0"),
])
def test_bad_requests_are_puzzle_errors(games, call, message):
    games.open(name="3x3")
    with pytest.raises(PuzzleError, match=message):
        call(games)


def test_unknown_games_and_unsolvable_positions(games):
    with pytest.raises(UnknownGame):
        games.describe("sliding:3x3", None)
    key = games.open(name="3x3")["game"]
    with pytest.raises(Unsolvable):
        games.solve(key, "1 2 3/4 5 6/8 7 0")
    assert games.describe(key, "1 2 3/4 5 6/8 7 0")["solvable"] is False


def test_a_cancelled_search_stops_at_once(games):
    key = games.open(name="6x6")["game"]  # no optimal solve of a random 6x6 ends in seconds
    position = games.scramble(key, seed=1)["position"]
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    t0 = time.perf_counter()
    with pytest.raises(SearchStopped, match="cancelled"):
        games.solve(key, position, cancel)
    assert time.perf_counter() - t0 < 2.0
    assert games.status()["cancelled"] == 1 and games.status()["solving"] == 0


def test_past_the_time_limit_the_answer_says_what_is_proven():
    games = Games(time_limit=0.3)
    try:
        key = games.open(name="6x6")["game"]
        position = games.scramble(key, seed=2)["position"]
        answer = games.solve(key, position)
        assert not answer["optimal"] and answer["distance"] is None and answer["lower_bound"] > 0
        if answer["moves"]:  # a quick weighted solution guides the hint
            p = games.game(key).puzzle
            path = p.replay(p.parse_position(position), [m["move"] for m in answer["moves"]])
            assert path[-1] == p.goal and len(answer["moves"]) >= answer["lower_bound"]
    finally:
        games.close()


def test_pattern_databases_too_slow_to_build_are_not_built():
    games = Games(build_limit=0)
    try:
        opened = games.open(name="4x4")
        assert opened["heuristic"] == "linear-conflict" and "pdb build" in opened["note"]
    finally:
        games.close()


def test_pattern_databases_to_build_are_announced_with_their_cost(games):
    opened = games.open(name="4x3")
    if opened["build"] is not None:  # the cache of this test session may hold them already
        assert opened["build"]["tables"] >= 1 and opened["build"]["seconds"] > 0
        games.prepare(opened["game"])
    assert games.open(name="4x3")["build"] is None


# ---- a real server --------------------------------------------------------------------

@pytest.fixture(scope="module")
def server():
    """``puzzlespace serve --port 0`` in its own process; yields its URL."""
    proc = subprocess.Popen([sys.executable, "-m", "puzzlespace", "serve", "--port", "0", "--time-limit", "60"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    match = re.search(r"http://\S+/", line)
    assert match, line + proc.stderr.read()
    yield match.group(0)
    proc.terminate()
    proc.wait(10)


def _request(url: str, method: str, path: str, body: bytes | None = None):
    """The response and its body."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    conn.request(method, path, body, {"Content-Type": "application/json"} if body is not None else {})
    response = conn.getresponse()
    return response, response.read()


def _call(url: str, path: str, data: dict) -> dict:
    response, body = _request(url, "POST", path, json.dumps(data).encode())
    assert response.status == 200, body
    return json.loads(body)


def _status(url: str) -> dict:
    return json.loads(_request(url, "GET", "/api/status")[1])


# ---- over HTTP ------------------------------------------------------------------------

@pytest.mark.parametrize("method,path,body,status,message", [
    ("post", "/api/open", b"[1", 400, "not JSON"),
    ("post", "/api/open", b"[1, 2]", 400, "JSON object"),
    ("post", "/api/open", b'{"name": 5}', 400, "'name' must be text"),
    ("post", "/api/open", b'{"name": "sliding:0x0"}', 400, "sliding"),
    ("post", "/api/position", b'{"game": "nothing"}', 404, "no open game"),
    ("post", "/api/scramble", b'{"game": "sliding:3x3", "seed": "x"}', 400, "'seed' must be a whole number"),
    ("post", "/api/move", b'{"game": "sliding:3x3"}', 400, "'move'"),
    ("post", "/api/solve", b'{"game": "sliding:3x3", "position": "1 2 3/4 5 6/8 7 0"}', 422, "unsolvable"),
    ("post", "/api/nothing", b"{}", 404, "Not Found"),
    ("get", "/api/open", None, 405, "Method Not Allowed"),
    ("post", "/api/open", b'{"graph": "' + b"x" * 9_100_000 + b'"}', 413, "larger than"),
])
def test_bad_requests_get_a_4xx_json_error(server, method, path, body, status, message):
    _call(server, "/api/open", {"name": "3x3"})
    got, answer = _request(server, method.upper(), path, body)
    assert got.status == status and got.getheader("content-type") == "application/json"
    assert message in json.loads(answer)["error"]


def test_the_api_plays_a_game(server):
    key = _call(server, "/api/open", {"name": "3x3"})["game"]
    here = _call(server, "/api/scramble", {"game": key, "seed": 3})
    answer = _call(server, "/api/solve", {"game": key, "position": here["position"]})
    after = _call(server, "/api/move", {"game": key, "position": here["position"], "move": answer["hint"]["move"]})
    assert after["distance"] == answer["distance"] - 1
    assert _status(server)["solving"] == 0


def test_the_page_loads_nothing_from_elsewhere(server):
    got, page = _request(server, "GET", "/")
    assert got.status == 200 and "default-src 'none'" in got.getheader("content-security-policy")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page.decode())


def test_the_server_listens_on_this_machine_only(server):
    assert urlsplit(server).hostname == "127.0.0.1"


def test_a_search_stops_when_its_page_goes_away(server):
    """A hopeless solve (6x6) is cancelled within a second of its connection closing."""
    key = _call(server, "/api/open", {"name": "6x6"})["game"]
    position = _call(server, "/api/scramble", {"game": key, "seed": 5})["position"]
    before = _status(server)["cancelled"]
    parts = urlsplit(server)
    body = json.dumps({"game": key, "position": position}).encode()
    with socket.create_connection((parts.hostname, parts.port)) as sock:
        sock.sendall(b"POST /api/solve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        deadline = time.monotonic() + 10
        while _status(server)["solving"] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _status(server)["solving"] == 1
    t0 = time.monotonic()
    while _status(server)["solving"] and time.monotonic() - t0 < 5:
        time.sleep(0.05)
    status = _status(server)
    assert status["solving"] == 0 and status["cancelled"] == before + 1
    assert time.monotonic() - t0 < 2


def test_serve_without_the_web_extra_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    result = CliRunner().invoke(app, ["serve", "--port", "0"])
    assert result.exit_code == 2 and 'pip install "puzzlespace[web]"' in result.output
    assert "Traceback" not in result.output


def test_a_port_in_use_is_one_line(server):
    result = CliRunner().invoke(app, ["serve", "--port", str(urlsplit(server).port)])
    assert result.exit_code == 2 and "cannot listen on 127.0.0.1" in result.output
    assert len(result.output.strip().splitlines()) == 1


# ---- the page in a browser ------------------------------------------------------------

def _distance(browser):
    value = browser.find_element("id", "distance").get_attribute("data-value")
    return int(value) if value else None


def test_the_page_plays_with_hints_in_a_browser(browser, server, tmp_path):
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 30)
    requests_made(browser)
    browser.get(server)
    wait.until(lambda b: _distance(b) == 0)
    p = ps.load_puzzle("3x3")
    browser.find_element("id", "scramble").click()
    wait.until(lambda b: (_distance(b) or 0) > 0)
    for step in range(3):  # click a piece, then read the distance the page shows
        here = browser.find_element("id", "board").get_attribute("data-position")
        browser.find_elements("css selector", "#board .movable")[step % 2].click()
        wait.until(lambda b: b.find_element("id", "board").get_attribute("data-position") != here)
        wait.until(lambda b: _distance(b) is not None)
        shown = browser.find_element("id", "board").get_attribute("data-position")
        assert _distance(browser) == ps.solve(p, p.parse_position(shown)).length
    before = _distance(browser)
    browser.find_element("id", "hint").click()
    wait.until(lambda b: b.find_element("id", "hint").get_attribute("data-move"))
    browser.save_screenshot(str(tmp_path / "hint.png"))
    move = browser.find_element("id", "hint").get_attribute("data-move")
    browser.find_element("css selector", f"#moves button[data-move='{move}']").click()
    wait.until(lambda b: _distance(b) == before - 1)
    browser.find_element("id", "rest").click()
    wait.until(lambda b: _distance(b) == 0)
    assert browser.find_element("id", "board").get_attribute("data-position") == p.format_position(p.goal)
    browser.save_screenshot(str(tmp_path / "solved.png"))
    origin = server.rstrip("/")
    assert all(url.startswith(origin) for url in requests_made(browser))
    assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def test_the_keys_move_and_undo(browser, server):
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 30)
    browser.get(server)
    wait.until(lambda b: _distance(b) == 0)
    body = browser.find_element("tag name", "body")
    body.send_keys(Keys.ARROW_DOWN)  # the tile above the blank slides down
    wait.until(lambda b: b.find_element("id", "board").get_attribute("data-position") == "1 2 3/4 5 0/7 8 6")
    wait.until(lambda b: _distance(b) == 1)
    body.send_keys("u")
    wait.until(lambda b: b.find_element("id", "board").get_attribute("data-position") == "1 2 3/4 5 6/7 8 0")
