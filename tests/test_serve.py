"""The page to play on (``puzzlespace serve``): the game without a web framework, its HTTP
answers (every error a 4xx JSON object), a search cancelled when its page goes away, and
the page itself played in headless Chromium against a real server process."""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from urllib.parse import urlsplit

import pytest
from click.testing import CliRunner

import puzzlespace as ps
from puzzlespace.cli import app
from puzzlespace.compiled import clock
from puzzlespace.errors import PuzzleError, SearchStopped, Unsolvable
from puzzlespace.play import OPTIMAL_SHOWN, Games, UnknownGame
from puzzlespace.render import UNIT

from browsing import less_motion, requests_made

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
        assert m["target"] == f"s{m['move']}"
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


def test_a_tablebase_saved_after_opening_is_read_when_the_puzzle_is_opened_again(games, tmp_path, monkeypatch):
    monkeypatch.setenv("PUZZLESPACE_CACHE", str(tmp_path))
    opened = games.open(name="2x3")
    game = games.game(opened["game"])
    assert opened["method"] != "table" and games.open(name="2x3")["method"] == opened["method"]
    assert games.game(opened["game"]) is game  # nothing new in the cache: the game stays as it was
    result = CliRunner().invoke(app, ["explore", "2x3", "--save", "cache"])
    assert result.exit_code == 0, result.output
    assert games.open(name="2x3")["method"] == "table"
    here = games.scramble(opened["game"], depth=5, seed=1)
    assert games.solve(opened["game"], here["position"])["distance"] == 5
    next(tmp_path.glob("tables/*")).unlink()
    assert games.open(name="2x3")["method"] == opened["method"]


def test_each_family_says_how_its_moves_are_made(games, examples):
    helps = {}
    for what, _ in OPENED:
        opened = _open(games, what, examples)
        helps[opened["puzzle"].partition(":")[0]] = opened["help"]
        assert opened["help"] == games.game(opened["game"]).puzzle.how_to_move
    assert len(set(helps.values())) == len(helps) == 4
    assert [family for family, text in helps.items() if "arrow" in text] == ["sliding"]


def test_sliding_moves_name_the_way_the_tile_goes_and_its_arrow_key(games):
    """The way a tile slides is the opposite of the blank's (``directions``); its arrow key is that way's."""
    key = games.open(name="3x3")["game"]
    opposite = {"U": ("down", "ArrowDown", "↓"), "D": ("up", "ArrowUp", "↑"), "L": ("right", "ArrowRight", "→"),
                "R": ("left", "ArrowLeft", "←")}
    moves = games.describe(key, "1 2 3/4 0 5/6 7 8")["moves"]
    assert len(moves) == 4
    for m in moves:
        way, arrow_key, arrow = opposite[m["labels"]["directions"]]
        assert m["key"] == arrow_key and m["say"] == f"slide {m['labels']['tiles']} {way} ({arrow})"
    hint = games.solve(key, "1 2 3/4 5 6/7 0 8")["hint"]
    assert hint["say"] == "slide 8 left (←)" and hint["key"] == "ArrowLeft"


def test_flip_lines_are_turned_over_by_handles_drawn_round_the_board(games):
    key = games.open(name="flip:4x3")["game"]
    p = games.game(key).puzzle
    d = games.describe(key, None)
    assert [m["target"] for m in d["moves"]] == [f"h{m}" for m in range(7)] and not any(m["key"] for m in d["moves"])
    handles = {int(m): (float(x), float(y))
               for m, x, y in re.findall(r'<g id="h(\d+)"[^>]*><circle cx="([-\d.]+)" cy="([-\d.]+)"', d["svg"])}
    unit = UNIT
    assert handles == {**{r: (-unit, r * unit) for r in range(3)}, **{3 + c: (c * unit, -unit) for c in range(4)}}
    left, top = (float(v) for v in re.search(r'viewBox="([-\d.]+) ([-\d.]+)', d["svg"]).groups())
    assert left < -unit and top < -unit  # the handles are inside the picture
    assert [m["say"] for m in d["moves"][2:4]] == ["turn over row 2 (r2)", "turn over column 0 (c0)"]
    assert all(f">{p.move_label(m)}</text>" in d["svg"] for m in range(7))


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
    (lambda g: g.scramble("sliding:3x3", depth=-1), "from 0 to"),
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
    t0 = clock()  # numba's compiling (of 6x6's search, on a new machine) left out
    with pytest.raises(SearchStopped, match="cancelled"):
        games.solve(key, position, cancel)
    assert clock() - t0 < 2.0
    assert games.status()["cancelled"] == 1 and games.status()["solving"] == 0


