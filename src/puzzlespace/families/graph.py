"""Graph puzzles from a file: a blank and tokens on the nodes of any undirected graph.

File format (TOML or JSON, chosen by the file's ending; see ``docs/formats.md``)::

    name = "Petersen graph"          # optional
    nodes = 10                       # a count (names 0..n-1) or a list of names
    edges = [[0, 1], [1, 2], ...]    # pairs of node names
    goal = [1, 2, 3, 4, 5, 6, 7, 8, 9, 0]   # optional: token per node, in node order
    [coordinates]                    # optional, for drawing: name = [x, y]
    0 = [0.0, 1.0]

Positions list the token on each node in node order, 0 for the blank.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path
from typing import Any, Sequence

from ..errors import PuzzleError
from ..graphs import Graph
from ..positions import check_arrangement
from .base import Family, State, register_family
from .tokens import TokenPuzzle

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MAX_NODES = 400
#: The most edges a graph can have: those of the complete graph on MAX_NODES nodes.
MAX_EDGES = MAX_NODES * (MAX_NODES - 1) // 2
#: The largest graph file read, in characters (a complete graph of MAX_NODES nodes takes about 1.5 M).
MAX_FILE_CHARS = 8_000_000


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PuzzleError(f"graph file {str(path)!r} does not exist") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # ValueError: a NUL in the name
        raise PuzzleError(f"graph file {str(path)!r} cannot be read: {exc}") from None
    kind = "JSON" if path.suffix.lower() == ".json" else "TOML"
    if len(text) > MAX_FILE_CHARS:
        raise PuzzleError(f"graph file {path.name} is larger than {MAX_FILE_CHARS:,} characters")
    try:
        data = json.loads(text) if kind == "JSON" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PuzzleError(f"graph file {path.name}: {kind} syntax error: {exc}") from None
    except RecursionError:
        raise PuzzleError(f"graph file {path.name}: {kind} nested too deeply") from None
    except ValueError as exc:  # e.g. an integer of thousands of digits
        raise PuzzleError(f"graph file {path.name}: {kind} value error: {exc}") from None
    if not isinstance(data, dict):
        raise PuzzleError(f"graph file {path.name}: expected a table with 'nodes' and 'edges'")
    return data


def _node_names(value: Any, where: str) -> list[str]:
    if isinstance(value, bool):
        raise PuzzleError(f"{where}: 'nodes' must be a count or a list of names")
    if isinstance(value, int):
        if not 2 <= value <= MAX_NODES:
            raise PuzzleError(f"{where}: 'nodes' must be between 2 and {MAX_NODES}, got {value}")
        return [str(i) for i in range(value)]
    if isinstance(value, list) and all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
        if not 2 <= len(value) <= MAX_NODES:  # first: the checks below cost the list's length
            raise PuzzleError(f"{where}: a graph needs 2..{MAX_NODES} nodes, got {len(value)}")
        names = [str(v) for v in value]
        dup = _first_repeat(names)
        if dup is not None:
            raise PuzzleError(f"{where}: node {dup!r} is listed twice")
        return names
    raise PuzzleError(f"{where}: 'nodes' must be a count or a list of names")


def _first_repeat(items: Sequence[str]) -> str | None:
    """The first item equal to an earlier one, or None (one pass: linear time)."""
    seen: set[str] = set()
    for item in items:
        if item in seen:
            return item
        seen.add(item)
    return None


def _edges(value: Any, index: dict[str, int], where: str) -> tuple[tuple[int, int], ...]:
    if not isinstance(value, list):
        raise PuzzleError(f"{where}: 'edges' must be a list of [node, node] pairs")
    if len(value) > MAX_EDGES:
        raise PuzzleError(f"{where}: a graph of at most {MAX_NODES} nodes has at most {MAX_EDGES:,} edges, "
                          f"got {len(value):,}")
    edges, seen = [], set()
    for e in value:
        if not (isinstance(e, list) and len(e) == 2):
            raise PuzzleError(f"{where}: edge {e!r} is not a [node, node] pair")
        a, b = (str(x) for x in e)
        for x in (a, b):
            if x not in index:
                raise PuzzleError(f"{where}: edge {e!r} names unknown node {x!r}")
        if a == b:
            raise PuzzleError(f"{where}: edge {e!r} is a self-loop")
        key = frozenset((a, b))
        if key in seen:
            raise PuzzleError(f"{where}: edge {e!r} appears twice")
        seen.add(key)
        edges.append((index[a], index[b]))
    return tuple(edges)


def _coordinates(value: Any, names: list[str], where: str) -> list[tuple[float, float]] | None:
    if value is None:
        return None
    if isinstance(value, list):
        value = dict(zip(names, value)) if len(value) == len(names) else {}
    if not isinstance(value, dict) or set(map(str, value)) != set(names):
        raise PuzzleError(f"{where}: 'coordinates' must give [x, y] for every node")
    value = {str(k): v for k, v in value.items()}
    coords = []
    for name in names:
        xy = value[name]
        if not (isinstance(xy, list) and len(xy) == 2
                and all(isinstance(c, (int, float)) and not isinstance(c, bool) and math.isfinite(c) for c in xy)):
            raise PuzzleError(f"{where}: coordinates of node {name!r} must be [x, y] finite numbers")
        coords.append((float(xy[0]), float(xy[1])))
    return coords


class GraphPuzzle(TokenPuzzle):
    """A token puzzle on a user's graph (see the module docstring for the file format)."""

    family = "graph"

    def __init__(
        self,
        graph: Graph,
        names: Sequence[str] | None = None,
        coordinates: Sequence[tuple[float, float]] | None = None,
        goal: State | None = None,
        spec: str = "graph",
        title: str = "",
    ):
        super().__init__(graph, goal)
        self.names = list(names) if names else [str(i) for i in range(graph.n)]
        self.coordinates = list(coordinates) if coordinates else None
        self.spec, self.title = spec, title

    @classmethod
    def from_file(cls, path: str | Path) -> "GraphPuzzle":
        path = Path(path)
        data = _read(path)
        where = f"graph file {path.name}"
        for key in ("nodes", "edges"):
            if key not in data:
                raise PuzzleError(f"{where}: missing '{key}'")
        unknown = set(data) - {"name", "nodes", "edges", "goal", "coordinates"}
        if unknown:
            raise PuzzleError(f"{where}: unknown key {sorted(unknown)[0]!r}")
        names = _node_names(data["nodes"], where)
        graph = Graph(len(names), _edges(data["edges"], {n: i for i, n in enumerate(names)}, where))
        if not graph.is_connected:
            raise PuzzleError(f"{where}: the graph is not connected")
        puzzle = cls(graph, names, _coordinates(data.get("coordinates"), names, where),
                     spec=f"graph:{path}", title=str(data.get("name", path.stem)))
        if "goal" in data:
            goal = data["goal"]
            if isinstance(goal, str):
                goal_state = puzzle.parse_goal(goal)
            elif isinstance(goal, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in goal):
                goal_state = check_arrangement(goal, graph.n, f"{where}: goal")
            else:
                raise PuzzleError(f"{where}: 'goal' must be a list of tokens")
            puzzle = puzzle.with_goal(goal_state)
        return puzzle

    @property
    def identity(self) -> str:
        """The spec and a digest of the graph's edges (which the spec, a path, does not
        fix): files made for the graph before its file changed are refused."""
        edges = json.dumps(self.graph.neighbors).encode()
        return f"{self.spec}#{hashlib.sha256(edges).hexdigest()[:16]}"

    def with_goal(self, goal: State) -> "GraphPuzzle":
        return GraphPuzzle(self.graph, self.names, self.coordinates, goal, self.spec, self.title)

    def places(self) -> list[tuple[float, float]]:
        """The file's coordinates (y up there, so turned over), scaled so that the closest
        two nodes are 1.5 units apart; without them the circle of :class:`TokenPuzzle`."""
        if not self.coordinates:
            return super().places()
        closest = min((math.dist(a, b) for i, a in enumerate(self.coordinates) for b in self.coordinates[:i]),
                      default=1.0) or 1.0
        scale = 1.5 / closest
        return [(x * scale, -y * scale) for x, y in self.coordinates]

    def draw(self, state: State) -> str:
        labels = [str(t) if t else "." for t in state]
        if self.coordinates:
            picture = _plot(self.coordinates, labels)
            if picture:
                return picture
        return "  ".join(f"{name}:{lab}" for name, lab in zip(self.names, labels))


