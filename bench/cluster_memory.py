"""A Dask run with each worker's memory limit at its share of the table plus a margin,
then the in-memory engine on the same puzzle as its baseline.

``python -m bench cluster-memory PUZZLE [--workers W] [--over GB] [--no-baseline]`` starts
a local cluster of W worker processes of one thread (default 4), each limited to its
share of the 2-bit table plus ``--over`` GB (default 0.5; the nanny stops a worker past
``dask_cluster.RESTART_AT`` of its limit), explores PUZZLE on it with
``explore_distributed`` (whose check of each worker's memory counts no overhead here: the
limit itself is what is measured), and prints a line per layer and then one JSON object:
the counts, the antipodes, the seconds, the largest worker's peak RSS and that peak less
the share. A worker stopped by its nanny ends the run with the error that says so. Then,
the cluster closed, ``puzzlespace explore PUZZLE --json --threads 2`` as a whole process
(the baseline): its engine seconds and peak RSS, the ratio, and whether the depth counts
agree.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from . import harness  # first: it puts this tree's src on sys.path
import puzzlespace as ps
from puzzlespace.bits import table_bytes
from puzzlespace.explore import dask_cluster
from puzzlespace.explore.cluster import explore_distributed
from puzzlespace.explore.dask_cluster import local_cluster


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench cluster-memory", description=__doc__.splitlines()[0])
    parser.add_argument("puzzle", help="the puzzle explored, e.g. 7x2 (35 min and 11 GB on 2 cores)")
    parser.add_argument("--workers", type=int, default=4, help="worker processes of one thread (default 4)")
    parser.add_argument("--over", type=float, default=0.5, help="GB above a worker's share of the table")
    parser.add_argument("--no-baseline", action="store_true", help="leave out the in-memory run")
    args = parser.parse_args(argv)
    harness.banner("cluster-memory", f"{args.puzzle} on {args.workers} workers, each its share plus {args.over} GB")
    puzzle = ps.load_puzzle(args.puzzle)
    share = -(-table_bytes(puzzle.state_index().size) // args.workers)
    limit = share + int(args.over * 1e9)
    print(f"{args.workers} workers, share {share:,} B, limit {limit:,} B (Dask stops a worker past "
          f"{int(dask_cluster.RESTART_AT * limit):,})", flush=True)

    def line(r) -> None:
        print(f"layer {r.depth}: {r.states:,} states, {r.bytes_between_workers:,} B between workers, "
              f"slowest {r.slowest_seconds:.2f} s", flush=True)

    dask_cluster.WORKER_OVERHEAD = 0  # refuse only a share past the restart line
    with local_cluster(args.workers, threads=1, memory_limit=limit) as client:
        t0 = time.perf_counter()
        result = explore_distributed(puzzle, client, layer_done=line)
        seconds = time.perf_counter() - t0
    print(json.dumps({"puzzle": result.puzzle,
                      "states": result.states, "max_depth": result.max_depth, "depth_counts": result.depth_counts,
                      "antipodes": [list(map(int, a)) for a in result.antipodes], "seconds": round(seconds, 1),
                      "share_bytes": share, "limit_bytes": limit, "peak_memory_bytes": result.peak_memory_bytes,
                      "peak_over_share_bytes": result.peak_memory_bytes - share}), flush=True)
    if not args.no_baseline:
        in_memory(args.puzzle, result.seconds, result.depth_counts)
    return 0


def in_memory(name: str, cluster_seconds: float, depth_counts: list[int]) -> None:
    """The baseline: the whole in-memory command on the same puzzle, beside the cluster's figure."""
    wall, status, rss, out, err = harness.run_measured(
        [sys.executable, "-m", "puzzlespace", "explore", name, "--json", "--threads", "2"],
        env=dict(os.environ, PYTHONPATH=str(harness.SRC)))
    if status:
        raise SystemExit(f"the in-memory run failed ({status}): {err.strip()}")
    base = json.loads(out)
    peak = "-" if rss is None else f"{rss / 2**30:.2f}"
    print(f"in memory: {base['seconds']:.1f} s of engine ({wall:.1f} s wall), peak RSS {peak} GiB; "
          f"cluster / in memory {cluster_seconds / base['seconds']:.2f}; depth counts "
          f"{'agree' if base['depth_counts'] == depth_counts else 'DIFFER'}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
