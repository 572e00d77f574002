"""Minimal perfect hash of token-puzzle positions, and its compiled BFS expansion.

Rank layout: ``rank = group * n + blank``. The *sequence* of a position is its tokens
read in node order, skipping the blank; ``r`` is the sequence's lexicographic rank among
the (n-1)! orders of tokens 1..n-1.

* Bipartite graphs of 3 nodes or more: every move is one swap and moves the blank to
  the other colour, so the sequence's parity is fixed by the blank's node
  (:func:`needed_parity`). Ranks
  ``2k`` and ``2k+1`` differ exactly by swapping the last two tokens, so by parity, and
  ``group = r // 2``: n!/2 ranks.
* Other graphs (and two nodes, where one token has one sequence): ``group = r``: n! ranks.

On a 2-connected graph other than a cycle or theta-0 (Wilson's theorem), and so on every
sliding puzzle but 2x2 and on line-jump puzzles with distance 1 allowed, exactly these
positions are reachable, and the hash is minimal. On other graphs the rank space is a
superset and unreached ranks stay unreached.

All the n positions of one group are side by side; a move between nodes ``b`` and
``b +- 1`` keeps the sequence, so horizontal moves on a grid stay inside the group: they
are the index's rank steps, applied by the engine in place (:attr:`TokenIndex.rank_steps`).
"""

from __future__ import annotations

import threading
from math import factorial

import numba as nb
import numpy as np

from ..bits import UNSEEN
from ..explore.engine import neighbours_kernel
from ..fastdiv import divisor, mul_shift
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


@nb.njit(cache=True, nogil=True, inline="always")
def _window_change(digits, src, dst, m, fact):
    """The change of a sequence's rank when its token at position ``src`` moves to
    position ``dst`` (the tokens between shift by one), from its Lehmer ``digits`` alone,
    in O(|src - dst|); it depends only on the digits of the positions between ``src`` and
    ``dst`` (the *window*).

    With ``t`` the token: for ``x < src``, ``seq[x] < t`` iff
    ``digits[x] <= digits[src] + #{x < z < src : seq[z] < t}``; for ``x > src``,
    ``seq[x] < t`` iff ``digits[x] < digits[src] - #{src < z < x : seq[z] < t}``.
    """
    t = digits[src]
    r = 0
    if src > dst:
        below = 0
        for x in range(src - 1, dst - 1, -1):
            d = digits[x]
            smaller = 1 if d <= t + below else 0
            below += smaller
            r += (d - 1 + smaller) * fact[m - 2 - x] - d * fact[m - 1 - x]
        return r + (t + below) * fact[m - 1 - dst] - t * fact[m - 1 - src]
    left = t
    for x in range(src + 1, dst + 1):
        d = digits[x]
        smaller = 1 if d < left else 0
        left -= smaller
        r += (d + 1 - smaller) * fact[m - x] - d * fact[m - 1 - x]
    return r + left * fact[m - 1 - dst] - t * fact[m - 1 - src]


# Columns of a move's row in the ``moves`` array of :func:`move_table`.
_U, _SRC, _DST, _LOW, _TOP, _QM, _QS, _C, _CM, _CS, _AT, _CROSS, _CHAIN = range(13)
#: Most moves a node has that keep the sequence besides the rank steps (``jumps``).
MAX_JUMPS = MAX_NODES - 2


