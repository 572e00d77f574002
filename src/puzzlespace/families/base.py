"""The contract every puzzle family fulfils.

A family knows its rules: how positions are written, which moves are legal, what the goal
is, which invariants decide solvability. Search algorithms (:mod:`puzzlespace.search`)
only ever see the methods below, so a new family plugs in by subclassing :class:`Puzzle`.

States are tuples of small ints (one entry per cell). Moves are ints whose meaning is the
family's (for token puzzles the node the blank moves to, for flip the line turned over).
All families here are *reversible*: if ``b`` is a successor of ``a`` then ``a`` is a
successor of ``b``; bidirectional search relies on that.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

from ..contracts import State
from ..drawing import Figure, Mark, Spot
from ..errors import PuzzleError


@dataclass(frozen=True)
class Verdict:
    """Whether a position can reach the goal, and why.

    ``summary`` is one short line: the decisive invariant and its values here and in
    the goal. ``reason`` is the whole argument. ``method`` is ``"invariant"`` when a
    proven invariant decided it (instant) or ``"exhaustive"`` when the reachable set was
    enumerated.
    """

    solvable: bool
    reason: str
    method: str = "invariant"
    summary: str = ""


class Puzzle(ABC):
    """One puzzle: a family, a size and a goal.

    Attributes
    ----------
    spec : str
        Canonical name, e.g. ``"sliding:4x3"`` or ``"jump:5:1,3"``.
    goal : State
        The goal position.
    n_cells : int
        Length of every state tuple.
    """

    spec: str
    goal: State
    n_cells: int

    # ----- text forms -------------------------------------------------------------------
    @abstractmethod
    def parse_position(self, text: str, what: str = "position") -> State:
        """Parse a position; raise :class:`PuzzleError` naming ``what`` on bad input."""

    @abstractmethod
    def format_position(self, state: State) -> str:
        """One-line text form that :meth:`parse_position` reads back."""

    @abstractmethod
    def draw(self, state: State) -> str:
        """A multi-line picture of the position for people."""

    def figure(self, state: State, move: int | None = None) -> Figure:
        """How the position is drawn (:mod:`puzzlespace.drawing`): a spot per cell, in cell
        order, and with ``move`` (legal in ``state``) the marks of :meth:`move_marks`. By
        default the cells' values in a row.

        Contract (pages draw a long solution from the first figure and each move's
        changes): a spot's label and fill depend on its cell's value alone, the same value
        looking the same in every cell; places, shapes and edges on nothing in the state.
        """
        return Figure(tuple(Spot(float(i), 0.0, "square", str(v), "piece") for i, v in enumerate(state)),
                      marks=self.move_marks(state, move))

    def move_marks(self, state: State, move: int | None) -> tuple[Mark, ...]:
        """How ``move`` (legal in ``state``; None: no move) is drawn on the figure of
        ``state``; by default not at all."""
        return ()

    #: How a player makes a move on the board a page draws (the spot a ``"move"`` mark
    #: starts at, or the move's :meth:`move_handle`), in a sentence.
    how_to_move = "Click a move's button to make it."

    def say_move(self, state: State, move: int) -> str:
        """``move`` (legal in ``state``) in words, in the terms of :attr:`how_to_move`; by
        default its primary notation."""
        notes = self.move_notations([state, self.apply(state, move)], [move])
        return str(next(iter(notes.values()))[0])

    def move_way(self, state: State, move: int) -> str | None:
        """The way on the figure (``up``, ``down``, ``left`` or ``right``) the piece that
        ``move`` (legal in ``state``) moves goes, where it goes straight; by default None."""
        return None

    def move_handle(self, state: State, move: int) -> Spot | None:
        """A place off the figure's spots that stands for ``move`` (legal in ``state``), for a
        page to draw and make the move when it is clicked, where no spot starts the move (it
        has no ``"move"`` mark); by default None."""
        return None

    # ----- rules ------------------------------------------------------------------------
    @property
    def identity(self) -> str:
        """What the files made for the puzzle are bound to (see
        :class:`~puzzlespace.contracts.PuzzleRules`): its spec, which names its rules."""
        return self.spec

    @abstractmethod
    def moves(self, state: State) -> Sequence[int]:
        """The legal moves in ``state``."""

    @abstractmethod
    def apply(self, state: State, move: int) -> State:
        """The state after ``move``; the move must be legal."""

    @abstractmethod
    def check(self, state: State) -> Verdict:
        """Decide whether ``state`` can reach :attr:`goal`, with the reason in words."""

    @abstractmethod
    def with_goal(self, goal: State) -> "Puzzle":
        """The same puzzle with another goal."""

    @abstractmethod
    def move_notations(self, path: Sequence[State], moves: Sequence[int]) -> dict[str, list]:
        """Named notations of a move sequence; the first one is the primary notation."""

    def metric_lengths(self, start: State, moves: Sequence[int]) -> dict[str, int]:
        """The length of ``moves`` (legal from ``start``) in each metric the family counts
        moves in, by the metric's name, the puzzle's own first (its value ``len(moves)``);
        another's is that of a sequence of its moves from ``start`` to the same end. By
        default empty: the family counts moves one way."""
        return {}

    def reachable_count(self) -> int | None:
        """Exact number of positions reachable from the goal, where the family knows it."""
        return None

    def random_position(self, rng) -> State:
        """A uniformly random position that can reach the goal (``rng``: a NumPy Generator).

        By default drawn through the state index; families override it where that is
        not minimal or too large.
        """
        index = self.state_index()
        while True:
            state = index.unrank(int(rng.integers(index.size)))
            if index.minimal or self.check(state).solvable:
                return state

    def state_index(self):
        """The family's rank/unrank between positions and ``0..size-1`` (see :mod:`puzzlespace.explore`)."""
        raise PuzzleError(f"{self.spec} has no state index, so it cannot be explored")

    def search_problem(self, heuristic: str = "walking", deadline: float | None = None):
        """Arrays for compiled heuristic search with a classic bound (:mod:`puzzlespace.search.ida`), or None.

        A build estimated to end after ``deadline`` (:func:`~puzzlespace.compiled.clock` seconds) is refused
        with SearchStopped."""
        return None

    def fast_solution(self, start: State) -> list[int] | None:
        """Moves from ``start`` (solvable) to the goal found quickly by a method of the
        family's own, not necessarily fewest; None, for every start, where the family has
        no such method."""
        return None

    def fast_bound(self) -> str:
        """The bound that proves a lower bound of a :meth:`fast_solution` unless another is
        named: one quick to build on any size."""
        return "linear-conflict"

    def shorten(self, start: State, moves: Sequence[int]) -> list[int]:
        """``moves`` (from ``start`` to the goal) made no longer by the family's own local
        optimisation, to the same end; by default as they are."""
        return list(moves)

    def default_heuristic(self) -> str | None:
        """The heuristic IDA* uses by default (``pdb:...`` or a classic bound), None without search."""
        return None

    def pattern_order(self) -> list[int]:
        """The nodes in the order ``pdb:SIZES`` groups take tiles by goal node; PuzzleError
        in a family without tiles."""
        raise PuzzleError(f"{self.spec} has no tiles to group into pattern databases (pdb:...); "
                          f"its heuristic is {self.default_heuristic()}")

    # ----- shared behaviour -------------------------------------------------------------
    def successors(self, state: State) -> Iterator[tuple[int, State]]:
        for m in self.moves(state):
            yield m, self.apply(state, m)

    def parse_goal(self, text: str) -> State:
        return self.parse_position(text, what="goal")

    def position(self, position: str | Sequence[int] | None = None) -> "Position":
        """A :class:`Position` of this puzzle: from its text form, from a state's cells (checked
        by writing and reading them back), or the goal when None; PuzzleError when invalid."""
        if position is None:
            return Position(self.goal, self)
        if not isinstance(position, str):
            cells = tuple(int(v) for v in position)
            if len(cells) != self.n_cells:
                raise PuzzleError(f"a position of {self.spec} has {self.n_cells} cells, not {len(cells)}")
            position = self.format_position(cells)
        return Position(self.parse_position(position), self)

    def replay(self, start: State, moves: Sequence[int]) -> list[State]:
        """Apply ``moves`` from ``start`` checking each is legal; return every position."""
        path = [start]
        for i, m in enumerate(moves):
            if m not in self.moves(path[-1]):
                raise PuzzleError(f"move {i + 1} ({m}) is not legal")
            path.append(self.apply(path[-1], m))
        return path

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec} goal={self.format_position(self.goal)}>"


