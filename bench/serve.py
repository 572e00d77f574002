"""How fast ``puzzlespace serve`` answers a hint, once warm.

``python -m bench serve [--count 100] [--fresh-cache]``

Starts ``puzzlespace serve --port 0`` and, for 3x3, 4x3 and 4x4 (the default 6-6-3
databases), opens the puzzle (with ``--fresh-cache``, into an empty cache, so that the
first use builds the databases: that time is reported), then asks ``/api/solve`` for the
hint of ``--count`` uniformly random positions, each new to the server (no remembered
answer), over HTTP. Side by side, in the same run and on the same positions, the baseline:
the library's own optimal solve with the plan ready (``ps.solve``). Target: every hint in
under 0.5 s.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from urllib.parse import urlsplit

import numpy as np

from . import harness  # first: it puts this tree's src on sys.path
import puzzlespace as ps
from puzzlespace.solver import plan_solving

PUZZLES = ["3x3", "4x3", "4x4"]


def post(url: str, path: str, data: dict) -> dict:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=600)
    conn.request("POST", path, json.dumps(data), {"Content-Type": "application/json"})
    response = conn.getresponse()
    body = json.loads(response.read())
    if response.status != 200:
        raise SystemExit(f"{path}: {response.status} {body}")
    return body


def stats(times: list[float]) -> str:
    t = np.array(times)
    return f"{t.mean():.4f} | {np.percentile(t, 95):.4f} | {t.max():.4f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench serve", description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--fresh-cache", action="store_true", help="start from an empty cache (databases built)")
    args = ap.parse_args(argv)
    env = dict(os.environ)
    if args.fresh_cache:
        env["PUZZLESPACE_CACHE"] = os.environ["PUZZLESPACE_CACHE"] = tempfile.mkdtemp(prefix="bench-serve-")
    harness.banner("serve", f"{args.count} positions a puzzle")
    server = subprocess.Popen([sys.executable, "-m", "puzzlespace", "serve", "--port", "0", "--time-limit", "60"],
                              stdout=subprocess.PIPE, text=True, env=env)
    try:
        url = re.search(r"http://\S+/", server.stdout.readline()).group(0)
        print("| puzzle | first use s | hint over HTTP: mean s | p95 s | max s | baseline ps.solve: mean s | p95 s "
              "| max s | HTTP / baseline (mean) | mean length |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for name in PUZZLES:
            t0 = time.perf_counter()
            opened = post(url, "/api/open", {"name": name})
            while opened["build"] and not post(url, "/api/prepare", {"game": opened["game"]})["ready"]:
                time.sleep(0.5)  # the databases build in the server's background; it answers with their progress
            first = time.perf_counter() - t0
            p = ps.load_puzzle(name)
            plan = plan_solving(p).ready()
            rng = np.random.default_rng(2026)
            positions = [p.random_position(rng) for _ in range(args.count)]
            post(url, "/api/solve", {"game": opened["game"], "position": p.format_position(p.random_position(rng))})
            ps.solve(p, p.random_position(rng), plan=plan)  # warm: compiled code loaded in both processes
            served, direct, lengths = [], [], []
            for state in positions:
                t0 = time.perf_counter()
                answer = post(url, "/api/solve", {"game": opened["game"], "position": p.format_position(state)})
                served.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                sol = ps.solve(p, state, plan=plan)
                direct.append(time.perf_counter() - t0)
                assert answer["distance"] == sol.length and answer["hint"] is not None
                lengths.append(sol.length)
            ratio = np.mean(served) / np.mean(direct)
            print(f"| {name} | {first:.2f} | {stats(served)} | {stats(direct)} | {ratio:.2f} | "
                  f"{np.mean(lengths):.2f} |", flush=True)
    finally:
        server.terminate()
        server.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
