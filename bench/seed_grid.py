"""The W x H grid shared by the plain-Python baselines (``seed_bfs.py``, ``seed_ida.py``).

No numpy, no numba, no puzzlespace: CPython (or PyPy) only.
"""

from __future__ import annotations

__all__ = ["grid_neighbours"]


def grid_neighbours(width: int, height: int) -> list[list[int]]:
    """Neighbour cells of each cell of a row-major ``width`` x ``height`` grid.

    Each list is in increasing cell order (up, left, right, down), as in the seed's tables.
    """
    adjacent = []
    for cell in range(width * height):
        r, c = divmod(cell, width)
        nbrs = []
        if r > 0:
            nbrs.append(cell - width)
        if c > 0:
            nbrs.append(cell - 1)
        if c < width - 1:
            nbrs.append(cell + 1)
        if r < height - 1:
            nbrs.append(cell + width)
        adjacent.append(nbrs)
    return adjacent
