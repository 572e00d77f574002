"""The one layout of puzzlespace's binary data files (tablebases, pattern databases), and
the checks every file read back goes through.

A file is a magic line naming its kind and version, an 8-byte little-endian header
length (at most :data:`MAX_HEADER`), a JSON header, then the data bytes. The header
carries ``header_sha256``, the SHA-256 of its own canonical JSON (sorted keys, without
that field), and each kind of file a checksum of its data; files written before the
header checksum existed are read with their fields validated one by one. Writes are
atomic (a temporary file with a unique name, synced, renamed over the target), so a
reader never sees half a file.
"""

from __future__ import annotations

import fcntl
import hashlib
import itertools
import json
import os
import random
import re
import struct
import time
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator

import numpy as np

from .errors import DamagedFile, PuzzleError


def write_atomic(path: Path, write) -> None:
    """Call ``write(file)`` on a temporary file beside ``path``, sync it, rename it over
    ``path`` and sync the folder, so that the new file survives a power cut.

    The temporary file is removed if anything fails (including Ctrl-C), so none is left behind.
    A ``path`` that is there but neither a file nor a folder (a device such as /dev/null or
    /dev/stdout, a named pipe) is written as a stream: opened and written, never replaced.
    """
    if path.exists() and not path.is_file() and not path.is_dir():
        with open(path, "wb") as f:
            write(f)
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # the form _remove_temporaries looks for
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (where the system can: not every one syncs folders)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


#: The largest header a data file may declare, in bytes.
MAX_HEADER = 1 << 20


def digest(data) -> str:
    """SHA-256 of a buffer (a NumPy array's memory, bytes), as hex."""
    return hashlib.sha256(data).hexdigest()


def digest_parts(parts) -> str:
    """SHA-256 of the concatenation of arrays, as hex."""
    check = hashlib.sha256()
    for part in parts:
        check.update(part.data)
    return check.hexdigest()


def header_digest(header: dict) -> str:
    """SHA-256 of a header's canonical JSON, without its ``header_sha256`` field."""
    fields = {k: v for k, v in header.items() if k != "header_sha256"}
    return digest(json.dumps(fields, sort_keys=True).encode())


def not_for(what: str, key: str, held, want) -> str:
    """Why ``what`` (a file, named), whose ``key`` is ``held``, is not for this run's
    ``want``. Puzzles are told apart by their identity
    (:attr:`~puzzlespace.contracts.PuzzleRules.identity`): one that differs only past its
    spec was made for other rules under the same name."""
    if key == "puzzle" and isinstance(held, str) and held.partition("#")[0] == str(want).partition("#")[0]:
        return (f"{what} was made for {held.partition('#')[0]} with other rules (its file has changed since, "
                f"or an earlier version made it): {held!r}, not {want!r}")
    return f"{what} is for {key} {held!r}, not {want!r}"


def write(path: Path, magic: bytes, header: dict, data) -> None:
    """Write ``magic``, ``header`` (with its checksum) and ``data`` to ``path`` atomically
    (folders made as needed). ``data``: an array, or a function that gives the data's
    parts (arrays) in order, called once."""
    blob = json.dumps(dict(header, header_sha256=header_digest(header))).encode()
    path.parent.mkdir(parents=True, exist_ok=True)

    def body(f) -> None:
        f.write(magic)
        f.write(struct.pack("<Q", len(blob)))
        f.write(blob)
        for part in (data() if callable(data) else [data]):
            f.write(np.ascontiguousarray(part).data)  # not tofile, which needs a file it can seek in

    write_atomic(path, body)


@contextmanager
def locked(target: Path, what: str, wait: bool = False, directory: bool = False) -> Iterator[None]:
    """Hold the write lock of ``target`` (a file, or with ``directory`` a folder's contents,
    the folder made if needed) for the block.

    The lock is an advisory ``flock`` on a hidden lock file beside the target (inside it,
    for a directory), released when the block ends or the process dies. Without ``wait``
    a second writer gets a PuzzleError at once; with it, it waits its turn. The lock file
    is removed as the block ends (while still held: a writer that opened it meanwhile
    locks a new one, see :func:`_hold`; one left by a killed process is simply reused),
    and so is a folder made for the lock that the block leaves empty (a refused run
    leaves nothing). Once the lock is held, the temporary files that a killed writer of
    the target left (:func:`write_atomic`'s, of the file or of any file in the folder)
    are removed: every writer of the target holds the lock, so none is being written.
    """
    target = Path(target)
    lock = target / ".lock" if directory else target.parent / f".{target.name}.lock"
    made = directory and not target.exists()
    fd = _hold(lock, target, what, wait)
    try:
        _remove_temporaries(target, directory)
        yield
    finally:
        _remove_held(lock, target if made else None)
        os.close(fd)


def claim(directory: Path, owner: str) -> int | None:
    """Hold ``directory`` for ``owner`` (a name without ``/``) among the processes of this
    machine: any number of them may hold it for one owner at a time, none for another.
    Returns the descriptor that holds it (to give to :func:`let_go`), or None when a live
    process holds it for another owner.

    A claim is a shared ``flock`` on ``.claim-<owner>`` in the directory (made if needed),
    released when the process dies; a later claim removes the file of one no process
    holds. Claims are made and let go one at a time, under the lock of ``claims`` there
    (:func:`locked`)."""
    directory.mkdir(parents=True, exist_ok=True)
    with locked(directory / "claims", "the claims of", wait=True):
        if not all(_remove_unheld(other) for other in directory.glob(".claim-*") if other.name != f".claim-{owner}"):
            return None
        fd = os.open(directory / f".claim-{owner}", os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_SH)
        return fd