def test_every_optimal_solution_is_counted_and_the_first_listed(games):
    key = games.open(name="3x3")["game"]
    answer = games.optimal(key, "8 6 7/2 5 4/3 0 1")
    p = ps.load_puzzle("3x3")
    listed = [s.moves for s in ps.optimal_solutions(p, p.parse_position("8 6 7/2 5 4/3 0 1"))]
    assert (answer["count"], answer["length"]) == (40, 31) and answer["position"] == "8 6 7/2 5 4/3 0 1"
    assert [[m["move"] for m in sol] for sol in answer["solutions"]] == listed
    assert all(m["label"] and m["say"] for sol in answer["solutions"] for m in sol)
    many = games.optimal(key, "0 8 7/6 3 2/5 4 1")
    assert (many["count"], many["length"]) == (64, 30) and len(many["solutions"]) == OPTIMAL_SHOWN
    with pytest.raises(Unsolvable):
        games.optimal(games.open(name="3x3")["game"], "2 1 3/4 5 6/7 8 0")


def test_counting_optimal_solutions_stops_when_cancelled(games):
    key = games.open(name="6x6")["game"]  # no optimal solve of a random 6x6 ends in seconds
    position = games.scramble(key, seed=1)["position"]
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    with pytest.raises(SearchStopped, match="cancelled"):
        games.optimal(key, position, cancel)
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

@contextmanager
def server_process(env: dict | None = None, stderr=subprocess.PIPE, preexec_fn=None, args=()):
    """``puzzlespace serve --port 0`` (and ``args``) in its own process, with ``env`` added to its
    environment, its stderr to ``stderr`` and ``preexec_fn`` run in it before it starts; the
    process and its URL."""
    command = [sys.executable, "-m", "puzzlespace", "serve", "--port", "0", "--time-limit", "60", *args]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True,
                            env={**os.environ, **(env or {})}, preexec_fn=preexec_fn)
    try:
        line = proc.stdout.readline()
        match = re.search(r"http://\S+/", line)
        assert match, line + (proc.stderr.read() if proc.stderr else "")
        yield proc, match.group(0)
    finally:
        proc.terminate()
        proc.wait(10)


@contextmanager
def _serving(**env):
    """A server (:func:`server_process`) with ``env`` added to its environment; its URL."""
    with server_process(env) as (_, url):
        yield url


@pytest.fixture(scope="module")
def server():
    with _serving() as url:
        yield url


@pytest.fixture(scope="module")
def bare_server(tmp_path_factory):
    """A server whose cache is its own, empty at first; yields its URL and the cache folder."""
    cache = tmp_path_factory.mktemp("server-cache")
    with _serving(PUZZLESPACE_CACHE=str(cache)) as url:
        yield url, cache


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
    with less_motion(browser):  # no pause between the moves
        browser.find_element("id", "rest").click()
        wait.until(lambda b: _distance(b) == 0)
    assert browser.find_element("id", "board").get_attribute("data-position") == p.format_position(p.goal)
    browser.save_screenshot(str(tmp_path / "solved.png"))
    origin = server.rstrip("/")
    assert all(url.startswith(origin) for url in requests_made(browser))
    assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def test_all_optimal_solutions_are_stepped_through_and_played(browser, server):
    """"all optimal": solution 1 of 40 of an 8-puzzle antipode, the next (button and key
    N), the previous (key P, wrapping round), each one's moves listed as the command lists
    them; "play it" plays the chosen one to the goal; a move takes the list away."""
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 30)
    browser.get(server)
    wait.until(lambda b: _distance(b) == 0)
    p = ps.load_puzzle("3x3")
    start = p.parse_position("8 6 7/2 5 4/3 0 1")
    listed = [s.notations["tiles"] for s in ps.optimal_solutions(p, start)]
    position = browser.find_element("id", "position")
    position.clear()
    position.send_keys("8 6 7/2 5 4/3 0 1\n")
    wait.until(lambda b: _distance(b) == 31)
    browser.find_element("id", "optimal").click()
    wait.until(lambda b: b.find_element("id", "every").is_displayed())
    chosen = lambda: int(browser.find_element("id", "every").get_attribute("data-chosen"))  # noqa: E731
    body = browser.find_element("tag name", "body")
    for i, act in ((0, None), (1, "click"), (2, "n"), (1, "p"), (0, "p"), (39, "p")):
        if act == "click":
            browser.find_element("id", "next-solution").click()
        elif act:
            body.send_keys(act)
        assert chosen() == i and browser.find_element("id", "chosen").text == f"{i + 1} of 40"
        assert browser.find_element("id", "chosen-moves").text.split() == [str(m) for m in listed[i]]
    assert "40 optimal solutions of 31 moves" in browser.find_element("id", "message").text
    with less_motion(browser):
        browser.find_element("id", "play-chosen").click()
        wait.until(lambda b: _distance(b) == 0)
    path = p.replay(start, list(ps.optimal_solutions(p, start))[39].moves)
    assert browser.find_element("id", "board").get_attribute("data-position") == p.format_position(path[-1])
    assert not browser.find_element("id", "every").is_displayed()
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


