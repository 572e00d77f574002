"""Out-of-core and Dask-cluster exploration side by side with the in-memory engine, in one run.

``python -m bench scale [--repeat N] [--segments S] [--workers W] [--full] [PUZZLE ...]``
runs, alternately, ``puzzlespace explore PUZZLE --threads 2 --json`` with the whole table
in memory, the same with ``--segments S --out DIR`` (segment files in a fresh folder
under the system's temporary folder), the marks packed and with ``--marks bitmap``, and,
with ``--workers W``, the exploration on a local Dask cluster of W worker processes of
one thread each (started once, outside the timing, with the settings ``explore
--workers`` gives it), on the puzzles named (default 4x3, 6x2 and flip:7x6); with
``--full``, 7x2 with ``--out DIR --max-memory 3G`` once against one in-memory run.
Prints wall and engine seconds, peak RSS (GNU ``time``; for the cluster, its largest
worker), the ratio to the in-memory time, the bytes sent between workers per state, and
checks that the depth counts agree.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from . import harness

ROOT = Path(__file__).resolve().parent.parent


def run(args: list[str]) -> tuple[float, float, int, dict]:
    """(wall s, engine s, peak RSS bytes, JSON) of one ``puzzlespace`` command."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        t0 = time.perf_counter()
        done = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss.name, sys.executable, "-m", "puzzlespace",
                               *args], capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
        wall = time.perf_counter() - t0
        peak = int(rss.read().split()[-1]) * 1024
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {done.stderr.strip()}")
    result = json.loads(done.stdout)
    return wall, float(result["seconds"]), peak, result


def cluster_run(client, puzzle: str) -> tuple[float, float, int, dict, float]:
    """(wall s, engine s, largest worker's peak RSS, result fields, bytes between workers
    per state) of one exploration on the cluster of ``client``."""
    import puzzlespace as ps
    from puzzlespace.explore.cluster import explore_distributed

    reports = []
    t0 = time.perf_counter()
    result = explore_distributed(ps.load_puzzle(puzzle), client, layer_done=reports.append)
    wall = time.perf_counter() - t0
    between = sum(r.bytes_between_workers for r in reports) / result.states
    return wall, result.seconds, result.peak_memory_bytes, {"depth_counts": result.depth_counts}, between


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench scale", description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per case and mode (default 3)")
    ap.add_argument("--segments", type=int, default=8, help="segments of the out-of-core runs (default 8)")
    ap.add_argument("--workers", type=int, default=0, help="also on a local Dask cluster of this many workers")
    ap.add_argument("--full", action="store_true", help="also 7x2 with --max-memory 3G (about an hour)")
    ap.add_argument("puzzles", nargs="*", default=["4x3", "6x2", "flip:7x6"], help="default: 4x3 6x2 flip:7x6")
    args = ap.parse_args(argv)
    with _cluster(args.workers) as client:
        return _measure(args, client)


@contextmanager
def _cluster(workers: int):
    if not workers:
        yield None
        return
    from puzzlespace.explore.dask_cluster import local_cluster

    with local_cluster(workers, threads=1) as client:
        yield client


def _measure(args, client) -> int:
    harness.banner("scale", f"best of {args.repeat}, the in-memory engine alternated beside each mode")
    print("| case | mode | best wall s | best engine s | peak RSS MiB | / in memory (engine) | bytes between "
          "workers per state |")
    print("|---|---|---|---|---|---|---|")
    cases = [(puzzle, ["--segments", str(args.segments)], args.repeat) for puzzle in args.puzzles]
    if args.full:
        cases.append(("7x2", ["--max-memory", "3G"], 1))
    for puzzle, flags, repeat in cases:
        best = {}
        modes = ["in memory", "out of core", "out of core, --marks bitmap"] + (
            [f"cluster, {args.workers} workers"] if client else [])
        if puzzle == "7x2":
            modes = modes[:2]
        for _ in range(repeat):
            for mode in modes:
                if mode.startswith("cluster"):
                    wall, engine, peak, result, between = cluster_run(client, puzzle)
                    if mode not in best or engine < best[mode][1]:
                        best[mode] = (wall, engine, peak, result["depth_counts"], f"{between:.3f}")
                    continue
                extra = []
                folder = None
                if mode.startswith("out of core"):
                    folder = Path(tempfile.mkdtemp(prefix="puzzlespace-scale-"))
                    extra = flags + ["--out", str(folder / "ck")] + (["--marks", "bitmap"] if "bitmap" in mode else [])
                try:
                    wall, engine, peak, result = run(["explore", puzzle, "--threads", "2", "--json", *extra])
                finally:
                    if folder:
                        shutil.rmtree(folder, ignore_errors=True)
                old = best.get(mode)
                if old is None or engine < old[1]:
                    best[mode] = (wall, engine, peak, result["depth_counts"], "")
        for mode, (wall, engine, peak, counts, between) in best.items():
            assert counts == best["in memory"][3], f"{puzzle}: the depth counts differ ({mode})"
            ratio = f"{engine / best['in memory'][1]:.2f}" if mode != "in memory" else ""
            print(f"| {puzzle} | {mode} {' '.join(flags) if mode.startswith('out of core') else ''} | {wall:.2f} | "
                  f"{engine:.2f} | {peak / 2**20:.0f} | {ratio} | {between} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
