"""Puzzles and positions the tests share: graphs with and without invariants, random solvable starts."""

import itertools
import random

from puzzlespace.graphs import Graph


def random_walk(p, start, moves: int, rng) -> list:
    """Every position of ``moves`` random moves of a token puzzle from ``start``, the blank
    never going straight back (``rng``: a NumPy Generator)."""
    path, back = [start], None
    for _ in range(moves):
        state = path[-1]
        choices = [m for m in p.moves(state) if m != back]
        back = state.index(0)
        path.append(p.apply(state, choices[int(rng.integers(len(choices)))]))
    return path


def random_solvable(p, rng: random.Random):
    while True:
        cells = list(range(p.n_cells))
        rng.shuffle(cells)
        if p.check(tuple(cells)).solvable:
            return tuple(cells)


def random_connected_graph(rng: random.Random, n: int, extra: int) -> Graph:
    nodes = list(range(n))
    rng.shuffle(nodes)
    edges = {tuple(sorted((nodes[i], nodes[rng.randrange(i)]))) for i in range(1, n)}  # a random tree
    pairs = [p for p in itertools.combinations(range(n), 2) if p not in edges]
    edges |= set(rng.sample(pairs, min(extra, len(pairs))))
    return Graph(n, tuple(sorted(edges)))


def theta(a: int, b: int, c: int) -> Graph:
    """Two hubs joined by three paths with a, b and c inner nodes."""
    edges, n = [], 2
    for inner in (a, b, c):
        chain = [0] + list(range(n, n + inner)) + [1]
        n += inner
        edges += list(zip(chain, chain[1:]))
    return Graph(n, tuple(edges))


def graphs_under_test():
    rng = random.Random(20261122)
    graphs = [
        Graph(5, tuple((i, (i + 1) % 5) for i in range(5))),  # cycle
        Graph(6, tuple((i, (i + 1) % 6) for i in range(6))),  # even cycle
        Graph(6, ((0, 1), (1, 2), (2, 3), (3, 4), (4, 5))),  # path
        Graph(7, ((0, 1), (0, 2), (0, 3), (3, 4), (3, 5), (5, 6))),  # tree
        theta(1, 2, 2),  # theta-0
        theta(1, 1, 2),
        theta(0, 2, 2),
        theta(0, 1, 3),
        theta(1, 1, 1),
    ]
    while len(graphs) < 30:
        n = rng.randint(3, 8)
        graphs.append(random_connected_graph(rng, n, rng.randint(0, n)))
    return graphs


def whole_or_sample(size: str, *more) -> list:
    """Parameters ``(size, sample, *more)`` for a check over a board's whole space: by
    default a seeded sample of it (see :func:`positions_checked`), in the slow run every
    position (``sample`` None)."""
    import pytest

    tail = "".join(f"-{value}" for value in more)
    return [pytest.param(size, SAMPLE, *more, id=f"{size}-sample{tail}"),
            pytest.param(size, None, *more, id=f"{size}{tail}", marks=pytest.mark.slow)]


#: Positions a sampled check takes, beside the farthest layer.
SAMPLE = 15_000


def positions_checked(dist: dict, sample: int | None) -> list:
    """(position, distance) pairs of ``dist`` a check goes over: all of them, or (``sample``)
    the farthest layer and ``sample`` others drawn with a fixed seed."""
    items = sorted(dist.items())
    if sample is None or sample >= len(items):
        return items
    far = max(dist.values())
    return [*(item for item in items if item[1] == far), *random.Random(0).sample(items, sample)]


def examples(count: int):
    """Hypothesis settings of ``count`` examples for a property test whose examples are
    costly, scaled like the profile's (six times as many in the slow run)."""
    from hypothesis import settings

    return settings(max_examples=max(1, count * settings.default.max_examples // 50), deadline=None)


def saved_tablebase(name: str, folder):
    """The tablebase of the puzzle ``name``, explored, saved in ``folder`` and loaded."""
    import puzzlespace as ps
    from puzzlespace.explore import explore, tablebase

    p = ps.load_puzzle(name)
    result = explore(p, keep_table=True)
    tablebase.save(folder / "t.pstb", p, p.state_index(), result.table, result.depth_counts)
    return tablebase.load(folder / "t.pstb", p)
