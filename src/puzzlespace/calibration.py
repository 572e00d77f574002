"""How long work takes on this machine: estimates from a short timed run of the real
kernels (a *probe*), kept in the cache. The one estimator of the command line, the API and
the page: :func:`puzzlespace.pdb.store.build_estimate` for pattern-database builds and
:func:`puzzlespace.explore.estimate.exploration_estimate` for explorations say what each
probes; this module keeps their rates and says an estimate in words.

A probe's seconds per unit (:func:`rate`) are kept in ``calibration.json`` in the cache
(:func:`puzzlespace.cache.cache_dir`), by probe, threads and machine (processor and
cores); compiling is never part of them (:mod:`puzzlespace.compiled`). A probe made while
the machine was busy is made again once it is not. While the machine is busy (its load
average above half its cores), an estimate is a range: up to ``1 + load / cores`` times
the calibrated time.
"""

from __future__ import annotations

import json
import os
import platform
import time
from dataclasses import dataclass

from .cache import cache_dir

#: The file in the cache that keeps the probes' rates.
FILE = "calibration.json"


@dataclass(frozen=True)
class Estimate:
    """Seconds some work is expected to take here: ``seconds`` as calibrated, ``high`` the
    upper end while the machine is busy (equal to ``seconds`` when it is not)."""

    seconds: float
    high: float

    def __add__(self, other: "Estimate") -> "Estimate":
        return Estimate(self.seconds + other.seconds, self.high + other.high)

    @property
    def busy(self) -> bool:
        return self.high > self.seconds * 1.05

    def __str__(self) -> str:
        if self.high < 1:
            return "under a second"
        low, high = _duration(self.seconds), _duration(self.high)
        if not self.busy or low == high:
            return f"about {low}"
        return f"about {low} to {high}, the machine being busy"


def time_left(elapsed: float, done: float, total: float, expected: float) -> str:
    """What is left of work ``expected`` to take that many seconds, ``elapsed`` seconds
    and ``done`` of ``total`` units into it: the larger of the estimate's remainder and
    what the rate so far leaves (a build's last layers give few entries, so neither alone
    holds to the end)."""
    left = max(expected - elapsed, elapsed * (total - done) / done if done else 0.0, 0.0)
    return f"about {left:.0f} s left" if left < 90 else f"about {left / 60:.0f} min left"


def _duration(seconds: float) -> str:
    if seconds < 1:
        return "1 s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def busy_factor() -> float:
    """How many times longer work may take now than on the idle machine: ``1 + load /
    cores`` while the 1-minute load average is above half the cores, else 1."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return 1.0
    cores = os.cpu_count() or 1
    return 1.0 + load / cores if load > cores / 2 else 1.0


def estimate(seconds: float) -> Estimate:
    """``seconds`` as calibrated on the idle machine, with the range the load says now."""
    return Estimate(seconds, seconds * busy_factor())


# ----- the cache of rates --------------------------------------------------------------
def machine() -> str:
    """The processor's model and the number of cores."""
    model = platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            model = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), model)
    except OSError:
        pass
    return f"{model} x{os.cpu_count()}"


def rate(probe: str, threads: int, measure) -> float:
    """Seconds per unit of ``probe`` on ``threads`` threads: from the cache, or measured by
    ``measure() -> (seconds, units)`` and kept (see the module docstring)."""
    key = f"{probe} | {threads} threads | {machine()}"
    kept = _read().get(key)
    busy = busy_factor() > 1
    if isinstance(kept, dict) and isinstance(kept.get("rate"), float) and (busy or not kept.get("busy")):
        return kept["rate"]
    seconds, units = measure()
    rate = max(seconds, 0.0) / max(units, 1)
    _write(key, {"rate": rate, "busy": busy, "when": round(time.time())})
    return rate


def _read() -> dict:
    try:
        value = json.loads((cache_dir() / FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _write(key: str, entry: dict) -> None:
    """Keep ``entry`` under ``key`` (written atomically; a cache that cannot be written is
    left as it is: the next estimate probes again)."""
    from .datafile import write_atomic

    rates = dict(_read(), **{key: entry})
    text = json.dumps(rates, indent=1, sort_keys=True).encode()
    try:
        (cache_dir()).mkdir(parents=True, exist_ok=True)
        write_atomic(cache_dir() / FILE, lambda f: f.write(text))
    except OSError:
        pass
