"""What a pass on a Dask cluster costs before any work: Dask's floor, to set beside a run's.

``python bench/dask_floor.py [--passes N] [--work S] [--repeat R]`` starts a local cluster
of two workers of one thread each, as ``explore --workers 2`` does (the same settings),
and runs N passes (default 54, 4x3's) of the pattern an exploration on it has: each pass a
task pinned to each worker, which sleeps S seconds (default 0.04: no CPU, so nothing but
Dask's own work competes for the cores) and returns 50 kB for the other worker, and
which waits for both tasks of the pass before. Prints, per repeat, the wall time over
the sleeps' (the wait a pass adds), and the core-seconds of the client process (with the
scheduler and nannies, which a local cluster runs there) and of each worker (a sleep
takes none). Needs the ``cluster`` extra.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import harness

ROOT = Path(__file__).resolve().parent.parent


def step(k: int, seconds: float, *before) -> dict:
    """A pass's task of worker ``k``: the sleep, then 50 kB of marks for the other."""
    time.sleep(seconds)
    return {1 - k: bytes(50_000)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--passes", type=int, default=54)
    ap.add_argument("--work", type=float, default=0.04, help="seconds each task sleeps (default 0.04)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))
    import psutil

    from puzzlespace.explore.dask_cluster import local_cluster

    print(f"# dask_floor: {args.passes} passes of 2 pinned tasks of {args.work} s; {os.cpu_count()} cores, "
          f"{harness.cpu_model()}, load {harness.loadavg()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("| repeat | ms a pass over the sleeps | client + scheduler core-s | worker core-s |")
    print("|---|---|---|---|")
    with local_cluster(2, threads=1) as client:
        workers = sorted(client.nthreads())
        processes = [psutil.Process(pid) for _, pid in sorted(client.run(os.getpid).items())]
        here = psutil.Process()
        for repeat in range(args.repeat):
            before = [harness.core_seconds(p) for p in processes]
            here_before, t0 = harness.core_seconds(here), time.perf_counter()
            last: list = []
            for _ in range(args.passes):
                last = [client.submit(step, k, args.work, *last, workers=[workers[k]], allow_other_workers=False,
                                      pure=False) for k in range(2)]
            client.gather(last)
            over = (time.perf_counter() - t0 - args.passes * args.work) / args.passes
            spent = [harness.core_seconds(p) - b for p, b in zip(processes, before)]
            print(f"| {repeat + 1} | {over * 1000:.1f} | {harness.core_seconds(here) - here_before:.2f} | "
                  f"{', '.join(f'{s:.2f}' for s in spent)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