def expand_groups(table, base, ranks, count, out, written, data):
    """The token index's kernel (:attr:`FrontierSpace.kernel
    <puzzlespace.contracts.FrontierSpace.kernel>`): the neighbours of the states
    ``ranks[:count]`` (increasing), written into ``out`` from ``written`` on, except those
    by moves to node ``b +- 1`` (see :attr:`TokenIndex.rank_steps`); returns the index
    after the last. ``data`` is :attr:`TokenIndex.kernel_data`.

    All neighbours are written, reached or not: a move that shifts a token along the
    sequence lands anywhere in the table, and reading the entry there costs more than
    letting the merge, which reads it anyway, drop it.

    The sequence's Lehmer digits are split into a *prefix* (positions ``0..k-1``), fixed
    within a *block* of consecutive groups and decoded once per block, and a *suffix*
    (positions ``k..m-1``) whose digits and parity are read from ``suffix`` at the group's
    offset in its block: no division or counting per state, however far apart the states
    are (``consts`` and ``suffix``: see :attr:`TokenIndex.kernel_tables`).

    Every move listed (``sptr``/``moves``: per node, the moves that are not to
    ``b +- 1``) shifts one token along the sequence; the rank change depends on the
    digits of the positions it passes only (the *window*). It is read from a table
    indexed by those digits where the window's digit tuples are few (:func:`move_table`),
    else computed (:func:`_window_change`) and kept while the window's digits stay the
    same. Apart from that computation, the loop calls no helper that takes an array
    (``bits.unreached`` is written out): numba would count references to it, with atomic
    operations, on every call.

    A move may *continue* the one listed before it (``_CHAIN``): the blank goes on from
    where that one left it along a line, and the window of its shift, disjoint from the
    windows before it, still holds the state's own digits, so its change is added to
    theirs (a multi-tile move as single-tile moves in a row). ``jumps[b]`` (padded with
    0; none on most graphs) are the rank changes of the moves of node ``b`` that keep the
    sequence besides the rank steps (the blank more than one node along a row): the
    target is in the state's group, beside it in ``table``, so its entry is read (from
    the cache) and the mark written only if it is unreached.
    """
    consts, sptr, moves, need, fact, suffix, changes, jumps = data
    n, m, step, k, group_m, group_s, block_groups = consts[0], consts[1], consts[2], consts[3], consts[4], consts[5], consts[6]
    bipartite = step == 2
    shift = step - 1
    n_moves = moves.shape[0]
    n_jumps = jumps.shape[1]
    size = table.shape[0] * 4
    digits = np.zeros(m, dtype=np.int64)
    prefix_block = np.full(n_moves, -1, dtype=np.int64)  # block for which prefix_at[e] holds
    prefix_at = np.zeros(n_moves, dtype=np.int64)
    kept_block = np.full(n_moves, -1, dtype=np.int64)  # block and window digits of kept[e]
    kept_q = np.zeros(n_moves, dtype=np.int64)
    kept = np.zeros(n_moves, dtype=np.int64)
    block = -1
    block_start = 0
    block_end = 0
    prefix_parity = 0
    filled = -1  # the state whose suffix digits are in ``digits``
    for t in range(count):
        i = ranks[t]
        group = mul_shift(i, group_m, group_s)
        if group >= block_end:  # a new block of groups: decode its prefix digits
            block = group // block_groups
            block_start = block * block_groups
            block_end = block_start + block_groups
            r = block
            prefix_parity = 0
            for x in range(k - 1, -1, -1):
                q = r // (m - x)
                digits[x] = r - q * (m - x)
                prefix_parity += digits[x]
                r = q
        off = group - block_start
        sd = suffix[off]
        b = i - group * n
        for e in range(MAX_JUMPS if n_jumps else 0):  # a fixed bound and a break: the end is predicted
            if e == n_jumps:
                break
            hop = jumps[b, e]
            out[written] = i + hop
            entry = i + hop - base  # bits.unreached, written out
            written += np.int64(hop != 0) & np.int64(entry < 0 or entry >= size
                                                     or ((table[entry >> 2] >> ((entry & 3) << 1)) & 3) == UNSEEN)
        rank = group * step
        off2 = off * step
        odd = 0
        if bipartite:
            odd = (prefix_parity ^ np.int64(sd >> 31) ^ need[b]) & 1
            rank += odd
            off2 += odd
        change = 0
        for e in range(sptr[b], sptr[b + 1]):
            # the window's suffix digits, off2 // F; the products stay below 2**63 (move_table
            # checks it), so a 64-bit multiply is exact and cheaper than fastdiv's 128-bit one
            q = (off2 * moves[e, _QM]) >> moves[e, _QS]
            at = moves[e, _AT]
            if at >= 0:  # read the change from the window's table
                if prefix_block[e] != block:
                    h = 0
                    for x in range(moves[e, _LOW], min(moves[e, _TOP] + 1, k)):
                        h = h * (m - x) + digits[x]
                    prefix_at[e] = h * moves[e, _CROSS]
                    prefix_block[e] = block
                c = q - ((q * moves[e, _CM]) >> moves[e, _CS]) * moves[e, _C]
                r = changes[at + prefix_at[e] + c]
            elif kept_block[e] == block and kept_q[e] == q:
                r = kept[e]
            else:  # compute it from the digits, and keep it
                if filled != i:
                    s = np.int64(sd)
                    for x in range(k, m):
                        digits[x] = s & 7
                        s >>= 3
                    if bipartite:
                        digits[m - 2] = odd
                    filled = i
                r = _window_change(digits, moves[e, _SRC], moves[e, _DST], m, fact)
                kept_block[e] = block
                kept_q[e] = q
                kept[e] = r
            change = r + (change & moves[e, _CHAIN])
            out[written] = ((rank + change) >> shift) * n + moves[e, _U]
            written += 1
    return written


