"""``python -m bench LIST`` lists the suites; ``python -m bench NAME [ARGS...]`` runs one
(``python -m bench NAME --help`` for its options). Run from the repository root, in the
environment puzzlespace is installed in: every suite prints its baseline beside its figure.
"""

from __future__ import annotations

import importlib
import sys

#: name: (module, what it measures, the baseline it runs beside it, about how long on 2 cores)
SUITES = {
    "solve": ("solve", "optimal solving of 3x3 (31 moves) and 4x3 (53 moves), warm API and whole command, one core",
              "bench/seed_ida.py, a plain-CPython IDA* (Manhattan), in the same process and as a process",
              "2 min (the baseline's 4x3 stopped at --cap 60 s); 5 min with --full"),
    "explore": ("explore", "explore 3x3, flip:5x5, 4x3 and 6x2 as whole commands: time and peak RSS",
                "bench/seed_bfs.py, a plain-CPython BFS over a byte a rank: 3x3 run whole, 4x3 and 6x2 "
                "extrapolated from its first 24 layers", "3 min; --quick 30 s"),
    "mtm-explore": ("mtm_explore", "explore 4x3:mtm, 5x2:mtm and 6x2:mtm (multi-tile metric) as whole commands: "
                    "engine seconds and peak RSS", "explore of the same boards in the single-tile metric, "
                    "alternated in the same run", "4 min"),
    "scale": ("scale", "explore by segments in files (marks packed, and --marks bitmap) and, with --workers W, "
              "on a local Dask cluster", "the in-memory engine, alternated in the same run",
              "2 min for 4x3 6x2, 5 more for flip:7x6; --full adds 7x2 out of core (35 min)"),
    "cluster-memory": ("cluster_memory", "a run on W workers each limited to its share of the table plus --over GB: "
                       "whether it completes, the largest worker's peak", "the in-memory engine right after it",
                       "25 min and 11 GB for 7x2 on 4 workers, the in-memory run included"),
    "ab": ("ab", "two versions of whole commands (explore, pdb build, batch), alternated",
           "the commit --base, checked out in a git worktree", "1-3 min a case"),
    "pdb": ("pdb", "Korf's 100 with pattern databases (7-8, the default 6-6-3 blocks, 6-6-3), the 4x3 instance",
            "Manhattan IDA* on the 10 easiest, the walking bound on 4x3, the published node counts",
            "1 min with the databases built (7-8: 7 min and 2.2 GB to build)"),
    "pdb24": ("pdb24", "24-puzzle positions solved optimally with 6-6-6-6 databases",
              "each position's linear-conflict bound; --compare HEURISTIC solves each again",
              "seconds to minutes a position (5-8 min to build the tables)"),
    "suboptimal": ("suboptimal", "weighted and anytime IDA* on Korf's 100, the 24-puzzle at weight 2, --method fast",
                   "the optimum (weight 1), linear-conflict, slidingpuzzle's searches (--slidingpuzzle PYTHON)",
                   "1 min; up to 20 with slidingpuzzle"),
    "mtm-solve": ("mtm_solve", "optimal multi-tile-metric solves: the 4x3:mtm antipodes, the transposed 15-puzzle goal, "
                  "random 15-puzzle positions (pdb:6-6-3 line-move tables)",
                  "the same positions solved in the single-tile metric", "10-20 min (2 min to build the tables)"),
    "optimal": ("optimal", "every optimal solution counted: the 8-puzzle's antipodes, a 53-move 4x3 position",
                "a search of the position's layers; one optimal solve of the same position", "1 min"),
    "pages": ("pages", "solve --html and --svg: the page and picture made from a solution",
              "the solve itself", "1 min"),
    "serve": ("serve", "puzzlespace serve: hints of random 3x3, 4x3 and 4x4 positions over HTTP",
              "ps.solve of the same positions in this process", "1 min a 100 positions"),
    "first-minute": ("first_minute", "start-up, first runs on an empty numba cache, install and demo",
                     "a base commit (default d1a6c94) in a git worktree", "3 min"),
    "estimates": ("estimates", "pattern-database builds and an exploration, predicted, then run",
                  "the estimate the calibration replaced (1.4e-6 core-s an entry)",
                  "1 min; 10 more with the 5x5 build (--skip-24 leaves it out)"),
    "newcomer": ("newcomer", "the README's two set-up commands in a fresh clone, environment and cache",
                 "the same for --base REV", "15 min a version (the test suite); --install-only 1 min"),
    "counts": ("counts", "counting a 2-bit table's values (each checkpoint read back), GB/s",
               "the byte-at-a-time count it replaced, alternated", "10 s a GiB"),
    "cost-model": ("cost_model", "a cost model fitted to a cluster run's layer lines, projected to larger boards",
                   "the run's own seconds (the fit's check)", "seconds"),
    "results": ("results", "the explorations docs/results.md lists, a row each",
                "none: results, each checked against the family's count of positions", "5 min"),
}


def listing() -> str:
    """One line a suite: name, what it measures, its baseline, about how long."""
    width = max(map(len, SUITES))
    return "\n".join(f"{name:<{width}}  {what}; beside: {baseline}; {duration}"
                     for name, (_, what, baseline, duration) in SUITES.items())


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("LIST", "list", "-h", "--help"):
        print(__doc__.strip() + "\n\n" + listing())
        return 0
    name, args = argv[0], argv[1:]
    if name not in SUITES:
        print(f"no suite {name!r}; `python -m bench LIST` lists them", file=sys.stderr)
        return 2
    module = importlib.import_module(f"bench.{SUITES[name][0]}")
    return module.main(args) or 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
