"""Baseline: plain-Python IDA* for sliding-tile puzzles, in the style of the seed page.

This is the reference point for the solve benchmarks (``python -m bench solve``). It
follows the method of M. Hiroi's Python program for the 11-puzzle (shared seeds 000 and
003), written afresh here:

* the board is a plain Python list, ``board[cell] = tile`` (0 is the blank);
* the goal is ``1, 2, ..., N, 0`` (blank last);
* the search is a recursive depth-first search under a bound that grows between passes;
* the lower bound is the Manhattan distance, read from a table ``distance[tile][cell]``
  computed once, and updated per move by the moved tile's change only;
* a move that would undo the previous one (moving the same tile back) is not generated;
* the bound starts at the Manhattan distance of the start (made to have the parity of the
  blank's distance to its goal cell) and grows by 2 each pass, because every move flips
  the blank's colour on a checkerboard.

No numpy, no numba: CPython (or PyPy) only.

``nodes`` counts the positions generated (every child considered after the undo rule,
whether or not the bound then prunes it), summed over all passes. That is the same
quantity ``puzzlespace`` reports as ``Solution.nodes``.

Usage as a script::

    python -m bench.seed_ida 3x3 "8 6 7 2 5 4 3 0 1"
    python -m bench.seed_ida 4x3 "0 3 2 1 8 7 6 5 4 11 10 9"
"""

from __future__ import annotations

import sys
import time
from typing import Callable, Optional, Sequence

from .seed_grid import grid_neighbours  # plain Python too

__all__ = ["solve", "tables", "manhattan"]


def tables(width: int, height: int):
    """Neighbour lists, Manhattan table ``distance[tile][cell]`` and cell colours."""
    n = width * height
    adjacent = grid_neighbours(width, height)  # up, left, right, down, as in the seed's tables
    distance = [[0] * n]  # row 0: the blank costs nothing
    for tile in range(1, n):
        gr, gc = divmod(tile - 1, width)
        distance.append([abs(cell // width - gr) + abs(cell % width - gc) for cell in range(n)])
    colour = [(cell // width + cell % width) % 2 for cell in range(n)]
    return adjacent, distance, colour


def manhattan(board: Sequence[int], distance) -> int:
    """Sum of the tiles' Manhattan distances to their goal cells."""
    return sum(distance[tile][cell] for cell, tile in enumerate(board))


def solve(
    width: int,
    height: int,
    start: Sequence[int],
    *,
    max_bound: Optional[int] = None,
    time_cap: Optional[float] = None,
    on_pass: Optional[Callable[[int, int, float], None]] = None,
):
    """Optimal solution of ``start`` (row-major list, 0 = blank) by IDA*.

    Returns ``(moves, nodes)``: ``moves`` lists the tile moved at each step (the seed
    page's notation), ``nodes`` the positions generated over all passes.

    ``max_bound`` stops after the pass with that bound; ``time_cap`` (seconds) stops
    before starting a pass once that much time has gone. Either way the search is
    unfinished and ``moves`` is ``None``. ``on_pass(bound, nodes_in_pass, seconds)`` is
    called after every finished pass. (Both are benchmark conveniences; the search itself
    is untouched.) The start must be solvable: the search does not check.
    """
    n = width * height
    if sorted(start) != list(range(n)):
        raise ValueError(f"start must hold 0..{n - 1} once each")
    adjacent, distance, colour = tables(width, height)
    goal = list(range(1, n)) + [0]
    board = list(start)
    moves = [-1]  # moves[-1] is the tile moved last; -1 = none yet
    count = 0

    def dfs(g, space, limit, lower):
        # g moves made, blank at `space`, `lower` = Manhattan distance of `board`
        nonlocal count
        if g == limit:
            return board == goal
        for x in adjacent[space]:
            p = board[x]
            if p == moves[-1]:
                continue  # would move the same tile straight back
            count += 1
            newlower = lower - distance[p][x] + distance[p][space]
            if g + 1 + newlower > limit:
                continue
            board[space] = p
            board[x] = 0
            moves.append(p)
            if dfs(g + 1, x, limit, newlower):
                return True
            moves.pop()
            board[x] = p
            board[space] = 0
        return False

    lower = manhattan(board, distance)
    space = board.index(0)
    # the number of moves has the parity of the blank's checkerboard distance to its goal
    need_odd = colour[space] != colour[n - 1]
    limit = lower + (1 if (lower % 2 == 1) != need_odd else 0)
    t0 = time.perf_counter()
    while True:
        before = count
        t_pass = time.perf_counter()
        found = dfs(0, space, limit, lower)
        if on_pass is not None:
            on_pass(limit, count - before, time.perf_counter() - t_pass)
        if found:
            return moves[1:], count
        if max_bound is not None and limit >= max_bound:
            return None, count
        if time_cap is not None and time.perf_counter() - t0 >= time_cap:
            return None, count
        limit += 2


def _parse_size(text: str) -> tuple[int, int]:
    w, h = text.lower().split("x")
    return int(w), int(h)


def main(argv: Sequence[str]) -> int:
    if len(argv) != 2:
        print(__doc__.split("Usage as a script::")[1], file=sys.stderr)
        return 2
    width, height = _parse_size(argv[0])
    start = [int(v) for v in argv[1].replace("/", " ").split()]

    def report(bound, nodes, seconds):
        print(f"bound {bound}: {nodes:,} nodes, {seconds:.2f} s", flush=True)

    t0 = time.perf_counter()
    moves, nodes = solve(width, height, start, on_pass=report)
    seconds = time.perf_counter() - t0
    print(f"{len(moves)} moves, {nodes:,} nodes, {seconds:.3f} s, {nodes / seconds:,.0f} nodes/s")
    print("tiles moved:", " ".join(map(str, moves)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
