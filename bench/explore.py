"""Explore benchmarks: ``puzzlespace explore`` against the plain-Python seed BFS.

Runs, in one process and one session, side by side:

(a) the baseline (``bench/seed_bfs.py``: CPython BFS over a one-byte-per-rank
    ``bytearray``, the seed page's rank/unrank, the current layer found by scanning the
    whole array) on the 3x3 board to the end (measured), and on the 4x3 board for the
    first ``--baseline-layers`` layers (default 24: about 2.1 million states expanded,
    30-60 s on an idle core); the whole 4x3 run (239,500,800 states, hours in CPython)
    and the 6x2 run are **extrapolated** from that prefix with a cost model (below);
(b) the whole ``puzzlespace explore PUZZLE --json`` command as a subprocess (interpreter
    start, import, numba cache load, the BFS, the JSON), on 3x3, flip:5x5, 4x3 and 6x2
    (the last two with ``--threads 2``), best of ``--repeat`` runs after one warm-up run
    (which fills numba's cache); each result is checked against the known facts.

Wall time: ``time.perf_counter()`` around the child (``subprocess.run``).
Peak RSS: GNU ``/usr/bin/time -f %M`` around each child (its maximum resident set size).
Not ``getrusage(RUSAGE_CHILDREN)`` deltas nor ``os.wait4``: on Linux a child's
``ru_maxrss`` starts from the RSS of the process that forked it (exec records the old
address space's high-water mark), and this process holds the baseline's 240 MB table; the
small ``time`` process in between keeps the figure the child's own. The engine's own
figure (``peak_memory_bytes`` in the JSON, its ``getrusage(RUSAGE_SELF)``) is shown beside
it; it has the same inheritance, which ``time`` also removes.

Extrapolation of the baseline (``Model``): a run costs

    T = A + L*s + phi * (S*u + M*r + (S-1)*p)

* A: the table allocation (``bytearray(N!/2)``, zeroed), measured in the prefix run;
* L: layers expanded = God's number + 1 (the last layer is scanned and expanded and
  finds nothing); s: one layer's scan = two ``bytearray.find`` passes over the whole
  table with no hit, measured on the prefix's table (so L*s is the whole-array scanning
  the run does, whatever the layer's size);
* S: states (each expanded exactly once); M: moves generated, exact (one per neighbour of
  the blank; over all solvable positions the blank is equally often on every cell);
  S-1: new states (each found exactly once);
* u, r, p: seconds per expanded state (unrank, per-state loop), per move (make it, rank
  the child, look it up, undo) and per new state (parity of the child, store), timed with
  the BFS's own statements on uniformly random positions, i.e. the mix a whole run
  expands (``to_num``/``perm_type`` cost depends on the position: near the goal they do
  less work than on average);
* phi: the prefix's measured expansion time (its layers' seconds minus K*s) divided by
  the same unit costs timed on a sample of the prefix's own positions (E*u' + M_K*r' +
  N_K*p'): what the timed statements leave out (the ``find`` call per state, loop
  overhead) and any drift of the machine between the two; it should be close to 1.

So the whole run is charged at the whole run's mix (about 1 new state per state expanded,
against ~1.6-1.8 in a prefix; its own blank-cell mix), not at the prefix's. The naive
figure (A + L*s + S * prefix expansion seconds per expanded state) is printed beside it.
The same procedure, fitted on the first 20 of the 32 layers of 3x3, is checked against
the measured whole 3x3 run ("model check"). 6x2 (same 12 cells, same table, same
unranking) takes A, s and phi from the 4x3 fit and its own u, r, p on random 6x2
positions, with L = 81.

By default the subprocesses run a copy of ``src/puzzlespace`` taken when the benchmark
starts (``--live`` to use the tree in place), so that edits made during the run cannot
mix versions between rows; the copy's digest is printed.

Prints a table (case, states, God's number, seconds, states/s, states/s/core, bytes of
table per state, peak RSS, speed against the baseline) and the targets met or not, writes
the table to ``bench/results/explore.csv`` and everything printed to
``bench/results/explore.log`` (``--quick``: ``explore_quick.csv``/``.log``).

    python -m bench explore            # everything (several minutes, idle machine)
    python -m bench explore --quick    # no 4x3/6x2 explore, tiny baseline prefix
"""

from __future__ import annotations

import argparse
from array import array
import csv
import json
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

