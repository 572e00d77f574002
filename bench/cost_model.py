"""A cost model of exploring on a cluster, fitted to the per-layer lines of a run, and what
it projects for the boards one machine cannot hold.

``python -m bench cost-model LOG --table-bytes B --cores C`` reads the lines
``layer D: N states in S s, X between workers, ...`` that ``puzzlespace explore ...
--workers W --progress`` writes to stderr, and fits, by least squares over the layers,

    seconds of a layer = scan * (table bytes) + expand * (states) + cross * (bytes between workers)

on ``C`` cores: ``scan`` is what a pass costs whatever the layer (each segment's table is
scanned to close the layer before and to find the frontier), ``expand`` the cost of a
state of the layer, ``cross`` of a byte of packed crossing marks (packing, sending,
unpacking, merging). The fit is checked against the run's own total, then scaled to
other puzzles: core-seconds divided by the cores of ``M`` machines, plus the network
time of the crossing bytes (``--gbit`` per machine) and Dask's latency per pass; and on
this machine out of core, plus the segment files read and written at ``--io-rate``. The
projection assumes the cost of a state and the bytes per state stay those of the fitted
run (the same kernel; crossing marks grow with more segments, see docs/scaling.md).
"""

from __future__ import annotations

import argparse
import re
import sys

import numpy as np

LINE = re.compile(r"layer (\d+): ([\d,]+) states? in ([\d.]+) s, ([\d.]+) (B|KiB|MiB|GiB|TiB) between workers"
                  r"(?:, slowest \S+ \(([\d.]+) s\))?")
UNITS = {"B": 1, "KiB": 2 ** 10, "MiB": 2 ** 20, "GiB": 2 ** 30, "TiB": 2 ** 40}
#: (board, positions, table bytes at 2 bits a rank, layers): God's numbers 84 (5x3) and
#: 80 (4x4) as published; 8x2's is not known, about 140 from the 2-row series 55, 80, 108.
TARGETS = [("5x3", 653_837_184_000, 163_459_296_000, 85), ("4x4", 10_461_394_944_000, 2_615_348_736_000, 81),
           ("8x2", 10_461_394_944_000, 2_615_348_736_000, 141)]
#: Seconds of Dask scheduling per pass (three dependent tasks a segment), measured on small boards.
PASS_LATENCY = 0.03


def parse_layers(text: str) -> np.ndarray:
    """Rows (states, seconds, bytes between workers, seconds of the slowest worker's visits
    or NaN) of every layer line in ``text``."""
    rows = [(int(m.group(2).replace(",", "")), float(m.group(3)), float(m.group(4)) * UNITS[m.group(5)],
             float(m.group(6) or "nan")) for m in LINE.finditer(text)]
    return np.array(rows).reshape(-1, 4)


def read_layers(path: str) -> np.ndarray:
    """:func:`parse_layers` of the file ``path``; it must have some."""
    with open(path, encoding="utf-8") as f:
        layers = parse_layers(f.read())
    if not len(layers):
        raise SystemExit(f"{path}: no layer lines")
    return layers


def fit(layers: np.ndarray, table_bytes: int) -> tuple[np.ndarray, float]:
    """(scan s per table byte, s per state, s per crossing byte) and the fit's R²: least
    squares with no cost below zero. A term fitted below zero is one the layers cannot
    tell apart from the others (in one run the crossing bytes follow the states closely):
    it is set to 0, its cost left in the others, and they are fitted again."""
    states, seconds, crossing = layers[:, :3].T
    design = np.column_stack([np.full_like(states, table_bytes), states, crossing])
    kept = np.ones(design.shape[1], dtype=bool)
    while True:
        coef = np.zeros(design.shape[1])
        coef[kept] = np.linalg.lstsq(design[:, kept], seconds, rcond=None)[0]
        if (coef >= 0).all():
            break
        kept &= coef > 0
    residual = seconds - design @ coef
    return coef, 1 - residual.var() / seconds.var()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench cost-model", description=__doc__.split("\n\n")[0])
    ap.add_argument("log")
    ap.add_argument("--table-bytes", type=int, required=True, help="the explored board's 2-bit table, bytes")
    ap.add_argument("--cores", type=int, required=True, help="cores of the machine the run was on")
    ap.add_argument("--machines", type=int, nargs="+", default=[16, 64], help="cluster sizes to project for")
    ap.add_argument("--machine-cores", type=int, default=32, help="cores per machine of the projection")
    ap.add_argument("--gbit", type=float, default=10.0, help="network per machine, Gbit/s")
    ap.add_argument("--io-rate", type=float, default=2.8e9,
                    help="bytes of segment files read and written per second out of core (default: 7x2 out of "
                         "core here, 1,382 s against 597 s in memory for 2.2 TB read and written)")
    args = ap.parse_args(argv)
    layers = read_layers(args.log)
    (scan, expand, cross), r2 = fit(layers, args.table_bytes)
    states, seconds, crossing, slowest = layers.T
    model = scan * args.table_bytes * len(layers) + expand * states.sum() + cross * crossing.sum()
    per_state = crossing.sum() / states.sum()
    print(f"# fitted on {len(layers)} layers of {args.log} ({args.cores} cores); R² {r2:.3f}")
    print(f"- scan: {scan * args.cores * 1e9:.3f} core-ns per table byte and pass")
    print(f"- expand: {expand * args.cores * 1e9:.1f} core-ns per state")
    if cross:
        print(f"- crossing: {cross * args.cores * 1e9:.1f} core-ns per byte between workers "
              f"({per_state:.3f} bytes per state in this run)")
    else:
        print(f"- crossing: not told apart from expanding ({per_state:.3f} bytes between workers per state, "
              "in step with the states): its cost is in expand's")
    print(f"- check: the layers took {seconds.sum():.0f} s; the model gives {model:.0f} s")
    if not np.isnan(slowest).any():
        print(f"- outside the slowest worker's visits (moving and taking in marks, scheduling): "
              f"{(seconds - slowest).sum():.1f} s")
    print()
    print("| board | where | memory (or disk) per machine | network per pass (mean) | network in all | hours |")
    print("|---|---|---|---|---|---|")
    for board, positions, table, depth in TARGETS:
        compute = scan * table * depth + expand * positions  # on this machine's cores
        io = 2 * table * depth / args.io_rate  # each segment read and written once a pass
        print(f"| {board} | this machine ({args.cores} cores), out of core | {2 * table / 1e9:.0f} GB of disk | - | - | "
              f"{(compute + io) / 3600:.1f} |")
        for machines in args.machines:
            cores = machines * args.machine_cores
            network = per_state * positions
            compute = (scan * table * depth + expand * positions + cross * network) * args.cores / cores
            wire = network * (machines - 1) / machines / (args.gbit / 8 * 1e9 * machines)
            hours = (compute + wire + PASS_LATENCY * depth) / 3600
            print(f"| {board} | {machines} x {args.machine_cores} cores, in memory | "
                  f"{(table / machines + 0.5e9) / 1e9:.1f} GB | "
                  f"{network / depth / 1e9:.1f} GB | {network / 1e9:.0f} GB | {hours:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
