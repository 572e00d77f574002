"""Where cached tablebases and pattern databases live: the folder given to :func:`use`
(the command line's ``--cache-dir``), else ``$PUZZLESPACE_CACHE``, else
``$XDG_CACHE_HOME/puzzlespace``, else ``~/.cache/puzzlespace``."""

from __future__ import annotations

import hashlib
import os
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .contracts import PuzzleRules as Puzzle


_CHOSEN: list[Path | None] = [None]


@contextmanager
def use(root: str | Path) -> Iterator[Path]:
    """Within the block, the cache is ``root``."""
    before = _CHOSEN[0]
    _CHOSEN[0] = Path(root)
    try:
        yield _CHOSEN[0]
    finally:
        _CHOSEN[0] = before


def cache_dir() -> Path:
    """The cache folder now in force (see the module docstring)."""
    if _CHOSEN[0] is not None:
        return _CHOSEN[0]
    if os.environ.get("PUZZLESPACE_CACHE"):
        return Path(os.environ["PUZZLESPACE_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "puzzlespace"


def used_bytes() -> int:
    """The bytes of every file under :func:`cache_dir`."""
    root = cache_dir()
    return sum(f.stat().st_size for f in root.rglob("*") if f.is_file()) if root.exists() else 0


def file_stem(identity: str, goal) -> str:
    """A file-name stem for a puzzle (its identity) and goal: the identity made safe, then a digest of the goal."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", identity)[-60:]
    return f"{slug}-{hashlib.sha1(' '.join(map(str, goal)).encode()).hexdigest()[:12]}"


def tablebase_path(puzzle: Puzzle) -> Path:
    """The cache file for ``puzzle``'s tablebase (one per puzzle and goal)."""
    return cache_dir() / "tables" / f"{file_stem(puzzle.identity, puzzle.goal)}.pstb"
