"""Memory and disk: what a run needs, what the machine has, and parsing of sizes."""

from __future__ import annotations

import os
import re
import resource
import shutil
from pathlib import Path

from .errors import PuzzleError

_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str) -> int:
    """``"250M"``, ``"1.5G"``, ``"1024"`` -> bytes."""
    m = re.fullmatch(r"\s*([0-9]{1,12}(?:\.[0-9]{1,6})?)\s*([KMGT]?)(?:I?B)?\s*", text.upper())
    if not m:
        raise PuzzleError(f"size {text[:30]!r} is not a number of bytes such as 500M or 2G")
    size = int(float(m.group(1)) * _UNITS[m.group(2)])
    if size <= 0:
        raise PuzzleError(f"size {text!r} is not positive: give a limit such as 500M or 2G, or leave the option out")
    return size


def _proc_kib(path: str, field: str) -> int | None:
    """A ``Field:  N kB`` value from a Linux /proc file, in bytes (None elsewhere)."""
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def available_memory() -> int:
    """Bytes of memory available to a new allocation (MemAvailable on Linux)."""
    avail = _proc_kib("/proc/meminfo", "MemAvailable")
    return avail if avail is not None else os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")


def free_disk(path: Path) -> int:
    path = Path(path)
    while not path.exists():
        path = path.parent
    return shutil.disk_usage(path).free


def current_rss() -> int:
    """Resident memory of this process now, in bytes (the interpreter, NumPy, numba, ...)."""
    now = _proc_kib("/proc/self/status", "VmRSS")
    return now if now is not None else peak_rss()


def peak_rss() -> int:
    """Peak resident memory of this process so far, in bytes.

    Reads VmHWM on Linux (it belongs to this program's own address space); getrusage's
    maxrss can start from the parent's figure in a child process.
    """
    peak = _proc_kib("/proc/self/status", "VmHWM")
    return peak if peak is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n} B"
