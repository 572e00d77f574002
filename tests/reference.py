"""Reference implementations: slow, obviously correct, for comparing the fast kernels with.

Each repeats a compiled kernel's job the plain way (whole states unranked and ranked
again, a dictionary BFS), using the kernels' private rank helpers where needed.
"""

from collections import deque
from typing import Sequence

import numba as nb
import numpy as np

from puzzlespace.bits import UNSEEN, get2
from puzzlespace.families.flip_index import _rank, _unrank
from puzzlespace.families.token_index import _rank_cells, _unrank_cells


@nb.njit(cache=True, nogil=True)
def expand_groups_reference(table, lo, hi, value, n, ptr, adj, bipartite, need, fact, out, only_unseen):
    """Reference for the token index's expansion (:func:`expand_groups` behind the engine's walk): unranks every frontier position and ranks every
    neighbour from scratch (O(n^2) each); lists the UNSEEN neighbours, or all of them.
    The tests compare the two."""
    cells = np.empty(n, dtype=np.int64)
    count = 0
    for i in range(lo, hi):
        if get2(table, i) != value:
            continue
        _unrank_cells(i, n, bipartite, need, fact, cells)
        b = i % n
        for e in range(ptr[b], ptr[b + 1]):
            u = adj[e]
            cells[b], cells[u] = cells[u], 0
            j = _rank_cells(cells, n, bipartite, fact)
            if not only_unseen or get2(table, j) == UNSEEN:
                out[count] = j
                count += 1
            cells[u], cells[b] = cells[b], 0
    return count


@nb.njit(cache=True, nogil=True)
def expand_flip_reference(table, lo, hi, value, orbit_cells, orbit_len, pat2dig, dig2pat, radix, mult,
                          src, flip, out):
    """Reference for the flip index's expansion (:func:`expand_flip` behind the engine's walk): applies each move to the whole board and ranks it afresh."""
    n = src.shape[1]
    cells = np.empty(n, dtype=np.int64)
    moved = np.empty(n, dtype=np.int64)
    count = 0
    for i in range(lo, hi):
        if get2(table, i) != value:
            continue
        _unrank(i, orbit_cells, orbit_len, dig2pat, radix, cells)
        for m in range(src.shape[0]):
            for c in range(n):
                moved[c] = cells[src[m, c]] ^ flip[m, c]
            j = _rank(moved, orbit_cells, orbit_len, pat2dig, mult)
            if get2(table, j) == 3:
                out[count] = j
                count += 1
    return count


def pattern_distances_reference(neighbors: Sequence[Sequence[int]], goal: Sequence[int],
                                tiles: Sequence[int]) -> dict[tuple[int, ...], int]:
    """Reference for :func:`pattern_distances`: 0-1 BFS over (group nodes, blank node).

    Plain Python, for small graphs: maps each placement (group nodes in group order) to
    the fewest moves of group tiles, the other tiles moving for free.
    """
    where = {t: v for v, t in enumerate(goal)}
    start = (tuple(where[t] for t in tiles), where[0])
    best = {start: 0}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        cells, blank = state
        d = best[state]
        for x in neighbors[blank]:
            if x in cells:
                nxt, cost = (tuple(blank if c == x else c for c in cells), x), 1
            else:
                nxt, cost = (cells, x), 0
            if best.get(nxt, 1 << 30) > d + cost:
                best[nxt] = d + cost
                (queue.appendleft if cost == 0 else queue.append)(nxt)
    out: dict[tuple[int, ...], int] = {}
    for (cells, _), d in best.items():
        out[cells] = min(out.get(cells, d), d)
    return out


def tracked_walk_length_reference(width: int, height: int, free: Sequence[bool], tiles: Sequence[int], blank: int,
                                  done) -> int:
    """Reference for the fast sliding solver's searches: the fewest blank moves over
    ``free`` cells until ``done(tile cells, blank)``, following only the tiles on
    ``tiles`` (a dictionary BFS over their cells and the blank's); -1 if never."""
    start = (tuple(tiles), blank)
    seen = {start: 0}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        cells, b = state
        if done(cells, b):
            return seen[state]
        r, c = divmod(b, width)
        for v, ok in ((b - width, r > 0), (b + width, r + 1 < height), (b - 1, c > 0), (b + 1, c + 1 < width)):
            if ok and free[v]:
                nxt = (tuple(b if x == v else x for x in cells), v)
                if nxt not in seen:
                    seen[nxt] = seen[state] + 1
                    queue.append(nxt)
    return -1


def value_counts_reference(table: np.ndarray, size: int) -> list[int]:
    """:func:`puzzlespace.bits.value_counts` entry by entry: each byte's four entries."""
    counts = [0, 0, 0, 0]
    for byte in table.tolist():
        for k in range(4):
            counts[(byte >> (2 * k)) & 3] += 1
    counts[3] -= 4 * len(table) - size
    return counts


