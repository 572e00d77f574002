"""Minimal perfect hash of token-puzzle positions, and its compiled BFS expansion.

Rank layout: ``rank = group * n + blank``. The *sequence* of a position is its tokens
read in node order, skipping the blank; ``r`` is the sequence's lexicographic rank among
the (n-1)! orders of tokens 1..n-1.

* Bipartite graphs: every move is one swap and moves the blank to the other colour, so
  the sequence's parity is fixed by the blank's node (:func:`needed_parity`). Ranks
  ``2k`` and ``2k+1`` differ exactly by swapping the last two tokens, so by parity, and
  ``group = r // 2``: n!/2 ranks.
* Other graphs: ``group = r``: n! ranks.

On a 2-connected graph other than a cycle or theta-0 (Wilson's theorem), and so on every
sliding puzzle but 2x2 and on line-jump puzzles with distance 1 allowed, exactly these
positions are reachable, and the hash is minimal. On other graphs the rank space is a
superset and unreached ranks stay unreached.

All the n positions of one group are side by side; a move between nodes ``b`` and
``b +- 1`` keeps the sequence, so horizontal moves on a grid stay inside the group.
"""

from __future__ import annotations

from math import factorial

import numba as nb
import numpy as np

from ..explore.table import get2, get_bit, next_frontier_state
from .base import State

MAX_NODES = 20


@nb.njit(cache=True, nogil=True)
def _unrank_perm(r, m, fact, out):
    """Write the permutation of 0..m-1 with lexicographic rank ``r`` into ``out``; return its parity."""
    free = np.empty(m, dtype=np.int64)
    for i in range(m):
        free[i] = i
    left = m
    parity = 0
    for i in range(m):
        f = fact[m - 1 - i]
        d = r // f
        r -= d * f
        parity += d
        out[i] = free[d]
        for j in range(d, left - 1):
            free[j] = free[j + 1]
        left -= 1
    return parity & 1


@nb.njit(cache=True, nogil=True)
def _rank_perm(seq, m, fact):
    """Lexicographic rank of ``seq`` (a permutation of 0..m-1)."""
    r = 0
    for i in range(m):
        smaller = 0
        for j in range(i + 1, m):
            if seq[j] < seq[i]:
                smaller += 1
        r += smaller * fact[m - 1 - i]
    return r


@nb.njit(cache=True, nogil=True)
def _rank_cells(cells, n, bipartite, fact):
    """Rank of the position ``cells`` (token per node, 0 the blank)."""
    seq = np.empty(n - 1, dtype=np.int64)
    k = 0
    blank = 0
    for v in range(n):
        if cells[v] == 0:
            blank = v
        else:
            seq[k] = cells[v] - 1
            k += 1
    r = _rank_perm(seq, n - 1, fact)
    if bipartite:
        r >>= 1
    return r * n + blank


@nb.njit(cache=True, nogil=True)
def _unrank_cells(i, n, bipartite, need, fact, cells):
    """Write the position of rank ``i`` into ``cells``."""
    group = i // n
    blank = i - group * n
    seq = np.empty(n - 1, dtype=np.int64)
    r = group * 2 if bipartite else group
    parity = _unrank_perm(r, n - 1, fact, seq)
    if bipartite and parity != need[blank] and n >= 3:
        seq[n - 3], seq[n - 2] = seq[n - 2], seq[n - 3]
    k = 0
    for v in range(n):
        if v == blank:
            cells[v] = 0
        else:
            cells[v] = seq[k] + 1
            k += 1


@nb.njit(cache=True, nogil=True)
def expand_groups_reference(table, frontier, lo, hi, dmod, n, ptr, adj, bipartite, need, fact, out, only_unseen):
    """Reference for :func:`expand_groups`: unranks every frontier position and ranks every
    neighbour from scratch (O(n^2) each); lists the UNSEEN neighbours, or all of them.
    Kept for the tests, which compare the two."""
    cells = np.empty(n, dtype=np.int64)
    count = 0
    for i in range(lo, hi):
        if not get_bit(frontier, i) or get2(table, i) != dmod:
            continue
        _unrank_cells(i, n, bipartite, need, fact, cells)
        b = i % n
        for e in range(ptr[b], ptr[b + 1]):
            u = adj[e]
            cells[b], cells[u] = cells[u], 0
            j = _rank_cells(cells, n, bipartite, fact)
            if not only_unseen or get2(table, j) == 3:
                out[count] = j
                count += 1
            cells[u], cells[b] = cells[b], 0
    return count


