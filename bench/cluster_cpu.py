"""Where an exploration on a local Dask cluster spends its cores, beside the in-memory engine.

``python bench/cluster_cpu.py [--repeat N] [--workers W] [PUZZLE]`` explores PUZZLE
(default 4x3) in this process with the in-memory engine on as many threads as the
machine has cores, and on a local cluster of W worker processes (default 2) of one
thread each, started once with the settings ``explore --workers`` gives it; both are run
once unmeasured (the compiled code loaded, the cluster warmed), then alternately N times
(default 5). Per run it prints the engine seconds and the core-seconds (user + system)
each process spent: this one (for the cluster: the client, with the scheduler and the
nannies a local cluster runs here) and each worker. With every core busy, a run's wall
time cannot be under its core-seconds over the cores: so the ratio of the two modes'
core-seconds (medians) is the least their engine times' ratio can be on this machine,
before any wait. Needs the ``cluster`` extra.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import harness

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="measured runs of each mode (default 5)")
    ap.add_argument("--workers", type=int, default=2, help="worker processes of the cluster (default 2)")
    ap.add_argument("puzzle", nargs="?", default="4x3")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))
    import psutil

    import puzzlespace as ps
    from puzzlespace.explore.cluster import explore_distributed
    from puzzlespace.explore.dask_cluster import local_cluster
    from puzzlespace.explore.engine import explore

    puzzle, me, cores = ps.load_puzzle(args.puzzle), psutil.Process(), os.cpu_count()
    print(f"# cluster_cpu: {args.puzzle}, in memory on {cores} threads against {args.workers} workers of one "
          f"thread; {cores} cores, {harness.cpu_model()}, load {harness.loadavg()}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("| run | mode | engine s | core-s | this process core-s | each worker core-s |")
    print("|---|---|---|---|---|---|")
    with local_cluster(args.workers, threads=1, puzzle=puzzle) as client:
        workers = [psutil.Process(pid) for pid in client.run(os.getpid).values()]
        modes = {"in memory": (lambda: explore(puzzle, threads=cores, antipode_limit=1), []),
                 "cluster": (lambda: explore_distributed(puzzle, client, antipode_limit=1), workers)}
        seen = {mode: ([], []) for mode in modes}
        for run in range(args.repeat + 1):
            for mode, (explore_once, others) in modes.items():
                before = [harness.core_seconds(me)] + [harness.core_seconds(w) for w in others]
                result = explore_once()
                spent = [harness.core_seconds(p) - b for p, b in zip([me, *others], before)]
                if run == 0:
                    continue
                seen[mode][0].append(result.seconds)
                seen[mode][1].append(sum(spent))
                each = ", ".join(f"{s:.2f}" for s in spent[1:]) or "-"
                print(f"| {run} | {mode} | {result.seconds:.3f} | {sum(spent):.2f} | {spent[0]:.2f} | {each} |",
                      flush=True)
    (t_mem, c_mem), (t_cl, c_cl) = ((statistics.median(t), statistics.median(c)) for t, c in seen.values())
    print(f"\nmedians: in memory {t_mem:.3f} s and {c_mem:.2f} core-s, cluster {t_cl:.3f} s and {c_cl:.2f} core-s; "
          f"cluster / in memory: engine time {t_cl / t_mem:.2f}, core-seconds {c_cl / c_mem:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
