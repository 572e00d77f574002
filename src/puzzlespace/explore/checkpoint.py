"""Checkpoints of a layered search: written after a complete layer, atomically.

A directory holds ``manifest.json`` and the data files it names (for an exploration
``table-<d>.bin``, the search's 2-bit table, and ``tablebase-<d>.bin`` when a tablebase
is being recorded; for a pattern-database build ``table-<d>.bin`` and ``pdb-<d>.bin``).
Data files of a layer are written under new names, flushed and synced, and only then does
the manifest switch to them (``os.replace``), so a crash at any moment leaves the previous
complete layer readable. Older data files are removed after the switch; a write that
fails or is interrupted removes its temporary file.

Nothing read back is trusted: the manifest carries the SHA-256 of every data file
(``sha256``, by role) and of its own canonical JSON (``checksum``), its fields are
validated, and an exploration's table must hold exactly the states its depth counts say.
"""

from __future__ import annotations

import errno
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .._version import __version__
from ..datafile import MAX_HEADER, digest, not_for, require_counts, require_int, write_atomic
from ..errors import PuzzleError
from ..resources import free_disk, human
from ..bits import CLOSED, layer_value, table_bytes, value_counts
from .tablebase import check_consistent

FORMAT = "puzzlespace-checkpoint/3"
MANIFEST = "manifest.json"
#: The names of a run by segments' data files (see :mod:`.segments`): a segment's table
#: or tablebase part in one of its two slots, or the marks sent to a segment in a pass.
SEGMENT_FILE = re.compile(r"(seg|tb)-\d+-[01]\.bin|(sent|bits)-\d+-\d+\.bin")
#: The names of the data files in a checkpoint directory: a one-process run's
#: (``<role>-<depth>.bin``) and a run by segments'. Runs replace or remove only these;
#: any other file in the directory is left alone.
DATA_FILE = re.compile(r"(table|tablebase|pdb)-\d+\.bin|" + SEGMENT_FILE.pattern)


def data_files(directory: Path) -> list[Path]:
    """The checkpoint data files (:data:`DATA_FILE`) in ``directory`` (none if it is not one)."""
    return [path for path in directory.glob("*.bin") if DATA_FILE.fullmatch(path.name)] if directory.is_dir() else []


def disk_room(directory: Path) -> int:
    """Free bytes of the disk of ``directory``, the checkpoint data files already there
    counted as free (a fresh run replaces them)."""
    return free_disk(directory) + sum(path.stat().st_size for path in data_files(directory))


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
    Raises OSError (ENOSPC) before writing anything when the disk lacks the room for the
    new files beside the old ones (each is written whole before it replaces any file), so
    the previous checkpoint stays whole. A write that fails removes the files it made that
    the manifest does not name.
    """
    directory.mkdir(parents=True, exist_ok=True)
    names = {role: f"{role}-{manifest['depth']}.bin" for role in arrays}
    need = sum(data.nbytes for data in arrays.values()) + MAX_HEADER
    free = free_disk(directory)
    if need > free:
        raise OSError(errno.ENOSPC, f"needs {human(need)}, {human(free)} free")
    try:
        _write_layer(directory, manifest, arrays, names)
    except BaseException:
        kept = _named_files(directory)
        for name in names.values():
            if name not in kept:
                (directory / name).unlink(missing_ok=True)
        raise
    for old in data_files(directory):
        if old.name not in names.values():
            old.unlink()


def _write_layer(directory: Path, manifest: dict, arrays: dict[str, np.ndarray], names: dict[str, str]) -> None:
    for role, data in arrays.items():
        write_atomic(directory / names[role], data.tofile)
    write_manifest(directory, dict(manifest, **names, sha256={role: digest(data.data) for role, data in arrays.items()}))


def write_manifest(directory: Path, fields: dict) -> None:
    """Write ``manifest.json`` atomically, with the checksum of its own fields."""
    blob = json.dumps(dict(fields, checksum=_checksum(fields)), indent=1).encode()
    write_atomic(directory / MANIFEST, lambda f: f.write(blob))


def peek_manifest(directory: Path) -> dict:
    """The manifest in ``directory`` as it is, unchecked, for a first look (which run it
    is of): empty if there is none or it cannot be read (not a plain file: a pipe would
    never end)."""
    path = directory / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError, RecursionError):
        return {}
    return manifest if isinstance(manifest, dict) else {}


def _named_files(directory: Path) -> set[str]:
    """The data files the manifest on disk names (none if it cannot be read)."""
    return {v for v in peek_manifest(directory).values() if isinstance(v, str) and v.endswith(".bin")}


def _checksum(fields: dict) -> str:
    return digest(json.dumps({k: v for k, v in fields.items() if k != "checksum"}, sort_keys=True).encode())


def intact(manifest: object) -> bool:
    """Whether ``manifest`` (as read) is a manifest whose fields match its checksum."""
    return isinstance(manifest, dict) and manifest.get("checksum") == _checksum(manifest)


#: The largest manifest read back, in bytes: a run by segments lists each one's files.
MAX_MANIFEST = 64 << 20
#: The most segments a run is cut into: its manifest (about 200 bytes a segment) then
#: stays well within :data:`MAX_MANIFEST`.
MAX_SEGMENTS = 1 << 16


def read_manifest(directory: Path, fix: str) -> dict:
    """The manifest of the checkpoint in ``directory``, its checksum verified, or an error
    that ends with ``fix`` (what the user should do)."""
    path = directory / MANIFEST
    if not path.is_file():
        raise PuzzleError(f"no checkpoint to resume in {str(directory)!r} (no {MANIFEST}): run it without --resume")
    try:
        if path.stat().st_size > MAX_MANIFEST:
            raise ValueError("too long")
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        data = None
    if not intact(data):
        raise PuzzleError(f"checkpoint manifest {str(path)!r} is damaged or from an older version; {fix}")
    return data


def read_array(directory: Path, manifest: dict, role: str, expected: int, fix: str) -> np.ndarray:
    """The data file of ``role``, which must be ``expected`` bytes long and match its checksum."""
    name = manifest.get(role)
    sums = manifest.get("sha256")
    path = directory / str(name)
    if not isinstance(name, str) or "/" in name or not isinstance(sums, dict):
        raise PuzzleError(f"checkpoint manifest in {str(directory)!r} names no {role} file; {fix}")
    if not path.is_file() or path.stat().st_size != expected:
        raise PuzzleError(f"checkpoint file {str(path)!r} is missing or truncated; {fix}")
    data = np.fromfile(path, dtype=np.uint8)
    if digest(data.data) != sums.get(role):
        raise PuzzleError(f"checkpoint file {str(path)!r} is corrupt (checksum mismatch); {fix}")
    return data


def save(directory: Path, manifest: Manifest, table: np.ndarray, tablebase: np.ndarray | None) -> None:
    """Write one complete layer of an exploration (and the tablebase so far, if any)."""
    arrays = {"table": table} if tablebase is None else {"table": table, "tablebase": tablebase}
    fields = {k: v for k, v in asdict(manifest).items() if k not in ("table", "tablebase")}
    save_layer(directory, dict(fields, tablebase=""), arrays)


#: What to do with an exploration checkpoint that cannot be used: a fresh run, which must replace it.
RERUN = "start again with --force (without --resume)"

#: A resume asked for without a checkpoint directory.
RESUME_NEEDS_OUT = "--resume needs --out DIR (the checkpoint directory)"


def holds_layer(found: list[int], counts: list[int], following: int = 0) -> bool:
    """Whether an exploration's table whose entries hold 0, 1, 2 and 3 as many times as
    ``found`` says is at layer ``len(counts) - 1`` as ``counts`` say: that layer's states
    its frontier, ``following`` states of the next, the earlier layers' closed."""
    depth = len(counts) - 1
    return (found[layer_value(depth)] == (counts[-1] if counts else 0) and found[layer_value(depth + 1)] == following
            and found[CLOSED] == sum(counts[:-1]))


