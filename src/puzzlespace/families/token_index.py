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
``b +- 1`` keeps the sequence, so horizontal moves on a grid stay inside the group: they
are the index's rank steps, applied by the engine in place (:attr:`TokenIndex.rank_steps`).
"""

from __future__ import annotations

from math import factorial

import numba as nb
import numpy as np

from ..explore.table import BLOCK_BITS, UNSEEN, get2, lowest_bit, match_word, pattern
from .base import State

MAX_NODES = 20
_ONE = np.uint64(1)
_BLOCK_WORD_BITS = BLOCK_BITS - 5
_BLOCK_WORD_MASK = (1 << _BLOCK_WORD_BITS) - 1


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
def expand_groups_reference(table, lo, hi, value, n, ptr, adj, bipartite, need, fact, out, only_unseen):
    """Reference for :func:`expand_groups`: unranks every frontier position and ranks every
    neighbour from scratch (O(n^2) each); lists the UNSEEN neighbours, or all of them.
    Kept for the tests, which compare the two."""
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
def _decode(r, digits, m, fact):
    """Write the Lehmer digits of rank ``r`` into ``digits``; return its parity (digit sum mod 2)."""
    total = 0
    for x in range(m):
        f = fact[m - 1 - x]
        d = r // f
        r -= d * f
        digits[x] = d
        total += d
    return total & 1


#: Groups to step through by counting rather than decode afresh (divisions).
_STEP_GAP = 16


@nb.njit(cache=True, nogil=True)
def expand_groups(table, lo, hi, value, blocks, n, sptr, sadj, bipartite, need, fact, table_at, changes, out):
    """Neighbours of the frontier states in ranks ``[lo, hi)`` that are not yet reached,
    except those by moves to node ``b +- 1`` (see :attr:`TokenIndex.rank_steps`).

    Reads only: a state is expanded when its table entry is ``value`` (``blocks``: flags
    that cover those states, see :mod:`puzzlespace.explore.table`). Writes into ``out``
    the ranks of its neighbours: every UNSEEN one, and also the reached ones that are far
    away (a move that shifts a token along the sequence lands anywhere in the table, and
    reading the entry there costs more than letting the merge, which reads it anyway, drop
    it); duplicates possible. Stops early when ``out`` could overflow; returns
    ``(count, next)``, where the states from ``next`` on are still to be expanded
    (``next == hi`` when done).

    Walks the frontier states in rank order, keeping the Lehmer digits of the current
    group. Every move listed (``sptr``/``sadj``: per node, the moves that are not to
    ``b +- 1``) shifts one token ``t`` along the sequence, from position ``i`` to
    ``j``; the new rank is computed from the Lehmer digits alone in O(|i - j|): for
    ``x < i``, ``seq[x] < t`` iff ``digits[x] <= digits[i] + #{x < z < i : seq[z] < t}``;
    for ``x > i``, ``seq[x] < t`` iff ``digits[x] < digits[i] - #{i < z < x : seq[z] < t}``.
    The change depends on the digits of positions ``i..j`` only. For windows near the end
    of the sequence (whose digits change every few groups) it is read from a table
    indexed by those digits (``table_at``/``changes``, see :func:`rank_change_tables`);
    for the others it is kept per move and reused while none of those digits changes.

    Only the digits of the current group are kept (no token sequence): a nearby later
    group is reached by counting (which changes digits ``last``, ``last - 1``, ... only),
    a far one is decoded afresh. The loop calls no helper that takes an array: numba
    would count references to it, with atomic operations, on every call.
    """
    m = n - 1
    step = 2 if bipartite else 1
    shift = step - 1
    last = m - 1 - step
    digits = np.zeros(m, dtype=np.int64)
    changed_at = np.zeros(m, dtype=np.int64)  # group at which each digit last changed
    kept_at = np.full(sadj.shape[0], -1, dtype=np.int64)
    kept = np.zeros(sadj.shape[0], dtype=np.int64)
    words = table.view(np.uint64)
    pat = pattern(value)
    count = 0
    room = out.shape[0] - 2 * n - sadj.shape[0]
    group = lo // n
    base = group * n
    parity = _decode(group * step, digits, m, fact)
    for x in range(m):
        changed_at[x] = group
    w = lo >> 5
    end = (hi + 31) >> 5
    found = match_word(words[w], pat) & ~((_ONE << np.uint64((lo & 31) << 1)) - _ONE)
    while True:
        while found == 0:
            w += 1
            if w & _BLOCK_WORD_MASK == 0:  # a new block: skip it if its flag is clear
                while w < end and blocks[w >> _BLOCK_WORD_BITS] == 0:
                    w += _BLOCK_WORD_MASK + 1
            if w >= end:
                return count, hi
            found = match_word(words[w], pat)
        i = (w << 5) + (lowest_bit(found) >> 1)
        found &= found - _ONE
        if i >= hi:
            return count, hi
        if count > room:
            return count, i
        if i - base >= _STEP_GAP * n:
            group = i // n
            base = group * n
            parity = _decode(group * step, digits, m, fact)
            for x in range(m):
                changed_at[x] = group
        while i - base >= n:
            group += 1
            base += n
            x = last
            parity ^= 1
            digits[x] += 1
            changed_at[x] = group
            while digits[x] == m - x:
                digits[x] = 0
                parity ^= (m - x + 1) & 1
                x -= 1
                digits[x] += 1
                changed_at[x] = group
        b = i - base
        rb = group * step
        if bipartite and m >= 2:
            odd = 1 if parity != need[b] else 0
            digits[m - 2] = odd
            rb += odd
        for e in range(sptr[b], sptr[b + 1]):
            u = sadj[e]
            if u > b:
                src, dst, top = u - 1, b, u - 1
            else:
                src, dst, top = u, b - 1, b - 1
            if table_at[e] >= 0:  # a window near the end: read the change
                idx = 0
                for x in range(min(src, dst), top + 1):
                    idx = idx * (m - x) + digits[x]
                out[count] = ((rb + changes[table_at[e] + idx]) >> shift) * n + u
                count += 1
                continue
            if top <= last and kept_at[e] >= changed_at[top]:
                out[count] = ((rb + kept[e]) >> shift) * n + u
                count += 1
                continue
            t = digits[src]
            r = 0
            if u > b:
                below = 0
                for x in range(src - 1, dst - 1, -1):
                    d = digits[x]
                    smaller = 1 if d <= t + below else 0
                    below += smaller
                    r += (d - 1 + smaller) * fact[m - 2 - x] - d * fact[m - 1 - x]
                r += (t + below) * fact[m - 1 - dst] - t * fact[m - 1 - src]
            else:
                k = t
                for x in range(src + 1, dst + 1):
                    d = digits[x]
                    smaller = 1 if d < k else 0
                    k -= smaller
                    r += (d + 1 - smaller) * fact[m - x] - d * fact[m - 1 - x]
                r += k * fact[m - 1 - dst] - t * fact[m - 1 - src]
            kept[e] = r
            kept_at[e] = group
            out[count] = ((rb + r) >> shift) * n + u
            count += 1


@nb.njit(cache=True)
def _fill_changes(m, src, dst, fact, out):
    """``out[idx]``: the rank change when the token at sequence position ``src`` moves to
    ``dst``, for the Lehmer digits of positions ``min..max(src, dst)`` whose Horner index
    (digit ``x`` in radix ``m - x``) is ``idx``.

    Computed the plain way, independently of :func:`expand_groups`: a sequence with those
    digits (the others 0) is decoded, the token moved, and the result ranked afresh. The
    change does not depend on the other digits.
    """
    lo, hi = min(src, dst), max(src, dst)
    seq = np.empty(m, dtype=np.int64)
    for idx in range(out.shape[0]):
        rest = idx
        r = 0
        for x in range(hi, lo - 1, -1):
            r += (rest % (m - x)) * fact[m - 1 - x]
            rest //= m - x
        _unrank_perm(r, m, fact, seq)
        t = seq[src]
        if dst < src:
            seq[dst + 1 : src + 1] = seq[dst:src].copy()
        else:
            seq[src:dst] = seq[src + 1 : dst + 1].copy()
        seq[dst] = t
        out[idx] = _rank_perm(seq, m, fact) - r


#: Most entries of one rank-change table (8 bytes each).
CHANGE_TABLE_LIMIT = 1 << 16


def rank_change_tables(n, sptr, sadj, bipartite, fact):
    """Tables of rank changes for the shift moves whose window ends within three digits
    of the group counter's last digit (their digits change every few groups, so a kept
    change is rarely reused) and has at most ``CHANGE_TABLE_LIMIT`` digit tuples.

    Returns ``(table_at, changes)``: ``table_at[e]`` is the offset of move ``e``'s table
    in ``changes``, or -1 for moves without one.
    """
    m = n - 1
    last = m - 1 - (2 if bipartite else 1)
    table_at = np.full(max(len(sadj), 1), -1, dtype=np.int64)
    tables = []
    offset = 0
    for b in range(n):
        for e in range(sptr[b], sptr[b + 1]):
            u = int(sadj[e])
            src, dst = (u - 1, b) if u > b else (u, b - 1)
            lo, top = min(src, dst), max(src, dst)
            size = int(np.prod([m - x for x in range(lo, top + 1)]))
            if top < last - 2 or size > CHANGE_TABLE_LIMIT:
                continue
            changes = np.empty(size, dtype=np.int64)
            _fill_changes(m, src, dst, fact, changes)
            table_at[e] = offset
            offset += size
            tables.append(changes)
    return table_at, (np.concatenate(tables) if tables else np.zeros(1, dtype=np.int64))


def _rank_steps(n: int, up_nodes, down_nodes) -> tuple[np.ndarray, np.ndarray]:
    """The moves to node ``b +- 1`` as rank steps (see :func:`~puzzlespace.explore.table.close_and_step`):
    for each residue ``p`` of a word's first rank modulo ``n``, bit ``2k`` where the state
    of entry ``k`` (node ``(p + k) % n``) has the move."""
    def masks(nodes):
        return np.array([sum(1 << (2 * k) for k in range(32) if (p + k) % n in nodes) for p in range(n)],
                        dtype=np.uint64)

    return masks(set(up_nodes)), masks(set(down_nodes))


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
    rank_steps : (ndarray, ndarray) or None
        The moves to node ``b +- 1`` (None if the graph has none): they keep the group, so
        they go to the next or the previous rank. :meth:`expand` leaves them out; the
        engine applies them in place when it closes the layer (no mark, no merge).
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
        shifts = [[u for u in a if abs(u - b) != 1] for b, a in enumerate(g.neighbors)]
        self.sptr = np.zeros(n + 1, dtype=np.int64)
        self.sptr[1:] = np.cumsum([len(a) for a in shifts])
        self.sadj = np.array([u for a in shifts for u in a] or [0], dtype=np.int64)
        up = [b for b in range(n - 1) if b + 1 in g.neighbors[b]]
        down = [b for b in range(1, n) if b - 1 in g.neighbors[b]]
        self.rank_steps = _rank_steps(n, up, down) if up or down else None
        self.table_at, self.changes = rank_change_tables(n, self.sptr, self.sadj, self.bipartite, self.fact)
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

    def expand(self, table, lo: int, hi: int, value: int, blocks, out: np.ndarray) -> tuple[int, int]:
        """Write neighbours of the frontier states (entry ``value``; ``blocks``: flags that
        cover them) in ``[lo, hi)`` into ``out``: every UNSEEN one (and maybe some reached
        ones, which the merge drops) except those by the moves of :attr:`rank_steps`.

        Returns ``(count, next)``: the marks written, and where to continue (``hi`` when done).
        """
        return expand_groups(table, lo, hi, value, blocks, self.n, self.sptr, self.sadj, self.bipartite, self.need, self.fact, self.table_at, self.changes, out)
