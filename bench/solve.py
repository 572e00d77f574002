"""Optimal solving: puzzlespace beside the plain-Python seed IDA*, in one process.

``python -m bench solve [--full] [--cap S] [--repeat N] [--heuristic H] [--csv FILE]``
runs side by side:

(a) the baseline (``bench/seed_ida.py``: CPython IDA*, Manhattan bound, the seed page's
    method) on the 3x3 instance ``8 6 7 2 5 4 3 0 1`` (31 moves) and on the 4x3 instance
    ``0 3 2 1 8 7 6 5 4 11 10 9`` (53 moves). The 4x3 run takes minutes in CPython, so it
    runs to the end only with ``--full``; without it, it starts no new pass after
    ``--cap`` seconds and its row shows its node rate and the last bound finished;
(b) puzzlespace through its API (``ps.solve``) on the same instances, after one warm-up
    solve of a short instance (numba's cache load and the table build not counted);
    best and median of ``--repeat`` warm solves;
(c) the whole ``puzzlespace solve ... --quiet`` command (interpreter start, imports,
    numba cache load, solve, print), best of 3 after one warm-up run; on 3x3 the baseline
    is also timed as a whole process (``python -m bench.seed_ida ...``) to match.

It measures a copy of ``src/puzzlespace`` taken as it starts (``--live``: the tree in
place), so that edits during the run cannot mix versions; the copy's digest is printed.
It pins itself to one CPU (``--no-pin`` to leave it), and the children inherit that.
Prints the rows (case, length, nodes, seconds, nodes/s, speed-up over the baseline on
the same instance); ``--csv FILE`` writes them too.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from . import seed_ida
from .harness import (
    ROOT, SRC, cli_executable, cpu_model, fmt_int, fmt_rate, fmt_s, loadavg, pin_one_cpu, snapshot_package,
    src_digest, time_process,
)

LIVE_SRC = SRC / "puzzlespace"

INSTANCES = {
    "3x3": {
        "size": (3, 3),
        "start": "8 6 7 2 5 4 3 0 1",
        "cli": "8 6 7/2 5 4/3 0 1",
        "optimal": 31,
        "warm": "1 2 3 4 0 5 7 8 6",  # 2 moves from the goal
    },
    "4x3": {
        "size": (4, 3),
        "start": "0 3 2 1 8 7 6 5 4 11 10 9",
        "cli": "0 3 2 1/8 7 6 5/4 11 10 9",
        "optimal": 53,
        "warm": "1 2 3 4 5 0 6 7 9 10 11 8",  # 3 moves from the goal
    },
}


# --------------------------------------------------------------------------- rows

class Row:
    def __init__(self, case, instance, length, nodes, seconds, *, search_s=None, baseline=None,
                 finished=True, note=""):
        self.case, self.instance = case, instance
        self.length, self.nodes, self.seconds = length, nodes, seconds
        self.search_s = search_s
        self.baseline = baseline  # the baseline Row on the same instance, if any
        self.finished = finished
        self.note = note

    @property
    def rate(self):
        t = self.search_s if self.search_s else self.seconds
        return self.nodes / t if (self.nodes and t) else None

    @property
    def speedup(self):
        b = self.baseline
        if b is None or not b.finished or not self.finished:
            return None
        return b.seconds / self.seconds


# --------------------------------------------------------------------------- runs

def run_baseline(key, *, full, cap, repeat):
    inst = INSTANCES[key]
    w, h = inst["size"]
    start = [int(v) for v in inst["start"].split()]
    passes = []
    best = None
    runs = repeat if key == "3x3" else 1  # the 4x3 run is minutes long: once
    for i in range(runs):
        log = []
        t0 = time.perf_counter()
        if key == "4x3" and not full:
            moves, nodes = seed_ida.solve(w, h, start, time_cap=cap,
                                          on_pass=lambda b, n, s: log.append((b, n, s)))
        else:
            moves, nodes = seed_ida.solve(w, h, start, on_pass=lambda b, n, s: log.append((b, n, s)))
        dt = time.perf_counter() - t0
        if best is None or dt < best[0]:
            best, passes = (dt, moves, nodes), log
    dt, moves, nodes = best
    finished = moves is not None
    if finished:
        assert len(moves) == inst["optimal"], (key, len(moves))
        note = f"best of {runs}" if runs > 1 else "one run"
    else:
        note = f"capped at {cap:g} s: passes up to bound {passes[-1][0]} finished, not solved"
    row = Row("baseline: seed_ida.py (CPython)", key, len(moves) if finished else None, nodes, dt,
              finished=finished, note=note)
    return row, passes


def run_api(key, *, repeat, base, heuristic):
    import puzzlespace as ps

    inst = INSTANCES[key]
    p = ps.load_puzzle(key)
    warm_state = p.parse_position(inst["warm"])
    t0 = time.perf_counter()
    warm = ps.solve(p, warm_state, heuristic=heuristic)
    warm_s = time.perf_counter() - t0
    state = p.parse_position(inst["start"])
    walls, searches, sol = [], [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        sol = ps.solve(p, state, heuristic=heuristic)
        walls.append(time.perf_counter() - t0)
        searches.append(sol.seconds)
    assert sol.length == inst["optimal"], (key, sol.length)
    i = min(range(repeat), key=walls.__getitem__)
    note = (f"warm; best of {repeat} (median {fmt_s(statistics.median(walls))}); "
            f"search alone {fmt_s(searches[i])}; method {sol.method} {sol.heuristic}; "
            f"warm-up solve ({warm.length} moves) took {fmt_s(warm_s)}")
    return Row("puzzlespace API: ps.solve (warm)", key, sol.length, sol.nodes, walls[i],
               search_s=searches[i], baseline=base, note=note)


_SUMMARY = re.compile(r"optimal solution, (\d+) moves \(([^,]+), ([\d,]+) nodes, ([\d.]+) s")


def run_cli(key, *, repeat, base, heuristic):
    inst = INSTANCES[key]
    cmd = cli_executable() + ["solve", key, inst["cli"], "--quiet", "--heuristic", heuristic]
    times, out = time_process(cmd, repeat)
    m = _SUMMARY.search(out)
    length, nodes, search_s = (int(m.group(1)), int(m.group(3).replace(",", "")), float(m.group(4))) if m else (None, None, None)
    if length is not None:
        assert length == inst["optimal"], (key, length)
    note = (f"whole process, best of {repeat} after 1 warm-up (median {fmt_s(statistics.median(times))}); "
            f"search alone {fmt_s(search_s)} as printed")
    return Row("puzzlespace CLI: solve --quiet (process)", key, length, nodes, min(times),
               search_s=search_s, baseline=base, note=note)


def run_baseline_process(key, *, repeat):
    """``python -m bench.seed_ida KEY START`` as a whole process (the fair match for the CLI)."""
    inst = INSTANCES[key]
    cmd = [sys.executable, "-m", "bench.seed_ida", key, inst["start"]]
    times, out = time_process(cmd, repeat, cwd=ROOT)
    m = re.search(r"^(\d+) moves, ([\d,]+) nodes, ([\d.]+) s", out, re.M)
    length, nodes, search_s = int(m.group(1)), int(m.group(2).replace(",", "")), float(m.group(3))
    assert length == inst["optimal"], (key, length)
    note = (f"whole process, best of {repeat} after 1 warm-up (median {fmt_s(statistics.median(times))}); "
            f"search alone {fmt_s(search_s)} as printed")
    return Row("baseline: python -m bench.seed_ida (process)", key, length, nodes, min(times),
               search_s=search_s, note=note)


# --------------------------------------------------------------------------- main

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench solve", description=__doc__.split("\n\n")[0],
        epilog="The baseline, bench/seed_ida.py, is plain CPython in this folder (nothing to install); "
               "alone: python -m bench.seed_ida 3x3 \"8 6 7 2 5 4 3 0 1\".")
    ap.add_argument("--full", action="store_true", help="run the baseline on 4x3 to the end (minutes)")
    ap.add_argument("--cap", type=float, default=60.0,
                    help="without --full: seconds after which the 4x3 baseline starts no new pass (default 60)")
    ap.add_argument("--repeat", type=int, default=3, help="timed repetitions for the fast cases (default 3)")
    ap.add_argument("--heuristic", default="walking",
                    help="puzzlespace's bound (default walking: max(MD+LC, WD), as first measured; "
                         "auto: the board's default, pattern databases on 4x3)")
    ap.add_argument("--no-pin", action="store_true", help="do not pin the process to one CPU")
    ap.add_argument("--live", action="store_true",
                    help="measure src/puzzlespace in place instead of a copy taken at the start")
    ap.add_argument("--csv", type=Path, help="also write the rows to this CSV file")
    args = ap.parse_args(argv)

    pin = "not pinned (--no-pin)" if args.no_pin else pin_one_cpu()
    measured = LIVE_SRC if args.live else snapshot_package(LIVE_SRC, import_here=True)
    import numba
    import puzzlespace

    if Path(puzzlespace.__file__).resolve().parent != measured.resolve():
        raise SystemExit(f"imported {puzzlespace.__file__}, expected the package in {measured}")
    digest = src_digest(measured)
    child = subprocess.run([sys.executable, "-c", "import puzzlespace; print(puzzlespace.__file__)"],
                           capture_output=True, text=True).stdout.strip()
    if Path(child).resolve().parent != measured.resolve():
        raise SystemExit(f"subprocesses import {child}, expected the package in {measured}")

    print("puzzlespace solve benchmark")
    print(f"  command   : python -m bench solve {' '.join(argv or [])}")
    print(f"  date (UTC): {datetime.now(timezone.utc):%Y-%m-%d %H:%M:%S}")
    print(f"  machine   : {os.cpu_count()} CPUs, {cpu_model()}; {pin}")
    print(f"  python    : {platform.python_implementation()} {platform.python_version()}, numba {numba.__version__}, "
          f"puzzlespace {puzzlespace.__version__}")
    print(f"  measured  : {'the live tree' if args.live else 'a copy of'} src/puzzlespace taken at start, "
          f"digest {digest}" + ("" if args.live else f" ({measured.parent})"))
    print(f"  CLI       : {' '.join(cli_executable())}")
    print(f"  load avg  : {loadavg()} at start", flush=True)

    rows = []
    t_all = time.perf_counter()
    for key in ("3x3", "4x3"):
        print(f"\n[{key}] baseline ...", flush=True)
        base, passes = run_baseline(key, full=args.full, cap=args.cap, repeat=args.repeat)
        for b, n, s in passes:
            print(f"    bound {b:2d}: {n:>13,} nodes  {s:8.3f} s  {n / s / 1e6 if s else 0:6.2f} M nodes/s")
        print(f"    -> {fmt_s(base.seconds)}, {fmt_int(base.nodes)} nodes ({base.note})", flush=True)
        rows.append(base)
        print(f"[{key}] puzzlespace API ...", flush=True)
        rows.append(run_api(key, repeat=args.repeat, base=base, heuristic=args.heuristic))
        print(f"    -> {fmt_s(rows[-1].seconds)} ({rows[-1].note})", flush=True)
        proc_base = base
        if key == "3x3":  # at 4x3 the interpreter start is lost in minutes of search
            print(f"[{key}] baseline as a process ...", flush=True)
            proc_base = run_baseline_process(key, repeat=3)
            rows.append(proc_base)
            print(f"    -> {fmt_s(proc_base.seconds)} ({proc_base.note})", flush=True)
        print(f"[{key}] puzzlespace CLI ...", flush=True)
        rows.append(run_cli(key, repeat=3, base=proc_base, heuristic=args.heuristic))
        print(f"    -> {fmt_s(rows[-1].seconds)} ({rows[-1].note})", flush=True)
    total = time.perf_counter() - t_all

    # ----- the table
    header = ("case", "instance", "length", "nodes", "seconds", "nodes/s", "speed-up vs baseline")
    lines = []
    for r in rows:
        sp = r.speedup
        lines.append((r.case, r.instance, "-" if r.length is None else str(r.length), fmt_int(r.nodes),
                      fmt_s(r.seconds), fmt_rate(r.rate),
                      "1 (baseline)" if r.baseline is None and r.finished else
                      "-" if r.baseline is None else
                      ("n/a (baseline unfinished)" if sp is None else
                       f"{sp:,.1f}x" if sp >= 10 else f"{sp:.2f}x")))
    widths = [max(len(h), *(len(l[i]) for l in lines)) for i, h in enumerate(header)]
    print()
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("  ".join("-" * w for w in widths))
    for l in lines:
        print("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(l, widths))))
    print("\nnotes:")
    for r in rows:
        print(f"  {r.case} [{r.instance}]: {r.note}")
    print("  nodes/s divides by the search time alone where it is known (all rows but the in-process baseline,")
    print("  whose wall time is its search time); seconds is always the wall time of the whole case;")
    print("  speed-up = baseline seconds / case seconds, same instance; process rows against the baseline")
    print("  process row where there is one (3x3), else against the in-process baseline;")
    print("  puzzlespace's lower bound is stronger than Manhattan alone (see families/token_search.py of the measured")
    print("  version), so its node counts are not the baseline's: compare seconds, and nodes/s only as a rate.")
    b4 = next(r for r in rows if r.instance == "4x3" and r.baseline is None)
    a4 = next(r for r in rows if r.instance == "4x3" and r.case.startswith("puzzlespace API"))
    if b4.rate and a4.rate:
        print(f"  node-rate ratio on 4x3 (puzzlespace API / baseline): {a4.rate / b4.rate:,.1f}x")
    print(f"  load avg at end: {loadavg()}; benchmark wall time {total:.1f} s")
    live_now = src_digest(LIVE_SRC)
    if args.live and live_now != digest:
        print(f"  WARNING: src/puzzlespace changed during the run (digest {digest} -> {live_now}); "
              "the rows may mix versions: rerun")
    elif not args.live:
        print(f"  measured digest {digest}; live src/puzzlespace digest now {live_now}"
              + (" (same)" if live_now == digest else " (the tree has changed since the copy was taken)"))

    if args.csv:
        with args.csv.open("w", newline="") as f:
            wr = csv.writer(f)
            wr.writerow(["case", "instance", "length", "nodes", "seconds", "search_seconds", "nodes_per_s",
                         "speedup_vs_baseline", "finished", "note"])
            for r in rows:
                wr.writerow([r.case, r.instance, r.length if r.length is not None else "", r.nodes,
                             f"{r.seconds:.6f}", "" if r.search_s is None else f"{r.search_s:.6f}",
                             "" if r.rate is None else f"{r.rate:.0f}",
                             "" if r.speedup is None else f"{r.speedup:.2f}", r.finished, r.note])
        print(f"\nwrote {args.csv}")
    if not args.live:
        shutil.rmtree(measured.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
