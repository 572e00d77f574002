"""Walking distance: an admissible bound from an abstraction of a token puzzle.

Partition the nodes into *blocks* (the rows of a grid, say). Forget which token is
where and keep only, for every block, how many tokens of each goal block it holds, and
which block the blank is in. A move inside a block changes nothing in this abstract
state; a move across blocks moves the blank to a neighbouring block and one token the
other way. The abstract distance to the goal (counting only moves across blocks)
therefore never exceeds the number of such moves in a real solution. For several
partitions such that no edge crosses blocks in two of them (rows and columns), the
distances add up to a lower bound of the whole solution (K. Takahashi's walking
distance for the 15-puzzle).

The abstract space is enumerated once by BFS here (plain Python over small tuples, so a
family should offer partitions only where that space is small: thousands of states, not
millions). The search then follows abstract states through a transition table.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Sequence

import numpy as np

#: Give up on a partition whose abstract space is larger than this.
MAX_ABSTRACT_STATES = 200_000


@dataclass
class WalkingTable:
    """The abstract space of one partition.

    ``trans[s, j * k + g]`` is the state after the blank moves from its block to the
    ``j``-th neighbouring block while a token of goal block ``g`` moves the other way
    (-1 where impossible); ``dist[s]`` the abstract distance to the goal; ``index`` maps
    the abstract tuple ``(blank block, counts...)`` to its state number; ``goal_block[t]``
    is the block of token ``t``'s goal node.
    """

    blocks: list[int]
    goal_block: list[int]
    classes: int
    neighbour_blocks: list[list[int]]
    trans: np.ndarray
    dist: np.ndarray
    index: dict

    def abstract(self, state: Sequence[int]) -> tuple:
        """The abstract tuple ``(blank block, counts...)`` of a position."""
        k = self.classes
        goal_block = self.goal_block
        counts = [0] * (k * k)
        blank = 0
        for v, t in enumerate(state):
            if t:
                counts[self.blocks[v] * k + goal_block[t]] += 1
            else:
                blank = self.blocks[v]
        return (blank, *counts)

    def code(self, from_block: int, to_block: int, token_class: int) -> int:
        """Transition column for the blank moving ``from_block`` -> ``to_block``."""
        return self.neighbour_blocks[from_block].index(to_block) * self.classes + token_class


def build_walking_table(
    blocks: Sequence[int], neighbors: Sequence[Sequence[int]], goal: Sequence[int]
) -> WalkingTable | None:
    """Enumerate the abstract space of partition ``blocks`` (block id per node) from ``goal``.

    Returns None when it has more than ``MAX_ABSTRACT_STATES`` states.
    """
    k = max(blocks) + 1
    nbrs = [sorted({blocks[u] for v in range(len(blocks)) if blocks[v] == b for u in neighbors[v]} - {b})
            for b in range(k)]
    goal_block = [0] * len(goal)
    for v, t in enumerate(goal):
        goal_block[t] = blocks[v]
    width = max(map(len, nbrs), default=0) * k
    table = WalkingTable(list(blocks), goal_block, k, nbrs, np.zeros((0, width), np.int32), np.zeros(0, np.int8), {})
    start = table.abstract(goal)
    index = {start: 0}
    order = [start]
    edges: list[tuple[int, int, int]] = []
    queue = deque([start])
    dist = [0]
    while queue:
        s = queue.popleft()
        sid = index[s]
        b = s[0]
        for j, nb in enumerate(nbrs[b]):
            for g in range(k):
                if s[1 + nb * k + g] == 0:
                    continue
                t = list(s)
                t[0] = nb
                t[1 + nb * k + g] -= 1
                t[1 + b * k + g] += 1
                t = tuple(t)
                if t not in index:
                    if len(index) >= MAX_ABSTRACT_STATES:
                        return None
                    index[t] = len(order)
                    order.append(t)
                    dist.append(dist[sid] + 1)
                    queue.append(t)
                edges.append((sid, j * k + g, index[t]))
    trans = np.full((len(order), width), -1, dtype=np.int32)
    e = np.array(edges, dtype=np.int64).reshape(-1, 3)
    trans[e[:, 0], e[:, 1]] = e[:, 2]
    if max(dist) > 127:
        return None
    table.trans, table.dist, table.index = trans, np.array(dist, dtype=np.int8), index
    return table


def run_distances(table: WalkingTable) -> np.ndarray:
    """The abstract distances of ``table``'s space where one move is a *run*: single steps
    of the blank in one direction along the blocks (block ids numbered along a line, as
    the rows of a grid), each carrying a token of any class the other way.

    A multi-tile move across ``k`` rows is such a run of ``k`` steps, so these distances
    bound the multi-tile moves across blocks as :attr:`WalkingTable.dist` bounds the
    single ones. Breadth-first from the goal over whole layers (runs reversed are runs).
    """
    k = table.classes
    blank = np.array([s[0] for s in sorted(table.index, key=table.index.get)], dtype=np.int64)
    column = np.full((k, 2), -1, dtype=np.int64)  # first transition column of a step from block b by -1 / +1
    for b, near in enumerate(table.neighbour_blocks):
        for way, to in enumerate((b - 1, b + 1)):
            if to in near:
                column[b, way] = near.index(to) * k
    dist = np.full(len(blank), -1, dtype=np.int64)
    dist[0] = 0
    frontier = np.zeros(1, dtype=np.int64)
    depth = 0
    while len(frontier):
        depth += 1
        reached = []
        for way in (0, 1):
            states = frontier
            while len(states):
                first = column[blank[states], way]
                states = states[first >= 0]
                first = first[first >= 0]
                after = table.trans[states[:, None], first[:, None] + np.arange(k)].reshape(-1)
                states = np.unique(after[after >= 0])
                reached.append(states)
        new = np.unique(np.concatenate(reached)) if reached else frontier[:0]
        frontier = new[dist[new] < 0]
        dist[frontier] = depth
    return dist.astype(np.int8)
