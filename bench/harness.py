"""Helpers shared by the benchmark scripts (``bench_solve.py``, ``bench_explore.py``).

The machine (CPU model, load, pinning), the measured package (its digest, a snapshot
copy, the ``puzzlespace`` console script) and the number formats of the tables.

The scripts run as ``python bench/<script>.py``, so this folder is on ``sys.path`` and
they ``import harness`` directly (no ``bench`` package needed). Standard library only.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Optional

__all__ = ["cpu_model", "loadavg", "load1", "core_seconds", "pin_one_cpu", "src_digest", "snapshot_package",
           "cli_executable", "fmt_s", "fmt_int", "fmt_rate"]


# --------------------------------------------------------------------------- machine

def cpu_model() -> str:
    """The CPU's model name from ``/proc/cpuinfo`` (else ``platform.processor()``)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def loadavg() -> str:
    """The 1-, 5- and 15-minute load averages as printed text ("?" where unknown)."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def load1() -> float:
    """The 1-minute load average (0.0 where unknown)."""
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError):
        return 0.0


def core_seconds(process) -> float:
    """User plus system CPU seconds a process has spent (``process``: a ``psutil.Process``)."""
    times = process.cpu_times()
    return times.user + times.system


def pin_one_cpu() -> str:
    """Pin this process (and the children it starts later) to its last allowed CPU; says how."""
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity)"
    cpus = sorted(os.sched_getaffinity(0))
    cpu = cpus[-1]
    os.sched_setaffinity(0, {cpu})
    return f"pinned to CPU {cpu} (of {len(cpus)} allowed)"


# --------------------------------------------------------------------------- the measured package

def src_digest(src: Path) -> str:
    """A short digest of a puzzlespace source tree (its .py files, names and contents)."""
    h = hashlib.sha256()
    for path in sorted(src.rglob("*.py")):
        h.update(str(path.relative_to(src)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


def snapshot_package(src: Path, *, import_here: bool = False) -> Path:
    """Copy the package at ``src`` to a temporary folder and return the copy's path.

    The working tree may be edited while a benchmark runs (minutes); measuring a copy
    taken at the start keeps every row on one and the same version. The copy goes first
    on the subprocesses' ``PYTHONPATH`` (ahead of the editable install's path entry) and,
    with ``import_here``, on this process's ``sys.path`` too. Its numba cache starts
    empty: the warm-up runs fill it. The caller removes ``result.parent`` when done.
    """
    root = Path(tempfile.mkdtemp(prefix="puzzlespace-bench-"))
    shutil.copytree(src, root / src.name, ignore=shutil.ignore_patterns("__pycache__"))
    if import_here:
        sys.path.insert(0, str(root))
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
    return root / src.name


def cli_executable() -> list[str]:
    """The ``puzzlespace`` console script of this interpreter (not a pyenv shim)."""
    beside = Path(sys.executable).parent / "puzzlespace"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("puzzlespace")
    if found:
        return [found]
    return [sys.executable, "-m", "puzzlespace.cli"]


# --------------------------------------------------------------------------- number formats

def fmt_s(x: Optional[float]) -> str:
    """Seconds as ms below 1 s, s below an hour, h above ("-" for None)."""
    if x is None:
        return "-"
    if x >= 3600:
        return f"{x / 3600:.2f} h"
    return f"{x * 1000:.1f} ms" if x < 1 else f"{x:.2f} s"


def fmt_int(x) -> str:
    """An integer with thousands separators ("-" for None)."""
    return "-" if x is None else f"{x:,}"


def fmt_rate(x: Optional[float]) -> str:
    """A rate per second as M/s, or k/s below 100,000/s ("-" for None)."""
    if x is None:
        return "-"
    return f"{x / 1e6:.2f} M/s" if x >= 1e5 else f"{x / 1e3:.1f} k/s"


def time_process(cmd: list[str], repeat: int) -> tuple[list[float], str]:
    """Run ``cmd`` once to warm up, then ``repeat`` times; return the timed runs' seconds
    and the last run's stdout. A failing run raises RuntimeError with its stderr."""
    import subprocess
    import time

    times, out = [], ""
    for i in range(repeat + 1):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        dt = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"{cmd} failed ({proc.returncode}): {proc.stderr.strip()}")
        out = proc.stdout
        if i:
            times.append(dt)
    return times, out
