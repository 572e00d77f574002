"""Checkpoints of an exploration: written after every complete layer, atomically.

A directory holds ``manifest.json`` and the files it names (``table-<d>.bin``,
``frontier-<d>.bin``). Data files of a layer are written under new names, flushed and
synced, and only then does the manifest switch to them (``os.replace``), so a crash at
any moment leaves the previous complete layer readable. Older data files are removed
after the switch.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .._version import __version__
from ..errors import PuzzleError

FORMAT = "puzzlespace-checkpoint/1"


@dataclass
class Manifest:
    """What a checkpoint holds; ``depth`` is the last complete layer (its states form the frontier)."""

    puzzle: str
    goal: list[int]
    scheme: str
    size: int
    depth: int
    depth_counts: list[int]
    seconds: float
    table: str = ""
    frontier: str = ""
    format: str = FORMAT
    version: str = field(default=__version__)


def _write_array(path: Path, data: np.ndarray) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "wb") as f:
        data.tofile(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def save(directory: Path, manifest: Manifest, table: np.ndarray, frontier: np.ndarray) -> None:
    """Write one complete layer and switch the manifest to it."""
    directory.mkdir(parents=True, exist_ok=True)
    manifest.table = f"table-{manifest.depth}.bin"
    manifest.frontier = f"frontier-{manifest.depth}.bin"
    _write_array(directory / manifest.table, table)
    _write_array(directory / manifest.frontier, frontier)
    tmp = directory / "manifest.json.tmp"
    tmp.write_text(json.dumps(asdict(manifest), indent=1))
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, directory / "manifest.json")
    for old in directory.glob("*.bin"):
        if old.name not in (manifest.table, manifest.frontier):
            old.unlink()


def load(directory: Path, puzzle: str, goal: list[int], scheme: str, size: int):
    """The manifest and arrays of a checkpoint that matches this run, or a clear error."""
    path = directory / "manifest.json"
    if not path.exists():
        raise PuzzleError(f"no checkpoint to resume in {str(directory)!r} (no manifest.json)")
    try:
        data = json.loads(path.read_text())
        manifest = Manifest(**data)
    except (ValueError, TypeError) as exc:
        raise PuzzleError(f"checkpoint manifest {str(path)!r} is unreadable: {exc}") from None
    for key, want in (("format", FORMAT), ("puzzle", puzzle), ("goal", goal), ("scheme", scheme), ("size", size)):
        if getattr(manifest, key) != want:
            raise PuzzleError(
                f"checkpoint in {str(directory)!r} is for {key} {getattr(manifest, key)!r}, not {want!r}"
            )
    arrays = []
    for name, expected in ((manifest.table, (size + 3) // 4), (manifest.frontier, ((size + 63) // 64) * 8)):
        f = directory / name
        if not f.exists() or f.stat().st_size != expected:
            raise PuzzleError(f"checkpoint file {str(f)!r} is missing or truncated")
        arrays.append(np.fromfile(f, dtype=np.uint8))
    return manifest, arrays[0], arrays[1]
