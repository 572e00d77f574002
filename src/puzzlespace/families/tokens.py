"""Token puzzles: one blank and numbered tokens on the nodes of an undirected graph.

A move slides the token on a node next to the blank into the blank. Sliding-tile
puzzles (grid graphs) and line-jump puzzles (a line with edges at the allowed
distances) are token puzzles; so is any graph a user gives. This module holds the one
implementation of the move rule, the reachability invariant and the distance heuristic
that all of them share.

State: a tuple ``s`` with ``s[node] = token``, tokens ``0..n-1``, 0 the blank.
Move: the node the blank moves to (equivalently, the token on it slides into the blank).
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import Sequence

import numpy as np

from ..drawing import Figure, Mark, Spot
from ..errors import PuzzleError, SearchStopped, Undecided
from ..graphs import Graph
from ..positions import check_arrangement, parse_numbers
from .base import Puzzle, State, Verdict

#: The bounds built from per-token distances (see :meth:`TokenPuzzle.search_problem`).
CLASSIC_HEURISTICS = ("manhattan", "linear-conflict", "walking")
#: Largest graph whose reachable set is enumerated when no invariant decides.
EXHAUSTIVE_MAX_NODES = 9


def permutation_parity(state: State, goal: State) -> int:
    """0 if ``state`` is an even permutation of ``goal`` (blank included), else 1."""
    where = {t: i for i, t in enumerate(goal)}
    perm = [where[t] for t in state]
    seen = [False] * len(perm)
    cycles = 0
    for i in range(len(perm)):
        if not seen[i]:
            cycles += 1
            j = i
            while not seen[j]:
                seen[j] = True
                j = perm[j]
    return (len(perm) - cycles) % 2


def _parity_word(p: int) -> str:
    return "odd" if p else "even"


class TokenPuzzle(Puzzle):
    """A blank and tokens on a connected graph (see the module docstring for the state form).

    Subclasses give the graph, the name and the drawing; everything else lives here.
    """

    family = "graph"

    def __init__(self, graph: Graph, goal: State | None = None):
        if graph.n < 2:
            raise PuzzleError("a token puzzle needs at least 2 nodes")
        if not graph.is_connected:
            raise PuzzleError("the graph is not connected: tokens could never cross between its parts")
        self.graph = graph
        self.n_cells = graph.n
        default = tuple(range(1, graph.n)) + (0,)
        self.goal = default if goal is None else check_arrangement(list(goal), graph.n, "goal")

    # ----- text forms -------------------------------------------------------------------
    def parse_position(self, text: str, what: str = "position") -> State:
        rows = parse_numbers(text, what)
        return check_arrangement([v for r in rows for v in r], self.n_cells, what)

    def format_position(self, state: State) -> str:
        return " ".join(map(str, state))

    def figure(self, state: State, move: int | None = None) -> Figure:
        """A numbered spot per node at :meth:`places`, the blank's empty; the graph's edges
        where :attr:`figure_edges`; a move as an arrow from the token to the blank."""
        spots = tuple(Spot(x, y, self.figure_shape, str(t) if t else "", "piece" if t else "empty")
                      for (x, y), t in zip(self.places(), state))
        edges = tuple(self.graph.edges) if self.figure_edges else ()
        return Figure(spots, edges, self.move_marks(state, move))

    def move_marks(self, state: State, move: int | None) -> tuple[Mark, ...]:
        """An arrow from the token that moves to the blank."""
        return () if move is None else (Mark("move", (move, state.index(0))),)

    #: How nodes are drawn (see :mod:`puzzlespace.drawing`), and whether edges are.
    figure_shape = "circle"
    figure_edges = True
    how_to_move = "Click a token joined to the empty place by an edge to move it there."

    def say_move(self, state: State, move: int) -> str:
        """``move 5``: the token clicked."""
        return f"move {state[move]}"

    def places(self) -> list[tuple[float, float]]:
        """Where each node is drawn (board units, y down): evenly round a circle whose
        neighbouring nodes are 1.5 units apart."""
        n = self.n_cells
        radius = max(1.0, 1.5 * n / (2 * math.pi))
        return [(radius * (1 + math.sin(2 * math.pi * i / n)), radius * (1 - math.cos(2 * math.pi * i / n)))
                for i in range(n)]

    # ----- rules ------------------------------------------------------------------------
    def moves(self, state: State) -> Sequence[int]:
        return self.graph.neighbors[state.index(0)]

    def apply(self, state: State, move: int) -> State:
        s = list(state)
        blank = s.index(0)
        s[blank], s[move] = s[move], 0
        return tuple(s)

    def move_notations(self, path: Sequence[State], moves: Sequence[int]) -> dict[str, list]:
        """``tiles``: the token moved at each step."""
        return {"tiles": [path[i][m] for i, m in enumerate(moves)]}

    # ----- solvability ------------------------------------------------------------------
    def check(self, state: State) -> Verdict:
        g = self.graph
        if g.is_cycle:
            return self._check_order(state, cyclic=True)
        if g.is_path:
            return self._check_order(state, cyclic=False)
        if g.is_biconnected and not g.is_theta0:
            return self._check_wilson(state)
        return self._check_exhaustive(state)

    #: Why a move keeps the permutation's parity and the blank's colour in step (in
    #: :meth:`check`'s reason on a bipartite graph).
    parity_rule = "every move is one swap and moves the blank across the bipartite graph"

    def _check_wilson(self, state: State) -> Verdict:
        g = self.graph
        if not g.is_bipartite:
            return Verdict(
                True,
                "the graph is 2-connected, not a cycle and not bipartite, so by Wilson's theorem "
                "every arrangement is reachable",
                summary="every arrangement is reachable on this graph (Wilson's theorem)",
            )
        parity = permutation_parity(state, self.goal)
        d = g.distances_from(self.goal.index(0))[state.index(0)]
        ok = parity == d % 2
        moves = f"{d} move{'' if d == 1 else 's'}"
        summary = (f"the tiles are an {_parity_word(parity)} permutation of the goal "
                   f"{'and' if ok else 'but'} the blank is {moves} from home ({_parity_word(d % 2)})")
        return Verdict(
            ok,
            f"the arrangement is an {_parity_word(parity)} permutation of the goal and the blank is "
            f"{moves} from its goal place ({_parity_word(d % 2)}); {self.parity_rule}, so these "
            "parities always agree, and by "
            "Wilson's theorem (2-connected, bipartite, not a cycle) every arrangement where they "
            f"agree is reachable: they {'agree' if ok else 'differ'}",
            summary=summary,
        )

    def _check_order(self, state: State, cyclic: bool) -> Verdict:
        order = self.graph.cycle_order()
        mine = [state[v] for v in order if state[v]]
        goal = [self.goal[v] for v in order if self.goal[v]]
        if cyclic:
            k = goal.index(mine[0]) if mine else 0
            ok = goal[k:] + goal[:k] == mine
            shape, rule = "a cycle", "their cyclic order never changes"
        else:
            ok = mine == goal
            shape, rule = "a path", "their order along it never changes"
        return Verdict(
            ok,
            f"the graph is {shape}: tokens can only follow one another round it, so {rule}, and any "
            f"placement with the same order is reachable: the order {'matches' if ok else 'differs from'} "
            "the goal's",
            summary=f"the tokens' {'cyclic ' if cyclic else ''}order {'matches' if ok else 'differs from'} the "
                    f"goal's (on {shape} it never changes)",
        )

    def _check_exhaustive(self, state: State) -> Verdict:
        why = (
            "Wilson's exceptional graph theta-0"
            if self.graph.is_theta0
            else "the graph is not 2-connected (it has a cut node), so no simple invariant applies"
        )
        if self.n_cells > EXHAUSTIVE_MAX_NODES:
            raise Undecided(
                f"{why}, and with {self.n_cells} nodes the space is too large to enumerate "
                f"(limit {EXHAUSTIVE_MAX_NODES} nodes)"
            )
        ok = state in self._reachable_from_goal
        return Verdict(
            ok,
            f"{why}; all {len(self._reachable_from_goal):,} positions reachable from the goal were "
            f"enumerated and this one is {'among' if ok else 'not among'} them",
            method="exhaustive",
            summary=f"{'among' if ok else 'not among'} the {len(self._reachable_from_goal):,} positions reachable "
                    "from the goal (enumerated)",
        )

    @cached_property
    def _reachable_from_goal(self) -> frozenset[State]:
        from ..search.bfs import reachable_states

        try:
            return frozenset(reachable_states(self, self.goal, max_states=10**6))
        except SearchStopped as exc:  # pragma: no cover - guarded by EXHAUSTIVE_MAX_NODES
            raise Undecided(str(exc)) from exc

    def reachable_count(self) -> int | None:
        from math import factorial

        g = self.graph
        if g.is_cycle:
            return g.n * (g.n - 1)
        if g.is_path:
            return g.n
        if g.is_biconnected and not g.is_theta0:
            return factorial(g.n) // (2 if g.is_bipartite else 1)
        return None

    # ----- compiled search --------------------------------------------------------------
    def conflict_lines(self) -> list[list[int]]:
        """Node sequences on which the linear-conflict bound is admissible (none by default).

        A family returns lines only where a token whose goal is on the same line can pass
        another such token only by leaving the line, at a cost of 2 moves that the distance
        table does not count, and where the extra moves of different lines never coincide
        (rows and columns of a grid).
        """
        return []

    def state_index(self):
        """Rank/unrank of positions (:class:`~puzzlespace.families.token_index.TokenIndex`)."""
        return self._state_index

    @cached_property
    def _state_index(self):
        from .token_index import MAX_NODES

        if self.n_cells > MAX_NODES:
            raise PuzzleError(f"exploring is limited to {MAX_NODES} cells; {self.spec} has {self.n_cells}")
        return self.new_state_index()

    def new_state_index(self):
        """A new :class:`~puzzlespace.families.token_index.TokenIndex` of this puzzle (a
        family whose moves are not the graph's edges gives its own kernel here)."""
        from .token_index import TokenIndex

        return TokenIndex(self)

    def random_position(self, rng) -> State:
        """Uniform over the solvable positions: a random arrangement, made solvable on a
        Wilson graph by swapping two tokens (a bijection between the two parity classes),
        else drawn until one is solvable."""
        g = self.graph
        wilson = g.is_biconnected and not g.is_cycle and not g.is_theta0
        while True:
            cells = [int(t) for t in rng.permutation(self.n_cells)]
            state = tuple(cells)
            if wilson and g.is_bipartite and self.n_cells >= 3 and not self.check(state).solvable:
                a, b = [v for v in range(self.n_cells) if cells[v]][:2]
                cells[a], cells[b] = cells[b], cells[a]
                state = tuple(cells)
            if wilson or self.check(state).solvable:
                return state

    def walking_partitions(self) -> list[list[int]]:
        """Partitions of the nodes (block id per node) for the walking-distance bound.

        None by default. A family offers them where no edge crosses blocks in two of them
        and the abstract spaces stay small (see :mod:`puzzlespace.families.walking`).
        """
        return []

    def symmetries(self) -> list[list[int]]:
        """Node permutations that map the graph onto itself, for pattern-database views
        (none by default; see :mod:`puzzlespace.pdb.heuristic`)."""
        return []

    def pattern_order(self) -> list[int]:
        """The nodes in the order ``pdb:SIZES`` groups take tiles by goal node (0..n-1 here);
        families order them so that consecutive nodes lie close together."""
        return list(range(self.n_cells))

    def default_heuristic(self) -> str:
        """The bound IDA* uses when none is named: the classic ``walking`` bound."""
        return "walking"

    def distance_table(self) -> np.ndarray:
        """``dist[t, v]``: moves token ``t`` needs from node ``v`` to its goal node (row 0 zero)."""
        dist = np.zeros((self.n_cells, self.n_cells), dtype=np.int16)
        goal_node = {t: v for v, t in enumerate(self.goal)}
        for t in range(1, self.n_cells):
            dist[t] = self.graph.distance_matrix[goal_node[t]]
        return dist

    def search_problem(self, heuristic: str = "walking", deadline: float | None = None):
        """The IDA* tables of a classic bound (built once per puzzle object and bound).

        ``manhattan``: the distance sum; ``linear-conflict``: plus the conflicts on the
        family's lines; ``walking``: the larger of that and the walking distance.
        ``deadline`` (:func:`~puzzlespace.compiled.clock` seconds): refuse to start a build estimated to
        end after it (SearchStopped).
        """
        if heuristic not in self._problems:
            from .token_search import TokenSearchProblem

            if heuristic not in CLASSIC_HEURISTICS:
                raise PuzzleError(f"unknown heuristic {heuristic!r}: choose one of {', '.join(CLASSIC_HEURISTICS)} "
                                  "or pdb:SIZES")
            self._problems[heuristic] = TokenSearchProblem.build(
                neighbors=self.graph.neighbors,
                dist=self.distance_table(),
                goal=self.goal,
                lines=self.conflict_lines() if heuristic != "manhattan" else [],
                bipartite=self.graph.is_bipartite,
                partitions=self.walking_partitions() if heuristic == "walking" else [],
                deadline=deadline,
            )
        return self._problems[heuristic]

    @cached_property
    def _problems(self) -> dict:
        return {}
