"""Optimal solving in the multi-tile metric, beside the single-tile metric on the same positions.

``python -m bench mtm-solve [--count 20] [--seed 45] [--limit 900] [--skip-antipodes] [--skip-transposed]``

1. Every antipode of ``4x3:mtm`` (radius 33, from ``explore``) solved by IDA* with the
   default bound (``patterns``): seconds each (max, mean) and nodes; beside it the same
   positions solved in the single-tile metric (``4x3``, its default databases).
2. The transposed goal ``1 5 9 13/2 6 10 14/3 7 11 15/4 8 12 0`` of ``4x4:mtm`` with
   ``pdb:6-6-3`` (split and projection tables of line moves, built or read from the
   cache outside the timing): length, seconds, nodes; beside it the same position in
   the single-tile metric.
3. ``--count`` random 15-puzzle positions (``--seed``) in both metrics the same way: mean
   and max seconds, mean length, nodes.
4. The same positions in ``4x4:mtm`` with ``pdb:6-6-3`` read for the position alone, the
   baseline of the default, which reads them for its reflection in the main diagonal too.
Each solve is stopped after ``--limit`` seconds.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

import numpy as np

from . import harness  # first: it puts this tree's src on sys.path
import puzzlespace as ps
from puzzlespace.explore import explore
from puzzlespace.solver import plan_solving

TRANSPOSED = (1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, 4, 8, 12, 0)


def solve_each(name: str, heuristic: str, starts: list, limit: float, reflected: bool = True) -> list:
    """Solutions of ``starts`` on ``name`` with ``heuristic``, its tables ready first (not
    ``reflected``: its tables read for the position alone)."""
    p = ps.load_puzzle(name)
    t0 = time.perf_counter()
    plan = plan_solving(p, "ida", heuristic).ready()
    print(f"  {name} {plan.heuristic}: tables ready in {time.perf_counter() - t0:.1f} s", flush=True)
    if not reflected:
        alone = dataclasses.replace(plan.problem, mirror=None)
        return [ps.solve(p, s, problem=alone, time_limit=limit) for s in starts]
    return [ps.solve(p, s, plan=plan, time_limit=limit) for s in starts]


def summary(label: str, sols: list) -> str:
    secs = [s.seconds for s in sols]
    return (f"{label}: {len(sols)} solved, lengths {statistics.mean(s.length for s in sols):.2f} mean, "
            f"{statistics.mean(secs):.3f} s mean, {max(secs):.3f} s max, "
            f"{statistics.mean(s.nodes for s in sols):,.0f} nodes mean")


def side_by_side(title: str, starts: list, mtm: tuple, stm: tuple, limit: float, reflected: bool = True) -> None:
    print(f"## {title}", flush=True)
    ours = solve_each(*mtm, starts, limit)
    print(summary(f"  figure   {mtm[0]} {mtm[1]}", ours), flush=True)
    base = solve_each(*stm, starts, limit, reflected)
    print(summary(f"  baseline {stm[0]} {stm[1]}{'' if reflected else ', the position alone'}", base), flush=True)
    print(f"  ratio (baseline mean s / figure mean s): "
          f"{statistics.mean(s.seconds for s in base) / max(statistics.mean(s.seconds for s in ours), 1e-9):.2f}")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench mtm-solve", description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--seed", type=int, default=45)
    ap.add_argument("--limit", type=float, default=900.0)
    ap.add_argument("--skip-antipodes", action="store_true")
    ap.add_argument("--skip-transposed", action="store_true")
    args = ap.parse_args(argv)
    harness.banner("mtm-solve", " ".join(argv))
    if not args.skip_antipodes:
        t0 = time.perf_counter()
        antipodes = explore(ps.load_puzzle("4x3:mtm"), antipode_limit=1000).antipodes
        print(f"(explore 4x3:mtm for its {len(antipodes)} antipodes: {time.perf_counter() - t0:.0f} s)")
        side_by_side("4x3:mtm antipodes (33 moves)", antipodes, ("4x3:mtm", "auto"), ("4x3", "auto"), args.limit)
    if not args.skip_transposed:
        side_by_side("the transposed 15-puzzle goal (43 moves)", [TRANSPOSED], ("4x4:mtm", "pdb:6-6-3"),
                     ("4x4", "auto"), args.limit)
    p = ps.load_puzzle("4x4:mtm")
    rng = np.random.default_rng(args.seed)
    starts = [p.random_position(rng) for _ in range(args.count)]
    side_by_side(f"{args.count} random 15-puzzle positions (seed {args.seed})", starts,
                 ("4x4:mtm", "pdb:6-6-3"), ("4x4", "auto"), args.limit)
    side_by_side(f"the same {args.count} in 4x4:mtm, the reflection read or not", starts,
                 ("4x4:mtm", "pdb:6-6-3"), ("4x4:mtm", "pdb:6-6-3"), args.limit, reflected=False)
    return 0
