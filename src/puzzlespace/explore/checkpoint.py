"""Checkpoints of an exploration: written after every complete layer, atomically.

A directory holds ``manifest.json`` and the files it names (``table-<d>.bin``, the
search's 2-bit table, and ``tablebase-<d>.bin`` when a tablebase is being recorded). Data files of a layer are written under new names, flushed and
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

FORMAT = "puzzlespace-checkpoint/2"


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
    tablebase: str = ""
    format: str = FORMAT
    version: str = field(default=__version__)


def _write_array(path: Path, data: np.ndarray) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "wb") as f:
        data.tofile(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def save(directory: Path, manifest: Manifest, table: np.ndarray, tablebase: np.ndarray | None) -> None:
    """Write one complete layer (and the tablebase so far, if any) and switch the manifest to it."""
    directory.mkdir(parents=True, exist_ok=True)
    manifest.table = f"table-{manifest.depth}.bin"
    _write_array(directory / manifest.table, table)
    manifest.tablebase = ""
    if tablebase is not None:
        manifest.tablebase = f"tablebase-{manifest.depth}.bin"
        _write_array(directory / manifest.tablebase, tablebase)
    tmp = directory / "manifest.json.tmp"
    tmp.write_text(json.dumps(asdict(manifest), indent=1))
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, directory / "manifest.json")
    for old in directory.glob("*.bin"):
        if old.name not in (manifest.table, manifest.tablebase):
            old.unlink()


def load(directory: Path, puzzle: str, goal: list[int], scheme: str, size: int, with_tablebase: bool):
    """The manifest, table and tablebase (None unless ``with_tablebase``) of a checkpoint
    that matches this run, or a clear error."""
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
    if with_tablebase and not manifest.tablebase:
        raise PuzzleError(f"the checkpoint in {str(directory)!r} was written without --save, so it holds no "
                          "tablebase; resume without --save, or start again")
    names = (manifest.table, manifest.tablebase) if with_tablebase else (manifest.table,)
    arrays = [_read_array(directory / name, ((size + 31) // 32) * 8) for name in names]
    return manifest, arrays[0], arrays[1] if with_tablebase else None


def _read_array(path: Path, expected: int) -> np.ndarray:
    if not path.exists() or path.stat().st_size != expected:
        raise PuzzleError(f"checkpoint file {str(path)!r} is missing or truncated")
    return np.fromfile(path, dtype=np.uint8)