def load(directory: Path, puzzle: str, goal: list[int], scheme: str, size: int, with_tablebase: bool):
    """The manifest, table and tablebase (None unless ``with_tablebase``) of an exploration's
    checkpoint that matches this run, each verified, or a clear error."""
    data = read_manifest(directory, RERUN)
    if data.get("format") != FORMAT:
        raise PuzzleError(f"checkpoint in {str(directory)!r} has format {data.get('format')!r}, not {FORMAT!r}; {RERUN}")
    for key, want in (("puzzle", puzzle), ("goal", goal), ("scheme", scheme), ("size", size)):
        if data.get(key) != want:
            raise PuzzleError(not_for(f"checkpoint in {str(directory)!r}", key, data.get(key), want))
    where = f"checkpoint manifest in {str(directory)!r}"
    try:
        counts = require_counts(data, "depth_counts", size, where)
        depth = require_int(data, "depth", 0, size, where)
    except PuzzleError as exc:
        raise PuzzleError(f"{exc}; {RERUN}") from None
    seconds = data.get("seconds")
    if depth != len(counts) - 1 or counts[0] != 1 or not isinstance(seconds, (int, float)) or not seconds >= 0:
        raise PuzzleError(f"{where} is inconsistent; {RERUN}")
    if with_tablebase and not data.get("tablebase"):
        raise PuzzleError(f"the checkpoint in {str(directory)!r} was written without --save, so it holds no "
                          "tablebase; resume without --save, or start again")
    nbytes = table_bytes(size)
    table = read_array(directory, data, "table", nbytes, RERUN)
    if not holds_layer(value_counts(table, size), counts):
        raise PuzzleError(f"checkpoint in {str(directory)!r} is corrupt (its table does not hold the states its "
                          f"depth counts say); {RERUN}")
    tablebase = None
    if with_tablebase:
        tablebase = read_array(directory, data, "tablebase", nbytes, RERUN)
        if not check_consistent(tablebase, size, counts):
            raise PuzzleError(f"checkpoint in {str(directory)!r} is corrupt (its tablebase does not match its "
                              f"depth counts); {RERUN}")
    manifest = Manifest(puzzle=puzzle, goal=goal, scheme=scheme, size=size, depth=depth, depth_counts=counts,
                        seconds=float(seconds), table=data["table"], tablebase=str(data.get("tablebase") or ""))
    return manifest, table, tablebase

