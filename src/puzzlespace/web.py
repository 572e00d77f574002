"""``puzzlespace serve``: the page to play on, over HTTP (Starlette, served by uvicorn;
the optional extra ``web``).

Routes (JSON in and out; every error is ``{"error": "..."}`` with a 4xx status):

- ``GET /``: the page (self-contained: it loads nothing from anywhere else);
- ``POST /api/open`` ``{"name": "4x4"}`` or ``{"graph": TEXT, "filename": "g.toml"}``, and an
  optional ``"goal"``: the game's key, its solving method and the cost of any pattern
  databases it must build first;
- ``POST /api/prepare`` ``{"game"}``: build or read those databases now;
- ``POST /api/position`` ``{"game", "position"}``, ``/api/move`` (and ``"move"``), ``/api/scramble``
  (``"depth"``, ``"seed"`` optional): a position described (:meth:`~puzzlespace.play.Games.describe`);
- ``POST /api/solve`` ``{"game", "position"}``: its distance and hint; the search stops when
  the page goes away (the connection closes) or the time limit passes;
- ``GET /api/status``: searches running, searches cancelled, open games.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import socket
import threading
from importlib import resources

from .errors import PuzzleError, SearchStopped, Unsolvable
from .play import Games, UnknownGame

#: The web extra, named in the error when it is missing.
EXTRA = 'pip install "puzzlespace[web]"'
#: Largest request body read, in bytes (a graph file of the largest size the family reads, and some).
MAX_BODY = 9_000_000
#: How often a running search checks whether its page has gone, in seconds.
DISCONNECT_POLL = 0.1
#: No request leaves the page: it may load and call only what this server sends.
POLICY = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; "
          "connect-src 'self'; form-action 'none'; base-uri 'none'")

log = logging.getLogger("puzzlespace.web")


class BadRequest(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


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


def create_app(games: Games):
    """The Starlette application serving ``games``."""
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse
    from starlette.routing import Route

    def error(status: int, message: str) -> JSONResponse:
        return JSONResponse({"error": message}, status_code=status)

    async def body(request: Request) -> dict:
        data = bytearray()
        async for chunk in request.stream():
            data += chunk
            if len(data) > MAX_BODY:
                raise BadRequest(413, f"the request is larger than {MAX_BODY:,} bytes")
        try:
            value = json.loads(data or b"{}")
        except (ValueError, RecursionError) as exc:
            raise BadRequest(400, f"the request body is not JSON: {str(exc)[:120]}") from None
        if not isinstance(value, dict):
            raise BadRequest(400, "the request body must be a JSON object")
        return value

    def field(data: dict, name: str, kind=str, required: bool = True):
        value = data.get(name)
        if value is None and not required:
            return None
        if not isinstance(value, kind) or isinstance(value, bool):
            what = {str: "text", int: "a whole number"}.get(kind, "given")
            raise BadRequest(400, f"'{name}' must be {what}" if name in data else f"'{name}' is missing")
        return value

    async def threaded(function, *args):
        return await asyncio.get_running_loop().run_in_executor(None, function, *args)

    def endpoint(handler):
        async def run(request: Request):
            try:
                return JSONResponse(await handler(request, await body(request)))
            except BadRequest as exc:
                return error(exc.status, str(exc))
            except UnknownGame as exc:
                return error(404, str(exc))
            except Unsolvable as exc:
                return error(422, f"unsolvable: {exc.verdict.summary or exc.verdict.reason}")
            except PuzzleError as exc:
                return error(400, str(exc))
            except SearchStopped as exc:  # cancelled: the page is gone, and nobody reads this
                return error(499, str(exc))
            except Exception as exc:  # never a traceback to the page; it goes to the server's log
                log.exception("internal error")
                return error(500, f"internal error: {type(exc).__name__}")

        return run

    async def open_game(request, data):
        goal = field(data, "goal", required=False)
        if "graph" in data:
            return await threaded(lambda: games.open(graph=field(data, "graph"), goal=goal,
                                                     filename=field(data, "filename", required=False) or "graph.toml"))
        return await threaded(lambda: games.open(name=field(data, "name"), goal=goal))

    async def prepare(request, data):
        return await threaded(games.prepare, field(data, "game"))

    async def position(request, data):
        return await threaded(games.describe, field(data, "game"), field(data, "position", required=False))

    async def move(request, data):
        if not isinstance(data.get("move"), (int, str)):
            raise BadRequest(400, "'move' must be a move's code or label")
        return await threaded(games.move, field(data, "game"), field(data, "position", required=False), data["move"])

    async def scramble(request, data):
        return await threaded(games.scramble, field(data, "game"), field(data, "depth", int, required=False),
                              field(data, "seed", int, required=False))

    async def solve(request, data):
        cancel = threading.Event()
        task = asyncio.ensure_future(threaded(games.solve, field(data, "game"),
                                              field(data, "position", required=False), cancel))
        while not task.done():
            await asyncio.wait({task}, timeout=DISCONNECT_POLL)
            if not task.done() and await request.is_disconnected():
                cancel.set()
        return task.result()

    async def status(request):
        return JSONResponse(games.status())

    async def home(request):
        return HTMLResponse(page(), headers={"Content-Security-Policy": POLICY})

    async def http_error(request, exc):
        return error(exc.status_code, exc.detail)

    routes = [Route("/", home), Route("/api/status", status)]
    for path, handler in [("open", open_game), ("prepare", prepare), ("position", position), ("move", move),
                          ("scramble", scramble), ("solve", solve)]:
        routes.append(Route(f"/api/{path}", endpoint(handler), methods=["POST"]))
    return Starlette(routes=routes, exception_handlers={HTTPException: http_error})


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


def serve(host: str = "127.0.0.1", port: int = 8000, time_limit: float = 10.0, build_limit: float = 120.0,
          ready=None) -> None:
    """Serve the page until interrupted (Ctrl-C); ``ready(url)`` is called once the port is
    bound."""
    require_web()
    import uvicorn

    sock = listen(host, port)
    games = Games(time_limit=time_limit, build_limit=build_limit)
    server = uvicorn.Server(uvicorn.Config(create_app(games), log_level="warning", timeout_graceful_shutdown=1))
    if ready is not None:
        name = f"[{host}]" if ":" in host else host
        ready(f"http://{name}:{sock.getsockname()[1]}/")
    try:
        server.run(sockets=[sock])
    finally:
        games.close()
        sock.close()
