"""Helpers shared by the suites: the machine, the tree measured, other versions of it,
processes timed, and number formats. Standard library only.

Importing it puts this tree's ``src`` first on ``sys.path``, so that a suite measures
the tree it is in whatever else is installed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator, Optional

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
KORF = ROOT / "examples" / "korf100.txt"
KORF_GOAL = " ".join(map(str, range(16)))
TIME = "/usr/bin/time"

if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))


# --------------------------------------------------------------------------- the machine

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


def banner(suite: str, details: str = "") -> None:
    """The first line of a suite's output: what ran, on which machine, when, at which commit."""
    print(f"# python -m bench {suite}{': ' + details if details else ''}; at {git_describe()}; "
          f"{os.cpu_count()} cores, {cpu_model()}, load {loadavg()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
          flush=True)


def pin_one_cpu() -> str:
    """Pin this process (and the children it starts later) to its last allowed CPU; says how."""
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity)"
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpus[-1]})
    return f"pinned to CPU {cpus[-1]} (of {len(cpus)} allowed)"


# --------------------------------------------------------------------------- the tree and other versions

def git_describe() -> str:
    """``git describe --always --dirty`` of this tree."""
    return subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True,
                          text=True).stdout.strip() or "?"


def src_digest(src: Path) -> str:
    """A short digest of a puzzlespace source tree (its .py files, names and contents)."""
    h = hashlib.sha256()
    for path in sorted(src.rglob("*.py")):
        h.update(str(path.relative_to(src)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


def snapshot_package(src: Path, *, import_here: bool = False) -> Path:
    """Copy the package at ``src`` to a temporary folder and return the copy's path.

    The working tree may be edited while a suite runs (minutes); measuring a copy taken
    at the start keeps every row on one version. The copy goes first on the children's
    ``PYTHONPATH`` and, with ``import_here``, on this process's ``sys.path``. Its numba
    cache starts empty: the warm-up runs fill it. The caller removes ``result.parent``.
    """
    root = Path(tempfile.mkdtemp(prefix="puzzlespace-bench-"))
    shutil.copytree(src, root / src.name, ignore=shutil.ignore_patterns("__pycache__"))
    if import_here:
        sys.path.insert(0, str(root))
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
    return root / src.name


@contextlib.contextmanager
def worktree(rev: str) -> Iterator[Path]:
    """``rev`` checked out in a temporary git worktree (removed on exit); yields its root."""
    with tempfile.TemporaryDirectory(prefix="puzzlespace-base-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "worktree", "add", "-q", "--detach", str(tree), rev], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            yield tree
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)


def fresh_clone(rev: str, folder: Path) -> tuple[Path, dict]:
    """A clone of this repository at ``rev`` in ``folder`` with a new virtual environment
    and an empty puzzlespace cache: (the clone, the environment to run its commands in)."""
    clone = folder / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", rev], check=True)
    subprocess.run([sys.executable, "-m", "venv", str(clone / ".venv")], check=True)
    env = dict(os.environ, PUZZLESPACE_CACHE=str(folder / "cache"), VIRTUAL_ENV=str(clone / ".venv"),
               PATH=f"{clone / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}")
    for name in ("NUMBA_CACHE_DIR", "PYTHONPATH"):
        env.pop(name, None)
    return clone, env


def timed_shell(command: str, cwd: Path, env: dict) -> tuple[float, int, str]:
    """(wall seconds, exit status, last line of output) of a shell command."""
    t0 = time.perf_counter()
    done = subprocess.run(command, shell=True, cwd=cwd, env=env, capture_output=True, text=True)
    lines = (done.stdout + done.stderr).strip().splitlines()
    return time.perf_counter() - t0, done.returncode, lines[-1] if lines else ""


def cli_executable() -> list[str]:
    """The ``puzzlespace`` console script of this interpreter (not a pyenv shim)."""
    beside = Path(sys.executable).parent / "puzzlespace"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("puzzlespace")
    return [found] if found else [sys.executable, "-m", "puzzlespace"]


# --------------------------------------------------------------------------- processes timed

def time_process(cmd: list[str], repeat: int, cwd: Optional[Path] = None) -> tuple[list[float], str]:
    """Run ``cmd`` once to warm up, then ``repeat`` times; the timed runs' seconds and the
    last run's stdout. A failing run raises RuntimeError with its stderr."""
    times, out = [], ""
    for i in range(repeat + 1):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
        dt = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"{cmd} failed ({proc.returncode}): {proc.stderr.strip()}")
        out = proc.stdout
        if i:
            times.append(dt)
    return times, out


def run_measured(cmd: list[str], env: Optional[dict] = None) -> tuple[float, int, Optional[int], str, str]:
    """(wall seconds, exit status, peak RSS bytes, stdout, stderr) of one command.

    The peak is GNU ``time -f %M`` around the command (None without ``/usr/bin/time``).
    Not ``RUSAGE_CHILDREN`` of this process: on Linux a child's ``ru_maxrss`` starts from
    the RSS of the process that forked it, which may hold a large table; ``time`` is a
    small process, so its child's figure is the child's own.
    """
    with tempfile.TemporaryDirectory() as tmp:
        rss_file = Path(tmp) / "rss"
        full = [TIME, "-f", "%M", "-o", str(rss_file), *cmd] if Path(TIME).exists() else cmd
        t0 = time.perf_counter()
        proc = subprocess.run(full, capture_output=True, text=True, env=env)
        wall = time.perf_counter() - t0
        words = rss_file.read_text().split() if rss_file.exists() else []
        rss = int(words[-1]) * 1024 if words and words[-1].isdigit() else None
    return wall, proc.returncode, rss, proc.stdout, proc.stderr


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
