"""IDA*'s problem for token puzzles: the classic bounds, compiled with numba.


The search sees only arrays (:class:`TokenSearchProblem`): the graph as CSR neighbour
lists, a distance table ``dist[token, node]`` (moves the token needs from ``node`` to its
goal node, 0 for the blank) and optional *conflict lines*. The bound is

    h = max(MD + LC, WD)

MD is the sum of dist[token, node]. LC sums, over the conflict lines, 2 * (k - LIS)
where ``k`` counts the tokens on the line whose goal is on it and LIS is the longest run
of them already in goal order (the linear-conflict bound, exact per line). WD is the
walking distance of :mod:`puzzlespace.families.walking` over the given partitions (0 when
none). All parts are updated incrementally: a line's contents are kept as an integer
key (one digit per cell) and its penalty is read from a table built once per line
length; for each edge and token the few key changes and the abstract walking-distance
transition a move makes are precomputed, and a line is looked up only when the move can
change the order on it.

The depth-first pass is a compiled recursion (no Python object per node, memory
O(n^2 * degree) for the tables plus O(bound) stack). The driver is the generic one
(:func:`puzzlespace.search.ida.ida_star`); the pass checks its stop flag after each node
it expands.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numba as nb
import numpy as np

from ..compiled import clock
from ..errors import PuzzleError, SearchStopped
from ..graphs import pack_graph
from ..search.ida import EXTRA, FOUND, MIN_F, NODES, NOT_FOUND, STOP, STOPPED
from .walking import build_walking_table

#: Longest conflict line scored by table lookup; longer lines are left out of the bound
#: (leaving a line out keeps the bound admissible, only weaker).
MAX_LINE = 7
#: A move touches the lines through two nodes; each node may lie on at most two lines.
_ENTRIES = 4
#: The control array's problem slot holds the number of walking partitions.
_WALKS = EXTRA


#: Bytes of move table built per second (a lower bound of this program's pace; filling is memory-bound).
MOVE_TABLE_BYTES_PER_SECOND = 500e6


def _allocate_moves(rows: int, columns: int, deadline: float | None) -> np.ndarray:
    """The zeroed move table, after checking that it fits the memory available and that
    filling it is expected to end before ``deadline``."""
    from ..resources import available_memory, human

    need = rows * columns * 4
    if need > available_memory() // 2:
        raise PuzzleError(f"IDA*'s move table for this graph needs {human(need)} of memory, more than half of the "
                          f"{human(available_memory())} available; use --method bibfs")
    seconds = need / MOVE_TABLE_BYTES_PER_SECOND
    if deadline is not None and clock() + seconds > deadline:
        raise SearchStopped(f"the time limit would pass while building IDA*'s tables ({human(need)}, about "
                            f"{seconds:.0f} s or more); give more time or use --method bibfs")
    return np.zeros((rows, columns), dtype=np.int32)


@dataclass
class TokenSearchProblem:
    """The arrays that define a token puzzle for IDA*.

    Attributes
    ----------
    graph : int64 array
        The packed CSR graph (:func:`pack_graph`). Entry ``i`` is the edge "the blank at
        ``v`` moves to ``graph[i]``".
    dist : int16 array (n, n)
        Admissible per-token distance to goal; row 0 (the blank) is zero.
    moves : int32 array (n_edges * n, 16)
        Row ``(i - n - 1) * n + t`` describes token ``t`` crossing edge ``i`` into the
        blank: the change of the distance sum, the number of line entries, then per entry
        (line, change of its key, whether the change can alter its penalty: not when the
        token only steps along the line, which keeps the order of its tokens); the last
        two columns name the walking partition whose blocks the edge crosses (-1: none)
        and the transition column there.
    line_nodes : list of list of int
        The conflict lines (for computing keys of a start position).
    goal_index : int64 array (n_lines, n)
        1 + index along line ``l`` of token ``t``'s goal node, 0 if off the line.
    table_off, table : int64 / int8 arrays
        ``table[table_off[l] + key]`` = linear-conflict penalty of line ``l`` with that key;
        from ``table_off[-1]`` on, the walking distance of each abstract state.
    walk_trans : int32 array (n_abstract, width)
        Transitions of all walking partitions' abstract states (state numbers global).
    walk_tables : list of WalkingTable
        The partitions' abstract spaces (for the start position's abstract states).
    walk_off : list of int
        Global number of each partition's first abstract state.
    bipartite : bool
        Whether every cycle is even, so the bound grows in steps of 2.
    """

    graph: np.ndarray
    dist: np.ndarray
    moves: np.ndarray
    line_nodes: list
    goal_index: np.ndarray
    table_off: np.ndarray
    table: np.ndarray
    walk_trans: np.ndarray
    walk_tables: list
    walk_off: list
    bipartite: bool

    @classmethod
    def build(
        cls,
        neighbors: Sequence[Sequence[int]],
        dist: np.ndarray,
        goal: Sequence[int],
        lines: Sequence[Sequence[int]],
        bipartite: bool,
        partitions: Sequence[Sequence[int]] = (),
        deadline: float | None = None,
    ) -> "TokenSearchProblem":
        """Tables for the graph ``neighbors``, distances ``dist``, ``goal``, conflict ``lines``
        and walking-distance ``partitions`` (block id per node; no edge may cross blocks
        in two of them). A build that would end after ``deadline`` is refused (see
        :func:`_allocate_moves`)."""
        n = len(neighbors)
        graph = pack_graph(neighbors)
        ptr, adj = graph[: n + 1] - n - 1, graph[n + 1 :]
        lines = [list(line) for line in lines if 2 <= len(line) <= MAX_LINE]
        if any(c > 2 for c in np.bincount([v for line in lines for v in line], minlength=n)):
            raise ValueError("a node may lie on at most two conflict lines")
        goal_index = np.zeros((len(lines), n), dtype=np.int64)
        where: list[dict[int, int]] = [dict() for _ in range(n)]  # node -> {line: position}
        for li, line in enumerate(lines):
            for k, v in enumerate(line):
                where[v][li] = k
                if goal[v]:
                    goal_index[li, goal[v]] = k + 1
        walks = [w for w in (build_walking_table(b, neighbors, goal) for b in partitions) if w]
        moves = _allocate_moves(len(adj) * n, 4 + 3 * _ENTRIES, deadline)
        moves[:, -2] = -1
        to = np.repeat(np.arange(n), np.diff(ptr))  # the blank's node b of each adjacency entry
        moves[:, 0] = (dist[:, to] - dist[:, adj]).T.reshape(-1)  # row i * n + t: token t moves adj[i] -> to[i]
        moves[::n, 0] = 0
        for b in range(n):
            for i in range(ptr[b], ptr[b + 1]):
                src = int(adj[i])  # the token moves src -> b
                if not (where[src] or where[b] or walks):
                    continue
                for t in range(1, n):
                    row = moves[i * n + t]
                    for li in sorted(set(where[src]) | set(where[b])):
                        base = len(lines[li]) + 1
                        digit = int(goal_index[li, t])
                        delta = digit * base ** where[b].get(li, 0) * (li in where[b])
                        delta -= digit * base ** where[src].get(li, 0) * (li in where[src])
                        if delta:
                            steps_along = li in where[b] and li in where[src] and abs(where[b][li] - where[src][li]) == 1
                            row[2 + 3 * row[1] : 5 + 3 * row[1]] = (li, delta, not steps_along)
                            row[1] += 1
                    crossing = [p for p, w in enumerate(walks) if w.blocks[b] != w.blocks[src]]
                    if len(crossing) > 1:
                        raise ValueError("an edge crosses blocks in two walking partitions")
                    if crossing:
                        w = walks[crossing[0]]
                        row[-2:] = crossing[0], w.code(w.blocks[b], w.blocks[src], w.goal_block[t])
        tables = [_conflict_table(len(line)) for line in lines]
        table_off = np.zeros(len(lines) + 1, dtype=np.int64)
        table_off[1:] = np.cumsum([len(tb) for tb in tables])
        walk_off = list(np.cumsum([0] + [len(w.dist) for w in walks]))
        width = max([w.trans.shape[1] for w in walks], default=1)
        walk_trans = np.full((max(walk_off[-1], 1), width), -1, dtype=np.int32)
        for w, off in zip(walks, walk_off):
            walk_trans[off : off + len(w.dist), : w.trans.shape[1]] = np.where(w.trans >= 0, w.trans + off, -1)
        table = np.concatenate([np.zeros(0, np.int8), *tables, *(w.dist for w in walks)]).astype(np.int8)
        if len(table) == 0:
            table = np.zeros(1, dtype=np.int8)
        return cls(graph, dist.astype(np.int16), moves, lines, goal_index, table_off, table,
                   walk_trans, walks, walk_off[:-1], bipartite)

    def line_keys(self, state: Sequence[int]) -> np.ndarray:
        """Each conflict line's key for ``state`` (``state[node] = token``)."""
        keys = np.zeros(len(self.line_nodes), dtype=np.int64)
        for li, line in enumerate(self.line_nodes):
            base = len(line) + 1
            keys[li] = sum(int(self.goal_index[li, state[v]]) * base**k for k, v in enumerate(line))
        return keys

    def distance_sum(self, state: Sequence[int]) -> int:
        """Sum over tokens of ``dist[token, node]`` (Manhattan distance on grids)."""
        return sum(int(self.dist[t, v]) for v, t in enumerate(state))

    def conflict_sum(self, state: Sequence[int]) -> int:
        """Linear-conflict penalties of ``state`` over all conflict lines."""
        keys = self.line_keys(state)
        return sum(int(self.table[self.table_off[li] + k]) for li, k in enumerate(keys))

    def walk_states(self, state: Sequence[int]) -> list[int]:
        """Global abstract state number of ``state`` in each walking partition."""
        return [off + w.index[w.abstract(state)] for w, off in zip(self.walk_tables, self.walk_off)]

    def walking_distance(self, state: Sequence[int]) -> int:
        """Sum of the abstract distances over the walking partitions (0 if none)."""
        off = int(self.table_off[-1])
        return sum(int(self.table[off + s]) for s in self.walk_states(state))

    def heuristic(self, state: Sequence[int]) -> int:
        """The bound h of ``state``: max(distance sum + conflicts, walking distance)."""
        return max(self.distance_sum(state) + self.conflict_sum(state), self.walking_distance(state))

    def pass_function(self, start: Sequence[int], bound: int, ctl: np.ndarray, path: np.ndarray,
                      weight: tuple[int, int] = (1, 1)):
        """One depth-first pass from ``start`` below ``bound``, as a function of no arguments
        (``f = weight[0] * g + weight[1] * h``)."""
        tiles = np.asarray(start, dtype=np.int64).copy()
        blank = int(np.flatnonzero(tiles == 0)[0])
        keys = np.concatenate([
            self.line_keys(start) + self.table_off[:-1],
            np.array(self.walk_states(start), dtype=np.int64),
            np.array([self.table_off[-1]], dtype=np.int64),
        ])
        md, lc, wd = self.distance_sum(start), self.conflict_sum(start), self.walking_distance(start)
        ctl[_WALKS] = len(self.walk_tables)
        return lambda: _dfs(tiles, np.int64(blank), np.int64(-1), np.int64(0), np.int64(md), np.int64(lc),
                            np.int64(wd), np.int64(bound), np.int64(weight[0]), np.int64(weight[1]), self.graph,
                            self.moves, self.table, keys, self.walk_trans, ctl, path)


