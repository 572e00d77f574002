"""Two versions of puzzlespace side by side: whole commands, alternated, in one run.

``python -m bench ab --base REV [--repeat N] [CASE ...]`` checks ``REV`` out into a
temporary git worktree and runs each case's command with that tree's ``src`` and with a
copy of this tree's ``src`` taken at the start (edits during the run do not count) on
``PYTHONPATH``, alternately (base, this, base, this, ...), so a
slow moment of a shared machine falls on both. One warm-up run of each fills numba's
cache first. Prints, per case and version, the best and the median wall time of the
whole process and of the engine (the ``seconds`` of ``explore --json``; for pattern
builds the whole process), and the ratio this / base of the best times.

Cases (default: all): ``4x3``, ``6x2``, ``flip:5x5`` (``explore PUZZLE --threads 2
--json``), ``4x3-segments`` and ``6x2-segments`` (the same with ``--segments 8 --out``,
in files under the version's cache folder), ``flip:6x6-segments`` (``--segments 6``: a
quarter of its moves cross segments), ``4x3-workers`` and ``6x2-workers`` (on a
local Dask cluster of two workers of one thread each; the engine time leaves out the
cluster's start), ``3x3-workers-32-segments`` and ``6x2-workers-16-segments`` (the same
with many segments a worker, the latter in files) and
``pdb-6-6-3`` (``pdb build 4x4 --heuristic pdb:6-6-3 --rebuild`` into a fresh cache
folder), ``korf100`` (``batch`` of Korf's 100 with the default databases, built in the
warm-up) and ``jump:8-batch`` (``batch`` of ``bench/data/jump8_20.txt``, the walking
bound): their engine time is the search seconds ``batch`` prints, summed over threads.
Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import harness

ROOT = harness.ROOT
CASES = {
    "4x3": ["explore", "4x3", "--threads", "2", "--json"],
    "6x2": ["explore", "6x2", "--threads", "2", "--json"],
    "flip:5x5": ["explore", "flip:5x5", "--threads", "2", "--json"],
    "pdb-6-6-3": ["pdb", "build", "4x4", "--heuristic", "pdb:6-6-3", "--rebuild", "--threads", "2"],
    "4x3-segments": ["explore", "4x3", "--threads", "2", "--json", "--segments", "8", "--out", "{cache}/ck-4x3", "--force"],
    "6x2-segments": ["explore", "6x2", "--threads", "2", "--json", "--segments", "8", "--out", "{cache}/ck-6x2", "--force"],
    "flip:6x6-segments": ["explore", "flip:6x6", "--threads", "2", "--json", "--segments", "6", "--out",
                          "{cache}/ck-flip", "--force"],
    "korf100": ["batch", "4x4", "examples/korf100.txt", "--goal", " ".join(map(str, range(16))), "--threads", "2",
                "-o", os.devnull],
    "jump:8-batch": ["batch", "jump:8", "bench/data/jump8_20.txt", "--threads", "2", "-o", os.devnull],
    "4x3-workers": ["explore", "4x3", "--workers", "2", "--threads", "1", "--json"],
    "6x2-workers": ["explore", "6x2", "--workers", "2", "--threads", "1", "--json"],
    "3x3-workers-32-segments": ["explore", "3x3", "--workers", "2", "--threads", "1", "--segments", "32", "--json"],
    "6x2-workers-16-segments": ["explore", "6x2", "--workers", "2", "--threads", "1", "--segments", "16", "--out",
                                "{cache}/ck-6x2-workers", "--json", "--force"],
}


def run(src: Path, args: list[str], cache: Path) -> tuple[float, float]:
    """Wall seconds of the whole command and of its engine (``seconds`` in its JSON, else the wall)."""
    env = dict(os.environ, PYTHONPATH=str(src), PUZZLESPACE_CACHE=str(cache))
    t0 = time.perf_counter()
    args = [a.replace("{cache}", str(cache)) for a in args]
    done = subprocess.run([sys.executable, "-m", "puzzlespace", *args], env=env, capture_output=True, text=True,
                          cwd=ROOT)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed with {src}: {done.stderr.strip()}")
    try:
        engine = float(json.loads(done.stdout)["seconds"])
    except (ValueError, KeyError, TypeError):
        searching = re.search(r"([0-9.]+) s searching", done.stderr)  # batch's totals
        engine = float(searching.group(1)) if searching else wall
    return wall, engine


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench ab", description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the commit to compare with")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per case and version (default 5)")
    ap.add_argument("cases", nargs="*", default=list(CASES), help=f"cases (default: {' '.join(CASES)})")
    args = ap.parse_args(argv)
    unknown = [c for c in args.cases if c not in CASES]
    if unknown:
        ap.error(f"unknown case(s) {unknown}; choose from {list(CASES)}")
    base_rev = subprocess.run(["git", "rev-parse", "--short", args.base], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
    harness.banner("ab", f"base {base_rev} against this tree (src {harness.src_digest(ROOT / 'src')})")
    with tempfile.TemporaryDirectory(prefix="puzzlespace-ab-") as tmp, harness.worktree(base_rev) as tree:
        this = Path(tmp) / "this"
        shutil.copytree(ROOT / "src", this, ignore=shutil.ignore_patterns("__pycache__"))
        versions = {"base": tree / "src", "this": this}
        print("| case | version | best wall s | median wall s | best engine s | median engine s |")
        print("|---|---|---|---|---|---|")
        for case in args.cases:
            times: dict[str, list[tuple[float, float]]] = {v: [] for v in versions}
            for name, src in versions.items():  # warm-up: numba's cache
                run(src, CASES[case], Path(tmp) / f"cache-{name}")
            for _ in range(args.repeat):
                for name, src in versions.items():
                    times[name].append(run(src, CASES[case], Path(tmp) / f"cache-{name}"))
            for name in versions:
                walls, engines = [t[0] for t in times[name]], [t[1] for t in times[name]]
                print(f"| {case} | {name} | {min(walls):.3f} | {statistics.median(walls):.3f} | "
                      f"{min(engines):.3f} | {statistics.median(engines):.3f} |")
            ratio = min(t[1] for t in times["this"]) / min(t[1] for t in times["base"])
            print(f"| {case} | this / base | | | {ratio:.3f} | |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
