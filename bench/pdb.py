"""Korf's 100 random 15-puzzle instances solved optimally with pattern databases.

For each heuristic named (default ``pdb:7-8``, then ``auto``: the board's default 6-6-3
blocks, then ``pdb:6-6-3``: tiles 1-6, 7-12, 13-15; reflection about the main diagonal is
always on for the 15-puzzle), in one process:

1. the databases are read from the cache, or built there (build time and size are read
   back from the files' headers);
2. all 100 instances (``examples/korf100.txt``, goal ``0 1 ... 15``) are solved by
   ``puzzlespace.batch.solve_all`` on ``--threads`` threads, tables loaded once; per
   instance id, length, nodes, seconds go to ``bench/results/korf100_<heuristic>.csv``
   (``default`` for ``auto``);
3. totals beside the published averages (Korf & Felner 2002; Felner, Korf & Hanan 2004).

Baseline in the same run: plain Manhattan-distance IDA* (ours) on the ``--crosscheck``
instances with the fewest nodes under the first heuristic; it must give the same lengths
(the optimality cross-check) and its nodes and seconds give the ratio. Then the 4x3 seed
instance (53 moves) warm with its default databases beside the classic bound.

    python -m bench pdb                          # 7-8 and 6-6-3, 2 threads
    python -m bench pdb --heuristics pdb:6-6-3 --threads 1
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import time
from pathlib import Path

from . import harness  # first: it puts this tree's src on sys.path
import puzzlespace as ps
from puzzlespace.batch import read_positions, solve_all
from puzzlespace.pdb.store import listing
from puzzlespace.solver import resolve_heuristic, search_problem_for

HERE = Path(__file__).resolve().parent
KORF = harness.KORF
#: Published averages per instance (C, 2002-2004 hardware): nodes, seconds.
PUBLISHED = {"manhattan": (401_189_630, None), "pdb:6-6-3": (617_555, 0.16), "pdb:7-8": (36_710, 0.034)}


def solve_set(puzzle, items, heuristic, threads):
    t0 = time.perf_counter()
    problem = search_problem_for(puzzle, heuristic, notify=lambda s: print("  " + s, flush=True))
    load = time.perf_counter() - t0
    t0 = time.perf_counter()
    rows = list(solve_all(puzzle, items, heuristic=heuristic, threads=threads, problem=problem))
    return rows, load, time.perf_counter() - t0


def db_facts(puzzle, heuristic):
    """(build seconds, MB on disk) of the databases of ``heuristic`` from their headers."""
    from puzzlespace.pdb.heuristic import parse_groups

    groups = [tuple(g) for g in parse_groups(heuristic.partition(":")[2], puzzle.goal, puzzle.pattern_order())]
    seconds = size = 0.0
    for path, header, _ in listing():
        if header and header.get("goal") == list(puzzle.goal) and tuple(header.get("tiles", ())) in groups:
            seconds += header.get("seconds", 0.0)
            size += path.stat().st_size
    return seconds, size / 2**20


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench pdb", description=__doc__.splitlines()[0])
    ap.add_argument("--heuristics", default="pdb:7-8,auto,pdb:6-6-3")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--crosscheck", type=int, default=10)
    ap.add_argument("--out", type=Path, default=HERE / "results")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    harness.banner("pdb", f"{args.threads} threads")
    p = ps.load_puzzle("4x4", " ".join(map(str, range(16))))
    items = read_positions(p, KORF.read_text().splitlines())
    summary, first = [], None
    for label in args.heuristics.split(","):
        h = resolve_heuristic(p, label)
        print(f"{label} = {h}: loading or building the databases", flush=True)
        rows, load, wall = solve_set(p, items, h, args.threads)
        assert all(r.status == "solved" for r in rows), "an instance was not solved"
        name = "default" if label == "auto" else label.replace(":", "_")
        with open(args.out / f"korf100_{name}.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["id", "length", "nodes", "seconds"])
            for r in rows:
                w.writerow([r.id, r.length, r.nodes, f"{r.seconds:.6f}"])
        nodes = [r.nodes for r in rows]
        build_s, mb = db_facts(p, h)
        pub_nodes, pub_s = PUBLISHED.get(h, (0, None))
        summary.append((h if label == h else f"{label} ({h})", sum(nodes), statistics.mean(nodes), sum(r.seconds for r in rows), wall, load, build_s, mb,
                        pub_nodes, pub_s))
        published = f"{pub_nodes:,}" if pub_nodes else "none"
        print(f"{h}: 100 solved, lengths sum {sum(r.length for r in rows)}, nodes {sum(nodes):,} "
              f"(mean {statistics.mean(nodes):,.0f}; published {published}), search {sum(r.seconds for r in rows):.2f} s "
              f"summed, {wall:.2f} s wall on {args.threads} threads; tables loaded in {load:.1f} s; "
              f"build {build_s:.0f} s, {mb:.0f} MB on disk", flush=True)
        first = first or rows
    easiest = sorted(first, key=lambda r: r.nodes)[: args.crosscheck]
    print(f"cross-check: Manhattan-only IDA* on the {len(easiest)} instances with the fewest nodes", flush=True)
    md_rows, _, md_wall = solve_set(p, [(r.id, r.start) for r in easiest], "manhattan", args.threads)
    same = all(a.length == b.length for a, b in zip(easiest, md_rows))
    md_nodes, pdb_nodes = sum(r.nodes for r in md_rows), sum(r.nodes for r in easiest)
    md_s, pdb_s = sum(r.seconds for r in md_rows), sum(r.seconds for r in easiest)
    print(f"  ids {' '.join(r.id for r in easiest)}: lengths {'agree' if same else 'DISAGREE'}; "
          f"Manhattan {md_nodes:,} nodes {md_s:.2f} s vs {args.heuristics.split(',')[0]} {pdb_nodes:,} nodes "
          f"{pdb_s:.3f} s: {md_nodes / pdb_nodes:,.0f}x fewer nodes, {md_s / max(pdb_s, 1e-9):,.0f}x faster",
          flush=True)
    with open(args.out / "korf100_crosscheck.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "length_pdb", "nodes_pdb", "seconds_pdb", "length_manhattan", "nodes_manhattan",
                    "seconds_manhattan"])
        for a, b in zip(easiest, md_rows):
            w.writerow([a.id, a.length, a.nodes, f"{a.seconds:.6f}", b.length, b.nodes, f"{b.seconds:.6f}"])
    q = ps.load_puzzle("4x3")
    start = q.parse_position("0 3 2 1/8 7 6 5/4 11 10 9")
    times = {}
    for h in (q.default_heuristic(), "walking"):
        prob = search_problem_for(q, h)
        ps.solve(q, start, heuristic=h, problem=prob)  # warm-up
        runs = [ps.solve(q, start, heuristic=h, problem=prob) for _ in range(5)]
        times[h] = (min(r.seconds for r in runs), statistics.median(r.seconds for r in runs), runs[0].nodes)
        print(f"4x3 seed instance (53 moves), {h}: best {times[h][0]:.4f} s, median {times[h][1]:.4f} s, "
              f"{times[h][2]:,} nodes")
    with open(args.out / "korf100_summary.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["heuristic", "nodes_total", "nodes_mean", "search_s_summed", "wall_s", "threads", "load_s",
                    "build_s", "disk_mb", "published_nodes_mean", "published_s_mean"])
        for s in summary:
            w.writerow([s[0], s[1], f"{s[2]:.0f}", f"{s[3]:.3f}", f"{s[4]:.3f}", args.threads, f"{s[5]:.2f}",
                        f"{s[6]:.1f}", f"{s[7]:.1f}", s[8], s[9]])
    print(f"results in {args.out}/korf100_*.csv")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
