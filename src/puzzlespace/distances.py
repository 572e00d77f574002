"""All-pairs distances of a graph, compiled: the distance tables of heuristic search.

Apart from :mod:`puzzlespace.graphs` so that reading a graph's structure (what deciding
whether a position is solvable needs) loads no compiled code.
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True)
def all_pairs(graph, n):
    """Edge distances between every two nodes (-1: unreachable) of the packed CSR graph
    ``graph`` (:func:`~puzzlespace.graphs.pack_graph`: node ``u``'s neighbours are
    ``graph[graph[u]:graph[u + 1]]``), by a breadth-first search from every node."""
    dist = np.full((n, n), -1, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    for s in range(n):
        dist[s, s] = 0
        queue[0] = s
        head, tail = 0, 1
        while head < tail:
            u = queue[head]
            head += 1
            for k in range(graph[u], graph[u + 1]):
                v = graph[k]
                if dist[s, v] < 0:
                    dist[s, v] = dist[s, u] + 1
                    queue[tail] = v
                    tail += 1
    return dist