@nb.njit(cache=True, nogil=True)
def _fill_changes(m, src, dst, fact, out):
    """``out[idx]``: the rank change when the token at sequence position ``src`` moves to
    ``dst``, for the Lehmer digits of positions ``low..top`` (between ``src`` and ``dst``)
    whose Horner index (digit ``x`` in radix ``m - x``, ``low`` first) is ``idx``. The
    digits are counted through in that order, odometer-like."""
    low, top = min(src, dst), max(src, dst)
    digits = np.zeros(m, dtype=np.int64)
    for idx in range(out.shape[0]):
        out[idx] = _window_change(digits, src, dst, m, fact)
        x = top
        digits[x] += 1
        while x > low and digits[x] == m - x:
            digits[x] = 0
            x -= 1
            digits[x] += 1


#: Most entries of one rank-change table (8 bytes each).
CHANGE_TABLE_LIMIT = 1 << 19
#: Most Lehmer digits in the suffix (read per group from a table of at most 8! entries).
SUFFIX_DIGITS = 8


def suffix_digits(m: int, bipartite: bool, most: int = SUFFIX_DIGITS) -> int:
    """Digits in the suffix: ``min(m, most)``, at least 2 on bipartite graphs (the parity
    digit ``m - 2`` is in it), at most 8 (3 bits a digit in :func:`suffix_table`)."""
    return max(min(m, most, 8), 2 if bipartite else 1)


def suffix_table(length: int, step: int) -> np.ndarray:
    """For each group offset ``off`` in a block: the Lehmer digits of the suffix rank
    ``off * step`` among the ``length!`` orders (3 bits each, first digit lowest) and,
    at bit 31, the parity of their sum."""
    rest = np.arange(0, factorial(length), step, dtype=np.int64)
    word = np.zeros(len(rest), dtype=np.int64)
    total = np.zeros(len(rest), dtype=np.int64)
    for j in range(length - 1, -1, -1):  # the last digit (radix 1) first
        rest, d = np.divmod(rest, length - j)
        word |= d << (3 * j)
        total += d
    return (word | ((total & 1) << 31)).astype(np.uint32)