def let_go(directory: Path, owner: str, fd: int) -> None:
    """Let go of a :func:`claim` (its descriptor ``fd``), then remove its file when no
    other process holds it and the directory is still there; a file that cannot be
    removed (the disk full or read-only) stays, for the next claim to remove."""
    os.close(fd)
    if not directory.is_dir():
        return
    try:
        with locked(directory / "claims", "the claims of", wait=True):
            _remove_unheld(directory / f".claim-{owner}")
    except (OSError, PuzzleError):
        pass


def _remove_unheld(path: Path) -> bool:
    """Remove the claim file ``path`` unless a process holds it; whether none did."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    path.unlink(missing_ok=True)  # not claimed meanwhile: claims are made under the claims' lock
    return True


#: Seconds a writer keeps making a lock file's folder that other writers keep removing
#: (each as its block ends) before it gives up.
RACE_WAIT = 10.0


def _hold(lock: Path, target: Path, what: str, wait: bool) -> int:
    """A descriptor of the file ``lock`` (made, with its folder, if needed) holding its
    ``flock``. A lock file removed while it was being locked (by the holder ending its
    block) is locked again afresh, so that two writers never hold different files of one
    path; so is one whose folder that holder removed just before it was opened, for up to
    :data:`RACE_WAIT` seconds, a little later each time (at random: writers that keep
    coming and going do not keep meeting in step)."""
    deadline = time.monotonic() + RACE_WAIT
    for attempt in itertools.count():
        try:
            lock.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            gone = isinstance(exc, (FileNotFoundError, FileExistsError)) and (  # the folder removed meanwhile
                lock.parent.is_dir() or not lock.parent.exists())
            if gone and time.monotonic() < deadline:
                time.sleep(random.uniform(0, 1e-4 * min(attempt, 100)))
                continue
            raise PuzzleError(f"cannot write {what} {str(target)!r}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            raise PuzzleError(f"another puzzlespace process is writing {what} {str(target)!r}; wait for it to "
                              "finish or choose another path") from None
        held = os.fstat(fd)
        try:
            now = os.stat(lock)
            if (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)


def _remove_temporaries(target: Path, directory: bool) -> None:
    """Remove :func:`write_atomic`'s temporary files of ``target`` (of every file in it,
    with ``directory``); one that cannot be removed stays."""
    folder, name = (target, ".+") if directory else (target.parent, re.escape(target.name))
    temporary = re.compile(rf"\.{name}\.[0-9]+\.tmp")
    for tmp in folder.glob(".*.tmp"):
        if temporary.fullmatch(tmp.name) and tmp.is_file():
            try:
                tmp.unlink()
            except OSError:
                pass


def _remove_held(lock: Path, folder: Path | None) -> None:
    """Remove the held ``lock`` file, then ``folder`` (the one made for it) if that leaves
    it empty; what cannot be removed simply stays."""
    try:
        lock.unlink()
        if folder is not None:
            folder.rmdir()  # fails, as it should, on a folder that holds anything
    except OSError:
        pass


@contextmanager
def open_data(path: Path, magic: bytes, what: str) -> Iterator[tuple[dict, BinaryIO]]:
    """Open a data file: yields its header and the file positioned at the data.

    Raises PuzzleError, naming ``what`` (e.g. ``"tablebase"``) and the file, when it
    cannot be read, is not of this kind, or has a header that is too long, not a JSON
    object or fails its checksum.
    """
    name = str(path)
    try:
        with open(path, "rb") as f:
            if f.read(len(magic)) != magic:
                raise DamagedFile(f"{name!r} is not a puzzlespace {what}")
            header = _read_header(f)
            if header is None:
                raise DamagedFile(f"{what} {name!r} has a corrupt header")
            if "header_sha256" in header and header["header_sha256"] != header_digest(header):
                raise DamagedFile(f"{what} {name!r} has a corrupt header (checksum mismatch)")
            yield header, f
    except OSError as exc:
        raise PuzzleError(f"{what} {name!r} cannot be read: {exc.strerror or exc}") from None


def _read_header(f) -> dict | None:
    """The JSON header at the file's position, or None when it is not a sound one."""
    raw = f.read(8)
    if len(raw) != 8:
        return None
    (n,) = struct.unpack("<Q", raw)
    if n > MAX_HEADER:
        return None
    blob = f.read(n)
    if len(blob) != n:
        return None
    try:
        header = json.loads(blob.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    return header if isinstance(header, dict) else None


def require_int(header: dict, key: str, low: int, high: int, where: str) -> int:
    """``header[key]``, which must be a whole number in ``[low, high]`` (not a bool)."""
    value = header.get(key)
    if type(value) is not int or not low <= value <= high:
        raise DamagedFile(f"{where} has a corrupt header: {key!r} is {_shown(value)}")
    return value


def require_counts(header: dict, key: str, total: int, where: str) -> list[int]:
    """``header[key]``: a non-empty list of positive whole numbers that sum to at most ``total``."""
    value = header.get(key)
    if (not isinstance(value, list) or not value or len(value) > total
            or not all(type(c) is int and c > 0 for c in value) or sum(value) > total):
        raise DamagedFile(f"{where} has a corrupt header: {key!r} is not a list of positive counts "
                          f"summing to at most {total:,}")
    return value


def _shown(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."