@nb.njit(cache=True)
def _conflict_table_jit(length):
    """Penalty 2 * (k - LIS) for every key of a line of ``length`` cells.

    A key holds one base-(length+1) digit per cell: 0 for the blank or a token whose goal
    is off the line, 1 + goal index along the line otherwise.
    """
    base = length + 1
    size = base**length
    table = np.zeros(size, dtype=np.int8)
    seq = np.empty(length, dtype=np.int64)
    best = np.empty(length, dtype=np.int64)
    for key in range(size):
        k = 0
        rest = key
        for _ in range(length):
            digit = rest % base
            rest //= base
            if digit:
                seq[k] = digit
                k += 1
        lis = 0
        for i in range(k):
            best[i] = 1
            for j in range(i):
                if seq[j] < seq[i] and best[j] + 1 > best[i]:
                    best[i] = best[j] + 1
            lis = max(lis, best[i])
        table[key] = 2 * (k - lis)
    return table


_TABLES: dict[int, np.ndarray] = {}


def _conflict_table(length: int) -> np.ndarray:
    if length not in _TABLES:
        _TABLES[length] = _conflict_table_jit(length)
    return _TABLES[length]


@nb.njit(cache=True, nogil=True)
def _dfs(tiles, blank, prev, g, md, lc, wd, bound, wg, wh, graph, moves, table, keys, walk_trans, ctl, path):
    """One depth-first pass below ``bound`` of ``f = wg * g + wh * h``; returns FOUND,
    NOT_FOUND or STOPPED.

    ``md``, ``lc`` and ``wd`` are the parts of the bound at this node (see the module
    docstring). ``graph`` is the packed CSR graph, ``moves`` the packed per-(edge, token)
    rows (see :class:`TokenSearchProblem`); ``keys`` holds each line's key plus its table
    offset, then each walking partition's abstract state (its distance is at
    ``table[walk_base + state]``, ``walk_base`` being ``keys``' last entry). Few, flat
    arguments keep the recursive call cheap. A child is cut as soon as one part of its
    bound exceeds the threshold (distance sum, then walking distance, then distance sum
    plus conflicts), before the rest is looked at; its recorded f is then a lower bound of
    its true f, which may only make the next bound smaller, never skip a solution. On
    FOUND, ``path[g:]`` holds the nodes the blank moves to; the board and keys are
    restored on every other return. The stop flag is read after each child that was
    searched (not after each cut one).
    """
    n = tiles.shape[0]
    n_lines = keys.shape[0] - 1 - ctl[_WALKS]
    walk_base = keys[keys.shape[0] - 1]
    generated = 0  # counted here and added to ctl once per frame: fewer stores through ctl
    for i in range(graph[blank], graph[blank + 1]):
        nxt = np.int64(graph[i])  # recursion arguments keep one type (cached recursion needs it)
        if nxt == prev:
            continue
        t = tiles[nxt]
        row = (i - n - 1) * n + t
        generated += 1
        md2 = md + moves[row, 0]
        f = (g + 1) * wg + md2 * wh
        status = NOT_FOUND
        if f > bound:
            if f < ctl[MIN_F]:
                ctl[MIN_F] = f
        else:
            wd2 = wd
            part = moves[row, 14]
            old = 0
            if part >= 0:
                old = keys[n_lines + part]
                new = walk_trans[old, moves[row, 15]]
                wd2 += table[walk_base + new] - table[walk_base + old]
            f = (g + 1) * wg + wd2 * wh
            if f > bound:
                if f < ctl[MIN_F]:
                    ctl[MIN_F] = f
            else:
                if part >= 0:
                    keys[n_lines + part] = new
                lc2 = lc
                count = moves[row, 1]
                for k in range(count):
                    line = moves[row, 2 + 3 * k]
                    if moves[row, 4 + 3 * k]:
                        lc2 -= table[keys[line]]
                        keys[line] += moves[row, 3 + 3 * k]
                        lc2 += table[keys[line]]
                    else:
                        keys[line] += moves[row, 3 + 3 * k]
                f = (g + 1) * wg + (md2 + lc2) * wh
                if f > bound:
                    if f < ctl[MIN_F]:
                        ctl[MIN_F] = f
                elif md2 == 0:
                    path[g] = nxt
                    ctl[NODES] += generated
                    return FOUND
                else:
                    tiles[blank] = t
                    tiles[nxt] = 0
                    status = _dfs(tiles, nxt, blank, g + 1, md2, lc2, wd2, bound, wg, wh, graph, moves, table,
                                  keys, walk_trans, ctl, path)
                    if status == FOUND:
                        path[g] = nxt
                        ctl[NODES] += generated
                        return FOUND
                    if ctl[STOP] != 0:
                        status = STOPPED
                    tiles[nxt] = t
                    tiles[blank] = 0
                for k in range(count):
                    keys[moves[row, 2 + 3 * k]] -= moves[row, 3 + 3 * k]
                if part >= 0:
                    keys[n_lines + part] = old
        if status == STOPPED:
            ctl[NODES] += generated
            return STOPPED
    ctl[NODES] += generated
    return NOT_FOUND


