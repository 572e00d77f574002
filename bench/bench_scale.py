"""Out-of-core exploration side by side with the in-memory engine, in one run.

``python bench/bench_scale.py [--repeat N] [--segments S] [--full]`` runs, alternately,
``puzzlespace explore PUZZLE --threads 2 --json`` with the whole table in memory and the
same with ``--segments S --out DIR`` (segment files in a fresh folder under the system's
temporary folder), on 4x3 and 6x2; with ``--full``, 7x2 with ``--out DIR --max-memory 3G``
once against one in-memory run. Prints wall and engine seconds, peak RSS (GNU ``time``),
the ratio of the out-of-core to the in-memory time, and checks that the depth counts agree.
Standard library only.
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
from pathlib import Path

import harness

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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per case and mode (default 3)")
    ap.add_argument("--segments", type=int, default=8, help="segments of the out-of-core runs (default 8)")
    ap.add_argument("--full", action="store_true", help="also 7x2 with --max-memory 3G (about an hour)")
    args = ap.parse_args(argv)
    head = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True).stdout
    print(f"# bench_scale at {head.strip()}; {os.cpu_count()} cores, {harness.cpu_model()}, load {harness.loadavg()}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("| case | mode | best wall s | best engine s | peak RSS MiB | out-of-core / in memory (engine) |")
    print("|---|---|---|---|---|---|")
    cases = [("4x3", ["--segments", str(args.segments)], args.repeat),
             ("6x2", ["--segments", str(args.segments)], args.repeat)]
    if args.full:
        cases.append(("7x2", ["--max-memory", "3G"], 1))
    for puzzle, flags, repeat in cases:
        best = {}
        for _ in range(repeat):
            for mode in ("in memory", "out of core"):
                extra = []
                folder = None
                if mode == "out of core":
                    folder = Path(tempfile.mkdtemp(prefix="puzzlespace-scale-"))
                    extra = flags + ["--out", str(folder / "ck")]
                try:
                    wall, engine, peak, result = run(["explore", puzzle, "--threads", "2", "--json", *extra])
                finally:
                    if folder:
                        shutil.rmtree(folder, ignore_errors=True)
                old = best.get(mode)
                if old is None or engine < old[1]:
                    best[mode] = (wall, engine, peak, result["depth_counts"])
        assert best["in memory"][3] == best["out of core"][3], f"{puzzle}: the depth counts differ"
        for mode, (wall, engine, peak, _) in best.items():
            ratio = f"{engine / best['in memory'][1]:.2f}" if mode == "out of core" else ""
            print(f"| {puzzle} | {mode} {' '.join(flags) if mode == 'out of core' else ''} | {wall:.2f} | "
                  f"{engine:.2f} | {peak / 2**20:.0f} | {ratio} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
