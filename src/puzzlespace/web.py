"""``puzzlespace serve``: the page to play on, over HTTP (Starlette, served by uvicorn;
the optional extra ``web``).

Routes (JSON in and out; every error is ``{"error": "..."}`` with a 4xx status):

- ``GET /``: the page (self-contained: it loads nothing from anywhere else);
- ``POST /api/open`` ``{"name": "4x4"}`` or ``{"graph": TEXT, "filename": "g.toml"}``, and an
  optional ``"goal"``: the game's key, its solving method and the cost of any pattern
  databases it must build first;
- ``POST /api/prepare`` ``{"game"}``: read or build those databases in the background; the
  answer comes within :data:`PREPARE_WAIT` seconds: ``ready``, or the build's progress
  (``build``: ``message`` ``building, N s``), and the page asks again until ready;
- ``POST /api/position`` ``{"game", "position"}``, ``/api/move`` (and ``"move"``), ``/api/scramble``
  (``"depth"``, ``"seed"`` optional): a position described (:meth:`~puzzlespace.play.Games.describe`);
- ``POST /api/solve`` ``{"game", "position"}``: its distance and hint; the search stops when
  the page goes away (the connection closes), the time limit passes or the server stops;
  409 with the build's progress while the game's databases build;
- ``POST /api/optimal`` ``{"game", "position"}``: its optimal solutions, how many and the first
  ones (:meth:`~puzzlespace.play.Games.optimal`), stopped as a solve is;
- ``GET /api/status``: searches running, searches cancelled, open games, builds running.

Limits: a body of at most :data:`MAX_BODY` bytes (413), JSON with ``application/json``
(415), text fields of at most :data:`MAX_TEXT` characters, whole numbers in the ranges of
:data:`NUMBERS`, :data:`MAX_CONNECTIONS` requests at once (503 beyond).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import json
import logging
import os
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from importlib import resources

from .errors import PuzzleError, SearchStopped, Unsolvable
from .play import MAX_DEPTH, MAX_SEED, Building, Games, UnknownGame, whole_number

#: The web extra, named in the error when it is missing.
EXTRA = 'pip install "puzzlespace[web]"'
#: Largest request body used, in bytes: the largest graph the family reads (a complete
#: graph of its most nodes, about 1.5 MB of text) and some.
MAX_BODY = 2_000_000
#: A larger body is still read (and dropped) up to this size, so that its sender gets the
#: 413 answer rather than a reset connection; one declared larger is refused unread.
MAX_DRAIN = 64_000_000
#: Longest text field other than a graph file's text, in characters.
MAX_TEXT = 10_000
#: The whole-number fields and their ranges (a move also comes as its label).
NUMBERS = {"depth": (0, MAX_DEPTH), "seed": (0, MAX_SEED), "move": (0, 2**31 - 1)}
#: Requests served at once; beyond them uvicorn answers 503.
MAX_CONNECTIONS = 64
#: Open files the server asks for (its soft limit raised toward the hard one): room for
#: :data:`MAX_CONNECTIONS` and many more connections waiting to be answered 503.
OPEN_FILES = 65_536
#: Searches run at once (each in a thread of its own pool); more wait their turn.
SOLVERS = os.cpu_count() or 2
#: Seconds ``/api/prepare`` waits for a build before answering with its progress.
PREPARE_WAIT = 1.0
#: How often a running search checks whether its page has gone, in seconds.
DISCONNECT_POLL = 0.1
#: A warning, or an error of the system's (an errno), repeated within this many seconds of
#: its last occurrence is not logged again.
REPEAT_QUIET = 60.0
#: No request leaves the page: it may load and call only what this server sends.
POLICY = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; "
          "connect-src 'self'; form-action 'none'; base-uri 'none'")

log = logging.getLogger("puzzlespace.web")


class BadRequest(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class Repeats(logging.Filter):
    """Logs a recurring condition once: a warning or an error carrying an errno (such as
    EMFILE from the accept loop) like one seen less than ``quiet`` seconds before is
    dropped; one of running out of open files is said in a line, without its traceback."""

    def __init__(self, quiet: float = REPEAT_QUIET):
        super().__init__()
        self.quiet = quiet
        self._last: dict[tuple, float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        code = getattr(exc, "errno", None)
        if record.levelno >= logging.ERROR and code is None:
            return True  # a fault: every one is logged
        key = (record.name, code or str(record.msg))
        now = time.monotonic()
        last = self._last.get(key)
        if len(self._last) > 1000:  # distinct messages are few; a bound all the same
            self._last.clear()
        self._last[key] = now
        if last is not None and now - last < self.quiet:
            return False
        if code in (errno.EMFILE, errno.ENFILE):
            record.msg = (f"cannot accept connections: {exc.strerror}; new ones wait until others close "
                          f"(not logged again while it lasts)")
            record.args, record.exc_info = (), None
        return True


class AcceptLoop(asyncio.SelectorEventLoop):
    """asyncio's selector loop with its accept loop mended. Out of open files (EMFILE),
    asyncio's goes on through its whole backlog, each failure scheduling a retry: thousands
    of timers a second, each logging the error again, and at a stop each failing on the
    closed socket. This one accepts a connection each time the socket is ready, so that
    a failure schedules one retry, and a retry that comes after the socket closed does
    nothing."""

    def _accept_connection(self, protocol_factory, sock, sslcontext=None, server=None, backlog=100, *rest):
        super()._accept_connection(protocol_factory, sock, sslcontext, server, 1, *rest)

    def _start_serving(self, protocol_factory, sock, *rest):
        if sock.fileno() != -1:
            super()._start_serving(protocol_factory, sock, *rest)


def run_on_accept_loop(main) -> None:
    """Run the coroutine ``main`` on an :class:`AcceptLoop` to its end (as ``asyncio.run``:
    the tasks left are cancelled, the default executor's work waited for)."""
    loop = AcceptLoop()
    try:
        loop.run_until_complete(main)
    finally:
        try:
            left = asyncio.all_tasks(loop)
            for task in left:
                task.cancel()
            if left:
                loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()


def require_web() -> None:
    """PuzzleError naming the extra unless Starlette and uvicorn are installed."""
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise PuzzleError(f"serve needs the web extra ({exc.name} is missing): {EXTRA}") from None


@functools.cache
def page() -> str:
    """The play page (read once: it is part of the installed package)."""
    return resources.files("puzzlespace").joinpath("static/play.html").read_text(encoding="utf-8")


def respond(content: dict, status: int = 200):
    """``content`` as a JSON response, in ASCII (a lone surrogate in a message cannot break it)."""
    from starlette.responses import Response

    return Response(json.dumps(content, ensure_ascii=True, separators=(",", ":")), status_code=status,
                    media_type="application/json")


def error(status: int, message: str, **more):
    return respond({"error": message, **more}, status)


async def read_json(request) -> dict:
    """The request's JSON object: 415 unless sent as JSON (a page elsewhere cannot send
    that without the browser asking this server first, which it refuses), 413 past
    :data:`MAX_BODY` bytes, 400 unless a JSON object."""
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        raise BadRequest(415, "the request body must be JSON, sent as application/json")
    declared = request.headers.get("content-length", "")
    if len(declared) > 15 or (declared.isdigit() and int(declared) > MAX_DRAIN):
        raise BadRequest(413, f"the request is larger than {MAX_BODY:,} bytes")
    data, size = bytearray(), 0
    async for chunk in request.stream():
        size += len(chunk)
        if size <= MAX_BODY:
            data += chunk
        elif size > MAX_DRAIN:
            break
    if size > MAX_BODY:
        raise BadRequest(413, f"the request is larger than {MAX_BODY:,} bytes")
    try:
        value = json.loads(data or b"{}")
    except (ValueError, RecursionError) as exc:
        raise BadRequest(400, f"the request body is not JSON: {str(exc)[:120]}") from None
    if not isinstance(value, dict):
        raise BadRequest(400, "the request body must be a JSON object")
    return value


def text(data: dict, name: str, required: bool = True, limit: int = MAX_TEXT) -> str | None:
    """The text field ``name`` (None when absent and not ``required``); 400 unless text of at
    most ``limit`` characters."""
    value = data.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise BadRequest(400, f"'{name}' must be text" if name in data else f"'{name}' is missing")
    if len(value) > limit:
        raise BadRequest(400, f"'{name}' is longer than {limit:,} characters")
    return value


def number(data: dict, name: str) -> int | None:
    """The whole-number field ``name`` in its range of :data:`NUMBERS`, or None when absent."""
    value = data.get(name)
    return None if value is None else whole_number(name, value, *NUMBERS[name])


def move_field(data: dict) -> int | str:
    """The move: its code (a whole number) or one of its labels (text)."""
    if isinstance(data.get("move"), str):
        return text(data, "move", limit=100)
    if not isinstance(data.get("move"), int) or isinstance(data.get("move"), bool):
        raise BadRequest(400, "'move' must be a move's code or label")
    return number(data, "move")


def endpoint(handler):
    """The route answering with ``handler(request, body)``'s dict, or an error: 4xx for bad
    requests, 409 while a game's databases build, 499 for a search stopped (its page gone,
    or the server stopping), 500 (logged) for anything unexpected; a client gone before its
    request was read, or a request cancelled as the server stops, is no fault and not logged
    as one."""
    from starlette.requests import ClientDisconnect

    async def run(request):
        try:
            return respond(await handler(request, await read_json(request)))
        except BadRequest as exc:
            return error(exc.status, str(exc))
        except UnknownGame as exc:
            return error(404, str(exc))
        except Unsolvable as exc:
            return error(422, f"unsolvable: {exc.verdict.summary or exc.verdict.reason}")
        except Building as exc:
            return error(409, str(exc), build=exc.status)
        except PuzzleError as exc:
            return error(400, str(exc))
        except SearchStopped as exc:  # cancelled: the page is gone, or the server stops
            return error(499, str(exc))
        except ClientDisconnect:
            return error(499, "the client went away")
        except asyncio.CancelledError:
            log.warning("a request to %s was cut short: the server stopped", request.url.path)
            return error(503, "the server is stopping")
        except Exception as exc:  # never a traceback to the page; it goes to the server's log
            log.exception("internal error")
            return error(500, f"internal error: {type(exc).__name__}")

    return run


def create_app(games: Games):
    """The Starlette application serving ``games``; its searches run in a pool of
    :data:`SOLVERS` threads, shut down with the application."""
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    solvers = ThreadPoolExecutor(max_workers=SOLVERS, thread_name_prefix="puzzlespace-solve")

    async def threaded(function, *args, pool=None):
        return await asyncio.get_running_loop().run_in_executor(pool, function, *args)

    async def open_game(request, data):
        goal = text(data, "goal", required=False)
        if "graph" in data:
            graph = text(data, "graph", limit=MAX_BODY)
            filename = text(data, "filename", required=False, limit=255) or "graph.toml"
            return await threaded(lambda: games.open(graph=graph, goal=goal, filename=filename))
        name = text(data, "name")
        return await threaded(lambda: games.open(name=name, goal=goal))

    async def prepare(request, data):
        return await threaded(games.prepare, text(data, "game"), PREPARE_WAIT)

    async def position(request, data):
        return await threaded(games.describe, text(data, "game"), text(data, "position", required=False))

    async def move(request, data):
        return await threaded(games.move, text(data, "game"), text(data, "position", required=False),
                              move_field(data))

    async def scramble(request, data):
        return await threaded(games.scramble, text(data, "game"), number(data, "depth"), number(data, "seed"))

    async def searched(search, request, data):
        """``search(game, position, cancel)`` in the solvers' pool, cancelled when the client goes."""
        cancel = threading.Event()
        task = asyncio.ensure_future(threaded(search, text(data, "game"), text(data, "position", required=False),
                                              cancel, pool=solvers))
        while not task.done():
            await asyncio.wait({task}, timeout=DISCONNECT_POLL)
            if not task.done() and await request.is_disconnected():
                cancel.set()
        return task.result()

    async def solve(request, data):
        return await searched(games.solve, request, data)

    async def optimal(request, data):
        return await searched(games.optimal, request, data)

    async def status(request):
        return respond(games.status())

    async def home(request):
        return HTMLResponse(page(), headers={"Content-Security-Policy": POLICY})

    async def http_error(request, exc):
        return error(exc.status_code, exc.detail)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        try:
            yield
        finally:
            games.stop()
            solvers.shutdown(wait=False, cancel_futures=True)

    routes = [Route("/", home), Route("/api/status", status)]
    for path, handler in [("open", open_game), ("prepare", prepare), ("position", position), ("move", move),
                          ("scramble", scramble), ("solve", solve), ("optimal", optimal)]:
        routes.append(Route(f"/api/{path}", endpoint(handler), methods=["POST"]))
    return Starlette(routes=routes, exception_handlers={HTTPException: http_error}, lifespan=lifespan)


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port`` (0: any free port); PuzzleError in a line when it
    cannot be (the port taken, an unknown host)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise PuzzleError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(128)  # connections wait from now on, before the server's loop starts
    return sock


def raise_open_files() -> int | None:
    """Raise this process's soft limit on open files toward its hard limit (to at most
    :data:`OPEN_FILES`) where the system allows; the soft limit now (None where there is none to read)."""
    try:
        import resource
    except ImportError:  # not a Unix
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = OPEN_FILES if hard == resource.RLIM_INFINITY else min(hard, OPEN_FILES)
    if soft != resource.RLIM_INFINITY and soft < want:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            soft = want
    return soft


def quiet_repeats() -> None:
    """Log recurring conditions of the accept loop and of uvicorn once (:class:`Repeats`)."""
    for name in ("asyncio", "uvicorn.error"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, Repeats) for f in logger.filters):
            logger.addFilter(Repeats())


def serve(host: str = "127.0.0.1", port: int = 8000, time_limit: float = 10.0, build_limit: float = 120.0,
          ready=None) -> None:
    """Serve the page until interrupted (Ctrl-C, SIGTERM: searches and builds running stop
    at once); ``ready(url)`` is called once the port is bound."""
    require_web()
    import uvicorn

    class Server(uvicorn.Server):
        def handle_exit(self, sig, frame) -> None:
            games.stop()  # searches end within a tenth of a second: the graceful shutdown waits on none
            super().handle_exit(sig, frame)

    raise_open_files()
    sock = listen(host, port)
    games = Games(time_limit=time_limit, build_limit=build_limit)
    config = uvicorn.Config(create_app(games), log_level="warning", timeout_graceful_shutdown=1,
                            limit_concurrency=MAX_CONNECTIONS)
    quiet_repeats()  # after the Config: it sets up uvicorn's loggers
    server = Server(config)
    if ready is not None:
        name = f"[{host}]" if ":" in host else host
        ready(f"http://{name}:{sock.getsockname()[1]}/")
    try:
        run_on_accept_loop(server.serve(sockets=[sock]))
    finally:
        games.close()
        sock.close()
