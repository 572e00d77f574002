"""Fault injection: damaged files are refused or read correctly, never used wrongly; a full
disk, a second writer and Ctrl-C at any moment end in one line and a documented status.

Each test tallies its trials as ``refused`` (a PuzzleError naming the file), ``correct``
(read back identical: the flipped bit was one the reader does not depend on) and
``wrong``, which must stay 0. ``docs/reliability.md`` reports the tallies (``pytest -s``
prints them).
"""

from __future__ import annotations

import errno
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter

import numpy as np
import pytest
from click.testing import CliRunner

import puzzlespace as ps
from puzzlespace import datafile
from puzzlespace.batch import FIELDS
from puzzlespace.cli import app
from puzzlespace.errors import PuzzleError
from puzzlespace.explore import checkpoint
from puzzlespace.explore import tablebase as tb
from puzzlespace.explore.engine import explore
from puzzlespace.pdb import store
from puzzlespace.pdb.space import PatternSpace

runner = CliRunner()
BODY_SAMPLE = 300


def _header_end(raw: bytes, magic: bytes) -> int:
    return len(magic) + 8 + int.from_bytes(raw[len(magic) : len(magic) + 8], "little")


def _flips(raw: bytes, positions):
    for byte in positions:
        for bit in range(8):
            damaged = bytearray(raw)
            damaged[byte] ^= 1 << bit
            yield bytes(damaged)


def _tally(name: str, outcomes: Counter) -> None:
    print(f"\n{name}: {sum(outcomes.values())} trials, " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())))
    assert outcomes["wrong"] == 0 and outcomes["refused without the file and the fix"] == 0, outcomes


def _try(read, same, names: tuple[str, ...] = ()) -> str:
    """``refused`` only with a message that holds every one of ``names`` (the file, the fix)."""
    try:
        got = read()
    except PuzzleError as exc:
        return "refused" if all(n in str(exc) for n in names) else "refused without the file and the fix"
    return "correct" if same(got) else "wrong"


def _body_sample(start: int, end: int, seed: int) -> list[int]:
    """Every byte of a body of at most ``BODY_SAMPLE`` bytes, else that many distinct ones at random."""
    if end - start <= BODY_SAMPLE:
        return list(range(start, end))
    return sorted(random.Random(seed).sample(range(start, end), BODY_SAMPLE))


@pytest.fixture(scope="module")
def small_tablebase(tmp_path_factory):
    p = ps.load_puzzle("3x2")
    r = explore(p, keep_table=True)
    path = tmp_path_factory.mktemp("tb") / "t.pstb"
    tb.save(path, p, p.state_index(), r.table, r.depth_counts)
    return p, path, tb.load(path, p)


def test_tablebase_bit_flips_are_refused_or_harmless(small_tablebase, tmp_path):
    p, path, good = small_tablebase
    raw = path.read_bytes()
    end = _header_end(raw, tb.MAGIC)
    victim = tmp_path / "v.pstb"
    outcomes: Counter = Counter()

    def same(t) -> bool:
        return t.depth_counts == good.depth_counts and np.array_equal(t.table, good.table)

    for positions in (range(end), _body_sample(end, len(raw), 1)):
        for damaged in _flips(raw, positions):
            victim.write_bytes(damaged)
            outcomes[_try(lambda: tb.load(victim, p), same, (str(victim), "make it again with explore --save"))] += 1
    _tally("tablebase (3x2): every header bit, every body bit", outcomes)


def test_pattern_database_bit_flips_are_refused_or_harmless(tmp_path):
    p = ps.load_puzzle("3x3")
    space = PatternSpace(p.graph.neighbors, p.goal, (1, 2))
    good = store.obtain(p.spec, p.goal, space, root=tmp_path)
    raw = good.path.read_bytes()
    end = _header_end(raw, store.MAGIC)
    victim = tmp_path / "v.pspdb"
    expected = store._expected(p.spec, p.goal, space)
    outcomes: Counter = Counter()
    for positions in (range(end), _body_sample(end, len(raw), 2)):
        for damaged in _flips(raw, positions):
            victim.write_bytes(damaged)
            outcomes[_try(lambda: store.read(victim, expected), lambda db: np.array_equal(db.table, good.table),
                          (str(victim),))] += 1
    _tally("pattern database (3x3, tiles 1,2): every header bit, every body bit", outcomes)


def test_checkpoint_bit_flips_are_refused_or_harmless(tmp_path):
    p = ps.load_puzzle("3x2")
    index = p.state_index()
    out = tmp_path / "ck"
    explore(p, out_dir=out, stop_at_depth=12, keep_table=True)
    manifest_raw = (out / "manifest.json").read_bytes()
    names = json.loads(manifest_raw)
    table_path, base_path = out / names["table"], out / names["tablebase"]
    tables = {path: path.read_bytes() for path in (table_path, base_path)}

    def load():
        return checkpoint.load(out, p.spec, list(p.goal), index.scheme, index.size, True)

    good = load()

    def same(got) -> bool:
        return got[0] == good[0] and np.array_equal(got[1], good[1]) and np.array_equal(got[2], good[2])

    outcomes: Counter = Counter()
    for damaged in _flips(manifest_raw, range(len(manifest_raw))):
        (out / "manifest.json").write_bytes(damaged)
        outcomes[_try(load, same)] += 1
    (out / "manifest.json").write_bytes(manifest_raw)
    for path, raw in tables.items():
        for damaged in _flips(raw, range(len(raw))):
            path.write_bytes(damaged)
            outcomes[_try(load, same)] += 1
        path.write_bytes(raw)
    _tally("checkpoint (3x2 at depth 12, with tablebase): every manifest bit, every table bit", outcomes)
    resumed = explore(p, out_dir=out, resume=True, keep_table=True)
    assert resumed.depth_counts == explore(p).depth_counts