def move_table(n, sptr, sadj, k, fact, limit=CHANGE_TABLE_LIMIT, sources=None):
    """Per move (``sptr``/``sadj`` order) the constants :func:`expand_groups` reads, one
    row each (columns ``_U`` ... ``_CHAIN``), and the concatenated rank-change tables.

    Move ``e`` of node ``b`` takes the blank from ``sources[e]`` (default: ``b``) to
    ``u = sadj[e]``; one from another node continues the move before it (``_CHAIN``: -1,
    a mask of every bit, else 0). It
    shifts the token at sequence position ``src`` to ``dst``; its window is positions
    ``low..top``. With ``L = m - k`` suffix digits and
    ``off2`` the suffix rank (``< L!``):

    * ``q = off2 // F`` (``_QM``, ``_QS``), ``F = (m-1-top)!`` if ``top >= k`` else ``L!``:
      the window's suffix digits ``k..top`` as one number (0 if there are none);
    * the window's table (at ``_AT``; -1 if it has more than ``limit`` digit tuples,
      then the change is computed and kept) is indexed by the window's digits in Horner
      order: ``h * _CROSS + q`` if ``low < k``, where ``h`` is the Horner value of the
      prefix digits ``low..k-1`` and ``_CROSS`` the number of tuples of digits ``k..top``;
      ``q mod _C`` (``_CM``, ``_CS``) if ``low >= k``.
    """
    m = n - 1
    length = m - k
    rows, windows, offset = [], [], 0
    for b in range(n):
        for e in range(sptr[b], sptr[b + 1]):
            u = int(sadj[e])
            source = b if sources is None else int(sources[e])
            src, dst = (u - 1, source) if u > source else (u, source - 1)
            low, top = min(src, dst), max(src, dst)
            f = fact[m - 1 - top] if top >= k else fact[length]
            qm, qs = divisor(int(f), int(fact[length]))
            c, cm, cs, cross = 1, 0, 0, 0
            if low >= k:
                c = int(fact[m - low] // fact[m - 1 - top])
                cm, cs = divisor(c, int(fact[length] // f))
            elif top >= k:
                cross = int(fact[length] // f)
            else:
                cross = 1
            size = int(fact[m - low] // fact[m - 1 - top])
            at = -1
            if size <= limit:
                windows.append((src, dst, offset, size))
                at, offset = offset, offset + size
            # the kernel divides with 64-bit products (off2 < L!, q < L! / f)
            assert qm * int(fact[length]) < 1 << 63 and cm * int(fact[length]) < 1 << 63
            rows.append([u, src, dst, low, top, qm, qs, c, cm, cs, at, cross, -int(source != b)])
    moves = np.array(rows or [[0] * 13], dtype=np.int64)
    # 64 bits on every board, so that the kernel has one signature for every board (the
    # changes of boards up to 13 nodes would fit 32)
    changes = np.zeros(max(offset, 1), dtype=np.int64)
    for src, dst, at, size in windows:  # filled in place: no copy of the tables in memory
        _fill_changes(m, src, dst, fact, changes[at:at + size])
    return moves, changes


def _rank_steps(n: int, up_nodes, down_nodes) -> tuple[np.ndarray, np.ndarray]:
    """The moves to node ``b +- 1`` as rank steps (see :func:`~puzzlespace.bits.close_and_step`):
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
        Number of ranks: n!/2 on bipartite graphs of 3 nodes or more, n! otherwise.
    minimal : bool
        True where every rank is a reachable position (Wilson's theorem applies).
    group : int
        Ranks per group (n); chunks of the rank range are cut at multiples of it.
    scheme : str
        Name and version of the layout (recorded in checkpoints and tablebases).
    rank_steps : (ndarray, ndarray) or None
        The moves to node ``b +- 1`` (None if the graph has none): they keep the group, so
        they go to the next or the previous rank. The kernel leaves them out; the
        engine applies them in place when it closes the layer (no mark, no merge).
    kernel_tables : tuple
        What :attr:`kernel` reads (built on first use): ``kernel_tables``.

    Parameters
    ----------
    suffix_length, table_limit
        Digits in the suffix (:func:`suffix_digits`) and most entries of a rank-change
        table (:func:`move_table`): they change the kernel's speed, never the ranks.
    """

    def __init__(self, puzzle, suffix_length: int = SUFFIX_DIGITS, table_limit: int = CHANGE_TABLE_LIMIT):
        g = puzzle.graph
        n = g.n
        if n > MAX_NODES:
            raise ValueError(f"state index limited to {MAX_NODES} nodes, got {n}")
        self.n = n
        self.bipartite = g.is_bipartite and n >= 3  # two nodes: one sequence, nothing to halve
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
        self.need = needed_parity(g.neighbors, g.colouring, puzzle.goal) if self.bipartite else np.zeros(n, np.int64)
        self.size = n * (factorial(n - 1) // (2 if self.bipartite else 1))
        self.minimal = puzzle.reachable_count() == self.size
        self.group = n
        self.suffix_length, self.table_limit = suffix_length, table_limit
        self._kernel, self._kernel_lock = None, threading.Lock()
        self.max_degree = max(int(self.sptr[b + 1] - self.sptr[b]) for b in range(n))  # rank steps apart
        self.scheme = f"token-group-lex/{'half' if self.bipartite else 'full'}/v1"

    def __getstate__(self) -> dict:
        """Pickled (for another process) without the kernel tables, which are rebuilt there
        on first use."""
        return {k: v for k, v in self.__dict__.items() if k not in ("_kernel", "_kernel_lock")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._kernel, self._kernel_lock = None, threading.Lock()

    def rank(self, state: State) -> int:
        return int(_rank_cells(np.asarray(state, dtype=np.int64), self.n, self.bipartite, self.fact))

    def unrank(self, i: int) -> State:
        cells = np.empty(self.n, dtype=np.int64)
        _unrank_cells(np.int64(i), self.n, self.bipartite, self.need, self.fact, cells)
        return tuple(int(c) for c in cells)

    @property
    def kernel_tables(self) -> tuple:
        """What :func:`expand_groups` reads, built on first use (ranking
        and unranking need none of it): ``(consts, sptr, moves, need, fact, suffix,
        changes, jumps)``. ``consts`` = (n, m = n - 1, ranks per group of sequences ``step``,
        prefix digits ``k``, ``divisor(n)`` as two numbers, groups per block =
        ``len(suffix)``); ``moves``/``changes``: :func:`move_table` of
        :meth:`kernel_moves`; ``suffix``: :func:`suffix_table` of the ``m - k`` suffix
        digits. Built once (threads that ask at the same time wait for it)."""
        if self._kernel is None:
            with self._kernel_lock:
                if self._kernel is None:
                    self._kernel = self._build_kernel_tables()
        return self._kernel

    def _build_kernel_tables(self) -> tuple:
        n = self.n
        step = 2 if self.bipartite else 1
        length = suffix_digits(n - 1, self.bipartite, self.suffix_length)
        k = n - 1 - length
        sptr, sadj, sources, jumps = self.kernel_moves()
        moves, changes = move_table(n, sptr, sadj, k, self.fact, self.table_limit, sources)
        suffix = suffix_table(length, step)
        consts = np.array([n, n - 1, step, k, *divisor(n, max(self.size, 1)), len(suffix)], dtype=np.int64)
        return consts, sptr, moves, self.need, self.fact, suffix, changes, jumps

    def kernel_moves(self) -> tuple:
        """``(sptr, sadj, sources, jumps)``: the moves :func:`expand_groups` lists (see
        :func:`move_table`; ``sources`` None: every move from its node) and, per node, the
        rank changes of the moves that keep the sequence besides the rank steps (``jumps``,
        padded with 0): here the graph's moves that are not rank steps, and no jumps."""
        return self.sptr, self.sadj, None, np.zeros((self.n, 0), dtype=np.int64)

    @property
    def kernel_data(self) -> tuple:
        return self.kernel_tables

    @property
    def kernel(self):
        """:func:`expand_groups`, compiled for this index's tables."""
        return neighbours_kernel(expand_groups, self.kernel_data)