from . import seed_bfs
from .harness import (
    TIME, cli_executable, cpu_model, fmt_int, fmt_rate, fmt_s, load1, loadavg, run_measured, snapshot_package,
    src_digest,
)

HERE = Path(__file__).resolve().parent
LIVE_SRC = HERE.parent / "src" / "puzzlespace"

#: (case, arguments after ``puzzlespace``, (God's number, antipodes, states), WxH for a baseline or None)
CASES = [
    ("3x3", ["explore", "3x3", "--json"], (31, 2, 181_440), (3, 3)),
    ("flip:5x5", ["explore", "flip:5x5", "--json"], (13, 4608, 663_552), None),
    ("4x3", ["explore", "4x3", "--json", "--threads", "2"], (53, 18, 239_500_800), (4, 3)),
    ("6x2", ["explore", "6x2", "--json", "--threads", "2"], (80, 2, 239_500_800), (6, 2)),
]
QUICK_SKIP = {"4x3", "6x2"}

#: Targets: case -> (wall seconds at most, peak RSS bytes at most or None)
MB = 10**6
TARGETS = {
    "4x3": (5.0, 250 * MB),
    "6x2": (5.0, 250 * MB),
    "flip:5x5": (1.0, None),
    "3x3": (1.0, None),
}

#: Design figure of the engine: a 2-bit table per rank (no frontier bitmap).
ENGINE_BITS_PER_RANK = 2


# --------------------------------------------------------------------------- output

