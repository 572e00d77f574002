"""What a pass on a Dask cluster costs to schedule, by the number of segments.

``python bench/cluster_segments.py [--puzzle 3x3] [--workers 2] [SEGMENTS ...]`` starts a
local cluster of W worker processes of one thread, explores the puzzle once to warm the
workers, then once for each number of segments (default 2 8 32 128 354: 3x3's most),
and prints a Markdown table: segments, passes, engine seconds and milliseconds a visit.
3x3's layers hold almost no work, so the time is the scheduling of the passes' tasks.
The results are checked against the first run's counts.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import harness  # noqa: E402
import puzzlespace as ps  # noqa: E402
from puzzlespace.explore.cluster import explore_distributed  # noqa: E402
from puzzlespace.explore.dask_cluster import local_cluster  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("segments", nargs="*", type=int, default=[2, 8, 32, 128, 354])
    parser.add_argument("--puzzle", default="3x3")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    print(f"# {args.puzzle} on {args.workers} workers of one thread; {os.cpu_count()} cores, {harness.cpu_model()}, "
          f"load {harness.loadavg()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("| segments | passes | engine s | ms a visit |\n|---|---|---|---|")
    with local_cluster(args.workers, threads=1) as client:
        first = explore_distributed(ps.load_puzzle(args.puzzle), client)
        for n in args.segments:
            t0 = time.perf_counter()
            result = explore_distributed(ps.load_puzzle(args.puzzle), client, segments=n)
            seconds = time.perf_counter() - t0
            if result.depth_counts != first.depth_counts:
                raise SystemExit(f"{n} segments: the counts differ from the first run's")
            passes = result.max_depth + 1
            print(f"| {n} | {passes} | {seconds:.2f} | {1000 * seconds / (passes * n):.2f} |", flush=True)


if __name__ == "__main__":
    main()