@nb.njit(cache=True, nogil=True, inline="always")
def _moved_rank(seq, digits, m, fact, i, j, r):
    """Rank after the token at sequence position ``i`` moves to position ``j`` (the tokens
    between shift by one), from the rank ``r`` and Lehmer ``digits`` before; O(|i - j|)."""
    e = seq[i]
    if j < i:
        less = 0
        for x in range(j, i):
            r -= digits[x] * fact[m - 1 - x]
            lt = 1 if e < seq[x] else 0
            less += 1 - lt
            r += (digits[x] - lt) * fact[m - 2 - x]
        r -= digits[i] * fact[m - 1 - i]
        r += (digits[i] + less) * fact[m - 1 - j]
    else:
        less = 0
        r -= digits[i] * fact[m - 1 - i]
        for x in range(i + 1, j + 1):
            r -= digits[x] * fact[m - 1 - x]
            lt = 1 if e < seq[x] else 0
            less += 1 - lt
            r += (digits[x] + lt) * fact[m - x]
        r += (digits[i] - less) * fact[m - 1 - j]
    return r


@nb.njit(cache=True, nogil=True, inline="always")
def _next_permutation(seq, digits, m):
    """Advance ``seq`` to its lexicographic successor and ``digits`` (its Lehmer code,
    a factorial-base counter) by one; return the change of the digit sum."""
    k = m - 2
    while k >= 0 and seq[k] > seq[k + 1]:
        k -= 1
    if k >= 0:
        t = m - 1
        while seq[t] < seq[k]:
            t -= 1
        seq[k], seq[t] = seq[t], seq[k]
    a, b = k + 1, m - 1
    while a < b:
        seq[a], seq[b] = seq[b], seq[a]
        a += 1
        b -= 1
    change = 0
    x = m - 2
    while x >= 0:
        digits[x] += 1
        change += 1
        if digits[x] < m - x:
            break
        change -= digits[x]
        digits[x] = 0
        x -= 1
    return change


#: Groups to step through by successor moves rather than decode afresh.
_STEP_GAP = 16


@nb.njit(cache=True, nogil=True, inline="always")
def _advance(seq, digits, m, step):
    """Advance ``seq``/``digits`` by ``step`` (1 or 2) ranks; return the digit sum change.

    Rank ``2k -> 2k + 2`` only changes the last three tokens two times in three (their
    Lehmer digits are (d, 0, 0) with d < 2): one swap does it.
    """
    if step == 2 and m >= 3 and digits[m - 3] < 2:
        if digits[m - 3] == 0:
            seq[m - 3], seq[m - 2] = seq[m - 2], seq[m - 3]
        else:
            seq[m - 3], seq[m - 1] = seq[m - 1], seq[m - 3]
        digits[m - 3] += 1
        return 1
    change = 0
    for _ in range(step):
        change += _next_permutation(seq, digits, m)
    return change


@nb.njit(cache=True, nogil=True)
def expand_groups(table, frontier, lo, hi, dmod, n, ptr, adj, bipartite, need, fact, out):
    """Neighbours of the frontier states in ranks ``[lo, hi)`` that are not yet reached.

    Reads only: a state is expanded when its frontier bit is set and its table entry is
    ``dmod``. Writes into ``out`` the ranks of its neighbours: every UNSEEN one, and also
    the reached ones that are far away (a move that shifts a token along the sequence
    lands anywhere in the table, and reading the entry there costs more than letting the
    merge, which reads it anyway, drop it); duplicates possible. Stops early when ``out``
    could overflow; returns ``(count, next)``, where the states from ``next`` on are
    still to be expanded (``next == hi`` when done).

    Walks the frontier's set bits (skipping empty words). The token sequence of the
    current group and its Lehmer digits are kept: a nearby later group is reached by
    successor steps (amortised O(1) each), a far one is decoded afresh. A move to node
    ``b +- 1`` keeps the sequence (same group); any other move shifts one token along the
    sequence and its rank is updated from the digits in O(distance).
    """
    m = n - 1
    seq = np.empty(m, dtype=np.int64)
    digits = np.zeros(m, dtype=np.int64)
    step = 2 if bipartite else 1
    shift = step - 1  # rank // step, without a division
    words = frontier.view(np.uint64)
    current = np.int64(-1)
    parity = 0
    r = np.int64(0)
    count = 0
    room = out.shape[0] - ptr.shape[0]
    group = lo // n
    base = group * n
    i = next_frontier_state(words, table, lo, hi, dmod)
    while i < hi:
        if count > room:
            return count, i
        if i - base >= _STEP_GAP * n:  # far ahead: divide; near: step (no division)
            group = i // n
            base = group * n
        while i - base >= n:
            group += 1
            base += n
        b = i - base
        if group != current:
            if current >= 0 and group - current <= _STEP_GAP:
                for _ in range(group - current):
                    parity = (parity + _advance(seq, digits, m, step)) & 1
            else:
                rest = group * step
                parity = _unrank_perm(rest, m, fact, seq)
                for x in range(m):
                    digits[x] = rest // fact[m - 1 - x]
                    rest -= digits[x] * fact[m - 1 - x]
            current = group
            r = group * step
        odd = bipartite and parity != need[b] and m >= 2
        if odd:
            seq[m - 2], seq[m - 1] = seq[m - 1], seq[m - 2]
            digits[m - 2] = 1
        rb = r + (1 if odd else 0)
        for e in range(ptr[b], ptr[b + 1]):
            u = adj[e]
            if u == b - 1 or u == b + 1:
                j = base + u
                if get2(table, j) == 3:
                    out[count] = j
                    count += 1
            else:
                if u > b:
                    r2 = _moved_rank(seq, digits, m, fact, u - 1, b, rb)
                else:
                    r2 = _moved_rank(seq, digits, m, fact, u, b - 1, rb)
                out[count] = (r2 >> shift) * n + u
                count += 1
        if odd:
            seq[m - 2], seq[m - 1] = seq[m - 1], seq[m - 2]
            digits[m - 2] = 0
        i = next_frontier_state(words, table, i + 1, hi, dmod)
    return count, hi


