"""Baseline: plain-Python breadth-first search of a whole sliding-tile puzzle, seed style.

This is the reference point for the explore benchmark (``python -m bench explore``). It
follows the method of M. Hiroi's Python program that maps the whole 11-puzzle (shared
seed 000, "11パズル", section "最長手数の局面"), written afresh here for any W x H board
(W, H >= 2) with the goal ``1, 2, ..., N-1, 0`` (blank last):

* **rank** (the seed's ``to_num``): a position is numbered by where the blank and the
  tiles ``1 .. N-3`` stand, i.e. as a permutation of ``N-2`` items chosen among ``N``
  cells, with mixed-radix weights ``(N-1-i)!/2``; that is a minimal perfect hash of the
  ``N!/2`` solvable positions: tiles ``N-2`` and ``N-1`` are left out, so a position and
  its twin with those two tiles swapped (which is unsolvable) share one number;
* **unrank** (the seed's ``from_num``): the digits give back the blank and tiles
  ``1 .. N-3``; the two cells left over get tiles ``N-2`` and ``N-1`` in the order a
  stored flag says;
* **parity** (the seed's ``perm_type``): inversions counted along the boustrophedon
  path through the board (rows alternately left to right and right to left), skipping
  the blank; sliding never changes their parity. Like the seed, it also returns the
  parity of the board with tiles ``N-2`` and ``N-1`` put in path order, and that bit is
  what is stored per position, so that unranking knows which order is the solvable one;
* **the table**: one ``bytearray`` with one byte per rank (``N!/2`` bytes: 239,500,800
  for the 4x3 board), 0 for a position not reached yet.

The seed keeps each layer as a Python list of ranks (``xs``/``ys``) and stores only the
flag. The default here (``mode="scan"``) instead keeps the depth in the table and finds
the current layer by scanning the whole array, as the benchmark's brief asks: each byte
holds ``2 * depth + flag`` (flag 1 or 2), and layer ``d`` is expanded by two passes of
``bytearray.find`` (C-speed ``memchr``) over all ``N!/2`` bytes, one for each flag value.
That keeps memory at exactly one byte per rank; the seed's list frontier costs tens of
bytes per state of the widest layer on top (about 22 million states at depth 36 of the
4x3 board). ``mode="list"`` runs the seed's list frontier for comparison.

One difference from the seed, for correctness of the positions themselves (not of the
counts): the seed's ``from_num`` assigns tiles ``N-2``/``N-1`` to the two left-over cells
by cell order, while its flag is computed in path order; the two disagree when both cells
lie in a right-to-left row, and the seed then rebuilds the unsolvable twin. That does not
change any depth (moves commute with swapping two tile labels, and the rank ignores the
labels), but here the left-over cells are ordered along the path, so every unranked
board is the solvable one (checked by ``self_check``).

No numpy, no numba: CPython (or PyPy) only.

Usage as a script::

    python -m bench.seed_bfs --board 3x3                 # the whole 8-puzzle (seconds)
    python -m bench.seed_bfs --board 4x3 --layers 24     # the first 24 layers of the 11-puzzle
"""

from __future__ import annotations

import argparse
import sys
import time
from math import factorial
from typing import Callable, NamedTuple, Optional, Sequence

from .seed_grid import grid_neighbours  # plain Python too

__all__ = ["Tables", "tables", "to_num", "from_num", "perm_type", "bfs", "BfsResult", "LayerStat",
           "self_check", "state_count", "edge_count"]


class Tables(NamedTuple):
    width: int
    height: int
    n: int                      # cells
    size: int                   # N!/2 ranks
    weights: list[int]          # fact_table: (N-1-i)!/2 for i in 0 .. N-3
    adjacent: list[list[int]]   # neighbour cells of each cell
    path: list[int]             # cells along the boustrophedon path
    pathpos: list[int]          # position of each cell on that path
    goal: list[int]             # 1 .. N-1, 0