class Tee:
    """Everything printed goes to the terminal and to the log file."""

    def __init__(self, stream, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.stream, self.file = stream, path.open("w")

    def write(self, text):
        self.stream.write(text)
        self.file.write(text)
        return len(text)

    def flush(self):
        self.stream.flush()
        self.file.flush()

    def close(self):
        self.file.close()


def fmt_mib(x: Optional[int]) -> str:
    return "-" if x is None else f"{x / 2**20:.0f} MiB"


def fmt_ratio(x: Optional[float]) -> str:
    if x is None:
        return "-"
    return f"{x:,.0f}x" if x >= 100 else f"{x:.1f}x" if x >= 10 else f"{x:.2f}x"


# --------------------------------------------------------------------------- rows

class Row:
    def __init__(self, case, kind, *, states=None, god=None, antipodes=None, seconds=None, engine_s=None,
                 expanded=None, cores=1, rank_space=None, bits_per_rank=None, peak_rss=None, json_peak=None,
                 baseline_s=None, baseline_rate=None, check="", note=""):
        self.case, self.kind = case, kind
        self.states, self.god, self.antipodes = states, god, antipodes
        self.seconds, self.engine_s = seconds, engine_s
        self.expanded = expanded if expanded is not None else states
        self.cores = cores
        self.rank_space, self.bits_per_rank = rank_space, bits_per_rank
        self.peak_rss, self.json_peak = peak_rss, json_peak
        self.baseline_s, self.baseline_rate = baseline_s, baseline_rate
        self.check, self.note = check, note

    @property
    def rate(self):
        return self.expanded / self.seconds if (self.expanded and self.seconds) else None

    @property
    def rate_per_core(self):
        return self.rate / self.cores if self.rate else None

    @property
    def bytes_per_state(self):
        if not (self.rank_space and self.bits_per_rank and self.states):
            return None
        return self.rank_space * self.bits_per_rank / 8 / self.states

    @property
    def vs_baseline(self):
        """(ratio, how): baseline seconds / seconds on the same puzzle, else rate / baseline rate."""
        if self.baseline_s and self.seconds:
            return self.baseline_s / self.seconds, "time"
        if self.baseline_rate and self.rate:
            return self.rate / self.baseline_rate, "rate"
        return None, ""


# --------------------------------------------------------------------------- baseline: calibration and model

def random_items(t: seed_bfs.Tables, count: int, rng: random.Random) -> list[tuple[int, bool, list[int]]]:
    """(rank, in-path-order flag, board) of uniformly random solvable positions: the mix of
    positions a whole run expands (every one exactly once)."""
    pt0 = seed_bfs.perm_type(t.goal, t)[0]
    items = []
    for _ in range(count):
        b = list(range(t.n))
        rng.shuffle(b)
        if seed_bfs.perm_type(b, t)[0] != pt0:
            i, j = b.index(t.n - 2), b.index(t.n - 1)
            b[i], b[j] = b[j], b[i]
        items.append((seed_bfs.to_num(b, t), pt0 == seed_bfs.perm_type(b, t)[1], b))
    return items


def prefix_items(t: seed_bfs.Tables, prefix: seed_bfs.BfsResult, count: int,
                 rng: random.Random) -> list[tuple[int, bool, list[int]]]:
    """(rank, flag, board) of positions the prefix expanded, sampled from each layer in
    proportion to its size (uniformly within the layer): the mix the prefix paid for."""
    table = prefix.table
    pt0 = seed_bfs.perm_type(t.goal, t)[0]
    total = prefix.expanded
    items = []
    for layer in prefix.layers:
        quota = max(1, round(count * layer.expanded / total))
        found = {}
        for flag in (1, 2):
            value = 2 * layer.depth + flag
            ranks = array("q")
            num = table.find(value)
            while num >= 0:
                ranks.append(num)
                num = table.find(value, num + 1)
            found[flag] = ranks
        n1 = len(found[1])
        for i in rng.sample(range(n1 + len(found[2])), min(quota, n1 + len(found[2]))):
            flag, num = (1, found[1][i]) if i < n1 else (2, found[2][i - n1])
            items.append((num, pt0 == flag, seed_bfs.from_num(num, pt0 == flag, t)[0]))
    return items


def measure_scan(table: bytearray, repeat: int = 3) -> float:
    """Seconds of one layer's scan: two ``find`` passes over the whole table, no hit."""
    absent = 255  # never stored (depths stop at 126: 2*126+2 = 254)
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _flag in (1, 2):
            assert table.find(absent) < 0
        dt = time.perf_counter() - t0
        best = dt if best is None or dt < best else best
    return best


def _best(fn, repeat: int) -> float:
    best = None
    for _ in range(repeat):
        dt = fn()
        best = dt if best is None or dt < best else best
    return best


class UnitCosts:
    """Seconds per expanded state (u: unrank and per-state loop), per move (r: make the move,
    rank the child, look it up, undo) and per new state (p: parity of the child, store),
    each timed on a list of positions with the BFS's own statements (best of ``repeat``)."""

    def __init__(self, u: float, r: float, p: float, moves_per_state: float):
        self.u, self.r, self.p, self.moves_per_state = u, r, p, moves_per_state

    def __str__(self):
        return (f"u {self.u * 1e6:.2f} us, r {self.r * 1e6:.2f} us, p {self.p * 1e6:.2f} us "
                f"({self.moves_per_state:.2f} moves per state)")


def unit_costs(t: seed_bfs.Tables, table: bytearray, items, repeat: int = 3) -> UnitCosts:
    from_num, to_num, perm_type = seed_bfs.from_num, seed_bfs.to_num, seed_bfs.perm_type
    adjacent = t.adjacent

    def per_state():
        children = expanded = 0
        t0 = time.perf_counter()
        for num, in_order, _ in items:
            b, s = from_num(num, in_order, t)
            adj = adjacent[s]
            children += len(adj)
            expanded += 1
        return time.perf_counter() - t0

    moves = []
    for _, _, b in items:
        s = b.index(0)
        moves.extend((b, s, x) for x in adjacent[s])

    def per_move():
        hits = 0
        t0 = time.perf_counter()
        for b, s, x in moves:
            b[s] = b[x]
            b[x] = 0
            v = to_num(b, t)
            if table[v] == 255:  # never true: the lookup without the new-state branch
                hits += 1
            b[x] = b[s]
            b[s] = 0
        return time.perf_counter() - t0

    rng = random.Random(len(items))
    targets = [(b, rng.randrange(t.size)) for _, _, b in items]
    saved = [table[v] for _, v in targets]

    def per_new():
        new = 0
        base = 2
        t0 = time.perf_counter()
        for b, v in targets:
            table[v] = base + perm_type(b, t)[1]
            new += 1
        dt = time.perf_counter() - t0
        for (_, v), old in zip(targets, saved):
            table[v] = old
        return dt

    u = _best(per_state, repeat) / len(items)
    r = _best(per_move, repeat) / len(moves)
    p = _best(per_new, repeat) / len(targets)
    return UnitCosts(u, r, p, len(moves) / len(items))


class Model:
    """The baseline's cost model on one board size, fitted on a measured prefix.

    ``T = A + L*s + phi * (S*u + M*r + (S-1)*p)`` with u, r, p timed on uniformly random
    positions (the whole run's mix) and ``phi`` = the prefix's measured expansion time
    over the same unit costs timed on the prefix's own positions (``E*u' + M_K*r' + N_K*p'``):
    what the timed statements leave out (the ``find`` call per state, loop overheads) and
    any drift of the machine between the two.
    """

    def __init__(self, w, h, *, alloc, scan, full: UnitCosts, pre: Optional[UnitCosts], phi: float,
                 naive_per_state: float, prefix_expand_s: float, prefix_predicted_s: float):
        self.w, self.h = w, h
        self.alloc, self.scan = alloc, scan
        self.full, self.pre, self.phi = full, pre, phi
        self.naive_per_state = naive_per_state
        self.prefix_expand_s, self.prefix_predicted_s = prefix_expand_s, prefix_predicted_s

    def parts(self, layers: int, states: int, moves: int) -> tuple[float, float, float, float, float]:
        f = self.full
        return (self.alloc, layers * self.scan, self.phi * states * f.u, self.phi * moves * f.r,
                self.phi * (states - 1) * f.p)

    def extrapolate(self, layers: int, states: int, moves: int) -> float:
        return sum(self.parts(layers, states, moves))

    def naive(self, layers: int, states: int) -> float:
        return self.alloc + layers * self.scan + states * self.naive_per_state

    def describe(self) -> str:
        return (f"A (table allocation) {fmt_s(self.alloc)}; s (scan per layer: two find passes over "
                f"{seed_bfs.state_count(self.w, self.h):,} bytes) {fmt_s(self.scan)}; "
                f"unit costs on random positions: {self.full}"
                + (f"; on the prefix's positions: {self.pre}" if self.pre else "")
                + f"; phi {self.phi:.3f} (prefix expansion measured {fmt_s(self.prefix_expand_s)} / "
                  f"timed {fmt_s(self.prefix_predicted_s)}); naive seconds per expanded state "
                  f"{self.naive_per_state * 1e6:.2f} us")


def fit_model(prefix: seed_bfs.BfsResult, samples: int, seed: int = 7) -> Model:
    """Fit the model of ``prefix``'s board on it (``prefix`` must keep its table)."""
    t = seed_bfs.tables(prefix.width, prefix.height)
    table = prefix.table
    rng = random.Random(seed)
    scan = measure_scan(table)
    pre = unit_costs(t, table, prefix_items(t, prefix, samples, rng))
    full = unit_costs(t, table, random_items(t, samples, rng))
    k = len(prefix.layers)
    e = prefix.expanded
    m = sum(l.children for l in prefix.layers)
    nw = sum(l.new for l in prefix.layers)
    expand_s = sum(l.seconds for l in prefix.layers) - k * scan
    predicted = e * pre.u + m * pre.r + nw * pre.p
    return Model(prefix.width, prefix.height, alloc=prefix.alloc_seconds, scan=scan, full=full, pre=pre,
                 phi=expand_s / predicted, naive_per_state=expand_s / e, prefix_expand_s=expand_s,
                 prefix_predicted_s=predicted)


def model_for(base: Model, w: int, h: int, samples: int, seed: int = 11) -> Model:
    """The model of another board with as many cells (same table size, same unranking):
    its own unit costs on random positions, A, s and phi taken from ``base``."""
    t = seed_bfs.tables(w, h)
    assert t.size == seed_bfs.state_count(base.w, base.h)
    table = bytearray(t.size)
    full = unit_costs(t, table, random_items(t, samples, random.Random(seed)))
    del table
    return Model(w, h, alloc=base.alloc, scan=base.scan, full=full, pre=None, phi=base.phi,
                 naive_per_state=base.naive_per_state, prefix_expand_s=base.prefix_expand_s,
                 prefix_predicted_s=base.prefix_predicted_s)


def print_prefix(prefix: seed_bfs.BfsResult, scan: float) -> None:
    print(f"    {'depth':>5} {'expanded':>11} {'moves':>11} {'new':>11} {'seconds':>9} {'scan share':>10} {'expanded/s':>11}")
    for l in prefix.layers:
        share = min(1.0, scan / l.seconds) if l.seconds else 0.0
        print(f"    {l.depth:5d} {l.expanded:11,} {l.children:11,} {l.new:11,} {l.seconds:9.3f} {share:10.0%} "
              f"{l.expanded / l.seconds if l.seconds else 0:11,.0f}")


# --------------------------------------------------------------------------- puzzlespace explore as a process

def run_explore(case, args, facts, repeat) -> tuple[Row, list[tuple]]:
    cmd = cli_executable() + args
    runs = []  # (wall, peak RSS, engine seconds, engine's peak_memory_bytes)
    data = None
    for i in range(repeat + 1):  # the first run is the warm-up
        dt, rc, rss, out, err = run_measured(cmd)
        if rc != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({rc}): {err.strip()[-2000:]}")
        data = json.loads(out)
        print(f"    {'warm-up' if i == 0 else f'run {i}':>7}: {fmt_s(dt):>9} wall, engine {fmt_s(data['seconds']):>9}, "
              f"peak RSS {fmt_mib(rss)} (engine says {fmt_mib(data['peak_memory_bytes'])})", flush=True)
        if i:
            runs.append((dt, rss, data["seconds"], data["peak_memory_bytes"]))
    god, anti, states = facts
    got = (data["max_depth"], data["antipode_count"], data["states"])
    problems = []
    if got != (god, anti, states):
        problems.append(f"expected God's number {god}, {anti} antipodes, {states:,} states; got {got}")
    if sum(data["depth_counts"]) != data["states"] or len(data["depth_counts"]) != data["max_depth"] + 1:
        problems.append("depth_counts inconsistent with states/max_depth")
    if data["depth_counts"] and data["depth_counts"][-1] != data["antipode_count"]:
        problems.append("last depth count != antipode_count")
    check = "ok" if not problems else "FAILED: " + "; ".join(problems)
    best = min(runs, key=lambda r: r[0])
    walls = sorted(r[0] for r in runs)
    rss_seen = [r[1] for r in runs if r[1] is not None]
    peak = max(rss_seen) if rss_seen else None
    note = (f"whole process `puzzlespace {' '.join(args)}`, best of {repeat} after 1 warm-up "
            f"(walls {', '.join(fmt_s(w) for w in walls)}); engine-reported seconds {fmt_s(best[2])}; "
            f"peak RSS = max over the timed runs {fmt_mib(peak)} (the engine's own figure "
            f"{fmt_mib(max(r[3] for r in runs))}); "
            f"threads {data['threads']}, scheme {data['scheme']}")
    row = Row(case, "puzzlespace explore (process)", states=data["states"], god=data["max_depth"],
              antipodes=data["antipode_count"], seconds=best[0], engine_s=best[2], cores=data["threads"],
              rank_space=data["rank_space"], bits_per_rank=ENGINE_BITS_PER_RANK,
              peak_rss=peak, json_peak=max(r[3] for r in runs), check=check, note=note)
    return row, runs


# --------------------------------------------------------------------------- main

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench explore", description=__doc__.split("\n\n")[0],
        epilog="The baseline, bench/seed_bfs.py, is plain CPython in this folder (nothing to install); "
               "alone: python -m bench.seed_bfs --board 3x3. Needs GNU /usr/bin/time for peak RSS.")
    ap.add_argument("--quick", action="store_true",
                    help="skip the 4x3 and 6x2 explore runs; tiny baseline prefix; one 3x3 baseline run")
    ap.add_argument("--baseline-layers", type=int, default=None,
                    help="layers of the 4x3 baseline prefix (default 24; --quick: 14)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per explore case (default 3)")
    ap.add_argument("--samples", type=int, default=None,
                    help="random positions for the per-move / per-new-state calibration (default 20000; --quick 3000)")
    ap.add_argument("--live", action="store_true",
                    help="run src/puzzlespace in place instead of a copy taken at the start")
    ap.add_argument("--csv", type=Path, default=None, help="default bench/results/explore.csv (--quick: explore_quick.csv)")
    ap.add_argument("--log", type=Path, default=None, help="default bench/results/explore.log (--quick: explore_quick.log)")
    args = ap.parse_args(argv)
    args.argv = argv or []
    suffix = "_quick" if args.quick else ""
    csv_path = args.csv or HERE / "results" / f"explore{suffix}.csv"
    log_path = args.log or HERE / "results" / f"explore{suffix}.log"
    k4 = args.baseline_layers if args.baseline_layers is not None else (14 if args.quick else 24)
    samples = args.samples or (3000 if args.quick else 20000)
    base3_runs = 1 if args.quick else 3

    tee = Tee(sys.stdout, log_path)
    sys.stdout = tee
    try:
        return _main(args, csv_path, log_path, k4, samples, base3_runs)
    finally:
        sys.stdout = tee.stream
        tee.close()