def needed_parity(neighbors, colouring, goal: State) -> np.ndarray:
    """For a bipartite graph: the parity the sequence must have with the blank on each node.

    A position's permutation parity relative to the goal equals the parity of the blank's
    distance from its goal node (each move is one swap and changes the blank's colour).
    With ``P(s) = inversions(sequence) + blank`` (mod 2) the parity of moving the blank to
    the end and reading the rest in order, this fixes the sequence's inversion parity.
    """
    n = len(goal)
    goal_seq = [t for t in goal if t]
    inv = sum(1 for i in range(len(goal_seq)) for j in range(i + 1, len(goal_seq)) if goal_seq[i] > goal_seq[j])
    gb = goal.index(0)
    p_goal = (inv + gb) & 1
    return np.array([(colouring[b] + colouring[gb] + p_goal + b) & 1 for b in range(n)], dtype=np.int64)


class TokenIndex:
    """Rank/unrank of a token puzzle's positions (see the module docstring).

    Attributes
    ----------
    size : int
        Number of ranks: n!/2 on bipartite graphs, n! otherwise.
    minimal : bool
        True where every rank is a reachable position (Wilson's theorem applies).
    group : int
        Ranks per group (n); chunks of the rank range are cut at multiples of it.
    scheme : str
        Name and version of the layout (recorded in checkpoints and tablebases).
    """

    def __init__(self, puzzle):
        g = puzzle.graph
        n = g.n
        if n > MAX_NODES:
            raise ValueError(f"state index limited to {MAX_NODES} nodes, got {n}")
        self.n = n
        self.bipartite = g.is_bipartite
        self.fact = np.array([factorial(i) for i in range(n + 1)], dtype=np.int64)
        self.ptr = np.zeros(n + 1, dtype=np.int64)
        self.ptr[1:] = np.cumsum([len(a) for a in g.neighbors])
        self.adj = np.array([v for a in g.neighbors for v in a], dtype=np.int64)
        self.need = needed_parity(g.neighbors, g.colouring, puzzle.goal) if self.bipartite else np.zeros(n, np.int64)
        self.size = n * (factorial(n - 1) // (2 if self.bipartite else 1))
        self.minimal = puzzle.reachable_count() == self.size
        self.group = n
        self.max_degree = max(len(a) for a in g.neighbors)
        self.scheme = f"token-group-lex/{'half' if self.bipartite else 'full'}/v1"

    def rank(self, state: State) -> int:
        return int(_rank_cells(np.asarray(state, dtype=np.int64), self.n, self.bipartite, self.fact))

    def unrank(self, i: int) -> State:
        cells = np.empty(self.n, dtype=np.int64)
        _unrank_cells(np.int64(i), self.n, self.bipartite, self.need, self.fact, cells)
        return tuple(int(c) for c in cells)

    def expand(self, table, frontier, lo: int, hi: int, dmod: int, out: np.ndarray) -> tuple[int, int]:
        """Write neighbours of frontier states in ``[lo, hi)`` into ``out``: every UNSEEN one
        (and maybe some reached ones, which the merge drops).

        Returns ``(count, next)``: the marks written, and where to continue (``hi`` when done).
        """
        return expand_groups(table, frontier, lo, hi, dmod, self.n, self.ptr, self.adj,
                             self.bipartite, self.need, self.fact, out)