def _plot(coords: Sequence[tuple[float, float]], labels: Sequence[str]) -> str | None:
    """Place labels on a character canvas at their coordinates (y up); None if two collide."""
    xs, ys = [c[0] for c in coords], [c[1] for c in coords]
    cell = max(map(len, labels)) + 1
    cols, rows = 2 * len(coords) + 4, len(coords) + 2
    sx = (cols - 1) / ((max(xs) - min(xs)) or 1)
    sy = (rows - 1) / ((max(ys) - min(ys)) or 1)
    grid: dict[tuple[int, int], str] = {}
    for (x, y), lab in zip(coords, labels):
        key = (round((max(ys) - y) * sy), round((x - min(xs)) * sx))
        if key in grid:
            return None
        grid[key] = lab
    used_rows = sorted({r for r, _ in grid})
    lines = []
    for r in used_rows:
        line = [" " * cell] * cols
        for (rr, c), lab in grid.items():
            if rr == r:
                line[c] = lab.rjust(cell)
        lines.append("".join(line).rstrip())
    return "\n".join(lines)


def _from_name(args: str) -> GraphPuzzle:
    if not args:
        raise PuzzleError("graph puzzles are named graph:FILE")
    return GraphPuzzle.from_file(args)


register_family(Family("graph", "graph:FILE", _from_name))
