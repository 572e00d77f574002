"""A Dask run with each worker's memory limit at its share of the table plus a margin.

``python bench/cluster_memory.py PUZZLE [--workers W] [--over GB]`` starts a local cluster
of W worker processes of one thread (default 4), each limited to its share of the 2-bit
table plus ``--over`` GB (default 0.5, the scale-out target; the nanny stops a worker
past ``dask_cluster.RESTART_AT`` of its limit), explores PUZZLE on it with
``explore_distributed`` (whose check
of each worker's memory counts no overhead here: the limit itself is what is
measured), prints a line per layer and then one JSON
object: the counts, the antipodes, the seconds, the largest worker's peak RSS and that
peak less the share. A worker stopped by its nanny ends the run with the error that says
so. The counts are checked against the published ones by the caller (see
``docs/benchmarks.md``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import puzzlespace as ps  # noqa: E402
from puzzlespace.bits import table_bytes  # noqa: E402
from puzzlespace.explore import dask_cluster  # noqa: E402
from puzzlespace.explore.cluster import explore_distributed  # noqa: E402
from puzzlespace.explore.dask_cluster import local_cluster  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("puzzle")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--over", type=float, default=0.5, help="GB above a worker's share of the table")
    args = parser.parse_args()
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
                      "peak_over_share_bytes": result.peak_memory_bytes - share}))


if __name__ == "__main__":
    main()