def test_edited_manifest_fields_are_refused(tmp_path):
    p = ps.load_puzzle("3x2")
    out = tmp_path / "ck"
    explore(p, out_dir=out, stop_at_depth=10)
    original = json.loads((out / "manifest.json").read_text())
    edits = [("depth", original["depth"] + 1), ("depth", original["depth"] - 1), ("depth", "10"), ("depth", None),
             ("depth_counts", original["depth_counts"][:-1]), ("depth_counts", original["depth_counts"] + [1]),
             ("depth_counts", None), ("size", 10 ** 30), ("table", "../x.bin")]
    for key, value in edits:
        for rechecksummed in (False, True):
            data = dict(original, **{key: value})
            if rechecksummed:  # a careful forger: the manifest's own checksum fixed up
                data["checksum"] = checkpoint._checksum(data)
            (out / "manifest.json").write_text(json.dumps(data))
            r = runner.invoke(app, ["explore", "3x2", "--out", str(out), "--resume", "--json"])
            assert r.exit_code == 2 and r.stderr.startswith("error: ") and len(r.stderr.splitlines()) == 1, \
                (key, value, r.output)
            assert "start again with --force (without --resume)" in r.stderr or "is for" in r.stderr, r.stderr


def test_a_tablebase_whose_counts_lie_is_refused(small_tablebase, tmp_path):
    """Header fields outside the data checksum: changed and re-checksummed, still refused."""
    p, path, good = small_tablebase
    raw = path.read_bytes()
    end = _header_end(raw, tb.MAGIC)
    header = json.loads(raw[len(tb.MAGIC) + 8 : end])
    for counts in (good.depth_counts[:-1] + [0], good.depth_counts + [1], good.depth_counts[:-2],
                   [1, "2"] + good.depth_counts[2:], None, "abc", [1] + [10 ** 40]):
        forged = dict(header, depth_counts=counts)
        forged["header_sha256"] = datafile.header_digest(forged)
        victim = tmp_path / "f.pstb"
        datafile.write(victim, tb.MAGIC, forged, np.frombuffer(raw[end:], dtype=np.uint8))
        with pytest.raises(PuzzleError):
            tb.load(victim, p)
        r = runner.invoke(app, ["generate", "3x2", "--depth", "21", "--table", str(victim)])
        assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1


def _fail_on_write(monkeypatch, after: int) -> None:
    """Make the ``after``-th atomic write (from 0) fail as a full disk does."""
    real = datafile.write_atomic
    count = [0]

    def failing(path, write):
        count[0] += 1
        if count[0] > after:
            def full(f):
                raise OSError(errno.ENOSPC, "No space left on device")
            return real(path, full)
        return real(path, write)

    monkeypatch.setattr(datafile, "write_atomic", failing)
    monkeypatch.setattr(checkpoint, "write_atomic", failing)


@pytest.mark.parametrize("after", range(44))  # 3x2 writes a table and a manifest per layer: 44 writes in all
def test_a_disk_filling_during_checkpoints_keeps_the_last_good_one(tmp_path, monkeypatch, after):
    p = ps.load_puzzle("3x2")
    out = tmp_path / "ck"
    _fail_on_write(monkeypatch, after)
    r = runner.invoke(app, ["explore", "3x2", "--out", str(out), "--json"])
    assert r.exit_code == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1, r.output
    assert "could not write the checkpoint" in r.stderr and "No space left" in r.stderr
    assert not [f for f in out.glob("*") if f.name.endswith(".tmp")]  # no folder at all when nothing was written
    monkeypatch.undo()
    if "is intact" in r.stderr:
        depth = int(re.search(r"the checkpoint of layer (\d+) is intact", r.stderr).group(1))
        assert json.loads((out / "manifest.json").read_text())["depth"] == depth
        resumed = runner.invoke(app, ["explore", "3x2", "--out", str(out), "--resume", "--json"])
        assert json.loads(resumed.stdout)["depth_counts"] == explore(p).depth_counts


def test_a_checkpoint_without_room_is_not_begun(tmp_path, monkeypatch):
    """Free space is checked before each checkpoint (the old one's files stay until the new
    ones are whole): short of it, the run stops with the last good checkpoint whole, and
    resumes."""
    real, calls = checkpoint.free_disk, [0]

    def scarce(path):
        calls[0] += 1
        return real(path) if calls[0] <= 6 else 1000  # the run's check of room, then layers 0-4

    monkeypatch.setattr(checkpoint, "free_disk", scarce)
    out = tmp_path / "ck"
    r = runner.invoke(app, ["explore", "3x2", "--out", str(out), "--json"])
    assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1, r.output
    assert "could not write the checkpoint of layer 5" in r.stderr and "free" in r.stderr
    assert "the checkpoint of layer 4 is intact" in r.stderr
    assert json.loads((out / "manifest.json").read_text())["depth"] == 4
    monkeypatch.undo()
    resumed = runner.invoke(app, ["explore", "3x2", "--out", str(out), "--resume", "--json"])
    assert json.loads(resumed.stdout)["depth_counts"] == explore(ps.load_puzzle("3x2")).depth_counts


