"""The one layout of puzzlespace's binary data files (tablebases, pattern databases).

A file is a magic line naming its kind and version, an 8-byte little-endian header
length, a JSON header, then the data bytes. Writes are atomic (a temporary file renamed
over the target), so a reader never sees half a file.
"""

from __future__ import annotations

import json
import os
import struct
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator

import numpy as np

from .errors import PuzzleError


def write_atomic(path: Path, write) -> None:
    """Call ``write(file)`` on a temporary file beside ``path``, sync it, then rename it over ``path``.

    The temporary file is removed if anything fails (including Ctrl-C), so none is left behind.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise



def write(path: Path, magic: bytes, header: dict, data: np.ndarray) -> None:
    """Write ``magic``, ``header`` and ``data`` to ``path`` atomically (folders made as needed)."""
    blob = json.dumps(header).encode()
    path.parent.mkdir(parents=True, exist_ok=True)

    def body(f) -> None:
        f.write(magic)
        f.write(struct.pack("<Q", len(blob)))
        f.write(blob)
        data.tofile(f)

    write_atomic(path, body)


@contextmanager
def open_data(path: Path, magic: bytes, what: str) -> Iterator[tuple[dict, BinaryIO]]:
    """Open a data file: yields its header and the file positioned at the data.

    Raises PuzzleError, naming ``what`` (e.g. ``"tablebase"``) and the file, when it
    cannot be read, is not of this kind or has a corrupt header.
    """
    name = str(path)
    try:
        with open(path, "rb") as f:
            if f.read(len(magic)) != magic:
                raise PuzzleError(f"{name!r} is not a puzzlespace {what}")
            try:
                (n,) = struct.unpack("<Q", f.read(8))
                header = json.loads(f.read(n))
            except (ValueError, struct.error):
                header = None
            if not isinstance(header, dict):
                raise PuzzleError(f"{what} {name!r} has a corrupt header")
            yield header, f
    except OSError as exc:
        raise PuzzleError(f"{what} {name!r} cannot be read: {exc.strerror or exc}") from None
