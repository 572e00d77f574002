"""Random positions, all distinct: uniform over the solvable ones, or uniform at an exact depth.

``count`` positions are drawn without replacement (a uniformly random subset, in random
order); asking for more than exist is an error that says how many there are.
"""

from __future__ import annotations

import numpy as np

from ..errors import PuzzleError
from ..contracts import PuzzleRules as Puzzle, State
from ..bits import collect_layer, layer_value, nth_in_layer

#: Above this many expected draws per accepted position, sample from an enumerated layer.
MAX_EXPECTED_DRAWS = 20_000


def random_solvable(puzzle: Puzzle, rng: np.random.Generator) -> State:
    """A uniformly random position that can reach the goal (the family's own draw)."""
    return puzzle.random_position(rng)


def distinct_solvable(puzzle: Puzzle, count: int, rng: np.random.Generator) -> list[State]:
    """``count`` distinct uniformly random positions that can reach the goal."""
    total = puzzle.reachable_count()
    if total is not None and count > total:
        raise PuzzleError(f"only {total:,} positions can reach the goal; ask for --count {total:,} or fewer")
    if total is not None and count > total // 2:
        index = puzzle.state_index()
        picks = rng.choice(index.size, size=index.size, replace=False)
        states = (index.unrank(int(r)) for r in picks)
        return [s for s in states if index.minimal or puzzle.check(s).solvable][:count]
    return _distinct(lambda: random_solvable(puzzle, rng), count)


def _distinct(draw, count: int) -> list[State]:
    """The first ``count`` distinct results of ``draw()``."""
    seen: dict[State, None] = {}
    while len(seen) < count:
        seen.setdefault(draw(), None)
    return list(seen)


def random_at_depth(puzzle: Puzzle, depth: int, count: int, rng: np.random.Generator, tablebase=None,
                    threads: int | None = None) -> list[State]:
    """``count`` distinct uniform draws among the positions exactly ``depth`` moves from the goal.

    With a tablebase, a depth that is not rare and a count well below the layer's size,
    draws uniformly and keeps those whose descent has the right length; otherwise
    enumerates the layer (BFS up to ``depth``) and draws from it without replacement.
    """
    if depth < 0:
        raise PuzzleError("--depth must be at least 0")
    if tablebase is not None:
        counts = tablebase.depth_counts
        if depth >= len(counts):
            raise PuzzleError(f"no position is {depth} moves from the goal (God's number is {len(counts) - 1})")
        _check_layer(counts[depth], count, depth)
        if tablebase.index.size / counts[depth] <= MAX_EXPECTED_DRAWS and count <= counts[depth] // 2:
            def draw() -> State:
                while True:
                    s = random_solvable(puzzle, rng)
                    if tablebase.entry(s) == depth % 3 and tablebase.distance(s) == depth:
                        return s

            return _distinct(draw, count)
    from .engine import explore

    _check_enumerable(puzzle, threads)
    layer = explore(puzzle, threads=threads, antipode_limit=0, stop_at_depth=depth)
    if layer.max_depth < depth:
        raise PuzzleError(f"no position is {depth} moves from the goal (God's number is {layer.max_depth})")
    total = layer.depth_counts[depth]
    _check_layer(total, count, depth)
    picks = np.sort(rng.choice(total, size=count, replace=False))
    index = puzzle.state_index()
    table, value = layer.search_table, layer_value(depth)
    found = np.empty(total if total <= 10_000_000 else 0, dtype=np.int64)
    if len(found):
        collect_layer(table, 0, index.size, value, found)
        chosen = found[picks]
    else:
        chosen = [nth_in_layer(table, index.size, value, int(k)) for k in picks]
    states = [index.unrank(int(i)) for i in chosen]
    order = rng.permutation(len(states))
    return [states[i] for i in order]


def _check_layer(total: int, count: int, depth: int) -> None:
    if count > total:
        raise PuzzleError(f"only {total:,} position{'s are' if total != 1 else ' is'} exactly {depth} moves from the "
                          f"goal; ask for --count {total:,} or fewer")


def _check_enumerable(puzzle: Puzzle, threads: int | None) -> None:
    """PuzzleError, in a generator's terms, unless the layers up to a depth fit memory to be enumerated."""
    import os

    from ..resources import available_memory, human
    from .engine import plan

    need = plan(puzzle.state_index(), threads or os.cpu_count() or 1, False).memory
    if need > available_memory():
        raise PuzzleError(f"drawing at an exact depth without a tablebase enumerates the layers up to it, which for "
                          f"{puzzle.spec} takes about {human(need)} of memory ({human(available_memory())} available); "
                          "draw without --depth, or on a puzzle that fits")