class Position(tuple):
    """A state that knows its puzzle: equal to (and usable wherever one is taken, as) the
    plain tuple of its cells, and shown as its board in a notebook (``_repr_svg_``).

    ``str()`` is the family's text picture, :meth:`moves` the legal moves and :meth:`play`
    the position after one.
    """

    def __new__(cls, cells: Sequence[int], puzzle: Puzzle):
        self = super().__new__(cls, cells)
        self.puzzle = puzzle
        return self

    def __getnewargs__(self):  # pickling: cells and puzzle back through __new__
        return tuple(self), self.puzzle

    def moves(self) -> list[int]:
        return list(self.puzzle.moves(self))

    def play(self, move: int) -> "Position":
        """The position after ``move``; PuzzleError when it is not legal here."""
        if move not in self.puzzle.moves(self):
            raise PuzzleError(f"move {move} is not legal in {self.puzzle.format_position(self)}")
        return Position(self.puzzle.apply(tuple(self), move), self.puzzle)

    def __str__(self) -> str:
        return self.puzzle.draw(tuple(self))

    def __repr__(self) -> str:
        return f"<Position {self.puzzle.spec} {self.puzzle.format_position(tuple(self))}>"

    def _repr_svg_(self) -> str:
        from ..render import svg

        return svg(self.puzzle.figure(tuple(self)))


@dataclass(frozen=True)
class Family:
    """A puzzle family as names refer to it.

    ``name`` is the prefix before the colon; ``syntax`` shows a user how to write one
    (``"jump:N[:D1,D2,...]"``); ``load(args)`` makes the puzzle from the text after the
    colon (raising PuzzleError on bad text); ``bare(name)``, if given, says whether a name
    whose prefix is no family's (``"4x3"``, ``"4x3:mtm"``) belongs to this family.
    """

    name: str
    syntax: str
    load: Callable[[str], "Puzzle"]
    bare: Callable[[str], bool] | None = None


_FAMILIES: dict[str, Family] = {}


def register_family(family: Family) -> None:
    """Make ``family`` known to :func:`puzzlespace.registry.load_puzzle` (a later family of
    the same name replaces it)."""
    _FAMILIES[family.name.lower()] = family