@pytest.mark.parametrize("after", range(30))
def test_a_disk_filling_during_a_pattern_database_build(tmp_path, monkeypatch, after):
    """A full disk at each write of a build that checkpoints every layer: a failed
    checkpoint is passed over, a failed save is one line; the next build is sound."""
    cache = str(tmp_path / "c")
    build = ["pdb", "build", "3x3", "--heuristic", "pdb:2", "--cache-dir", cache]
    monkeypatch.setattr(store, "CHECKPOINT_SECONDS", 0)
    _fail_on_write(monkeypatch, after)
    r = runner.invoke(app, build)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert r.exit_code == 0 or (r.exit_code == 2 and "No space" in r.stderr.splitlines()[-1]), r.output
    monkeypatch.undo()
    assert runner.invoke(app, build).exit_code == 0
    verified = runner.invoke(app, ["pdb", "verify", "--cache-dir", cache])
    assert verified.exit_code == 0 and "1 of 1 pattern databases" in verified.stdout, verified.output


def test_a_build_whose_checkpoints_cannot_be_written_goes_on(tmp_path, monkeypatch):
    """Only the checkpoints fail (a full disk that the final file still fits): the build
    passes them over and ends with a sound database."""
    def full(path, write):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store, "CHECKPOINT_SECONDS", 0)
    monkeypatch.setattr(checkpoint, "write_atomic", full)
    cache = str(tmp_path / "c")
    r = runner.invoke(app, ["pdb", "build", "3x3", "--heuristic", "pdb:2", "--cache-dir", cache])
    assert r.exit_code == 0, r.output
    monkeypatch.undo()
    verified = runner.invoke(app, ["pdb", "verify", "--cache-dir", cache])
    assert verified.exit_code == 0 and "1 of 1 pattern databases" in verified.stdout, verified.output
    assert not list((tmp_path / "c").rglob("*.bin"))