def tables(width: int, height: int) -> Tables:
    if width < 2 or height < 2:
        raise ValueError("the board must be at least 2x2")
    n = width * height
    weights = [factorial(n - 1 - i) // 2 for i in range(n - 2)]
    adjacent = grid_neighbours(width, height)
    path = []
    for r in range(height):
        row = list(range(r * width, (r + 1) * width))
        path.extend(row if r % 2 == 0 else reversed(row))
    pathpos = [0] * n
    for i, cell in enumerate(path):
        pathpos[cell] = i
    goal = list(range(1, n)) + [0]
    return Tables(width, height, n, factorial(n) // 2, weights, adjacent, path, pathpos, goal)


def state_count(width: int, height: int) -> int:
    return factorial(width * height) // 2


def edge_count(width: int, height: int) -> int:
    """Moves generated over a whole BFS: every position expanded once, each with one move
    per neighbour of its blank; the blank is equally often on every cell."""
    n = width * height
    degree_sum = 2 * (width - 1) * height + 2 * width * (height - 1)
    return degree_sum * (factorial(n - 1) // 2)


# --------------------------------------------------------------------------- rank / unrank

def to_num(b: Sequence[int], t: Tables) -> int:
    """Rank of board ``b`` (``b[cell] = tile``), ignoring which of tiles N-2, N-1 is where."""
    k = t.n - 2
    buff = [0] * k
    for i, p in enumerate(b):
        if p < k:
            buff[p] = i
    value = 0
    weights = t.weights
    for i in range(k):
        bi = buff[i]
        value += weights[i] * bi
        for j in range(i + 1, k):
            if bi < buff[j]:
                buff[j] -= 1
    return value


def perm_type(b: Sequence[int], t: Tables) -> tuple[int, int]:
    """(parity of ``b``, parity of ``b`` with tiles N-2, N-1 in path order), each 1 (even) or 2 (odd)."""
    n = t.n
    path = t.path
    lo, hi = n - 2, n - 1
    cnt = 0
    x_lo = x_hi = 0
    for i in range(n):
        x = b[path[i]]
        if x == 0:
            continue
        if x == lo:
            x_lo = i
        elif x == hi:
            x_hi = i
        for j in range(i + 1, n):
            y = b[path[j]]
            if y != 0 and x > y:
                cnt += 1
    cnt1 = cnt if x_lo < x_hi else cnt - 1
    return cnt % 2 + 1, cnt1 % 2 + 1


def from_num(num: int, in_path_order: bool, t: Tables) -> tuple[list[int], int]:
    """Board of rank ``num`` and its blank's cell.

    ``in_path_order``: tiles N-2, N-1 stand in path order on the two left-over cells
    (the seed's ``flag``: the stored parity equals the goal's).
    """
    n, k = t.n, t.n - 2
    buff = [0] * k
    for i, w in enumerate(t.weights):
        buff[i] = num // w
        num %= w
    for i in range(k - 2, -1, -1):
        bi = buff[i]
        for j in range(i + 1, k):
            if bi <= buff[j]:
                buff[j] += 1
    board = [-1] * n
    for i, cell in enumerate(buff):
        board[cell] = i
    first = board.index(-1)
    second = board.index(-1, first + 1)
    if (t.pathpos[first] < t.pathpos[second]) != in_path_order:
        first, second = second, first
    board[first] = k
    board[second] = k + 1
    return board, buff[0]


# --------------------------------------------------------------------------- BFS

class LayerStat(NamedTuple):
    depth: int          # the layer expanded
    expanded: int       # states of that layer
    children: int       # moves generated from them
    new: int            # states found at depth + 1
    seconds: float      # wall time of the layer, scans included


class BfsResult(NamedTuple):
    width: int
    height: int
    mode: str
    size: int                   # ranks (bytes of the table)
    depth_counts: list[int]     # states per depth found so far
    layers: list[LayerStat]
    complete: bool              # the last layer expanded found nothing new
    alloc_seconds: float
    seconds: float              # everything, allocation included
    antipodes: list[list[int]]  # boards at the last depth (complete runs, up to 100)
    table: Optional[bytearray] = None  # the table itself, with keep_table=True

    @property
    def states(self) -> int:
        return sum(self.depth_counts)

    @property
    def expanded(self) -> int:
        return sum(l.expanded for l in self.layers)

    @property
    def max_depth(self) -> int:
        return len(self.depth_counts) - 1


def bfs(width: int, height: int, *, layers: Optional[int] = None, mode: str = "scan",
        on_layer: Optional[Callable[[LayerStat], None]] = None, antipode_limit: int = 100,
        keep_table: bool = False) -> BfsResult:
    """Breadth-first search from the goal, layer by layer.

    ``layers``: expand at most this many layers (depths ``0 .. layers-1``), so depths up
    to ``layers`` are known; ``None``: to the end. ``mode``: ``"scan"`` (depth in the
    table, the layer found by scanning it) or ``"list"`` (the seed's list frontier).
    ``keep_table``: return the table (scan mode: ``2 * depth + flag`` per reached rank,
    0 elsewhere; list mode: the flag) in ``result.table``.
    """
    if mode not in ("scan", "list"):
        raise ValueError(f"mode must be 'scan' or 'list', not {mode!r}")
    t = tables(width, height)
    t_start = time.perf_counter()
    check = bytearray(t.size)
    alloc_s = time.perf_counter() - t_start
    goal = list(t.goal)
    pt0, pt1 = perm_type(goal, t)
    g = to_num(goal, t)
    adjacent = t.adjacent
    counts = [1]
    stats: list[LayerStat] = []
    complete = False
    depth = 0
    if mode == "scan":
        check[g] = pt1  # 2 * 0 + flag
        while layers is None or depth < layers:
            if 2 * (depth + 1) + 2 > 255:
                raise ValueError("depths above 126 do not fit the one-byte scan encoding")
            t0 = time.perf_counter()
            base = 2 * (depth + 1)
            new = children = expanded = 0
            for flag in (1, 2):
                value = 2 * depth + flag
                in_order = pt0 == flag
                num = check.find(value)
                while num >= 0:
                    b, s = from_num(num, in_order, t)
                    adj = adjacent[s]
                    children += len(adj)
                    expanded += 1
                    for x in adj:
                        b[s] = b[x]
                        b[x] = 0
                        v = to_num(b, t)
                        if check[v] == 0:
                            check[v] = base + perm_type(b, t)[1]
                            new += 1
                        b[x] = b[s]
                        b[s] = 0
                    num = check.find(value, num + 1)
            st = LayerStat(depth, expanded, children, new, time.perf_counter() - t0)
            stats.append(st)
            if on_layer:
                on_layer(st)
            if new == 0:
                complete = True
                break
            depth += 1
            counts.append(new)
        last = []
        if complete:
            for flag in (1, 2):
                value = 2 * depth + flag
                num = check.find(value)
                while num >= 0 and len(last) < antipode_limit:
                    last.append(from_num(num, pt0 == flag, t)[0])
                    num = check.find(value, num + 1)
    else:
        check[g] = pt1
        xs = [g]
        while layers is None or depth < layers:
            t0 = time.perf_counter()
            ys = []
            children = 0
            for num in xs:
                b, s = from_num(num, pt0 == check[num], t)
                adj = adjacent[s]
                children += len(adj)
                for x in adj:
                    b[s] = b[x]
                    b[x] = 0
                    v = to_num(b, t)
                    if check[v] == 0:
                        ys.append(v)
                        check[v] = perm_type(b, t)[1]
                    b[x] = b[s]
                    b[s] = 0
            st = LayerStat(depth, len(xs), children, len(ys), time.perf_counter() - t0)
            stats.append(st)
            if on_layer:
                on_layer(st)
            if not ys:
                complete = True
                break
            xs = ys
            depth += 1
            counts.append(len(xs))
        last = [from_num(num, pt0 == check[num], t)[0] for num in xs[:antipode_limit]] if complete else []
    return BfsResult(width, height, mode, t.size, counts, stats, complete, alloc_s,
                     time.perf_counter() - t_start, last, check if keep_table else None)


# --------------------------------------------------------------------------- checks

def solvable(b: Sequence[int], t: Tables) -> bool:
    return perm_type(b, t)[0] == perm_type(t.goal, t)[0]


def self_check(width: int, height: int, samples: int = 2000, seed: int = 1) -> None:
    """Rank/unrank round trips on random solvable boards; ranks in range; twins share a rank."""
    import random

    t = tables(width, height)
    rng = random.Random(seed)
    pt0 = perm_type(t.goal, t)[0]
    for _ in range(samples):
        b = list(range(t.n))
        rng.shuffle(b)
        if perm_type(b, t)[0] != pt0:
            i, j = b.index(t.n - 2), b.index(t.n - 1)
            b[i], b[j] = b[j], b[i]
        assert solvable(b, t)
        num = to_num(b, t)
        assert 0 <= num < t.size, (b, num)
        twin = list(b)
        i, j = b.index(t.n - 2), b.index(t.n - 1)
        twin[i], twin[j] = twin[j], twin[i]
        assert to_num(twin, t) == num
        back, blank = from_num(num, pt0 == perm_type(b, t)[1], t)
        assert back == b and blank == b.index(0), (b, back)
    if t.size <= 50_000:  # every rank unranks to a distinct solvable board
        seen = set()
        for num in range(t.size):
            for flag in (True, False):
                b, _ = from_num(num, flag, t)
                if solvable(b, t):
                    assert to_num(b, t) == num
                    seen.add(tuple(b))
                    break
            else:
                raise AssertionError(f"rank {num} has no solvable board")
        assert len(seen) == t.size


# --------------------------------------------------------------------------- script

def _parse_board(text: str) -> tuple[int, int]:
    w, _, h = text.lower().partition("x")
    return int(w), int(h)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description="Plain-Python BFS of a whole sliding puzzle (seed style).")
    ap.add_argument("--board", default="3x3", help="WxH (default 3x3)")
    ap.add_argument("--layers", type=int, default=None, help="stop after expanding K layers (default: to the end)")
    ap.add_argument("--mode", choices=("scan", "list"), default="scan",
                    help="scan: depth in the table, layer found by scanning it (default); list: the seed's list frontier")
    ap.add_argument("--check", action="store_true", help="rank/unrank self-check first")
    args = ap.parse_args(argv)
    w, h = _parse_board(args.board)
    if args.check:
        t0 = time.perf_counter()
        self_check(w, h)
        print(f"self-check passed ({time.perf_counter() - t0:.2f} s)")
    size = state_count(w, h)
    print(f"{w}x{h}: {size:,} ranks ({size:,} bytes of table), mode {args.mode}"
          + (f", at most {args.layers} layers" if args.layers is not None else ""), flush=True)
    print(f"{'depth':>5} {'states':>12} {'moves':>12} {'new':>12} {'layer s':>9} {'total s':>9} {'expanded/s':>11}")
    total = [0.0, 0]

    def report(st: LayerStat) -> None:
        total[0] += st.seconds
        total[1] += st.expanded
        print(f"{st.depth:5d} {st.expanded:12,} {st.children:12,} {st.new:12,} {st.seconds:9.3f} "
              f"{total[0]:9.3f} {st.expanded / st.seconds if st.seconds else 0:11,.0f}", flush=True)

    r = bfs(w, h, layers=args.layers, mode=args.mode, on_layer=report)
    if not r.complete:
        print(f"{r.max_depth:5d} {r.depth_counts[-1]:12,}   (not expanded)")
    print(f"states found: {r.states:,}; states expanded: {r.expanded:,}; layers expanded: {len(r.layers)}; "
          f"seconds: {r.seconds:.3f} (table allocation {r.alloc_seconds:.3f}); "
          f"rate: {r.expanded / r.seconds if r.seconds else 0:,.0f} expanded/s")
    if r.complete:
        print(f"complete: God's number {r.max_depth}, antipodes {r.depth_counts[-1]:,}")
        for b in r.antipodes[:20]:
            print("  " + " ".join(map(str, b)))
    else:
        print(f"stopped after {len(r.layers)} layers (depths 0..{r.max_depth} known)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
