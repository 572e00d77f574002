"""Bytes of marks between segments on disk during an out-of-core exploration, packed or as bitmaps.

``python bench/marks_on_disk.py PUZZLE SEGMENTS packed|bitmap`` explores PUZZLE in
SEGMENTS segments under a fresh folder of the system's temporary folder and, after each
segment's visit, adds up the files of marks there (``sent-*`` by size, ``bits-*`` by the
blocks they take, holes left out); prints the engine's seconds and the most seen at once
(the marks of the pass being made and of the pass before, which a resume needs).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import puzzlespace as ps  # noqa: E402
from puzzlespace.explore.segments import explore_segmented  # noqa: E402


def main(argv: list[str]) -> int:
    name, segments, marks = argv[0], int(argv[1]), argv[2]
    out = Path(tempfile.mkdtemp(prefix="puzzlespace-marks-")) / "ck"
    most = [0]

    def seen(depth, done, total, states):
        on_disk = sum(p.stat().st_size for p in out.glob("sent-*.bin"))
        on_disk += sum(p.stat().st_blocks * 512 for p in out.glob("bits-*.bin"))
        most[0] = max(most[0], on_disk)

    t0 = time.perf_counter()
    try:
        result = explore_segmented(ps.load_puzzle(name), segments=segments, threads=2, out_dir=out, marks=marks,
                                   progress=seen)
    finally:
        shutil.rmtree(out.parent, ignore_errors=True)
    print(f"{name}, {segments} segments, marks {marks}: {result.states:,} states, {result.seconds:.1f} s of engine "
          f"({time.perf_counter() - t0:.1f} s wall); marks on disk at most {most[0] / 1e9:.3f} GB "
          f"(a bit per state: {result.states / 8e9:.3f} GB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
