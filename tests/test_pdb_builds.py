"""Pattern-database builds that do not ambush the user: the cost said first, refusals, the
time limit, one overall progress, checkpoints that resume to the same file, and the cache's
list and remove commands."""

import json
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from click.testing import CliRunner

import puzzlespace as ps
from puzzlespace.cli import app
from puzzlespace import cache, calibration, resources
from puzzlespace.pdb import store
from puzzlespace.pdb.heuristic import pattern_plan, pattern_problem
from puzzlespace.pdb.space import PatternSpace

runner = CliRunner()
KORF_GOAL = " ".join(map(str, range(16)))
KORF_1 = "14 13 15 7/11 12 9 5/6 0 2 1/4 8 10 3"


def run(*args):
    return runner.invoke(app, list(args))


def test_the_cost_is_said_before_a_build_and_a_long_one_is_refused_under_a_time_limit(tmp_path):
    r = run("solve", "4x4", KORF_1, "--goal", KORF_GOAL, "--heuristic", "pdb:7-8", "--time-limit", "60",
            "--cache-dir", str(tmp_path))
    assert r.exit_code == 2, r.output
    said, refusal = r.stderr.splitlines()
    assert said.startswith("pattern databases pdb:7-8 for sliding:4x4: 2 of 2 tables to build, 576,576,000 entries")
    assert "on this machine" in said and "of memory" in said and "of disk" in said
    assert refusal.startswith("error: building pdb:7-8 takes about")
    assert refusal.endswith(f"build it first: puzzlespace pdb build 4x4 --heuristic pdb:7-8 --goal '{KORF_GOAL}'")
    assert not list(tmp_path.rglob("*.pspdb"))


def test_builds_that_do_not_fit_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(resources, "available_memory", lambda: 50 << 20)
    r = run("pdb", "build", "4x4", "--cache-dir", str(tmp_path))
    assert r.exit_code == 2 and "of memory but" in r.stderr.splitlines()[-1]
    monkeypatch.undo()
    monkeypatch.setattr(resources, "free_disk", lambda path: 1000)
    r = run("pdb", "build", "4x4", "--cache-dir", str(tmp_path))
    assert r.exit_code == 2 and "of disk but" in r.stderr.splitlines()[-1]
    assert not list(tmp_path.rglob("*.pspdb"))


def _instant(monkeypatch):
    """Builds estimated to take no time (so that a short time limit lets them start)."""
    monkeypatch.setattr(store, "build_estimate", lambda *args: calibration.Estimate(1e-6, 1e-6))


def test_the_time_limit_stops_a_build_that_runs_long(tmp_path, monkeypatch):
    _instant(monkeypatch)
    r = run("solve", "4x4", KORF_1, "--goal", KORF_GOAL, "--time-limit", "0.3", "--cache-dir", str(tmp_path))
    assert r.exit_code == 3, r.output
    assert "stopped: the time limit was reached while building pdb:" in r.stderr
    assert "puzzlespace pdb build 4x4" in r.stderr


def test_the_apis_time_limit_counts_the_builds(tmp_path, monkeypatch):
    """ps.solve's time limit is the whole call's: a build it cannot finish is refused at
    once, one that runs out of time stops, and its partial build is listed and removable."""
    p = ps.load_puzzle("4x4", KORF_GOAL)
    start = p.parse_position(KORF_1)
    with cache.use(tmp_path):
        t0 = time.monotonic()
        with pytest.raises(ps.PuzzleError, match="more than the time limit leaves"):
            ps.solve(p, start, time_limit=0.5, heuristic="pdb:7-8")
        assert time.monotonic() - t0 < 5 and not list(tmp_path.rglob("*.pspdb"))
        _instant(monkeypatch)
        monkeypatch.setattr(store, "CHECKPOINT_SECONDS", 0.0)
        t0 = time.monotonic()
        with pytest.raises(ps.SearchStopped, match="time limit was reached while building pdb:1,4,5,8,9,12/.*"
                                                   "resumes where it stopped: puzzlespace pdb build sliding:4x4 "
                                                   "--heuristic pdb:.* --goal '0 1 2 3/4 5 6 7/8 9 10 11/12 13 14 15'"):
            ps.solve(p, start, time_limit=1.0)
        assert time.monotonic() - t0 < 4
        r = run("pdb", "list", "--cache-dir", str(tmp_path))
        partial = [line for line in r.stdout.splitlines() if "partial" in line]
        assert partial and all("KiB" in line or "MiB" in line for line in partial), r.stdout
        r = run("pdb", "remove", "--all", "--cache-dir", str(tmp_path))
        assert r.exit_code == 0 and not list(tmp_path.rglob("*.partial"))


def test_one_progress_for_all_builds_and_none_when_cached(tmp_path):
    p = ps.load_puzzle("4x3")
    seen = []
    pattern_problem(p, "pdb:3-3-3", cache_dir=tmp_path, progress=lambda d, t: seen.append((d, t)))
    totals = {t for _, t in seen}
    assert totals == {pattern_plan(p, "pdb:3-3-3").entries} == {3 * 12 * 11 * 10}
    done = [d for d, _ in seen]
    assert done == sorted(done) and done[-1] == 3 * 12 * 11 * 10
    again = []
    pattern_problem(p, "pdb:3-3-3", cache_dir=tmp_path, progress=lambda d, t: again.append(d))
    assert again == [] and pattern_plan(p, "pdb:3-3-3", cache_dir=tmp_path).build == []


