"""Checkpoints of an exploration: resume, with a tablebase, after SIGKILL."""

import json
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import puzzlespace as ps
from puzzlespace.explore import explore


def test_checkpoint_and_resume(tmp_path):
    p = ps.load_puzzle("4x2")
    whole = explore(p)
    partial = explore(p, out_dir=tmp_path, stop_at_depth=20)
    assert partial.max_depth == 20
    resumed = explore(p, out_dir=tmp_path, resume=True)
    assert resumed.depth_counts == whole.depth_counts and set(resumed.antipodes) == set(whole.antipodes)
    assert [f.name for f in sorted(tmp_path.iterdir())] == ["manifest.json", "table-36.bin"]
    with pytest.raises(ps.PuzzleError, match="not"):
        explore(ps.load_puzzle("4x2", goal="0 1 2 3/4 5 6 7"), out_dir=tmp_path, resume=True)
    with pytest.raises(ps.PuzzleError, match="without --save"):
        explore(p, out_dir=tmp_path, resume=True, keep_table=True)

def test_resume_keeps_recording_the_tablebase(tmp_path):
    p = ps.load_puzzle("4x2")
    whole = explore(p, keep_table=True)
    explore(p, out_dir=tmp_path, stop_at_depth=17, keep_table=True)
    assert sorted(f.name for f in tmp_path.iterdir()) == ["manifest.json", "table-17.bin", "tablebase-17.bin"]
    resumed = explore(p, out_dir=tmp_path, resume=True, keep_table=True)
    assert resumed.depth_counts == whole.depth_counts
    assert np.array_equal(resumed.table, whole.table)

def test_sigkill_mid_layer_then_resume(tmp_path):
    """Kill the process (SIGKILL) in the middle of a layer; the resumed run gives the same result."""
    out = tmp_path / "ck"
    cmd = [sys.executable, "-m", "puzzlespace.cli", "explore", "5x2", "--out", str(out), "--json", "--threads", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline:
        manifest = out / "manifest.json"
        if manifest.exists() and json.loads(manifest.read_text())["depth"] >= 25:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    depth = json.loads((out / "manifest.json").read_text())["depth"]
    assert 25 <= depth < 55
    resumed = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, check=True)
    data = json.loads(resumed.stdout)
    fresh = explore(ps.load_puzzle("5x2"))
    assert data["depth_counts"] == fresh.depth_counts and data["antipode_count"] == fresh.antipode_count