def test_a_damaged_cached_tablebase_is_passed_over_or_named(tmp_path, monkeypatch):
    """solve (auto) searches instead; distance and --method table name the file and the fix."""
    monkeypatch.setenv("PUZZLESPACE_CACHE", str(tmp_path))
    assert runner.invoke(app, ["explore", "3x2", "--save", "cache"]).exit_code == 0
    (path,) = tmp_path.rglob("*.pstb")
    raw = bytearray(path.read_bytes())
    raw[40] ^= 4
    path.write_bytes(bytes(raw))
    r = runner.invoke(app, ["solve", "3x2", "4 1 2/5 0 3", "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["length"] == 5
    for args in (["distance", "3x2", "4 1 2/5 0 3"], ["solve", "3x2", "4 1 2/5 0 3", "--method", "table"]):
        r = runner.invoke(app, args)
        assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1, r.output
        assert str(path) in r.stderr and "'puzzlespace explore sliding:3x2 --save cache'" in r.stderr


def test_a_cached_tablebase_of_another_layout_is_passed_over_or_named(tmp_path, monkeypatch):
    """A sound file written for another version of the rank layout (its checksums fixed up)."""
    monkeypatch.setenv("PUZZLESPACE_CACHE", str(tmp_path))
    assert runner.invoke(app, ["explore", "3x2", "--save", "cache"]).exit_code == 0
    (path,) = tmp_path.rglob("*.pstb")
    with datafile.open_data(path, tb.MAGIC, "tablebase") as (header, f):
        body = np.fromfile(f, dtype=np.uint8)
    header = {k: v for k, v in header.items() if k != "header_sha256"}
    datafile.write(path, tb.MAGIC, dict(header, scheme=header["scheme"].replace("/v1", "/v0")), body)
    r = runner.invoke(app, ["solve", "3x2", "4 1 2/5 0 3", "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["length"] == 5, r.output
    r = runner.invoke(app, ["distance", "3x2", "4 1 2/5 0 3"])
    assert r.exit_code == 2 and "is for scheme" in r.stderr and "--save cache'" in r.stderr, r.output


def test_concurrent_pattern_database_builds_agree(tmp_path):
    """Three builders of the same databases at once: each waits for the file's lock, all
    finish, and the cache holds one sound copy of each."""
    cache = str(tmp_path / "c")
    procs = [subprocess.Popen(_cli("pdb", "build", "4x3", "--cache-dir", cache), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(3)]
    results = [(p.wait(timeout=600), p.stderr.read()) for p in procs]
    assert all(code == 0 for code, _ in results), results
    verified = runner.invoke(app, ["pdb", "verify", "--cache-dir", cache])
    assert verified.exit_code == 0 and "2 of 2 pattern databases" in verified.stdout, verified.output


def test_a_full_disk_at_save_is_one_line(tmp_path, monkeypatch):
    _fail_on_write(monkeypatch, 0)
    r = runner.invoke(app, ["explore", "3x2", "--save", str(tmp_path / "t.pstb")])
    assert r.exit_code == 2 and r.stderr.startswith("error: cannot write the tablebase") and "No space" in r.stderr
    assert not list(tmp_path.glob("*.tmp")) and not (tmp_path / "t.pstb").exists()
    r = runner.invoke(app, ["pdb", "build", "3x3", "--heuristic", "pdb:2", "--cache-dir", str(tmp_path / "c")])
    assert r.exit_code == 2 and len(r.stderr.splitlines()) >= 1 and "No space" in r.stderr.splitlines()[-1]


def test_bad_output_paths_are_one_line(tmp_path):
    (tmp_path / "file").write_text("x")
    for args, words in ((["explore", "3x2", "--save", str(tmp_path)], "is a directory"),
                        (["explore", "3x2", "--out", str(tmp_path / "file")], "is a file"),
                        (["explore", "3x2", "--out", str(tmp_path / "ck"), "--save", str(tmp_path / "ck" / ".lock")],
                         "is named as puzzlespace's lock files are"),
                        (["explore", "3x2", "--save", str(tmp_path / "file" / "t.pstb")], "not a directory"),
                        (["explore", "3x2", "--max-memory", "0"], "not positive"),
                        (["explore", "4x3", "--max-memory", "130M"], "above --max-memory")):
        r = runner.invoke(app, args)
        assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1 and words in r.stderr, (args, r.output)


def test_a_refused_run_leaves_no_checkpoint_folder(tmp_path):
    """The folder made for --out (and its lock) goes when the run writes nothing in it;
    one that was there stays."""
    new = tmp_path / "new" / "ck"
    for args in (["--resume"], ["--max-memory", "130M"]):
        r = runner.invoke(app, ["explore", "4x3", "--out", str(new), *args])
        assert r.exit_code == 2 and not new.exists(), r.output
    new.mkdir()
    assert runner.invoke(app, ["explore", "4x3", "--out", str(new), "--resume"]).exit_code == 2
    assert new.is_dir() and not any(new.iterdir())


def test_a_run_leaves_no_lock_file(tmp_path):
    out, saved = tmp_path / "ck", tmp_path / "t.pstb"
    r = runner.invoke(app, ["explore", "3x2", "--out", str(out), "--save", str(saved), "--json"])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "table-21.bin", "tablebase-21.bin"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck", "t.pstb"]


def test_a_killed_writers_temporary_files_are_removed_by_the_next(tmp_path):
    """A writer killed mid-write (SIGKILL, the OOM killer) leaves its temporary file; the
    next writer of that target removes it once it holds the lock, and nothing else."""
    out = tmp_path / "ck"
    out.mkdir()
    left = [tmp_path / ".t.pstb.4242.tmp", out / ".table-21.bin.4242.tmp", out / ".manifest.json.7.tmp"]
    others = [tmp_path / ".t.pstb.x.tmp", tmp_path / ".t.pstb2.4242.tmp", tmp_path / ".u.pstb.4242.tmp",
              out / "notes.4242.tmp"]
    for path in left + others:
        path.write_bytes(b"partial")
    r = runner.invoke(app, ["explore", "3x2", "--out", str(out), "--save", str(tmp_path / "t.pstb"), "--json"])
    assert r.exit_code == 0, r.output
    assert not [p for p in left if p.exists()] and all(p.exists() for p in others)


#: A writer that takes the lock of ``argv[1]`` 150 times (a directory's with ``argv[2]``
#: = dir; waiting its turn with ``argv[3]`` = wait, else refused), and fails if it ever
#: finds another holder inside.
_CONTEND = """
import os, sys, time
from pathlib import Path
from puzzlespace import datafile
from puzzlespace.errors import PuzzleError
datafile.RACE_WAIT = 600  # on a loaded machine a writer may wait long for its turn: what counts is one holder
target, inside = Path(sys.argv[1]), Path(sys.argv[1] + ".holder")
for _ in range(150):
    try:
        with datafile.locked(target, "x", wait=sys.argv[3] == "wait", directory=sys.argv[2] == "dir"):
            os.close(os.open(inside, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            time.sleep(0.0005)
            inside.unlink()
    except PuzzleError as exc:
        if "another puzzlespace process" not in str(exc):
            raise
"""


@pytest.mark.parametrize("kind", ["file", "dir"])
def test_writers_coming_and_going_never_hold_a_lock_together(tmp_path, kind):
    """Lock files (and folders made for them) removed as writers end, others opening them
    meanwhile: never two holders, and no lock file left."""
    target = str(tmp_path / "sub" / "t")
    writers = [subprocess.Popen([sys.executable, "-c", _CONTEND, target, kind, "wait" if i % 2 else "refused"],
                                stderr=subprocess.PIPE, text=True) for i in range(4)]
    for writer in writers:
        _, stderr = writer.communicate(timeout=120)
        assert writer.returncode == 0, stderr
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith("lock")]


def test_a_waiting_writer_takes_the_lock_its_holder_removed(tmp_path):
    """B waits on A's lock file, which A removes as it ends: B must lock a new one (not the
    removed file), so that C, arriving while B writes, is refused."""
    target = tmp_path / "t.pdb"
    a = datafile.locked(target, "the pattern database")
    a.__enter__()
    b_holds, b_may_end = threading.Event(), threading.Event()

    def b():
        with datafile.locked(target, "the pattern database", wait=True):
            b_holds.set()
            b_may_end.wait(30)

    waiter = threading.Thread(target=b)
    waiter.start()
    time.sleep(0.2)  # B is blocked on A's lock file
    a.__exit__(None, None, None)
    assert b_holds.wait(30)
    try:
        with pytest.raises(PuzzleError, match="another puzzlespace process is writing"):
            with datafile.locked(target, "the pattern database"):
                pass
    finally:
        b_may_end.set()
        waiter.join()
    assert not any(tmp_path.iterdir())


def _writer(target):
    return datafile.locked(target, "the checkpoint in", directory=True)


def test_a_refused_writer_leaves_the_holders_folder_alone(tmp_path, monkeypatch):
    """B finds no folder, A makes it and takes the lock just before B opens the lock
    file: B is refused and must not remove A's folder, so a third writer is refused."""
    target, real_open, a = tmp_path / "ck", os.open, _writer(tmp_path / "ck")

    def a_starts_first(path, *args, **kw):
        monkeypatch.setattr(datafile.os, "open", real_open)
        a.__enter__()
        return real_open(path, *args, **kw)

    monkeypatch.setattr(datafile.os, "open", a_starts_first)
    with pytest.raises(PuzzleError, match="another puzzlespace process is writing"):
        with _writer(target):
            pass
    assert target.is_dir()
    with pytest.raises(PuzzleError, match="another puzzlespace process is writing"):
        with _writer(target):
            pass
    a.__exit__(None, None, None)


def test_a_writer_outlasts_other_writers_removing_its_lock_folder(tmp_path, monkeypatch):
    """Writers ending one after another remove the folder between this writer's making it
    and opening the lock file in it, 200 times running: the writer keeps trying (for up
    to RACE_WAIT seconds, not a fixed number of tries) and takes the lock."""
    target, real_open, removed = tmp_path / "ck", os.open, [0]

    def removed_meanwhile(path, *args, **kw):
        if str(path).endswith(".lock") and removed[0] < 200:
            removed[0] += 1
            os.rmdir(target)
        return real_open(path, *args, **kw)

    monkeypatch.setattr(datafile.os, "open", removed_meanwhile)
    with _writer(target):
        assert target.is_dir() and removed[0] == 200


def test_a_lock_file_that_cannot_be_made_is_refused_in_one_line(tmp_path, monkeypatch):
    """A lock file that can never be made (its name a link into a missing folder) is
    refused once RACE_WAIT has passed, not tried for ever."""
    target = tmp_path / "ck"
    target.mkdir()
    (target / ".lock").symlink_to(tmp_path / "missing" / "lock")
    monkeypatch.setattr(datafile, "RACE_WAIT", 0.2)
    began = time.monotonic()
    with pytest.raises(PuzzleError, match=r"cannot write the checkpoint in '.*ck': No such file"):
        with _writer(target):
            pass
    assert time.monotonic() - began < 5


def test_a_lock_file_removed_while_being_locked_is_locked_afresh(tmp_path, monkeypatch):
    """A, which made the folder, ends (removing its empty folder and lock file) just after
    B opened the lock file: B must lock a new one, so a third writer is refused."""
    target, real_open, a = tmp_path / "ck", os.open, _writer(tmp_path / "ck")
    a.__enter__()

    def a_ends_now(path, *args, **kw):
        fd = real_open(path, *args, **kw)
        monkeypatch.setattr(datafile.os, "open", real_open)
        a.__exit__(None, None, None)
        return fd

    monkeypatch.setattr(datafile.os, "open", a_ends_now)
    with _writer(target):
        assert (target / ".lock").exists()
        with pytest.raises(PuzzleError, match="another puzzlespace process is writing"):
            with _writer(target):
                pass


def test_a_fresh_run_does_not_replace_another_runs_checkpoint(tmp_path):
    out = str(tmp_path / "ck")
    assert runner.invoke(app, ["explore", "4x2", "--out", out, "--json"]).exit_code == 0
    r = runner.invoke(app, ["explore", "3x2", "--out", out, "--json"])
    assert r.exit_code == 2 and "another run ('sliding:4x2'" in r.stderr and "--force" in r.stderr
    assert runner.invoke(app, ["explore", "3x2", "--out", out, "--json", "--force"]).exit_code == 0


@pytest.mark.parametrize("segments", [[], ["--segments", "3"]], ids=["in memory", "by segments"])
def test_a_fresh_run_does_not_replace_its_own_checkpoint_unasked(tmp_path, segments):
    """A command that left out --resume must not throw a long run's layers away: it is
    refused, naming --resume and --force; a checkpoint of no layer yet is replaced."""
    out = tmp_path / "ck"
    args = ["explore", "3x3", "--out", str(out), "--json", "--antipodes", "0", *segments]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    r = runner.invoke(app, args)
    depth = json.loads(first.stdout)["max_depth"]
    assert r.exit_code == 2 and r.stderr == f"error: {str(out)!r} holds this run's checkpoint of layer {depth}: " \
        "continue it with --resume, or start again with --force\n", r.output
    assert json.loads(runner.invoke(app, [*args, "--resume"]).stdout)["depth_counts"] == json.loads(
        first.stdout)["depth_counts"]
    forced = runner.invoke(app, [*args, "--force"])
    assert forced.exit_code == 0 and json.loads(forced.stdout)["depth_counts"] == json.loads(first.stdout)["depth_counts"]
    manifest = out / "manifest.json"
    fields = json.loads(manifest.read_text())
    manifest.write_text(json.dumps(dict(fields, depth=fields["depth"] - 1)))  # edited: fails its checksum
    r = runner.invoke(app, args)
    assert r.exit_code == 2 and r.stderr == f"error: {str(out)!r} holds a damaged checkpoint (manifest.json fails " \
        "its checksum); choose another --out, or --force to replace it\n", r.output
    checkpoint.write_manifest(out, dict(fields, depth=-1, depth_counts=[]))  # a run stopped before layer 0
    assert runner.invoke(app, args).exit_code == 0


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "puzzlespace", *args]


def test_a_second_writer_is_refused_in_one_line(tmp_path):
    for args in (["explore", "4x3", "--out", str(tmp_path / "ck"), "--json"],
                 ["explore", "4x3", "--save", str(tmp_path / "t.pstb"), "--json"]):
        first = subprocess.Popen(_cli(*args), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            lock = (tmp_path / "ck" / ".lock") if "--out" in args else tmp_path / ".t.pstb.lock"
            deadline = time.time() + 60
            while not lock.exists() and time.time() < deadline:
                time.sleep(0.01)
            time.sleep(0.3)
            second = subprocess.run(_cli(*args), capture_output=True, text=True, timeout=120)
        finally:
            first.kill()
            first.wait()
        assert second.returncode == 2 and second.stderr.count("\n") == 1, second.stderr
        assert "another puzzlespace process is writing" in second.stderr


#: The command's entry point (that of ``python -m puzzlespace`` and of the script), called
#: once a byte on stdout says the interpreter has started and found it: no program's code
#: can catch a signal before that (Python prints its own traceback), and a loaded machine
#: can make that take any time.
_STARTED = "import sys; from puzzlespace.__main__ import main; sys.stdout.write('.'); sys.stdout.flush(); main()"


def _interrupted(args: list[str], delay: float) -> subprocess.CompletedProcess:
    """The command ``args``, sent SIGINT ``delay`` seconds after it has started; started
    again when the signal came before its entry point was called (a traceback of that
    one-line starter alone: the machine held the process back between its two steps)."""
    for _ in range(20):
        proc = subprocess.Popen([sys.executable, "-c", _STARTED, *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        assert proc.stdout.read(1) == "."
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
        frames = re.findall(r'^  File "(.*?)"', stderr, re.M)
        if not (frames and set(frames) == {"<string>"}):
            return subprocess.CompletedProcess(args, proc.returncode, "", stderr)
    raise AssertionError("the signal never came after the command had started")


@pytest.mark.parametrize("patched, command", [
    ("cli.load_puzzle", ["check", "3x3", "1 2 3/4 5 6/7 8 0"]),  # in a command
    ("engine.explore", ["explore", "2x2", "--json"]),  # in explore's run
    ("cli.app.invoke", ["check", "3x3", "1 2 3/4 5 6/7 8 0"]),  # before any command
], ids=["command", "explore", "parsing"])
def test_ctrl_c_says_nothing_of_what_it_left_half_made(patched, command):
    """An object the Ctrl-C left half made (as numba's and LLVM's, caught loading or
    compiling code) fails in its finalizer: the run still says only its one line."""
    owner, name = patched.rsplit(".", 1)
    script = f"""
import sys
from puzzlespace import cli
from puzzlespace.explore import engine

class HalfMade:
    def __del__(self):
        raise AttributeError("'HalfMade' object has no attribute '_ptr'")

def interrupted(*args, **kwargs):
    left = HalfMade()
    raise KeyboardInterrupt

{owner}.{name} = interrupted
cli.main(sys.argv[1:])
"""
    done = subprocess.run([sys.executable, "-c", script, *command], capture_output=True, text=True, timeout=120)
    assert done.returncode == 130 and done.stderr.startswith("stopped: interrupted") and "\n" not in \
        done.stderr.rstrip("\n"), done.stderr


@pytest.mark.parametrize("command", [["check", "3x3", "1 2 3/4 5 6/7 8 0"], ["explore", "3x2", "--json"]])
def test_ctrl_c_taken_in_a_finalizer_still_stops_the_run(command):
    """A Ctrl-C that lands while Python runs a finalizer or a weakref callback (the import
    system's, loading a module) is only reported there by Python: the run still stops,
    with its one line."""
    script = """
import sys
from puzzlespace import cli
from puzzlespace.__main__ import main

class InterruptedWhileFinalized:
    def __del__(self):
        raise KeyboardInterrupt

loaded = cli.load_puzzle
def load(*args, **kwargs):
    InterruptedWhileFinalized()
    return loaded(*args, **kwargs)

cli.load_puzzle = load
main()
"""
    done = subprocess.run([sys.executable, "-c", script, *command], capture_output=True, text=True, timeout=120)
    assert done.returncode == 130 and done.stderr.startswith("stopped: interrupted") and \
        done.stderr.count("\n") == 1, done.stderr


@pytest.mark.parametrize("trial", range(8))
def test_ctrl_c_at_any_moment_is_one_line(trial):
    """From the moment the command's entry point is called, while it loads and runs."""
    rng = random.Random(trial)
    args = rng.choice([["check", "3x3", "8 6 7/2 5 4/3 0 1"], ["explore", "4x2", "--json"],
                       ["solve", "4x3", "0 3 2 1/8 7 6 5/4 11 10 9", "--heuristic", "walking", "--quiet"]])
    done = _interrupted(args, rng.uniform(0.0, 1.1) if trial else 0.0)
    assert "Traceback" not in done.stderr, done.stderr
    if done.returncode == 130:
        assert done.stderr.strip().splitlines()[-1].startswith("stopped: interrupted"), done.stderr
    else:
        assert done.returncode in (0, 1), (done.returncode, done.stderr)


# ----- fuzzing: every command's arguments, graph files, batch files ---------------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                        HealthCheck.function_scoped_fixture])
WORDS = st.one_of(
    st.sampled_from(["2x2", "3x2", "sliding:2x3", "jump:3", "jump:4:1,3", "flip:2x2", "flip:3x2", "graph:g.json",
                     "1 2 3 0", "1 0 2 3", "0 1 2 3", "WB/BW", "1 2/3 0", "--goal", "--json", "--quiet", "--explain",
                     "--time-limit", "--method", "--heuristic", "--count", "--depth", "--seed", "--table", "--threads",
                     "--antipodes", "--max-memory", "--format", "bfs", "ida", "table", "pdb:1", "manhattan", "-1",
                     "0", "1", "31", "nan", "inf", "1e400", "--", "-", "", " ", "9" * 5000, "jump:①", "jump:4:²",
                     "٣x٣", "\x00", "-x", "--no-such-flag"]),
    st.text(max_size=12),
)
COMMANDS = st.sampled_from([["check"], ["solve"], ["distance"], ["generate"], ["explore"], ["pdb", "list"],
                            ["pdb", "verify"], ["pdb", "remove"], ["pdb", "build"], ["batch"], []])


@FUZZ
@given(COMMANDS, st.lists(WORDS, max_size=6))
def test_fuzzed_arguments_never_trace_back(tmp_path_factory, command, words):
    where = tmp_path_factory.getbasetemp() / "fuzz"
    where.mkdir(exist_ok=True)
    (where / "g.json").write_text('{"nodes": 4, "edges": [[0, 1], [1, 2], [2, 3], [3, 0]]}')
    cwd = os.getcwd()
    os.chdir(where)
    try:
        r = runner.invoke(app, command + words + ["--cache-dir", str(where / "c")] * (command[:1] == ["pdb"]))
    finally:
        os.chdir(cwd)
    assert r.exception is None or isinstance(r.exception, SystemExit), (command + words, r.exception)
    assert r.exit_code in (0, 1, 2, 3), (command + words, r.output)
    if r.exit_code == 2 and not command[:1] == ["batch"]:
        assert len(r.stderr.splitlines()) == 1, (command + words, r.stderr)


JSON_VALUES = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-10, 10), st.integers(),
                                     st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=4)),
                           lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                   st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                           max_leaves=20)
GRAPH = st.fixed_dictionaries({}, optional={
    "nodes": st.one_of(st.integers(-2, 6), st.lists(st.one_of(st.text(max_size=2), st.integers(0, 6)), max_size=7),
                       JSON_VALUES),
    "edges": st.one_of(st.lists(st.lists(st.integers(-1, 6), min_size=2, max_size=2), max_size=10), JSON_VALUES),
    "goal": st.one_of(st.lists(st.integers(-1, 6), max_size=7), JSON_VALUES),
    "coordinates": st.one_of(st.lists(st.lists(st.floats(), min_size=2, max_size=2), max_size=7), JSON_VALUES),
    "title": JSON_VALUES,
})


@FUZZ
@given(GRAPH, st.sampled_from([".json", ".toml"]), st.booleans())
def test_fuzzed_graph_files_never_trace_back(tmp_path_factory, graph, suffix, deep):
    path = tmp_path_factory.getbasetemp() / f"fuzz-graph{suffix}"
    if suffix == ".json":
        text = json.dumps(graph)
    else:
        text = "\n".join(f"{k} = {json.dumps(v)}" for k, v in graph.items())
    if deep:
        text = text.replace("[", "[" * 50_000, 1).replace("]", "]" * 50_000, 1) if "[" in text else text
    path.write_text(text)
    r = runner.invoke(app, ["check", f"graph:{path}", "1 0 2 3"])
    assert r.exception is None or isinstance(r.exception, SystemExit), (text[:200], r.exception)
    assert r.exit_code in (0, 1, 2, 3)
    if r.exit_code == 2:
        assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith("error: ")


@FUZZ
@given(st.lists(st.one_of(st.binary(max_size=30), st.sampled_from([b"1 2 3/4 5 6/7 0 8", b"8 6 7 2 5 4 3 0 1",
                                                                     b"9 1 2 3 4 5 6 7 8 0", b"# note", b"",
                                                                     b"1 2 3 4 5 6 7 8 " + b"9" * 5000])),
                max_size=8))
def test_fuzzed_batch_files_answer_every_line(tmp_path_factory, lines):
    import csv
    import io

    path = tmp_path_factory.getbasetemp() / "fuzz-batch.txt"
    path.write_bytes(b"\n".join(lines))
    r = runner.invoke(app, ["batch", "3x3", str(path), "--time-limit", "5"])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert r.exit_code in (0, 2, 3)
    if r.stdout:
        rows = list(csv.DictReader(io.StringIO(r.stdout)))
        assert all(row["status"] in ("solved", "unsolvable", "stopped", "invalid") for row in rows)
        assert all(len(row) == len(FIELDS) for row in rows)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_stdout_on_a_full_device_is_one_line():
    for args in (["check", "3x3", "8 6 7/2 5 4/3 0 1"], ["solve", "3x3", "8 6 7/2 5 4/3 0 1", "--json"],
                 ["generate", "3x3", "--count", "3"]):
        with open("/dev/full", "w") as full:
            done = subprocess.run(_cli(*args), stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
        assert done.returncode == 2 and done.stderr == "error: cannot write the output: No space left on device\n", \
            (args, done.stderr)


def test_a_large_graph_respects_the_time_limit_while_building_tables(tmp_path):
    """A complete graph of 400 nodes (the size limit): IDA*'s tables would take seconds and
    gigabytes; with --time-limit 1 the command stops in about that long."""
    n = 400
    path = tmp_path / "k400.json"
    path.write_text(json.dumps({"nodes": n, "edges": [[i, j] for i in range(n) for j in range(i + 1, n)]}))
    position = " ".join(map(str, [2, 1, *range(3, n), 0]))
    t0 = time.perf_counter()
    r = runner.invoke(app, ["solve", f"graph:{path}", position, "--time-limit", "1", "--json"])
    assert time.perf_counter() - t0 < 15
    assert r.exit_code == 3 and json.loads(r.stdout)["status"] == "stopped" and "time limit" in r.stderr


@pytest.mark.parametrize("segments", [[], ["--segments", "3"]], ids=["in memory", "by segments"])
def test_a_run_removes_only_its_own_files_from_its_directory(tmp_path, segments):
    """--out may be a directory that holds other files, even ending in .bin: a run (fresh,
    forced over another's checkpoint, or to its end) replaces and removes only the data
    files of checkpoints."""
    out = tmp_path / "ck"
    out.mkdir()
    theirs = {"photos.bin": b"x", "table.bin": b"y", "seg-0-2.bin": b"z", "notes.txt": b"w"}
    for name, data in theirs.items():
        (out / name).write_bytes(data)
    other = ["--segments", "2"] if not segments else []
    assert runner.invoke(app, ["explore", "3x3", "--out", str(out), "--json", *other]).exit_code == 0
    r = runner.invoke(app, ["explore", "3x3", "--out", str(out), "--json", "--force", *segments])
    assert r.exit_code == 0, r.output
    manifest = json.loads((out / "manifest.json").read_text())
    named = set(manifest.get("files", {})) | {v for v in manifest.values() if str(v).endswith(".bin")}
    assert {path.name for path in out.iterdir()} == set(theirs) | named | {"manifest.json"}
    assert {name: (out / name).read_bytes() for name in theirs} == theirs


def test_a_checkpoint_made_in_memory_resumed_under_too_small_a_budget_says_to_raise_it(tmp_path):
    """Such a checkpoint resumes with its whole table in memory (not in segments): the
    fix is a larger --max-memory, not --out, which is given."""
    out = str(tmp_path / "ck")
    assert runner.invoke(app, ["explore", "3x3", "--out", out, "--json"]).exit_code == 0
    r = runner.invoke(app, ["explore", "3x3", "--out", out, "--resume", "--max-memory", "20M"])
    assert r.exit_code == 2 and r.stderr.endswith(
        "above --max-memory 20.0 MiB; the checkpoint was made with the whole table in memory and resumes so: raise "
        "--max-memory\n"), r.output


@pytest.mark.parametrize("segments", [None, 3])
def test_files_made_for_a_graph_are_refused_once_its_file_changes(tmp_path, monkeypatch, segments):
    """A checkpoint, a tablebase and a cached tablebase are bound to the graph's edges,
    not only to its file's name: after the file changes, each is refused (or not found),
    never read as the new graph's. A 7-cycle with a chord closing a square, then a triangle."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PUZZLESPACE_CACHE", str(tmp_path / "cache"))
    cycle = ", ".join(f"[{i}, {(i + 1) % 7}]" for i in range(7))
    graph = tmp_path / "g.toml"
    graph.write_text(f"nodes = 7\nedges = [{cycle}, [0, 3]]\n")
    runner = CliRunner()
    cut = ["--segments", str(segments)] if segments else []
    made = runner.invoke(app, ["explore", "graph:g.toml", "--out", "ck", "--save", "tb.pstb", "--json", *cut])
    assert made.exit_code == 0, made.output
    assert runner.invoke(app, ["explore", "graph:g.toml", "--save", "cache"]).exit_code == 0
    position = "1 2 3 4 5 0 6"
    before = runner.invoke(app, ["distance", "graph:g.toml", position])
    assert before.exit_code == 0, before.output
    graph.write_text(f"nodes = 7\nedges = [{cycle}, [0, 2]]\n")
    resumed = runner.invoke(app, ["explore", "graph:g.toml", "--out", "ck", "--resume", "--json", *cut])
    read = runner.invoke(app, ["distance", "graph:g.toml", position, "--table", "tb.pstb"])
    for refused in (resumed, read):
        assert refused.exit_code == 2 and "was made for graph:g.toml with other rules" in refused.stderr, refused.output
        assert len(refused.stderr.splitlines()) == 1
    cached = runner.invoke(app, ["distance", "graph:g.toml", position])
    assert cached.exit_code == 2 and "no tablebase for graph:g.toml in the cache" in cached.stderr, cached.output
    fresh = runner.invoke(app, ["explore", "graph:g.toml", "--json"])
    assert json.loads(fresh.stdout)["depth_counts"] != json.loads(made.stdout)["depth_counts"]


def test_outputs_to_a_pipe_are_streamed_into_it_never_put_in_its_place(tmp_path):
    """--save and --csv to a path that is a named pipe (or a device such as /dev/null,
    /dev/stdout) write into it: it was once replaced by a regular file, which for root
    destroys the device."""
    made = CliRunner().invoke(app, ["explore", "3x3", "--save", str(tmp_path / "t.pstb"), "--csv",
                                    str(tmp_path / "c.csv"), "--json"])
    assert made.exit_code == 0, made.output
    for option, name in (("--save", "t.pstb"), ("--csv", "c.csv")):
        pipe = tmp_path / f"pipe-{name}"
        os.mkfifo(pipe)
        got = []
        reader = threading.Thread(target=lambda: got.append(pipe.read_bytes()))
        reader.start()
        streamed = CliRunner().invoke(app, ["explore", "3x3", option, str(pipe), "--json"])
        reader.join(timeout=60)
        assert streamed.exit_code == 0, streamed.output
        assert pipe.is_fifo() and got == [(tmp_path / name).read_bytes()]
