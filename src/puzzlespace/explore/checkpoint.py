"""Checkpoints of a layered search: written after a complete layer, atomically.

A directory holds ``manifest.json`` and the data files it names (for an exploration
``table-<d>.bin``, the search's 2-bit table, and ``tablebase-<d>.bin`` when a tablebase
is being recorded; for a pattern-database build ``table-<d>.bin`` and ``pdb-<d>.bin``).
Data files of a layer are written under new names, flushed and synced, and only then does
the manifest switch to them (``os.replace``), so a crash at any moment leaves the previous
complete layer readable. Older data files are removed after the switch; a write that
fails or is interrupted removes its temporary file.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .._version import __version__
from ..datafile import write_atomic
from ..errors import PuzzleError

FORMAT = "puzzlespace-checkpoint/2"
MANIFEST = "manifest.json"


@dataclass
class Manifest:
    """What an exploration's checkpoint holds; ``depth`` is the last complete layer (its states form the frontier)."""

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


def save_layer(directory: Path, manifest: dict, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` as ``<role>-<depth>.bin`` and switch ``manifest.json`` to them.

    ``manifest`` must hold ``depth``; it gains, for each role, the name of its file.
    """
    directory.mkdir(parents=True, exist_ok=True)
    names = {role: f"{role}-{manifest['depth']}.bin" for role in arrays}
    for role, data in arrays.items():
        write_atomic(directory / names[role], data.tofile)
    blob = json.dumps(dict(manifest, **names), indent=1).encode()
    write_atomic(directory / MANIFEST, lambda f: f.write(blob))
    for old in directory.glob("*.bin"):
        if old.name not in names.values():
            old.unlink()


def read_manifest(directory: Path) -> dict:
    """The manifest of the checkpoint in ``directory`` as a dict, or a clear error."""
    path = directory / MANIFEST
    if not path.exists():
        raise PuzzleError(f"no checkpoint to resume in {str(directory)!r} (no {MANIFEST})")
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise PuzzleError(f"checkpoint manifest {str(path)!r} is unreadable: {exc}") from None
    if not isinstance(data, dict):
        raise PuzzleError(f"checkpoint manifest {str(path)!r} is unreadable: not a JSON object")
    return data


def read_array(path: Path, expected: int) -> np.ndarray:
    """The bytes of one data file of a checkpoint, which must be ``expected`` bytes long."""
    if not path.exists() or path.stat().st_size != expected:
        raise PuzzleError(f"checkpoint file {str(path)!r} is missing or truncated")
    return np.fromfile(path, dtype=np.uint8)


def save(directory: Path, manifest: Manifest, table: np.ndarray, tablebase: np.ndarray | None) -> None:
    """Write one complete layer of an exploration (and the tablebase so far, if any)."""
    arrays = {"table": table} if tablebase is None else {"table": table, "tablebase": tablebase}
    fields = {k: v for k, v in asdict(manifest).items() if k not in ("table", "tablebase")}
    save_layer(directory, dict(fields, tablebase=""), arrays)


def load(directory: Path, puzzle: str, goal: list[int], scheme: str, size: int, with_tablebase: bool):
    """The manifest, table and tablebase (None unless ``with_tablebase``) of an exploration's
    checkpoint that matches this run, or a clear error."""
    path = directory / MANIFEST
    try:
        manifest = Manifest(**read_manifest(directory))
    except TypeError as exc:
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
    arrays = [read_array(directory / name, ((size + 31) // 32) * 8) for name in names]
    return manifest, arrays[0], arrays[1] if with_tablebase else None
