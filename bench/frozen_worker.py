"""How long a run takes to stop once one of its workers stops answering.

``python bench/frozen_worker.py [PUZZLE] [--at DEPTH]`` starts a local cluster of two
workers of one thread, explores PUZZLE (default 4x3) with a checkpoint in a temporary
directory, stops one worker with SIGSTOP as layer DEPTH (default 30) begins (its
connections stay open, as a hung machine's do), and prints the seconds until the run
stopped and what it said. The scheduler drops a worker that sends no heartbeat for its
``distributed.scheduler.worker-ttl`` (set it with ``DASK_DISTRIBUTED__SCHEDULER__WORKER_TTL``,
as in ``docs/scaling.md``).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import puzzlespace as ps  # noqa: E402
from puzzlespace.errors import PuzzleError  # noqa: E402
from puzzlespace.explore.cluster import explore_distributed  # noqa: E402
from puzzlespace.explore.dask_cluster import local_cluster  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("puzzle", nargs="?", default="4x3")
    parser.add_argument("--at", type=int, default=30, help="the layer as which one worker is stopped")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as out, local_cluster(2, threads=1) as client:
        pids = client.run(os.getpid)
        victim = pids[sorted(pids)[1]]
        stopped: list[float] = []

        def stop(depth: int, done: int, total: int, states: int) -> None:
            if depth == args.at and not stopped:
                os.kill(victim, signal.SIGSTOP)
                stopped.append(time.monotonic())

        try:
            explore_distributed(ps.load_puzzle(args.puzzle), client, out_dir=out, progress=stop)
            print(f"the run finished: layer {args.at} never began")
        except PuzzleError as exc:
            print(f"stopped {time.monotonic() - stopped[0]:.1f} s after the worker: {exc}")
        finally:
            try:
                os.kill(victim, signal.SIGCONT)
            except ProcessLookupError:
                print("the stopped worker is gone (its nanny killed it)")


if __name__ == "__main__":
    main()