# ---- the page's state: one game, its hint, its loading -------------------------------

#: The key that slides a tile the way an arrow points.
ARROW_KEYS = {"↑": "ARROW_UP", "↓": "ARROW_DOWN", "←": "ARROW_LEFT", "→": "ARROW_RIGHT"}


def _wait(browser, seconds: float = 30):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, seconds, poll_frequency=0.05)


def _text(browser, ident: str) -> str:
    return browser.find_element("id", ident).text


def _shown(browser) -> str:
    return browser.find_element("id", "board").get_attribute("data-position")


def _ready(browser) -> bool:
    return not browser.find_element("tag name", "body").get_attribute("data-busy")


def _load(browser, url: str, name: str | None = None):
    """The page at ``url`` with the puzzle ``name`` open (the page's first, 3x3, when None) at its goal."""
    browser.get(url)
    _wait(browser).until(lambda b: _distance(b) == 0 and _ready(b))
    if name is not None:
        _open_puzzle(browser, name)
        spec = ps.load_puzzle(name).spec
        _wait(browser).until(lambda b: _text(b, "note").startswith(spec + ":") and _distance(b) == 0 and _ready(b))


def _open_puzzle(browser, name: str) -> None:
    field = browser.find_element("id", "name")
    field.clear()
    field.send_keys(name)
    browser.find_element("id", "open").click()


def _set(browser, position: str) -> None:
    from selenium.webdriver.common.keys import Keys

    field = browser.find_element("id", "position")
    field.clear()
    field.send_keys(position + Keys.ENTER)
    _wait(browser).until(lambda b: _shown(b) == position and _distance(b) is not None)


def _hint(browser) -> str:
    browser.find_element("id", "hint").click()
    _wait(browser).until(lambda b: _text(b, "message").startswith("hint: "))
    return _text(browser, "message")


def _no_hint_shown(browser) -> None:
    assert not _text(browser, "message").startswith("hint")
    assert not browser.find_element("id", "hint").get_attribute("data-move")
    assert not browser.find_elements("css selector", "#moves button.hinted, #board .marks *")


def test_undo_takes_the_hint_away(browser, server):
    _load(browser, server)
    start = "1 2 3/4 0 6/7 5 8"
    _set(browser, start)
    _hint(browser)
    browser.find_element("css selector", "#moves button.hinted").click()
    _wait(browser).until(lambda b: _shown(b) != start)
    _hint(browser)
    browser.find_element("id", "undo").click()
    _wait(browser).until(lambda b: _shown(b) == start)
    _no_hint_shown(browser)


def test_opening_another_puzzle_takes_the_hint_away(browser, server):
    _load(browser, server, "jump:8")
    browser.find_element("id", "scramble").click()
    _wait(browser).until(lambda b: (_distance(b) or 0) > 0)
    _hint(browser)
    _open_puzzle(browser, "3x3")
    _wait(browser).until(lambda b: _text(b, "note").startswith("sliding:3x3:") and _ready(b))
    _no_hint_shown(browser)


#: The page's first request to build databases waits until the test calls ``releasePrepare()``,
#: so that the page stays busy building for as long as the test looks at it.
HOLD_PREPARE = """
const fetchNow = window.fetch;
let held = false;
window.fetch = (url, init) => held || !String(url).endsWith("/api/prepare") ? fetchNow(url, init)
  : new Promise((go) => { held = true; window.releasePrepare = () => go(fetchNow(url, init)); });
"""
#: While the page is busy building a puzzle's databases: the controls that can still be used;
#: a click on the old board and an arrow key are tried meanwhile.
WHILE_BUILDING = """
if (document.body.dataset.busy !== "1" || !document.getElementById("message").textContent.includes("building"))
  return null;
const usable = [...document.querySelectorAll(".side button, .side input")].filter((e) => !e.matches(":disabled"));
const spot = document.querySelector("#board .movable");
if (spot) spot.dispatchEvent(new MouseEvent("click", {bubbles: true}));
document.body.dispatchEvent(new KeyboardEvent("keydown", {key: "ArrowDown", bubbles: true}));
return {usable: usable.map((e) => e.id || e.textContent)};
"""