def _group(puzzle="4x4", tiles=(1, 2, 3, 4, 5)):
    p = ps.load_puzzle(puzzle)
    return p, PatternSpace(p.graph.neighbors, p.goal, tiles)


def test_an_interrupted_build_resumes_to_the_same_file(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "CHECKPOINT_SECONDS", 0.0)
    p, space = _group()
    fresh = store.build(p.spec, p.goal, space)
    calls = [0]

    def ctrl_c_later() -> None:
        calls[0] += 1
        if calls[0] == 60:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        store.obtain(p.spec, p.goal, space, root=tmp_path, stop=ctrl_c_later)
    path = store.pdb_path(p.spec, p.goal, space.tiles, tmp_path)
    partial = store.partial_dir(path)
    manifest = json.loads((partial / "manifest.json").read_text())
    assert not path.exists() and 0 < manifest["depth"] and not list(partial.glob("*.tmp"))
    said = []
    resumed = store.obtain(p.spec, p.goal, space, root=tmp_path, notify=said.append)
    assert "resuming an interrupted build" in said[0]
    assert np.array_equal(resumed.table, fresh.table) and not partial.exists()
    assert np.array_equal(store.read(path).table, fresh.table)


def test_a_killed_build_resumes_with_pdb_build(tmp_path):
    """SIGKILL a build process once it has checkpointed; ``pdb build`` continues it."""
    script = textwrap.dedent(f"""
        import time
        import puzzlespace as ps
        from puzzlespace.pdb import store
        from puzzlespace.pdb.space import PatternSpace
        store.CHECKPOINT_SECONDS = 0.0
        p = ps.load_puzzle("4x4")
        space = PatternSpace(p.graph.neighbors, p.goal, (1, 2, 3, 4, 5))
        store.obtain(p.spec, p.goal, space, root={str(tmp_path)!r}, stop=lambda: time.sleep(0.01))
    """)
    proc = subprocess.Popen([sys.executable, "-c", script])
    p, space = _group()
    partial = store.partial_dir(store.pdb_path(p.spec, p.goal, space.tiles, tmp_path))
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        try:
            if json.loads((partial / "manifest.json").read_text())["depth"] >= 8:
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert (partial / "manifest.json").exists()
    r = run("pdb", "build", "4x4", "--heuristic", "pdb:1,2,3,4,5", "--cache-dir", str(tmp_path))
    assert r.exit_code == 0 and "resuming an interrupted build" in r.stderr, r.output
    assert run("pdb", "verify", "--cache-dir", str(tmp_path)).exit_code == 0
    built = store.read(store.pdb_path(p.spec, p.goal, space.tiles, tmp_path)).table
    assert np.array_equal(built, store.build(p.spec, p.goal, space).table)


def test_pdb_list_and_remove(tmp_path):
    cache = str(tmp_path)
    assert run("pdb", "build", "3x3", "--heuristic", "pdb:4-4", "--cache-dir", cache).exit_code == 0
    r = run("pdb", "list", "--cache-dir", cache)
    header, first, second, last = r.stdout.splitlines()
    assert header.split() == ["NAME", "PUZZLE", "TILES", "ENTRIES", "SIZE", "BUILT", "IN", "LAST", "USED"]
    assert "sliding:3x3" in first and "3,024" in first and " s " in first + " " and "-" in first.split()[-2]
    assert last.startswith("2 pattern databases in ") and "the whole cache:" in last
    name = first.split()[0]
    assert run("pdb", "remove", name, "--cache-dir", cache).exit_code == 0
    assert run("pdb", "list", "--cache-dir", cache).stdout.splitlines()[-1].startswith("1 pattern database in")
    r = run("pdb", "remove", "no-such-table", "--cache-dir", cache)
    assert r.exit_code == 2 and "no pattern database named 'no-such-table'" in r.stderr
    assert run("pdb", "remove", "--cache-dir", cache).exit_code == 2
    r = run("pdb", "remove", "--all", "--cache-dir", cache)
    assert r.exit_code == 0 and r.stdout.startswith("removed 1 pattern database")
    assert run("pdb", "list", "--cache-dir", cache).stdout.startswith("no pattern databases")


def test_the_build_bars_time_left_grows_while_the_entries_stall():
    """The time left is the larger of the estimate's remainder and the rate so far's: a
    build's last layers give few entries, and the bar says so rather than a second left."""
    from puzzlespace.calibration import time_left

    assert time_left(0.0, 0, 100, 10.0) == "about 10 s left"
    said = [time_left(elapsed, 88, 100, 9.0) for elapsed in (8.0, 16.0, 40.0)]
    assert said == ["about 1 s left", "about 2 s left", "about 5 s left"]
    assert time_left(600.0, 50, 100, 60.0) == "about 10 min left"
