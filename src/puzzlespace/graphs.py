"""Small undirected graphs: the structure facts that puzzle rules and invariants need.

A :class:`Graph` has nodes ``0..n-1`` and a sorted neighbour tuple per node. It is built
once per puzzle (never per state), so plain Python is fine here.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from functools import cached_property
from typing import Sequence

import numpy as np

from .errors import PuzzleError


@dataclass(frozen=True)
class Graph:
    """An undirected simple graph on nodes ``0..n-1``.

    Parameters
    ----------
    n : int
        Number of nodes.
    edges : tuple of (int, int)
        Each unordered edge once; no self-loops, no duplicates (checked).
    """

    n: int
    edges: tuple[tuple[int, int], ...]
    neighbors: tuple[tuple[int, ...], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        adj: list[set[int]] = [set() for _ in range(self.n)]
        for a, b in self.edges:
            if not (0 <= a < self.n and 0 <= b < self.n):
                raise PuzzleError(f"edge ({a}, {b}) names a node outside 0..{self.n - 1}")
            if a == b:
                raise PuzzleError(f"self-loop at node {a}")
            if b in adj[a]:
                raise PuzzleError(f"duplicate edge ({a}, {b})")
            adj[a].add(b)
            adj[b].add(a)
        object.__setattr__(self, "neighbors", tuple(tuple(sorted(s)) for s in adj))

    def distances_from(self, source: int) -> list[int]:
        """Edge distances from ``source`` to every node (-1 where unreachable)."""
        dist = [-1] * self.n
        dist[source] = 0
        queue = deque([source])
        while queue:
            u = queue.popleft()
            for v in self.neighbors[u]:
                if dist[v] < 0:
                    dist[v] = dist[u] + 1
                    queue.append(v)
        return dist

    @cached_property
    def distance_matrix(self) -> list[list[int]]:
        """All-pairs edge distances (``-1`` for unreachable pairs), by compiled code (:mod:`puzzlespace.distances`)."""
        from .distances import all_pairs

        graph = pack_graph(self.neighbors)
        return all_pairs(graph, self.n).tolist()

    @cached_property
    def is_connected(self) -> bool:
        return self.n > 0 and min(self.distances_from(0)) >= 0

    @cached_property
    def colouring(self) -> list[int] | None:
        """A proper 2-colouring (0/1 per node) if the graph is bipartite, else None."""
        colour = [-1] * self.n
        for s in range(self.n):
            if colour[s] >= 0:
                continue
            colour[s] = 0
            queue = deque([s])
            while queue:
                u = queue.popleft()
                for v in self.neighbors[u]:
                    if colour[v] < 0:
                        colour[v] = 1 - colour[u]
                        queue.append(v)
                    elif colour[v] == colour[u]:
                        return None
        return colour

    @property
    def is_bipartite(self) -> bool:
        return self.colouring is not None

    @cached_property
    def articulation_points(self) -> frozenset[int]:
        """Cut vertices (iterative Hopcroft-Tarjan, so deep graphs do not hit recursion limits)."""
        disc = [-1] * self.n
        low = [0] * self.n
        cuts: set[int] = set()
        timer = 0
        for root in range(self.n):
            if disc[root] >= 0:
                continue
            disc[root] = low[root] = timer
            timer += 1
            root_children = 0
            stack = [(root, -1, iter(self.neighbors[root]))]
            while stack:
                u, parent, it = stack[-1]
                advanced = False
                for v in it:
                    if disc[v] < 0:
                        disc[v] = low[v] = timer
                        timer += 1
                        if u == root:
                            root_children += 1
                        stack.append((v, u, iter(self.neighbors[v])))
                        advanced = True
                        break
                    if v != parent:
                        low[u] = min(low[u], disc[v])
                if advanced:
                    continue
                stack.pop()
                if stack:
                    p = stack[-1][0]
                    low[p] = min(low[p], low[u])
                    if p != root and low[u] >= disc[p]:
                        cuts.add(p)
            if root_children > 1:
                cuts.add(root)
        return frozenset(cuts)

    @property
    def is_biconnected(self) -> bool:
        """Connected, at least 3 nodes, and no cut vertex."""
        return self.n >= 3 and self.is_connected and not self.articulation_points

    @property
    def is_cycle(self) -> bool:
        return self.n >= 3 and self.is_connected and all(len(a) == 2 for a in self.neighbors)

    @property
    def is_path(self) -> bool:
        return (
            self.is_connected
            and len(self.edges) == self.n - 1
            and all(len(a) <= 2 for a in self.neighbors)
        )

    def cycle_order(self) -> list[int]:
        """Nodes in walking order; the graph must be a cycle or a path (a path starts at an end)."""
        start = next((v for v in range(self.n) if len(self.neighbors[v]) < 2), 0)
        order, prev = [start], -1
        while len(order) < self.n:
            u = order[-1]
            nxt = next(v for v in self.neighbors[u] if v != prev)
            prev = u
            order.append(nxt)
        return order

    @cached_property
    def is_theta0(self) -> bool:
        """Wilson's exceptional graph: two degree-3 nodes joined by paths of 2, 3 and 3 edges."""
        if self.n != 7 or len(self.edges) != 8:
            return False
        hubs = [v for v in range(self.n) if len(self.neighbors[v]) == 3]
        if len(hubs) != 2 or any(len(a) != 2 for v, a in enumerate(self.neighbors) if v not in hubs):
            return False
        lengths = []
        for first in self.neighbors[hubs[0]]:
            prev, u, length = hubs[0], first, 1
            while u not in hubs:
                prev, u = u, next(v for v in self.neighbors[u] if v != prev)
                length += 1
            if u != hubs[1]:
                return False
            lengths.append(length)
        return sorted(lengths) == [2, 3, 3]


def pack_graph(neighbors: Sequence[Sequence[int]]) -> np.ndarray:
    """CSR neighbour lists in one int64 array: ``ptr`` (n+1 entries, offset past themselves)
    then ``adj``; the neighbours of ``v`` are ``graph[graph[v]:graph[v+1]]``."""
    n = len(neighbors)
    ptr = np.zeros(n + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(a) for a in neighbors])
    adj = np.array([v for a in neighbors for v in a], dtype=np.int64)
    return np.concatenate([ptr + n + 1, adj])
