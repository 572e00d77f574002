"""Helpers of the cluster tests: the command line run in this process, its JSON without
timings, and a cluster started by hand as docs/scaling.md says."""

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from puzzlespace.cli import app


def children(pid: int, nannies: bool = False) -> set[int]:
    """The processes whose parent is ``pid``, from /proc (with ``nannies``: Dask's, not
    multiprocessing's resource tracker)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid and (
                    not nannies or b"resource_tracker" not in (stat.parent / "cmdline").read_bytes()):
                found.add(int(stat.parent.name))
    return found


def run_cli(args):
    return CliRunner().invoke(app, args)


def comparable(out: str) -> dict:
    got = json.loads(out)
    for key in ("seconds", "peak_memory_bytes", "threads"):
        got.pop(key, None)
    return got


@contextlib.contextmanager
def started_by_hand(tmp_path, own_dirs: bool = False):
    """docs/scaling.md's recipe: a ``dask scheduler`` and two worker processes of one
    thread (one ``dask worker``, or with ``own_dirs`` two, each run in a directory of its
    own, ``w0`` and ``w1``), with the settings the page gives (read from it); yields the
    scheduler's address and process."""
    recipe = (Path(__file__).resolve().parent.parent / "docs" / "scaling.md").read_text()
    settings = dict(re.findall(r"^(DASK_DISTRIBUTED__\w+)=(\S+) \\$", recipe, re.M))
    assert settings.get("DASK_DISTRIBUTED__WORKER__MEMORY__PAUSE") == "False"
    address_file = tmp_path / "scheduler.json"
    dask = [sys.executable, "-m", "dask"]
    quiet = dict(cwd=tmp_path, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    started = [subprocess.Popen([*dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                 "--scheduler-file", str(address_file)], **quiet)]
    try:
        deadline = time.monotonic() + 60
        while not address_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        for cwd in [tmp_path / "w0", tmp_path / "w1"] if own_dirs else [tmp_path]:
            cwd.mkdir(exist_ok=True)
            started.append(subprocess.Popen([*dask, "worker", "--scheduler-file", str(address_file), "--nworkers",
                                             "1" if own_dirs else "2", "--nthreads", "1", "--memory-limit", "2GB",
                                             "--no-dashboard", "--local-directory", str(cwd / "workers")],
                                            env=dict(os.environ, **settings), **dict(quiet, cwd=cwd)))
        address = json.loads(address_file.read_text())["address"]
        with __import__("distributed").Client(address, timeout="60s") as client:
            client.wait_for_workers(2, timeout=60)
        yield address, started[0]
    finally:
        for process in reversed(started):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=60)
