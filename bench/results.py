"""The explorations docs/results.md lists, a row each, in the table format of that page.

``python -m bench results [--threads N] [--out FILE]`` explores each puzzle of ``JOBS`` in
memory (a few minutes on 2 cores) and writes the rows to ``--out`` (default
``docs/results-generated.md``). There is no baseline: each row is a result, and a
complete exploration checks its depth counts against the family's count of positions.

``python -m bench results --from-json RUN.json ...`` prints the rows of runs too long for
this suite, from the ``explore --json`` output of each and the GNU ``time -v`` report
beside it (``RUN.time.txt``: the command and its wall time).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time
from pathlib import Path

from . import harness
import puzzlespace as ps
from puzzlespace.explore import explore

JOBS = [
    ("jump:9", None), ("jump:10", None), ("jump:11", None),
    ("jump:9:1,3", None), ("jump:10:1,3", None), ("jump:11:1,3", None),
    ("flip:6x4", None), ("flip:6x5", None), ("flip:6x6", None), ("flip:7x6", None),
    ("3x3", "1 2 3/4 0 5/6 7 8"), ("3x3", "1 0 2/3 4 5/6 7 8"), ("3x3", "0 1 2/3 4 5/6 7 8"),
    ("graph:examples/petersen.toml", None), ("graph:examples/theta0.toml", None),
    ("graph:examples/theta.json", None),
]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench results", description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="threads (default: the cores)")
    ap.add_argument("--out", default="docs/results-generated.md", help="the rows written (default docs/results-generated.md)")
    ap.add_argument("--from-json", nargs="+", metavar="RUN.json", help="rows from saved runs instead")
    args = ap.parse_args(argv)
    if args.from_json:
        for path in args.from_json:
            print("\n".join(saved_rows(Path(path))))
        return 0
    lines = [
        f"Machine: `nproc` = {os.cpu_count()}, CPU `{harness.cpu_model()}`, Python {platform.python_version()}; "
        f"date {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; {args.threads} threads.",
        "",
        "| command | states | God's number | antipodes | first antipodes | seconds |",
        "|---|---:|---:|---:|---|---:|",
    ]
    for spec, goal in JOBS:
        p = ps.load_puzzle(spec, goal)
        t0 = time.perf_counter()
        r = explore(p, threads=args.threads, antipode_limit=3)
        cmd = f"puzzlespace explore {spec}" + (f' --goal "{goal}"' if goal else "")
        shown = "; ".join(f"`{p.format_position(s)}`" for s in r.antipodes)
        lines.append(f"| `{cmd}` | {r.states:,} | {r.max_depth} | {r.antipode_count:,} | {shown} | "
                     f"{time.perf_counter() - t0:.1f} |")
        counts = ", ".join(map(str, r.depth_counts))
        lines.append(f"| ↳ depth counts | {counts} | | | | |")
        print(lines[-2], flush=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    return 0


def saved_rows(path: Path) -> list[str]:
    """A result row and its depth counts from a saved ``explore --json`` run."""
    r = json.loads(path.read_text())
    p = ps.load_puzzle(r["puzzle"])
    report = path.with_name(path.stem + ".time.txt").read_text()
    command = report.split('Command being timed: "', 1)[1].split('"', 1)[0]
    wall = report.split("Elapsed (wall clock) time (h:mm:ss or m:ss): ", 1)[1].split()[0]
    shown = "; ".join(f"`{p.format_position(tuple(s))}`" for s in r["antipodes"][:3])
    return [f"| `{command}` | {r['states']:,} | {r['max_depth']} | {r['antipode_count']:,} | {shown} | "
            f"{r['seconds']:.0f} s ({wall} wall) |",
            f"| ↳ depth counts | {', '.join(map(str, r['depth_counts']))} | | | | |"]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
