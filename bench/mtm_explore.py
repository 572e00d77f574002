"""Exploring in the multi-tile metric against the single-tile metric, in the same run.

For each board (default 4x3, 5x2, 6x2) the whole commands ``puzzlespace explore WxH:mtm
--json`` and ``puzzlespace explore WxH --json`` run alternated, ``--repeat`` times each
(after one warm-up of each, which fills numba's cache); the best of each is kept. Figures:
the engine's seconds (``seconds`` in the JSON: the run itself, numba's compiling left
out), the command's wall time, peak RSS (GNU ``time``), and the ratio MTM / STM of the
engine seconds (target for 4x3: at most 1.5) and of the peak RSS. Every MTM run is checked
against the published radius and the number of positions, and its depth counts against
the first run's. The load average is printed before and after each pair: on a shared
machine the figures are those of the load they ran under.

    python -m bench mtm-explore                       # 4x3, 5x2, 6x2, best of 3 (about 4 min)
    python -m bench mtm-explore --boards 4x3 --repeat 5

A run's output is kept in ``bench/results/mtm_explore.md``.
"""

from __future__ import annotations

import argparse
import json
import shutil

from .harness import SRC, banner, cli_executable, fmt_s, loadavg, run_measured, snapshot_package

#: Published radius of the multi-tile metric per board, and the positions (W*H!/2).
RADII = {"3x3": (24, 181_440), "4x2": (25, 20_160), "5x2": (36, 1_814_400), "4x3": (33, 239_500_800),
         "6x2": (41, 239_500_800)}
#: The target: MTM engine seconds at most this many times STM's.
TARGET_RATIO = 1.5


def run(board: str) -> dict:
    """One ``explore BOARD --json`` command: its JSON with ``wall`` and ``rss`` added."""
    wall, status, rss, out, err = run_measured([*cli_executable(), "explore", board, "--json", "--antipodes", "0"])
    if status:
        raise SystemExit(f"explore {board} failed ({status}): {err.strip()[-400:]}")
    return {**json.loads(out), "wall": wall, "rss": rss}


def measure(board: str, repeat: int) -> tuple[dict, dict]:
    """The best (least engine seconds) of ``repeat`` alternated runs of ``board:mtm`` and ``board``."""
    best: dict[str, dict] = {}
    run(f"{board}:mtm"), run(board)  # warm-up: numba's cache
    for _ in range(repeat):
        print(f"  load before {loadavg()}", flush=True)
        for name in (f"{board}:mtm", board):
            got = run(name)
            check(name, got, best.get(name))
            print(f"  {name:<8} engine {got['seconds']:7.2f} s  wall {got['wall']:7.2f} s  "
                  f"peak {got['rss'] / 2**20:6.0f} MiB  radius {got['max_depth']}", flush=True)
            if name not in best or got["seconds"] < best[name]["seconds"]:
                best[name] = got
    return best[f"{board}:mtm"], best[board]


def check(name: str, got: dict, earlier: dict | None) -> None:
    """Stop unless an MTM run has the published radius and every position, and the depth
    counts of the run before it."""
    if name.endswith(":mtm") and name[:-4] in RADII:
        radius, states = RADII[name[:-4]]
        if (got["max_depth"], got["states"]) != (radius, states):
            raise SystemExit(f"{name}: radius {got['max_depth']}, {got['states']:,} positions; "
                             f"published {radius}, {states:,}")
    if earlier is not None and earlier["depth_counts"] != got["depth_counts"]:
        raise SystemExit(f"{name}: depth counts differ between runs")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench mtm-explore", description=__doc__.split("\n\n")[0])
    ap.add_argument("--boards", nargs="+", default=["4x3", "5x2", "6x2"])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    banner("mtm-explore", f"{' '.join(args.boards)}, best of {args.repeat}")
    package = snapshot_package(SRC / "puzzlespace")
    rows = []
    try:
        for board in args.boards:
            print(f"{board}:", flush=True)
            mtm, stm = measure(board, args.repeat)
            rows.append((board, mtm, stm))
    finally:
        shutil.rmtree(package.parent, ignore_errors=True)
    lines = ["| board | MTM engine | STM engine | ratio | MTM peak RSS | STM peak RSS | ratio | MTM radius |",
             "|---|---|---|---|---|---|---|---|"]
    for board, mtm, stm in rows:
        lines.append(f"| {board} | {fmt_s(mtm['seconds'])} | {fmt_s(stm['seconds'])} | "
                     f"{mtm['seconds'] / stm['seconds']:.2f} | {mtm['rss'] / 2**20:.0f} MiB | "
                     f"{stm['rss'] / 2**20:.0f} MiB | {mtm['rss'] / stm['rss']:.2f} | {mtm['max_depth']} |")
    print("\n".join(lines))
    for board, mtm, stm in rows:
        if board == "4x3":
            ratio = mtm["seconds"] / stm["seconds"]
            print(f"target: explore 4x3:mtm engine <= {TARGET_RATIO}x explore 4x3: {ratio:.2f} "
                  f"({'met' if ratio <= TARGET_RATIO else 'NOT met'})")
        print(f"{board}:mtm depth counts: {mtm['depth_counts']}")
    print(f"load after: {loadavg()}")
    return 0
