"""The play server at its edges: numbers out of range, large and malformed uploads, long
builds answered at once and polled, clients that go away, a stop during a search or a
build, floods of connections, and a seeded HTTP fuzz against a real server process. Every
answer is a 2xx or 4xx JSON object, the server's log holds no traceback and no line twice,
and its memory stays bounded."""

from __future__ import annotations

import http.client
import json
import random
import re
import resource
import selectors
import signal
import socket
import threading
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from puzzlespace.errors import PuzzleError, SearchStopped
from puzzlespace.play import MAX_SEED, Building, Games
from puzzlespace.solver import Plan
from puzzlespace.web import MAX_BODY, MAX_TEXT, PREPARE_WAIT

from browsing import requests_made
from test_serve import _load, _open_puzzle, _text, _wait, server_process

# ---- the game, without HTTP -----------------------------------------------------------


@pytest.fixture
def games():
    g = Games(time_limit=20)
    yield g
    g.close()


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty cache of this test's own: pattern databases are built afresh."""
    monkeypatch.setenv("PUZZLESPACE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.mark.parametrize("seed", [-1, MAX_SEED + 1, True, 1.5, "7"])
def test_a_bad_seed_is_a_puzzle_error(games, seed):
    key = games.open(name="3x3")["game"]
    with pytest.raises(PuzzleError, match="'seed' must be a whole number from 0 to"):
        games.scramble(key, seed=seed)


@pytest.mark.parametrize("depth", [-1, 2**64, 10**89, True, 2.0])
def test_a_depth_out_of_range_is_refused_before_any_work(games, depth):
    key = games.open(name="3x3")["game"]
    with pytest.raises(PuzzleError, match="'depth' must be a whole number from 0 to"):
        games.scramble(key, depth=depth)


def _graph(nodes, edges) -> str:
    return json.dumps({"nodes": nodes, "edges": edges})


@pytest.mark.parametrize("text,message", [
    (_graph([str(i) for i in range(19_999)] + ["19998"], [["0", "1"]]), "needs 2..400 nodes, got 20000"),
    (_graph(["a"] * 20_000, [["a", "b"]]), "needs 2..400 nodes, got 20000"),
    (_graph([str(i) for i in range(399)] + ["398"], [["0", "1"]]), "node '398' is listed twice"),
    (_graph(400, [[i % 400, (i + 1) % 400] for i in range(80_000)]), "at most 79,800 edges, got 80,000"),
], ids=["20000-unique-then-a-repeat", "20000-the-same", "a-repeat-last", "too-many-edges"])
def test_graph_uploads_are_refused_early_and_in_linear_time(games, text, message):
    t0 = time.perf_counter()
    with pytest.raises(PuzzleError, match=message):
        games.open(graph=text, filename="g.json")
    assert time.perf_counter() - t0 < 1.5


def _builds() -> int:
    return sum(t.name.startswith("puzzlespace build") for t in threading.enumerate())


def test_a_build_runs_in_the_background_one_per_game(fresh_cache):
    games = Games()
    try:
        opened = games.open(name="4x3")
        key = opened["game"]
        assert opened["build"]["seconds"] > 0
        t0 = time.perf_counter()
        first, second = games.prepare(key, wait=0), games.prepare(key, wait=0)
        assert time.perf_counter() - t0 < 0.5
        assert not first["ready"] and not second["ready"]
        assert re.fullmatch(r"building, \d+ s", first["build"]["message"])
        assert first["build"]["estimate"] == opened["build"]["seconds"]
        assert _builds() == 1 and list(games.status()["building"]) == [key]
        with pytest.raises(Building) as building:  # a solve does not wait for a build
            games.solve(key, "1 2 3 4/5 6 7 8/9 10 0 11")
        assert "building" in str(building.value)
        assert games.prepare(key)["ready"] and _builds() == 0
        assert games.open(name="4x3")["build"] is None
        assert games.solve(key, "1 2 3 4/5 6 7 8/9 10 0 11")["distance"] == 1
    finally:
        games.close()


def test_a_failed_build_reports_its_error_on_the_next_poll(fresh_cache, monkeypatch):
    ready, calls = Plan.ready, []

    def fails_once(plan, **options):
        calls.append(1)
        if len(calls) == 1:
            time.sleep(0.3)
            raise PuzzleError("no room for the pattern databases")
        return ready(plan, **options)

    monkeypatch.setattr(Plan, "ready", fails_once)
    games = Games()
    try:
        key = games.open(name="5x2")["game"]
        assert not games.prepare(key, wait=0)["ready"]
        with pytest.raises(PuzzleError, match="no room"):
            games.prepare(key)
        assert games.prepare(key)["ready"] and len(calls) == 2  # started again, and built
    finally:
        games.close()


def test_stop_ends_a_search_and_a_build_at_once(fresh_cache):
    games = Games(time_limit=60)
    try:
        build_key = games.open(name="4x4")["game"]  # a build of about a minute
        assert not games.prepare(build_key, wait=0)["ready"]
        key = games.open(name="6x6")["game"]
        position = games.scramble(key, seed=1)["position"]
        stopped = []

        def solve() -> None:
            try:
                games.solve(key, position)
            except SearchStopped:
                stopped.append(True)

        solving = threading.Thread(target=solve)
        solving.start()
        while games.status()["solving"] == 0:
            time.sleep(0.02)
        t0 = time.perf_counter()
        games.stop()
        solving.join(5)
        games.game(build_key).job.thread.join(5)
        assert time.perf_counter() - t0 < 2
        assert stopped and games.status()["building"] == {}
        with pytest.raises(SearchStopped, match="stopping"):
            games.prepare(build_key)
    finally:
        games.close()


# ---- a real server ---------------------------------------------------------------------


@dataclass
class Served:
    """A server process, its URL and the file its stderr goes to."""

    proc: object
    url: str
    stderr: Path

    @property
    def address(self) -> tuple[str, int]:
        parts = urlsplit(self.url)
        return parts.hostname, parts.port

    def log(self) -> str:
        return self.stderr.read_text(errors="replace")

    def rss(self) -> int:
        """The process's resident memory, in bytes."""
        text = Path(f"/proc/{self.proc.pid}/status").read_text()
        return int(re.search(r"VmRSS:\s+(\d+) kB", text).group(1)) * 1024


@contextmanager
def _started(folder: Path, **options):
    """A server (:func:`test_serve.server_process` with ``options``) whose stderr goes to a file in ``folder``."""
    path = folder / "server-stderr.txt"
    with open(path, "w") as err, server_process(stderr=err, **options) as (proc, url):
        yield Served(proc, url, path)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    folder = tmp_path_factory.mktemp("served")
    with _started(folder, env={"PUZZLESPACE_CACHE": str(folder / "cache")}) as server:
        yield server
    assert "Traceback" not in server.log()


def _send(server: Served, raw: bytes, timeout: float = 10.0, cut: bool = False):
    """Send ``raw`` (a whole HTTP request; ``cut``: then close the sending side) and read the
    answer: (status, content type, body), or None when the server answers nothing."""
    with socket.create_connection(server.address, timeout=timeout) as sock:
        sock.sendall(raw)
        if cut:
            sock.shutdown(socket.SHUT_WR)
        response = http.client.HTTPResponse(sock)
        try:
            response.begin()
        except (http.client.RemoteDisconnected, ConnectionResetError):
            if cut:
                return None
            raise
        return response.status, response.getheader("content-type"), response.read()


def _request(method: str, path: str, body: bytes | None = None, content_type: str | None = "application/json",
             length: int | None = None) -> bytes:
    """An HTTP/1.1 request's bytes (``length``: the Content-Length to declare, the body's by default)."""
    head = [f"{method} {path} HTTP/1.1", "Host: x", "Connection: close"]
    if content_type is not None:
        head.append(f"Content-Type: {content_type}")
    if body is not None or length is not None:
        head.append(f"Content-Length: {len(body or b'') if length is None else length}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + (body or b"")


def _post(server: Served, path: str, data) -> tuple[int, dict]:
    body = data if isinstance(data, bytes) else json.dumps(data).encode()
    status, kind, answer = _send(server, _request("POST", path, body))
    assert kind == "application/json", answer
    return status, json.loads(answer)


def _status(server: Served) -> dict:
    return json.loads(_send(server, _request("GET", "/api/status"))[2])


def _open(server: Served, name: str) -> str:
    status, answer = _post(server, "/api/open", {"name": name})
    assert status == 200, answer
    return answer["game"]


@pytest.mark.parametrize("body,message", [
    (b'{"game": "sliding:3x3", "depth": 5, "seed": -1}', "'seed' must be a whole number from 0"),
    (b'{"game": "sliding:3x3", "seed": -1}', "'seed' must be a whole number from 0"),
    (b'{"game": "sliding:3x3", "seed": 18446744073709551616}', "'seed' must be a whole number from 0"),
    (b'{"game": "sliding:3x3", "depth": 18446744073709551616}', "'depth' must be a whole number from 0"),
    (b'{"game": "sliding:3x3", "depth": ' + b"9" * 90 + b"}", "'depth' must be a whole number from 0"),
    (b'{"game": "sliding:3x3", "depth": true}', "'depth' must be a whole number"),
    (b'{"game": "sliding:3x3", "depth": 2.5}', "'depth' must be a whole number"),
    (b'{"game": "sliding:3x3", "depth": NaN}', "'depth' must be a whole number"),
    (b'{"game": "sliding:3x3", "depth": 1e400}', "'depth' must be a whole number"),
    (b'{"game": "sliding:3x3", "depth": "5"}', "'depth' must be a whole number"),
    (b'{"game": "sliding:3x3", "depth": ' + b"9" * 5000 + b"}", "not JSON"),
])
def test_numbers_out_of_range_are_refused_at_once(served, body, message):
    _open(served, "3x3")
    t0 = time.perf_counter()
    status, answer = _post(served, "/api/scramble", body)
    assert status == 400 and message in answer["error"]
    assert time.perf_counter() - t0 < 1


@pytest.mark.parametrize("data,message", [
    ({"game": "sliding:3x3", "move": 2**40}, "'move' must be a whole number from 0"),
    ({"game": "sliding:3x3", "move": False}, "'move' must be a move's code or label"),
    ({"game": "sliding:3x3", "move": "U" * 200}, "'move' is longer than 100"),
    ({"game": "sliding:3x3", "position": "1 " * MAX_TEXT}, "'position' is longer than"),
])
def test_moves_and_texts_out_of_range_are_refused(served, data, message):
    _open(served, "3x3")
    status, answer = _post(served, "/api/move", data)
    assert status == 400 and message in answer["error"]


def test_uploads_are_bounded_in_size_and_work(served):
    names = [str(i) for i in range(19_999)] + ["19998"]
    t0 = time.perf_counter()
    status, answer = _post(served, "/api/open", {"graph": _graph(names, [["0", "1"]]), "filename": "g.json"})
    assert status == 400 and "needs 2..400 nodes" in answer["error"]
    assert time.perf_counter() - t0 < 2
    too_large = b'{"graph": "' + b"x" * MAX_BODY + b'"}'
    assert _send(served, _request("POST", "/api/open", too_large))[0] == 413
    declared, kind, answer = _send(served, _request("POST", "/api/open", b"{}", length=10**12))
    assert declared == 413 and "larger than" in json.loads(answer)["error"]
    status, kind, answer = _send(served, _request("POST", "/api/open", b'{"name": "3x3"}', "text/plain"))
    assert status == 415 and kind == "application/json"


def test_a_client_gone_mid_upload_is_no_fault(served):
    before = served.log()
    with socket.create_connection(served.address, timeout=5) as sock:
        sock.sendall(_request("POST", "/api/open", b'{"graph": "' + b"x" * 5000, length=100_000))
    time.sleep(0.3)
    assert _open(served, "3x3") == "sliding:3x3"
    after = served.log()[len(before):]
    assert "Traceback" not in after and "ClientDisconnect" not in after and "internal error" not in after


def test_a_long_build_is_answered_at_once_and_polled(tmp_path):
    env = {"PUZZLESPACE_CACHE": str(tmp_path / "cache")}
    with _started(tmp_path, env=env, args=["--build-limit", "100000"]) as server:
        key = _open(server, "4x4")  # its pattern databases take about a minute to build
        for _ in range(2):
            t0 = time.perf_counter()
            status, answer = _post(server, "/api/prepare", {"game": key})
            assert time.perf_counter() - t0 < PREPARE_WAIT + 1.5
            assert status == 200 and not answer["ready"]
            assert re.fullmatch(r"building, \d+ s", answer["build"]["message"])
        assert list(_status(server)["building"]) == [key]
        status, answer = _post(server, "/api/solve", {"game": key, "position": "1 2 3 4/5 6 7 8/9 10 11 12/13 14 0 15"})
        assert status == 409 and answer["build"]["message"].startswith("building")
        _stops_quietly(server)


def test_the_page_shows_a_builds_progress_while_it_polls(browser, tmp_path):
    env = {"PUZZLESPACE_CACHE": str(tmp_path / "cache")}
    with _started(tmp_path, env=env, args=["--build-limit", "100000"]) as server:
        _load(browser, server.url)
        requests_made(browser)
        _open_puzzle(browser, "4x4")  # its pattern databases take about a minute to build
        shown = _wait(browser, 60).until(lambda b: re.search(r"building 3 pattern databases .*: (\d+) s left",
                                                              _text(b, "message")))
        assert browser.find_element("tag name", "body").get_attribute("data-busy") == "1"
        time.sleep(2 * (PREPARE_WAIT + 0.5))  # a poll takes the server's wait and the page's pause
        assert sum(u.endswith("/api/prepare") for u in requests_made(browser)) >= 2
        assert int(shown.group(1)) > 0
        _stops_quietly(server)


def _stops_quietly(server: Served) -> None:
    """SIGTERM: the server ends within 3 s, with no traceback and no task cancelled."""
    t0 = time.perf_counter()
    server.proc.send_signal(signal.SIGTERM)
    server.proc.wait(10)
    assert time.perf_counter() - t0 < 3
    log = server.log()
    assert "Traceback" not in log and "CancelledError" not in log and "graceful shutdown" not in log, log


def test_a_stop_during_a_search_ends_it_quietly(tmp_path):
    with _started(tmp_path) as server:
        key = _open(server, "6x6")  # no optimal solve of a random 6x6 ends in seconds
        position = _post(server, "/api/scramble", {"game": key, "seed": 5})[1]["position"]
        body = json.dumps({"game": key, "position": position}).encode()
        answers = []
        solving = threading.Thread(target=lambda: answers.append(_send(server, _request("POST", "/api/solve", body),
                                                                       cut=False)))
        solving.start()
        deadline = time.monotonic() + 10
        while _status(server)["solving"] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        _stops_quietly(server)
        solving.join(5)
        assert answers and answers[0][0] == 499


# ---- the fuzz --------------------------------------------------------------------------


class Raw(str):
    """JSON text put in a request as it is."""


def _dumps(value) -> str:
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(k) + ":" + _dumps(v) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(map(_dumps, value)) + "]"
    return json.dumps(value)


#: Small games only: nothing the fuzz asks for builds or searches long.
GAMES = ["sliding:3x3", "jump:6:1,2", "flip:3x3", "sliding:2x3", "nothing", ""]
NAMES = ["3x3", "jump:6", "flip:3x3", "2x3", "sliding:0x0", "jump:", "9x9x9", "graph:/etc/passwd", "3x3x3"]
FIELDS = ["game", "name", "position", "move", "depth", "seed", "goal", "graph", "filename"]
SMALL_GRAPHS = ['nodes = 4\nedges = [[0, 1], [1, 2], [2, 3], [3, 0]]\n', 'nodes = [', '{"nodes": 3, "edges": []}',
                'nodes = ["a", "a"]\nedges = []\n',
                'nodes = 5\nedges = [[0, 1], [1, 2], [2, 3], [3, 4], [4, 0], [0, 2]]\n']
ENDPOINTS = ["open", "prepare", "position", "move", "scramble", "solve", "optimal"]


def _value(rng: random.Random, name: str, depth: int = 0):
    """A value for the field ``name``: mostly sensible for it, often not."""
    sensible = {"game": lambda: rng.choice(GAMES), "name": lambda: rng.choice(NAMES),
                "graph": lambda: rng.choice(SMALL_GRAPHS), "filename": lambda: rng.choice(["g.toml", "g.json", ""]),
                "position": lambda: " ".join(map(str, rng.sample(range(9), 9))),
                "move": lambda: rng.choice([0, 1, 3, "U", "D", "1"]), "depth": lambda: rng.randrange(0, 30),
                "seed": lambda: rng.randrange(0, 2**32), "goal": lambda: rng.choice(["1 2 3/4 5 6/7 8 0", "x"])}
    if name in sensible and rng.random() < 0.5:
        return sensible[name]()
    kind = rng.randrange(12)
    if kind == 0:
        return rng.choice([0, -1, 2**31, 2**63, 2**64, -(2**70), 10**90])
    if kind == 1:
        return Raw(rng.choice(["NaN", "Infinity", "-Infinity", "1e400", "-0.0", "1.5", "9" * 5000]))
    if kind == 2:
        return rng.choice([True, False, None])
    if kind == 3:
        return "".join(chr(rng.randrange(1, 0x3000)) for _ in range(rng.randrange(0, 40)))
    if kind == 4:
        return "x" * rng.choice([MAX_TEXT - 1, MAX_TEXT + 1, 200_000])
    if kind == 5:
        return Raw(rng.choice(['"\\ud800"', '"\\u0000"', '"a\\udfffb"']))
    if kind == 6 and depth < 3:
        return [_value(rng, name, depth + 1) for _ in range(rng.randrange(0, 4))]
    if kind == 7 and depth < 3:
        return {rng.choice(FIELDS): _value(rng, name, depth + 1) for _ in range(rng.randrange(0, 3))}
    if kind == 8:
        return Raw("[" * 50_000 + "]" * 50_000)
    return sensible.get(name, lambda: rng.random())()


def _body(rng: random.Random) -> bytes:
    """A request body: mostly a JSON object of fields, else malformed."""
    kind = rng.randrange(10)
    if kind < 7:
        data = {"game": _value(rng, "game")} if rng.random() < 0.7 else {}
        for name in rng.sample(FIELDS, rng.randrange(0, 4)):
            data[name] = _value(rng, name)
        return _dumps(data).encode("utf-8", "surrogatepass")
    return rng.choice([b"\xff\xfe{\x80}", b'{"name": "3x', b"[1, 2]", b"", b"null", b'{"game": "\xc3\x28"}',
                       b"{" * 100_000, b'{"name": "3x3"' + b" " * 10_000])


def _fuzz_request(rng: random.Random) -> tuple[bytes, bool]:
    """A random request and whether it is cut short (its body shorter than it says)."""
    roll = rng.random()
    if roll < 0.05:
        return _request("GET", "/api/status"), False
    if roll < 0.1:
        return _request(rng.choice(["GET", "PUT", "DELETE"]), "/api/" + rng.choice(ENDPOINTS), b"{}"), False
    if roll < 0.13:
        return _request("POST", "/api/" + rng.choice(["nothing", "open/x", "status"]), b"{}"), False
    body = _body(rng)
    kind = "application/json" if rng.random() < 0.85 else rng.choice(
        [None, "text/plain", "application/json; charset=utf-8", "multipart/form-data; boundary=x",
         "application/x-www-form-urlencoded", "APPLICATION/JSON"])
    cut = rng.random() < 0.05
    length = len(body) + rng.randrange(1, 1000) if cut else None
    return _request("POST", "/api/" + rng.choice(ENDPOINTS), body, kind, length), cut


def test_fuzzed_requests_get_4xx_json_and_no_traceback(served):
    rng = random.Random(2026)
    for name in ("3x3", "jump:6", "flip:3x3"):
        _open(served, name)
    rss, log = served.rss(), served.log()
    t0 = time.perf_counter()
    statuses = Counter()
    for _ in range(300):
        raw, cut = _fuzz_request(rng)
        answer = _send(served, raw, timeout=10, cut=cut)
        if answer is None:  # a request cut short may be answered or not
            continue
        status, kind, body = answer
        statuses[status] += 1
        assert 200 <= status < 500 and status != 499, (raw[:300], status, body[:300])
        assert kind == "application/json", (raw[:300], status, body[:300])
        value = json.loads(body)
        assert isinstance(value, dict) and (status < 400 or "error" in value), (raw[:300], body[:300])
    assert time.perf_counter() - t0 < 60
    assert statuses[200] >= 20 and sum(statuses.values()) >= 250, statuses  # the fuzz reaches the games
    assert served.rss() - rss < 200 * 2**20
    after = served.log()[len(log):]
    assert "Traceback" not in after and "internal error" not in after, after


# ---- many connections ------------------------------------------------------------------


def _few_files(count: int):
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (count, count))


def test_a_flood_of_connections_is_survived_and_logged_once(tmp_path):
    """More connections than the server may open files: some are answered 503, the rest wait;
    each condition is logged once; a request after the flood is answered."""
    with _started(tmp_path, preexec_fn=_few_files(128)) as server:
        _open(server, "3x3")
        idle = [socket.create_connection(server.address, timeout=5) for _ in range(300)]
        asking = [socket.create_connection(server.address, timeout=5) for _ in range(100)]
        for sock in asking:
            sock.sendall(_request("GET", "/api/status").replace(b"Connection: close\r\n", b""))
        time.sleep(1.5)  # the server meets its limit of open files meanwhile
        for sock in idle:
            sock.close()
        answers = _answers(asking, deadline=time.monotonic() + 20)
        for sock in asking:
            sock.close()
        assert set(answers) <= {200, 503} and answers[503] > 0 and sum(answers.values()) == len(asking), answers
        t0 = time.monotonic()
        while time.monotonic() - t0 < 10:  # the accept loop retries each second
            try:
                assert _open(server, "3x3") == "sliding:3x3"
                break
            except OSError:
                time.sleep(0.2)
        else:
            pytest.fail("no answer after the flood")
        lines = [line for line in server.log().splitlines() if line.strip()]
        assert "Traceback" not in server.log()
        assert max(Counter(lines).values(), default=0) == 1, Counter(lines).most_common(3)
        assert sum("open files" in line for line in lines) == 1, lines


def _answers(socks: list[socket.socket], deadline: float) -> Counter:
    """The status each socket's answer starts with, read until ``deadline``."""
    selector = selectors.DefaultSelector()
    for sock in socks:
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ)
    statuses: Counter = Counter()
    while selector.get_map() and time.monotonic() < deadline:
        for key, _ in selector.select(0.5):
            try:
                head = key.fileobj.recv(64)
            except OSError:
                head = b""
            match = re.match(rb"HTTP/1\.1 (\d+)", head)
            statuses[int(match.group(1)) if match else "none"] += 1
            selector.unregister(key.fileobj)
    return statuses


def test_the_server_raises_its_limit_of_open_files(tmp_path):
    hard = min(resource.getrlimit(resource.RLIMIT_NOFILE)[1], 4096)

    def low_soft_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(256, hard), hard))

    with _started(tmp_path, preexec_fn=low_soft_limit) as server:
        limits = Path(f"/proc/{server.proc.pid}/limits").read_text()
        assert re.search(r"Max open files\s+(\d+)\s+(\d+)", limits).groups() == (str(hard), str(hard))
