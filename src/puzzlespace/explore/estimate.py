"""How long exploring a puzzle in memory takes on this machine, from a probe of the engine
itself (:mod:`puzzlespace.calibration` keeps the rate): the engine explores the puzzle's
own state index from the goal until a layer of at least :data:`PROBE_STATES` states is
complete (or the whole space is); an exploration then costs its positions at that last
layer's rate (or is the probe, where the probe explored everything). Puzzles whose table
takes more than :data:`PROBE_TABLE_BYTES` get no estimate."""

from __future__ import annotations

import time

from ..bits import BLOCK_BITS, layer_value, new_blocks, new_table, set2, table_bytes
from ..calibration import Estimate, estimate, rate
from ..compiled import watch
from ..contracts import PuzzleRules as Puzzle
from .engine import run_layers

#: States of the layer a probe ends with (tens of milliseconds).
PROBE_STATES = 1_000_000
#: The largest table (bytes) a probe allocates.
PROBE_TABLE_BYTES = 512 << 20


def exploration_estimate(puzzle: Puzzle, threads: int) -> Estimate | None:
    """The time to explore ``puzzle`` in memory on ``threads`` threads; None where its
    table is too large to probe (see the module docstring)."""
    index = puzzle.state_index()
    if table_bytes(index.size) > PROBE_TABLE_BYTES:
        return None
    positions = puzzle.reachable_count() or index.size
    return estimate(positions * rate(f"exploration {puzzle.identity}", threads, lambda: _probe(puzzle, threads)))


def _probe(puzzle: Puzzle, threads: int) -> tuple[float, int]:
    """(seconds, positions) of the engine's last layer, from the goal until a layer of
    :data:`PROBE_STATES` (or, the space explored, the whole run and every position)."""
    index = puzzle.state_index()
    table, blocks = new_table(index.size), new_blocks(index.size)
    goal = index.rank(puzzle.goal)
    set2(table, goal, layer_value(0))
    blocks[goal >> BLOCK_BITS] = 1
    with watch(f"the exploration of {puzzle.spec}", "exploration") as compiles:
        start = time.perf_counter()
        layers, total = run_layers(index, table, 0, threads, blocks=blocks), 1
        before, t0 = compiles.seconds, time.perf_counter()
        for states in layers:
            total += states
            if states >= PROBE_STATES:
                layers.close()
                return time.perf_counter() - t0 - (compiles.seconds - before), states
            before, t0 = compiles.seconds, time.perf_counter()
        return time.perf_counter() - start - compiles.seconds, total