def test_nothing_can_be_played_while_a_puzzle_builds_its_databases(browser, bare_server):
    url, _ = bare_server
    _load(browser, url)
    requests_made(browser)
    browser.execute_script(HOLD_PREPARE)
    _open_puzzle(browser, "4x3")  # its pattern databases are built first in an empty cache
    assert _wait(browser).until(lambda b: b.execute_script(WHILE_BUILDING)) == {"usable": []}
    browser.execute_script("window.releasePrepare();")
    _wait(browser).until(lambda b: _shown(b) == "1 2 3 4/5 6 7 8/9 10 11 0" and _ready(b))
    assert not [u for u in requests_made(browser) if u.endswith("/api/move")]
    assert _text(browser, "message") == "" and _distance(browser) == 0


def test_a_puzzle_that_cannot_be_opened_leaves_the_game_playable(browser, server):
    from selenium.webdriver.common.keys import Keys

    _load(browser, server)
    _set(browser, "1 2 3/4 5 6/0 7 8")
    _open_puzzle(browser, "9x9x9")
    _wait(browser).until(lambda b: "unknown puzzle" in _text(b, "message") and _ready(b))
    assert browser.find_element("id", "message").get_attribute("class") == "bad"
    assert browser.find_element("id", "scramble").is_enabled()
    browser.find_element("tag name", "body").send_keys(Keys.ARROW_LEFT)
    _wait(browser).until(lambda b: _shown(b) == "1 2 3/4 5 6/7 0 8")


def test_a_tablebase_saved_while_serving_is_read_when_the_puzzle_is_opened_again(browser, bare_server):
    url, cache = bare_server
    _load(browser, url)
    assert "solved by" in _text(browser, "note") and not browser.find_element("id", "depth").is_enabled()
    result = CliRunner().invoke(app, ["explore", "3x3", "--save", "cache"], env={"PUZZLESPACE_CACHE": str(cache)})
    assert result.exit_code == 0, result.output
    _open_puzzle(browser, "3x3")
    _wait(browser, 10).until(lambda b: "tablebase" in _text(b, "note") and _ready(b))
    assert browser.find_element("id", "depth").is_enabled()


def test_the_help_says_how_the_open_puzzles_moves_are_made(browser, server):
    _load(browser, server)
    for name in ("3x3", "jump:8", "flip:3x3"):
        _load(browser, server, name)
        shown = browser.find_element("css selector", ".keys").text
        assert ps.load_puzzle(name).how_to_move in shown
        assert ("arrow" in shown) == (name == "3x3")


def test_flip_lines_turn_over_when_their_handles_are_clicked(browser, server):
    _load(browser, server, "flip:3x3")
    p = ps.load_puzzle("flip:3x3")
    assert {e.get_attribute("id") for e in browser.find_elements("css selector", "#board .movable")} == {
        f"h{m}" for m in range(6)}
    browser.find_element("id", "h0").click()
    _wait(browser).until(lambda b: _shown(b) == p.format_position(p.apply(p.goal, 0)))
    _set(browser, p.format_position(p.apply(p.goal, 4)))
    hint = _hint(browser)
    assert hint == "hint: turn over column 1 (c1)"
    browser.find_element("xpath", "//*[@id='board']//*[contains(@class, 'movable')][.//*[text()='c1']]").click()
    _wait(browser).until(lambda b: _distance(b) == 0)


def test_distances_are_worded_in_the_plural_only_past_one(browser, server):
    from selenium.webdriver.common.keys import Keys

    _load(browser, server)
    _set(browser, "1 2 3/4 5 6/0 7 8")
    _wait(browser).until(lambda b: _distance(b) == 2)
    assert _text(browser, "distance").startswith("2 moves")
    browser.find_element("tag name", "body").send_keys(Keys.ARROW_LEFT)  # 7 slides left
    _wait(browser).until(lambda b: _distance(b) == 1)
    assert re.match(r"1 move\b(?!s)", _text(browser, "distance"))


def test_a_hint_names_the_arrow_key_that_makes_it(browser, server):
    from selenium.webdriver.common.keys import Keys

    _load(browser, server)
    p = ps.load_puzzle("3x3")
    start = "8 6 7/2 5 4/3 0 1"
    _set(browser, start)
    _wait(browser).until(lambda b: _distance(b) is not None)
    before = _distance(browser)
    hint = re.fullmatch(r"hint: slide (\d+) (up|down|left|right) \(([↑↓←→])\)", _hint(browser))
    assert hint, _text(browser, "message")
    move = int(browser.find_element("id", "hint").get_attribute("data-move"))
    state = p.parse_position(start)
    assert state[move] == int(hint.group(1))
    browser.find_element("tag name", "body").send_keys(getattr(Keys, ARROW_KEYS[hint.group(3)]))
    _wait(browser).until(lambda b: _shown(b) != start)
    assert _shown(browser) == p.format_position(p.apply(state, move))
    _wait(browser).until(lambda b: _distance(b) == before - 1)
