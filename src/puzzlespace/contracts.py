"""The contracts between puzzlespace's layers, written once.

The algorithms (:mod:`puzzlespace.search`, :mod:`puzzlespace.explore`) know nothing of any
family: they use a puzzle through :class:`PuzzleRules`, enumerate it through a
:class:`StateIndex`, and search it through an :class:`IDAProblem`. A family
(:class:`puzzlespace.families.base.Puzzle` and its subclasses) provides them; a pattern
database's abstract space (:class:`puzzlespace.pdb.space.PatternSpace`) is a
:class:`FrontierSpace`. The docs link here rather than restate them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, Protocol, Sequence, runtime_checkable

if TYPE_CHECKING:  # annotations only: reading the contracts costs no NumPy import
    import numpy as np

#: A position: one int per cell (tokens, 0 the blank; or 1 white, 0 black).
State = tuple[int, ...]


@runtime_checkable
class PuzzleRules(Protocol):
    """What the algorithms need of a puzzle: its name, goal and moves.

    ``spec`` is the canonical name, ``identity`` what files made for it are bound to,
    ``goal`` the goal position, ``n_cells`` the length of every state. Moves are
    reversible: every move has a move that undoes it, so searching backwards with
    :meth:`successors` is sound.
    """

    spec: str
    goal: State
    n_cells: int

    @property
    def identity(self) -> str:
        """What the files made for it (checkpoints, tablebases, cached tables) are bound
        to: ``spec``, with a digest of the rules where a file of the user's defines them,
        so that a file made before that file changed is refused, never read."""
        ...

    def successors(self, state: State) -> Iterator[tuple[int, State]]:
        """(move, next state) for every legal move of ``state``."""
        ...

    def state_index(self) -> "StateIndex":
        """The family's minimal (or near-minimal) perfect hash of its positions."""
        ...

    def check(self, state: State):
        """A verdict with ``solvable`` (bool): whether ``state`` can reach the goal."""
        ...

    def reachable_count(self) -> int | None:
        """The number of positions reachable from the goal, where the family knows it."""
        ...

    def random_position(self, rng: np.random.Generator) -> State:
        """A uniformly random position that can reach the goal."""
        ...


@runtime_checkable
class FrontierSpace(Protocol):
    """A state space the layered BFS (:func:`puzzlespace.explore.engine.layered_bfs`) can
    walk: states are ranks ``0..size-1``, and a compiled kernel lists the neighbours of the
    ranks it is given. The engine owns the table and the walk over its frontier
    (:func:`puzzlespace.explore.engine.expand_span`); a space supplies only its moves.

    Attributes
    ----------
    size : int
        Number of ranks; ranks no search from the start reaches are allowed.
    group : int
        Chunk alignment: the engine splits ``[0, size)`` at multiples of ``group * 64``.
    max_degree : int
        The most neighbours ``kernel`` writes for one rank.
    rank_steps : (ndarray, ndarray) or None
        Moves from a rank to the next or previous one, inside a chunk: per rank residue,
        whether a state has a move to ``rank + 1`` (first array) or ``rank - 1`` (second).
        ``kernel`` leaves those moves out and the engine applies them in place as it
        closes a layer. None when there are none.
    kernel : compiled function
        ``kernel(table, base, ranks, count, out, written, kernel_data) -> written``:
        writes the neighbours of the states ``ranks[:count]`` (increasing) into ``out``
        from index ``written`` on, and returns the index after the last one written.
        ``out`` has room for ``count * max_degree`` more. Every neighbour not yet reached
        must be written; reached ones may be too. ``table`` is the search's 2-bit table
        (:mod:`puzzlespace.bits`), read only, or the part of it from rank ``base`` on: to
        leave reached neighbours out, ask :func:`puzzlespace.bits.unreached`. Made by
        :func:`~puzzlespace.explore.engine.neighbours_kernel` from a function numba
        compiles; it runs without the GIL, so chunks run in parallel threads. It must not
        raise: it runs as a C callback, where an exception is only printed (the engine
        then stops with RuntimeError rather than lose marks).
    kernel_data : tuple
        The space's own arrays and numbers that ``kernel`` reads.
    """

    size: int
    group: int
    max_degree: int
    rank_steps: tuple[np.ndarray, np.ndarray] | None
    kernel: object
    kernel_data: tuple


@runtime_checkable
class StateIndex(FrontierSpace, Protocol):
    """A puzzle's positions as a :class:`FrontierSpace`: a bijection between states and
    ranks, what :func:`puzzlespace.explore.explore` and tablebases use.

    ``minimal``: whether the ranks are exactly the positions reachable from the goal.
    ``scheme``: the rank layout's name and version, written in checkpoints and tablebases.
    """

    minimal: bool
    scheme: str

    def rank(self, state: State) -> int:
        ...

    def unrank(self, rank: int) -> State:
        ...


@runtime_checkable
class IDAProblem(Protocol):
    """A problem :func:`puzzlespace.search.ida.ida_star` can search: an admissible bound of
    a start position, whether the graph is bipartite (then every bound keeps the parity of
    the true distance, and IDA* steps its threshold by 2), and one depth-first pass,
    plain or weighted."""

    bipartite: bool

    def heuristic(self, state: Sequence[int]) -> int:
        """A lower bound of the moves from ``state`` to the goal (0 exactly at the goal)."""
        ...

    def pass_function(self, start: Sequence[int], bound: int, ctl: np.ndarray, path: np.ndarray,
                      weight: tuple[int, int] = (1, 1)):
        """One pass of depth-first search below ``bound`` as a function of no arguments.

        A node is cut when ``weight[0] * g + weight[1] * h`` (g its depth, h its bound)
        exceeds ``bound``; (1, 1) is plain IDA*. The function returns the search module's
        status (found, not found, stopped); it reads ``ctl`` for a stop request and writes
        there the nodes it generated and the smallest cut value; on success ``path``
        holds the moves (-1 after the last; it has room for ``bound // weight[0]``).
        """
        ...