def _main(args, csv_path: Path, log_path: Path, k4: int, samples: int, base3_runs: int) -> int:
    measured = LIVE_SRC if args.live else snapshot_package(LIVE_SRC)
    digest = src_digest(measured)
    child = subprocess.run([sys.executable, "-c", "import puzzlespace, numba; print(puzzlespace.__file__); "
                            "print(puzzlespace.__version__, numba.__version__)"],
                           capture_output=True, text=True)
    lines = child.stdout.split()
    if child.returncode != 0 or not lines or Path(lines[0]).resolve().parent != measured.resolve():
        raise SystemExit(f"subprocesses import {lines[:1]}, expected the package in {measured}: {child.stderr}")
    ps_version, nb_version = (lines[1], lines[2]) if len(lines) >= 3 else ("?", "?")
    ncpu = os.cpu_count() or 1

    print("puzzlespace explore benchmark")
    print(f"  command   : python -m bench explore {' '.join(args.argv)}")
    print(f"  date (UTC): {datetime.now(timezone.utc):%Y-%m-%d %H:%M:%S}")
    print(f"  machine   : {ncpu} CPUs, {cpu_model()}; not pinned")
    print(f"  python    : {platform.python_implementation()} {platform.python_version()}, numba {nb_version}, "
          f"puzzlespace {ps_version}")
    print(f"  measured  : {'the live tree' if args.live else 'a copy of'} src/puzzlespace"
          f"{'' if args.live else ' taken at start'}, digest {digest}"
          + ("" if args.live else f" ({measured.parent})"))
    print(f"  CLI       : {' '.join(cli_executable())}")
    print("  peak RSS  : " + (f"{TIME} -f %M around each child (its maximum RSS)" if Path(TIME).exists()
                                 else "not measured (no /usr/bin/time)"))
    print(f"  mode      : {'--quick (no 4x3/6x2 explore; tiny baseline prefix)' if args.quick else 'full'}")
    print(f"  load avg  : {loadavg()} at start", flush=True)
    if load1() > 0.5 * ncpu:
        print(f"  WARNING: the machine is busy (1-minute load {load1():.2f} on {ncpu} CPUs): "
              "timings are not representative", flush=True)

    t_all = time.perf_counter()
    rows: list[Row] = []

    # ----- (a) baseline
    print("\n[baseline 3x3] seed_bfs, whole run ...", flush=True)
    best3 = None
    for _ in range(base3_runs):
        r = seed_bfs.bfs(3, 3)
        if best3 is None or r.seconds < best3.seconds:
            best3 = r
    assert best3.complete and best3.max_depth == 31 and best3.depth_counts[-1] == 2 and best3.states == 181_440, \
        (best3.max_depth, best3.depth_counts[-1], best3.states)
    print(f"    -> {fmt_s(best3.seconds)} (best of {base3_runs}), {best3.states:,} states, God's number "
          f"{best3.max_depth}, {best3.depth_counts[-1]} antipodes", flush=True)
    base3 = Row("3x3", "baseline seed_bfs (in-process, measured)", states=best3.states, god=best3.max_depth,
                antipodes=best3.depth_counts[-1], seconds=best3.seconds, rank_space=best3.size, bits_per_rank=8,
                check="ok", note=f"whole BFS in this process (no interpreter start), best of {base3_runs}")
    rows.append(base3)

    k3 = 20
    print(f"[baseline 3x3] model check: fit on the first {k3} layers, predict the whole run ...", flush=True)
    pre3 = seed_bfs.bfs(3, 3, layers=k3, keep_table=True)
    m3 = fit_model(pre3, samples)
    del pre3
    print(f"    {m3.describe()}")
    pred3 = m3.extrapolate(31 + 1, 181_440, seed_bfs.edge_count(3, 3))
    naive3 = m3.naive(31 + 1, 181_440)
    model_check = (f"model fitted on the first {k3} layers of 3x3 predicts {fmt_s(pred3)} for the whole 3x3 run, "
                   f"measured {fmt_s(best3.seconds)} ({pred3 / best3.seconds - 1:+.0%}); naive scaling "
                   f"{fmt_s(naive3)} ({naive3 / best3.seconds - 1:+.0%})")
    print(f"    -> {model_check}", flush=True)

    print(f"\n[baseline 4x3] seed_bfs, first {k4} layers ...", flush=True)
    prefix = seed_bfs.bfs(4, 3, layers=k4, keep_table=True)
    self_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    e4 = prefix.expanded
    print(f"    {k4} layers, {e4:,} states expanded ({prefix.states:,} found), {fmt_s(prefix.seconds)} "
          f"(allocation and scans included): {e4 / prefix.seconds:,.0f} expanded/s; "
          f"this process's peak RSS {fmt_mib(self_rss)}", flush=True)
    print("    fitting the model (scan, unit costs on the prefix's and on random positions) ...", flush=True)
    m4 = fit_model(prefix, samples)
    prefix = prefix._replace(table=None)
    print_prefix(prefix, m4.scan)
    print(f"    {m4.describe()}", flush=True)
    rows.append(Row("4x3", f"baseline seed_bfs, first {k4} layers (measured)", states=prefix.states,
                    god=None, seconds=prefix.seconds, expanded=e4, peak_rss=self_rss,
                    check="ok" if prefix.depth_counts[:4] == [1, 2, 4, 9] else "FAILED",
                    note=f"depths 0..{k4 - 1} expanded, 0..{k4} found; states = found; states/s = expanded / "
                         f"seconds (table allocation and {k4} whole-table scans included); "
                         f"peak RSS = this benchmark process (the 1-byte-per-rank table)"))

    extrap = {}
    for key, (w, h), god in (("4x3", (4, 3), 53), ("6x2", (6, 2), 80)):
        if args.quick and key == "6x2":
            continue
        model = m4
        if (w, h) != (4, 3):
            print(f"[baseline {key}] unit costs on random {key} positions (A, s, phi from 4x3) ...", flush=True)
            model = model_for(m4, w, h, samples)
            print(f"    {model.describe()}")
        states = seed_bfs.state_count(w, h)
        moves = seed_bfs.edge_count(w, h)
        parts = model.parts(god + 1, states, moves)
        t_full = sum(parts)
        t_naive = model.naive(god + 1, states)
        how = (f"{fmt_s(t_full)} = A {fmt_s(parts[0])} + {god + 1} layers x s {fmt_s(parts[1])} + phi x ("
               f"{states:,} states x u {fmt_s(parts[2] / model.phi)} + {moves:,} moves x r "
               f"{fmt_s(parts[3] / model.phi)} + {states - 1:,} new x p {fmt_s(parts[4] / model.phi)}), "
               f"phi {model.phi:.3f}; naive (prefix seconds per expanded state x states) {fmt_s(t_naive)}")
        print(f"[baseline {key}] extrapolated whole run: {how}", flush=True)
        extrap[key] = t_full
        rows.append(Row(key, "baseline seed_bfs (extrapolated)", states=states, god=god, seconds=t_full,
                        rank_space=states, bits_per_rank=8, check="model",
                        note=f"{how}; memory would be the {states:,}-byte table + the interpreter"))
    base_rate = seed_bfs.state_count(4, 3) / extrap["4x3"]

    # ----- (b) puzzlespace explore
    for case, cli_args, facts, board in CASES:
        if args.quick and case in QUICK_SKIP:
            print(f"\n[{case}] puzzlespace {' '.join(cli_args)}: skipped (--quick)")
            continue
        print(f"\n[{case}] puzzlespace {' '.join(cli_args)} ...", flush=True)
        row, _ = run_explore(case, cli_args, facts, args.repeat)
        if case == "3x3":
            row.baseline_s = base3.seconds
        elif case in extrap:
            row.baseline_s = extrap[case]
        else:
            row.baseline_rate = base_rate
        print(f"    -> {fmt_s(row.seconds)} wall, {row.check}", flush=True)
        rows.append(row)
    total = time.perf_counter() - t_all

    # ----- the table
    header = ("case", "what", "states", "God's #", "seconds", "states/s", "states/s/core", "table B/state",
              "peak RSS", "vs baseline", "check")
    lines = []
    for r in rows:
        ratio, how = r.vs_baseline
        lines.append((r.case, r.kind, fmt_int(r.states), "-" if r.god is None else str(r.god), fmt_s(r.seconds),
                      fmt_rate(r.rate), fmt_rate(r.rate_per_core),
                      "-" if r.bytes_per_state is None else f"{r.bytes_per_state:.3f}", fmt_mib(r.peak_rss),
                      "baseline" if r.kind.startswith("baseline") else
                      f"{fmt_ratio(ratio)} ({how})" if ratio else "-", r.check))
    widths = [max(len(h), *(len(l[i]) for l in lines)) for i, h in enumerate(header)]
    print()
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("  ".join("-" * w for w in widths))
    for l in lines:
        print("  ".join(c.ljust(w) if i in (0, 1, 10) else c.rjust(w) for i, (c, w) in enumerate(zip(l, widths))))

    print("\ntargets:")
    by_case = {r.case: r for r in rows if r.kind.startswith("puzzlespace")}
    verdicts = []
    for case, (max_s, max_rss) in TARGETS.items():
        r = by_case.get(case)
        want = f"wall <= {max_s:g} s" + (f" and peak RSS <= {max_rss // MB} MB" if max_rss else "")
        if r is None:
            print(f"  {case:9s} {want}: not run")
            verdicts.append((case, "not run"))
            continue
        ok_t = r.seconds <= max_s
        ok_m = max_rss is None or (r.peak_rss is not None and r.peak_rss <= max_rss)
        ok = ok_t and ok_m and r.check == "ok"
        got = f"{fmt_s(r.seconds)}" + (f", {r.peak_rss / MB:.0f} MB" if max_rss else "")
        print(f"  {case:9s} {want}: {got} -> {'met' if ok else 'NOT met'}"
              + ("" if r.check == "ok" else " (result check failed)"))
        verdicts.append((case, "met" if ok else "not met"))

    print("\nnotes:")
    for r in rows:
        print(f"  {r.case} {r.kind}: {r.note}")
    print("  seconds: wall time of the whole case (explore rows: the whole process, interpreter start included);")
    print("  states/s: states expanded per second of that wall time (every state is expanded once in a whole run;")
    print("  the 4x3 prefix row: expanded states of the prefix / its seconds, allocation and scans included);")
    print("  states/s/core: divided by the threads the engine reports (the baseline: 1);")
    print(f"  table B/state: ranks x bits per rank / 8 / states: the engine's design figure {ENGINE_BITS_PER_RANK} bits "
          "(a 2-bit table: unreached, closed, frontier, next layer), the baseline's 1 byte; mark buffers and the interpreter "
          "are not in it (they are in peak RSS);")
    print("  vs baseline: (time) = baseline seconds / case seconds on the same puzzle (3x3: the measured in-process "
          "baseline; 4x3, 6x2: the extrapolated baseline);")
    print("  (rate) = case states/s / the extrapolated 4x3 baseline's states/s (no baseline for that puzzle);")
    print(f"  model check: {model_check}")
    print(f"  MB = 10^6 bytes, MiB = 2^20 bytes. load avg at end: {loadavg()}; benchmark wall time {total:.1f} s")
    live_now = src_digest(LIVE_SRC)
    if args.live and live_now != digest:
        print(f"  WARNING: src/puzzlespace changed during the run (digest {digest} -> {live_now}); rerun")
    elif not args.live:
        print(f"  measured digest {digest}; live src/puzzlespace digest now {live_now}"
              + (" (same)" if live_now == digest else " (the tree has changed since the copy was taken)"))

    csv_path.parent.mkdir(parents=True, exist_ok=True)
    with csv_path.open("w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["case", "what", "states", "gods_number", "antipodes", "seconds", "engine_seconds",
                     "states_expanded", "states_per_s", "threads", "states_per_s_per_core", "table_bytes_per_state",
                     "peak_rss_bytes", "engine_peak_memory_bytes", "vs_baseline", "vs_baseline_kind", "target",
                     "check", "note"])
        verdict = dict(verdicts)
        for r in rows:
            ratio, how = r.vs_baseline
            wr.writerow([r.case, r.kind, r.states, "" if r.god is None else r.god,
                         "" if r.antipodes is None else r.antipodes, f"{r.seconds:.6f}",
                         "" if r.engine_s is None else f"{r.engine_s:.3f}", r.expanded,
                         "" if r.rate is None else f"{r.rate:.0f}", r.cores,
                         "" if r.rate_per_core is None else f"{r.rate_per_core:.0f}",
                         "" if r.bytes_per_state is None else f"{r.bytes_per_state:.3f}",
                         "" if r.peak_rss is None else r.peak_rss, "" if r.json_peak is None else r.json_peak,
                         "" if ratio is None else f"{ratio:.2f}", how,
                         verdict.get(r.case, "") if r.kind.startswith("puzzlespace") else "", r.check, r.note])
    if not args.live:
        shutil.rmtree(measured.parent, ignore_errors=True)
    print(f"\nwrote {csv_path} and {log_path}")
    failed = [r for r in rows if r.check.startswith("FAILED")]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