def layers_and_crossing(p, starts: Sequence[int], limit: int | None = None) -> tuple[list[set[int]], list[int]]:
    """A plain BFS of puzzle ``p`` over whole positions from its goal: per layer, its
    ranks, and the moves from its states to states of another segment (segments start
    at rank 0 and at ``starts``): what a pass's walk must send, since it cannot filter
    what it cannot see. With ``limit``, up to the first layer that brings the states
    listed past it."""
    index = p.state_index()
    segment = lambda rank: int(np.searchsorted(starts, rank, side="right"))  # noqa: E731
    seen, layer, layers, counts = {p.goal}, [p.goal], [], []
    while layer:
        following, crossing = [], 0
        for state in layer:
            home = segment(index.rank(state))
            for _, nxt in p.successors(state):
                crossing += int(segment(index.rank(nxt)) != home)
                if nxt not in seen:
                    seen.add(nxt)
                    following.append(nxt)
        layers.append({index.rank(state) for state in layer})
        counts.append(crossing)
        layer = following
        if limit is not None and sum(map(len, layers)) > limit:
            break
    return layers, counts


def mtm_moves_reference(width: int, height: int, state: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Reference for the multi-tile metric's moves: every position where the blank went
    1, 2, ... cells up, down, left or right, the tiles in its way each one cell back."""
    b = state.index(0)
    r, c = divmod(b, width)
    out = []
    for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        s, rr, cc = list(state), r + dr, c + dc
        at = b
        while 0 <= rr < height and 0 <= cc < width:
            v = rr * width + cc
            s[at], s[v] = s[v], 0
            out.append(tuple(s))
            at, rr, cc = v, rr + dr, cc + dc
    return out


def mtm_distances_reference(width: int, height: int, goal: tuple[int, ...]) -> dict[tuple[int, ...], int]:
    """Reference for exploring and solving in the multi-tile metric: a dictionary BFS from
    ``goal`` over :func:`mtm_moves_reference` (plain Python: boards up to 9 cells)."""
    dist = {goal: 0}
    queue = deque([goal])
    while queue:
        state = queue.popleft()
        for nxt in mtm_moves_reference(width, height, state):
            if nxt not in dist:
                dist[nxt] = dist[state] + 1
                queue.append(nxt)
    return dist


_MTM_DISTANCES: dict = {}


def mtm_distances(size: str, goal: Sequence[int] | None = None) -> dict[tuple[int, ...], int]:
    """:func:`mtm_distances_reference` of the board ``size`` (``"3x3"``) to ``goal`` (its
    default goal if None), computed once per test process."""
    import puzzlespace as ps

    p = ps.load_puzzle(f"{size}:mtm")
    goal = p.goal if goal is None else tuple(goal)
    if (size, goal) not in _MTM_DISTANCES:
        _MTM_DISTANCES[size, goal] = mtm_distances_reference(p.width, p.height, goal)
    return _MTM_DISTANCES[size, goal]


def replay_directions(puzzle, start: tuple[int, ...], directions: Sequence[str]) -> tuple[int, ...]:
    """``R3``-style moves replayed as a person reads them: the blank goes that way that far."""
    way = {"U": -puzzle.width, "D": puzzle.width, "L": -1, "R": 1}
    state = start
    for word in directions:
        state = puzzle.apply(state, state.index(0) + way[word[0]] * int(word[1:] or 1))
    return state


def optimal_path_count_reference(puzzle, start: tuple[int, ...]) -> tuple[int, int]:
    """Reference for counting optimal solutions: (length, count) of ``start``, the length
    from a plain BFS, the count of every walk of that many moves that ends on the goal (a
    walk as short as the distance is a shortest path), by memoised recursion."""
    from functools import lru_cache

    from puzzlespace.search.bfs import bfs

    length = len(bfs(puzzle, start, puzzle.goal).moves)

    @lru_cache(maxsize=None)
    def walks(state, left):
        if left == 0:
            return int(state == puzzle.goal)
        return sum(walks(to, left - 1) for _, to in puzzle.successors(state))

    return length, walks(start, length)


def path_counts_reference(puzzle) -> dict[tuple[int, ...], int]:
    """Reference for every position's optimal path count: a breadth-first search from the
    goal over the whole space, each position's count the sum of its neighbours' in the
    layer before."""
    counts, layer = {puzzle.goal: 1}, [puzzle.goal]
    while layer:
        following: dict = {}
        for state in layer:
            for _, to in puzzle.successors(state):
                if to not in counts:
                    following[to] = following.get(to, 0) + counts[state]
        counts.update(following)
        layer = list(following)
    return counts
