"""A local cluster (``explore --workers``) when its client or one of its workers is
killed: nothing of the cluster outlives its client, and a lost worker is reported by
what is known, its likely causes and the command that continues the run."""

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from puzzlespace.explore import cluster

pytest.importorskip("distributed")

#: The environment variable that marks a test's processes (children inherit it).
MARK = "PUZZLESPACE_TEST_RUN"


def _marked(mark: str) -> set[int]:
    """The live processes whose environment holds ``MARK=mark`` (zombies are dead)."""
    found = set()
    for environ in Path("/proc").glob("[0-9]*/environ"):
        with contextlib.suppress(OSError, IndexError):
            if f"{MARK}={mark}".encode() in environ.read_bytes().split(b"\0") and \
                    "Z" not in (environ.parent / "stat").read_text().rsplit(")", 1)[1][:3]:
                found.add(int(environ.parent.name))
    return found


def _start(tmp_path, puzzle: str) -> tuple[subprocess.Popen, str, Path]:
    """``explore PUZZLE --workers 2 --out DIR`` in a marked process, once it has saved a
    layer (its workers then run): the process, its mark and DIR."""
    mark, out = uuid.uuid4().hex, tmp_path / "ck"
    proc = subprocess.Popen([sys.executable, "-m", "puzzlespace", "explore", puzzle, "--workers", "2", "--out",
                             str(out), "--json"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, **{MARK: mark}), start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError):
            if json.loads((out / "manifest.json").read_text())["depth"] >= 2:
                break
        time.sleep(0.05)
    assert time.monotonic() < deadline and proc.poll() is None
    return proc, mark, out


def test_nothing_of_a_local_cluster_outlives_its_killed_client(tmp_path):
    """SIGKILL of the client: its workers (and multiprocessing's resource tracker), which
    watch a pipe from it, leave within seconds."""
    proc, mark, _ = _start(tmp_path, "6x2")
    started = _marked(mark) - {proc.pid}
    assert len(started) >= 3  # two workers and the resource tracker
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 20
    while (left := _marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left


def test_a_lost_worker_is_said_by_what_is_known_then_its_likely_causes_then_what_is_left():
    said = cluster._lost_message(["tcp://b:2"], 7, "the checkpoint of layer 6 in 'ck' is intact: continue with --resume")
    assert said.startswith("worker tcp://b:2 left the cluster during layer 7, taking its segments with it (likely ")
    order = [said.index(words) for words in ("out-of-memory killer", "memory limit", "timeout", "with --resume")]
    assert order == sorted(order), said


def test_a_killed_worker_is_said_with_the_command_that_continues_the_run(tmp_path):
    proc, _, out = _start(tmp_path, "6x2")
    workers = [int(stat.parent.name) for stat in Path("/proc").glob("[0-9]*/stat")
               if _parent(stat) == proc.pid and b"resource_tracker" not in (stat.parent / "cmdline").read_bytes()]
    os.kill(workers[0], signal.SIGKILL)
    _, stderr = proc.communicate(timeout=120)
    line = stderr.strip().splitlines()[-1]
    assert proc.returncode == 2 and re.fullmatch(
        r"error: worker tcp://\S+ left the cluster during layer \d+, taking its segments with it \(likely killed by "
        r"the system's out-of-memory killer .*\); the checkpoint of layer \d+ in .* is intact: continue with: "
        rf"puzzlespace explore 6x2 --out {re.escape(str(out))} --resume --workers 2 --json", line), stderr


def _parent(stat: Path) -> int | None:
    with contextlib.suppress(OSError, IndexError, ValueError):
        return int(stat.read_text().rsplit(")", 1)[1].split()[1])
    return None
