"""Exploration by segments against the in-memory engine: the same counts, antipodes and
tablebase bytes, whatever the number of segments and threads, in memory or in files."""

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import puzzlespace as ps
from puzzlespace.cli import app
from puzzlespace.errors import PuzzleError
from puzzlespace.explore import checkpoint, segments
from puzzlespace.explore.engine import explore
from puzzlespace.explore.packing import pack_marks, write_block
from puzzlespace.explore.segments import BitmapStore, explore_segmented

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
PUZZLES = ["2x2", "3x2", "4x2", "5x2", "3x3", "jump:9", "jump:7:1,3", "flip:5x5", "flip:4x3",
           f"graph:{EXAMPLES / 'petersen.toml'}"]
_REFERENCE: dict = {}


def reference(name: str):
    if name not in _REFERENCE:
        _REFERENCE[name] = explore(ps.load_puzzle(name), threads=2, keep_table=True, antipode_limit=20)
    return _REFERENCE[name]


#: The ways of keeping marks tested: packed, a bitmap after the packed share, a bitmap at once.
MARKS = ["packed", "bitmap", "bitmap at once"]
#: Boards of PUZZLES run on every split by default with packed marks (the smallest, and
#: one of each family with many layers); the other boards, and the other ways of keeping
#: marks, run the last split by default and every split slow (the same code).
EVERY_SPLIT = {"2x2", "3x3", "jump:7:1,3", "flip:5x5"}


def split_cases(splits: list) -> list:
    """(marks, puzzle, split) parameters: every way of :data:`MARKS`, split and puzzle of
    PUZZLES; the last split only by default, but for packed marks on EVERY_SPLIT."""
    return [pytest.param(marks, name, split,
                         id=f"{marks}-{'-'.join(map(str, np.atleast_1d(split)))}-{name.rsplit('/', 1)[-1]}",
                         marks=pytest.mark.slow if split != splits[-1] and (
                             name not in EVERY_SPLIT or marks != "packed") else ())
            for marks in MARKS for split in splits for name in PUZZLES]


def marks_kept(monkeypatch, marks: str) -> str:
    """The ``marks`` argument for a way of :data:`MARKS` (a bitmap at once: no packed share)."""
    if marks == "bitmap at once":
        monkeypatch.setattr(BitmapStore, "packed_share", 0)
    return marks.split()[0]


def assert_same(result, ref) -> None:
    assert result.depth_counts == ref.depth_counts and result.max_depth == ref.max_depth
    assert result.antipode_count == ref.antipode_count and result.antipodes == ref.antipodes
    table = np.concatenate(list(result.table())) if callable(result.table) else result.table
    assert table is None or np.array_equal(table, ref.table)


@pytest.mark.parametrize("marks, name, segments", split_cases([1, 2, 3, 7]))
def test_segments_in_memory_match_the_engine(monkeypatch, marks, name, segments):
    p = ps.load_puzzle(name)
    assert_same(explore_segmented(p, segments=segments, threads=2, keep_table=True, antipode_limit=20,
                                  marks=marks_kept(monkeypatch, marks)), reference(name))


@pytest.mark.parametrize("marks, name, split", split_cases([(1, 1), (2, 1), (3, 2), (7, 3)]))
def test_segments_in_files_match_the_engine(tmp_path, monkeypatch, marks, name, split):
    segments, threads = split
    p = ps.load_puzzle(name)
    result = explore_segmented(p, segments=segments, threads=threads, out_dir=tmp_path, keep_table=True,
                               antipode_limit=20, marks=marks_kept(monkeypatch, marks))
    assert_same(result, reference(name))
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["depth"] == result.max_depth and sorted(manifest["files"]) == sorted(
        f.name for f in tmp_path.glob("*.bin"))


# Slow: the small boards' tests above run each split's code, in memory and in files.
@pytest.mark.slow
@pytest.mark.parametrize("segments, in_files", [
    pytest.param(segments, in_files, id=f"{'in files' if in_files else 'in memory'}-{segments}")
    for in_files in (False, True) for segments in (1, 2, 3, 7)])
def test_4x3_by_segments_matches_the_engine(tmp_path, segments, in_files):
    result = explore_segmented(ps.load_puzzle("4x3"), segments=segments, threads=2, keep_table=True,
                               antipode_limit=20, out_dir=tmp_path if in_files else None)
    assert_same(result, reference("4x3"))


class _Stop(Exception):
    pass


@pytest.mark.parametrize("stop_at", [0, 5, 17, 30])
@pytest.mark.parametrize("before,after", [("packed", "packed"), ("bitmap", "bitmap"), ("packed", "bitmap"),
                                          ("bitmap", "packed")])
def test_an_interrupted_run_resumes_to_the_same_result(tmp_path, monkeypatch, stop_at, before, after):
    """Stopped in the middle of a pass (after some of its segments): the checkpoint of the
    last complete pass resumes to the engine's result, with its marks kept either way."""
    p = ps.load_puzzle("3x3")
    monkeypatch.setattr(BitmapStore, "packed_share", 0.01)  # both kinds of files in some passes

    def stop(depth, done, total, states):
        if depth == stop_at and done == 2:
            raise _Stop

    with pytest.raises(_Stop):  # no head: every layer is a pass (a head's are in tests/test_head.py)
        explore_segmented(p, segments=5, threads=2, out_dir=tmp_path, keep_table=True, progress=stop, marks=before,
                          head=0)
    resumed = explore_segmented(p, segments=5, threads=2, out_dir=tmp_path, keep_table=True, resume=True,
                                antipode_limit=20, marks=after)
    assert_same(resumed, reference("3x3"))


def _stopped_at_layer_10(out: Path, keep_table: bool = False):
    """3x3 explored in 3 segments in ``out`` (with its tablebase: ``keep_table``), stopped
    in pass 10; the puzzle."""
    p = ps.load_puzzle("3x3")

    def stop(depth, done, total, states):
        if depth == 10:
            raise _Stop

    with pytest.raises(_Stop):
        explore_segmented(p, segments=3, out_dir=out, progress=stop, keep_table=keep_table)
    return p


def test_a_damaged_or_foreign_checkpoint_is_refused(tmp_path):
    p = _stopped_at_layer_10(tmp_path)
    with pytest.raises(PuzzleError, match="is for puzzle 'sliding:3x3', not 'sliding:4x2'; resume it with that "
                                          "puzzle, or choose another --out for this run$"):
        explore_segmented(ps.load_puzzle("4x2"), segments=3, out_dir=tmp_path, resume=True)
    with pytest.raises(PuzzleError, match="another run"):
        explore_segmented(ps.load_puzzle("4x2"), segments=3, out_dir=tmp_path)
    victim = sorted(tmp_path.glob("seg-1-*.bin"))[-1]
    raw = bytearray(victim.read_bytes())
    raw[len(raw) // 2] ^= 1
    victim.write_bytes(bytes(raw))
    with pytest.raises(PuzzleError, match="corrupt"):
        explore_segmented(p, segments=3, out_dir=tmp_path, resume=True)
    older = {k: v for k, v in json.loads((tmp_path / "manifest.json").read_text()).items() if k != "checksum"}
    checkpoint.write_manifest(tmp_path, dict(older, format="puzzlespace-segments/1"))
    r = CliRunner().invoke(app, ["explore", "3x3", "--out", str(tmp_path), "--resume"])
    assert r.exit_code == 2 and "format 'puzzlespace-segments/1', not 'puzzlespace-segments/2'" in r.stderr, r.output


@pytest.mark.parametrize("keep_table", [False, True])
def test_a_checkpoint_altered_with_its_checksums_made_again_is_refused_as_it_is_resumed(tmp_path, keep_table):
    """A manifest or segment file edited, its checksums made again, passes the checks of
    damage; the resumed run counts the segment tables (and tablebase parts) against the
    manifest and refuses it in one line before a pass."""
    def resumed_after(edit) -> str:
        out = tmp_path / f"{edit.__name__}-{keep_table}"
        _stopped_at_layer_10(out, keep_table)
        fields = json.loads((out / "manifest.json").read_text())
        checkpoint.write_manifest(out, edit(out, {k: v for k, v in fields.items() if k != "checksum"}))
        args = ["explore", "3x3", "--out", str(out), "--resume", "--json"] + (["--save", str(out / "t.tb")]
                                                                           if keep_table else [])
        r = CliRunner().invoke(app, args)
        assert r.exit_code == 2, r.output
        return r.stderr

    def edit_file(out, fields, role):
        name = max(n for n in fields["files"] if n.startswith(f"{role}-1-"))
        raw = bytearray((out / name).read_bytes())
        raw[100] ^= 3  # a state's value changed: 0 and 3, or 1 and 2, swapped
        (out / name).write_bytes(bytes(raw))
        return dict(fields, files=dict(fields["files"], **{name: segments.file_crc(out / name)}))

    def last_count(out, fields):
        return dict(fields, depth_counts=[*fields["depth_counts"][:-1], fields["depth_counts"][-1] + 1])

    def a_size(out, fields):
        return dict(fields, sizes=dict(fields["sizes"], **{"1": fields["sizes"]["1"] + 1}))

    def a_carried_count(out, fields):
        return dict(fields, carried=dict(fields["carried"], **{"0": fields["carried"].get("0", 0) + 1}))

    def a_table(out, fields):
        return edit_file(out, fields, "seg")

    def a_tablebase_part(out, fields):
        return edit_file(out, fields, "tb")

    edits = [last_count, a_size, a_carried_count, a_table] + ([a_tablebase_part] if keep_table else [])
    for edit in edits:
        said = resumed_after(edit)
        assert said.endswith("is corrupt (its segment tables do not hold the states its manifest says); start "
                             "again with --force (without --resume)\n"), (edit.__name__, said)


def test_explore_out_of_core_from_the_command_line(tmp_path, monkeypatch):
    """A --max-memory below the in-memory table's needs, with --out: the table goes to
    segment files there (their number chosen to fit), the same answer and tablebase; the
    run resumes; without --out, the refusal says what --out would do. The program's own
    size is fixed at 50 MiB here, so that the test does not depend on pytest's."""
    from puzzlespace import resources
    from puzzlespace.explore import engine, segments

    for module in (resources, engine, segments):
        monkeypatch.setattr(module, "current_rss", lambda: 50 << 20)
    runner = CliRunner()
    out, saved = tmp_path / "ck", tmp_path / "t.pstb"
    args = ["explore", "jump:9", "--out", str(out), "--max-memory", "111M", "--threads", "2", "--json"]
    r = runner.invoke(app, args + ["--save", str(saved)])
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)
    ref = reference("jump:9")
    assert got["depth_counts"] == ref.depth_counts and got["antipode_count"] == ref.antipode_count
    assert re.fullmatch(r"jump:9:1,2 does not fit --max-memory 111\.0 MiB: in memory it takes about 1\d\d\.\d MiB, its "
                        r"table and tablebase 1\.7 MiB; exploring in \d+ segments, one in memory at a time, the others in .*\n"
                        r"tablebase written to .*\n", r.stderr) and len(list(out.glob("seg-*.bin"))) > 1, r.stderr
    from puzzlespace.explore import tablebase

    assert np.array_equal(tablebase.load(saved, ps.load_puzzle("jump:9")).table, ref.table[:len(ref.table)])
    r = runner.invoke(app, ["explore", "jump:9", "--out", str(out), "--resume", "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["depth_counts"] == ref.depth_counts, r.output
    r = runner.invoke(app, ["explore", "jump:9", "--max-memory", "111M", "--threads", "2", "--json"])
    assert r.exit_code == 2 and "with --out DIR the table goes to segment files" in r.stderr
    r = runner.invoke(app, ["explore", "jump:9", "--out", str(tmp_path / "ck2"), "--max-memory", "60M", "--json"])
    assert r.exit_code == 2 and re.fullmatch(  # no number of segments would fit: the program alone does not
        r"error: --max-memory 60\.0 MiB is too little for jump:9:1,2: in memory it takes about .* MiB, its table "
        r"885\.9 KiB, and in segments the program and its buffers alone take about .* MiB; raise it\n", r.stderr)


def test_explore_in_segments_asked_for(tmp_path):
    runner = CliRunner()
    r = runner.invoke(app, ["explore", "3x3", "--segments", "4", "--out", str(tmp_path / "ck"), "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["depth_counts"] == reference("3x3").depth_counts, r.output
    assert len(list((tmp_path / "ck").glob("seg-*.bin"))) == 4
    r = runner.invoke(app, ["explore", "3x3", "--segments", "4"])
    assert r.exit_code == 2 and "give --out DIR" in r.stderr
    r = runner.invoke(app, ["explore", "3x3", "--segments", "2", "--out", str(tmp_path / "ck"), "--resume", "--json"])
    assert r.exit_code == 0 and r.stderr == "--segments 2: --resume keeps the checkpoint's 4 segments\n", r.output


def test_more_segments_than_the_ranks_make_are_said(tmp_path):
    r = CliRunner().invoke(app, ["explore", "2x2", "--segments", "1000", "--out", str(tmp_path), "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["depth_counts"] == [1, 2, 2, 2, 2, 2, 1], r.output
    align = ps.load_puzzle("2x2").state_index().group * 64
    assert len(list(tmp_path.glob("seg-*.bin"))) == 1  # 12 ranks: one block
    assert r.stderr == f"--segments 1000: sliding:2x2's ranks, cut at multiples of {align}, make 1 segment; " \
        "exploring in 1\n"
    whole = tmp_path / "whole"  # a checkpoint made without segments is resumed so, and that is said
    assert CliRunner().invoke(app, ["explore", "2x2", "--out", str(whole), "--json"]).exit_code == 0
    r = CliRunner().invoke(app, ["explore", "2x2", "--out", str(whole), "--resume", "--segments", "3", "--json"])
    assert r.exit_code == 0 and r.stderr == f"--segments 3: the checkpoint in {str(whole)!r} was made without " \
        "segments; --resume continues it so\n", r.output


@pytest.mark.parametrize("marks, advice", [("packed", True), ("bitmap", False), (None, False)])
def test_a_full_disk_says_which_layer_is_intact_and_whether_a_bitmap_would_bound_the_marks(marks, advice):
    import errno

    from puzzlespace.explore.segments import file_errors

    with pytest.raises(ps.PuzzleError) as caught:
        with file_errors(Path("ck"), lambda: 8, marks):
            raise OSError(errno.ENOSPC, "No space left on device")
    assert str(caught.value).startswith("could not read or write the segment files in 'ck' (No space left on "
                                        "device); the checkpoint of layer 7 is intact: free space")
    assert ("--marks bitmap" in str(caught.value)) == advice


@settings(deadline=None)
@given(st.lists(st.integers(0, 10**6), max_size=300), st.lists(st.integers(1, 10**6), max_size=6, unique=True))
def test_marks_are_grouped_by_segment_in_order(marks, starts):
    from puzzlespace.explore.segments import partition_marks

    marks, starts = np.array(marks, dtype=np.int64), np.array(sorted(starts), dtype=np.int64)
    out, offsets = np.empty_like(marks), np.zeros(len(starts) + 2, dtype=np.int64)
    partition_marks(marks, starts, out, offsets)
    edges = [0, *starts.tolist(), 10**7]
    for k in range(len(starts) + 1):
        assert out[offsets[k]:offsets[k + 1]].tolist() == [m for m in marks.tolist() if edges[k] <= m < edges[k + 1]]


@settings(deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 3 << 16), st.integers(0, 1 << 17), st.integers(0, 400))
def test_marks_inside_a_segment_are_merged_and_the_others_kept_in_order(seed, span, lo, count):
    """The one-loop merge of a segment's marks against merge_marks of those filtered in Python."""
    from puzzlespace import bits
    from puzzlespace.explore.segments import merge_inside

    rng = np.random.default_rng(seed)
    table = bits.new_table(span)
    entries = rng.integers(0, 4, span)
    for i in np.flatnonzero(entries != bits.UNSEEN):  # a new table's entries are all UNSEEN
        bits.set2(table, int(i), int(entries[i]))
    marks = rng.integers(max(0, lo - span), lo + 2 * span, count)
    inside = marks[(marks >= lo) & (marks < lo + span)] - lo
    want_table, want_blocks = table.copy(), bits.new_blocks(span)
    want_added = bits.merge_marks(want_table, inside, len(inside), 1, want_blocks)
    blocks, others = bits.new_blocks(span), np.empty_like(marks)
    added, left = merge_inside(table, marks.copy(), lo, lo + span, 1, blocks, others)
    assert (added, left) == (want_added, count - len(inside))
    assert others[:left].tolist() == [m for m in marks.tolist() if not lo <= m < lo + span]
    assert np.array_equal(table, want_table) and np.array_equal(blocks, want_blocks)


@pytest.mark.parametrize("marks", ["packed", "bitmap"])
def test_a_killed_out_of_core_run_resumes(tmp_path, marks):
    """SIGKILL in the middle of an out-of-core run: the same command with --resume ends
    with the engine's counts."""
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "ck"
    cmd = [sys.executable, "-m", "puzzlespace", "explore", "jump:9", "--segments", "6", "--out", str(out), "--json",
           "--marks", marks]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        try:
            if json.loads((out / "manifest.json").read_text())["depth"] >= 12:
                break
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    if proc.returncode == 0:
        pytest.skip("the run finished before the signal arrived")
    done = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["depth_counts"] == reference("jump:9").depth_counts


def test_damaged_missing_and_stray_segment_files_are_one_line(tmp_path):
    """A resumed file of marks with a rank outside its segment is refused before it is
    merged; a missing segment file is named; an interruption before any layer says so."""
    runner = CliRunner()
    p = ps.load_puzzle("3x3")

    def stop(depth, done, total, states):
        if depth == 10 and done == 3:
            raise _Stop

    with pytest.raises(_Stop):
        explore_segmented(p, segments=3, out_dir=tmp_path / "a", progress=stop)
    sent = sorted((tmp_path / "a").glob("sent-9-*.bin"))[0]
    with open(sent, "ab") as f:  # well framed, but a rank no segment holds
        write_block(f, pack_marks(np.array([1 << 40], dtype=np.int64)), 0)
    r = runner.invoke(app, ["explore", "3x3", "--out", str(tmp_path / "a"), "--resume"])
    assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1 and "corrupt" in r.stderr, r.output
    out = tmp_path / "b"
    assert runner.invoke(app, ["explore", "3x3", "--segments", "3", "--out", str(out), "--json"]).exit_code == 0
    for f in out.glob("seg-*.bin"):
        f.unlink()
    r = runner.invoke(app, ["explore", "3x3", "--out", str(out), "--resume"])
    assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1 and "missing" in r.stderr, r.output


@pytest.mark.parametrize("marks,kind", [("packed", "sent"), ("bitmap", "bits")])
def test_bit_flips_in_a_file_of_marks_are_refused_or_harmless(tmp_path, monkeypatch, marks, kind):
    """Every bit of a file of marks (packed or a bitmap) flipped in turn (a sample of its
    bytes): the resumed run refuses it in one line, or ends with the right counts."""
    p, ck = ps.load_puzzle("3x3"), tmp_path / "ck"
    monkeypatch.setattr(BitmapStore, "packed_share", 0)

    def stop(depth, done, total, states):
        if depth == 12 and done == 2:
            raise _Stop

    with pytest.raises(_Stop):
        explore_segmented(p, segments=2, out_dir=ck, progress=stop, marks=marks)
    sent = sorted(ck.glob(f"{kind}-11-*.bin"))[0]
    raw, saved = sent.read_bytes(), {f: f.read_bytes() for f in ck.iterdir() if f.is_file()}
    rng = np.random.default_rng(3)
    outcomes = {"refused": 0, "correct": 0}
    for byte in sorted(set(rng.integers(0, len(raw), 12)) | {0, 8, len(raw) - 1}):
        for bit in range(0, 8, 3):
            for f, content in saved.items():
                f.write_bytes(content)
            damaged = bytearray(raw)
            damaged[byte] ^= 1 << bit
            sent.write_bytes(bytes(damaged))
            try:
                got = explore_segmented(p, segments=0, out_dir=ck, resume=True)
            except PuzzleError as exc:
                assert "corrupt" in str(exc) and "start again with --force (without --resume)" in str(exc)
                outcomes["refused"] += 1
                continue
            assert got.depth_counts == reference("3x3").depth_counts
            outcomes["correct"] += 1
    assert outcomes["refused"] > 0, outcomes


def test_segments_asked_for_must_fit_the_memory(tmp_path, monkeypatch):
    from puzzlespace import resources
    from puzzlespace.explore import engine, segments

    for module in (resources, engine, segments):
        monkeypatch.setattr(module, "current_rss", lambda: 50 << 20)
    r = CliRunner().invoke(app, ["explore", "jump:9", "--segments", "1", "--out", str(tmp_path / "ck"),
                                 "--max-memory", "111M", "--threads", "2"])
    assert r.exit_code == 2 and "needs 2 segments or more, not 1" in r.stderr, r.output


def test_a_resumed_checkpoint_by_segments_must_fit_the_memory(tmp_path, monkeypatch):
    """A resumed run keeps its checkpoint's segments: under a --max-memory they do not
    fit it is refused before it starts, saying so; with room it finishes as the engine."""
    from puzzlespace import resources
    from puzzlespace.explore import engine

    for module in (resources, engine, segments):
        monkeypatch.setattr(module, "current_rss", lambda: 50 << 20)

    def stop(depth, done, total, states):
        if depth == 5:
            raise _Stop

    for kept in (1, 2):
        out = tmp_path / str(kept)
        with pytest.raises(_Stop):
            explore_segmented(ps.load_puzzle("jump:9"), segments=kept, threads=2, out_dir=out, progress=stop)
        args = ["explore", "jump:9", "--out", str(out), "--resume", "--threads", "2", "--json", "--max-memory"]
        r = CliRunner().invoke(app, args + ["111M"])
        if kept == 1:
            assert r.exit_code == 2 and re.fullmatch(
                r"error: the checkpoint in .* is in segments whose table takes up to 885\.9 KiB \(a resumed run keeps "
                r"them\): "
                r"resuming it takes about .* MiB, more than --max-memory 111\.0 MiB; raise it\n", r.stderr), r.output
            r = CliRunner().invoke(app, args + ["1G"])
        assert r.exit_code == 0 and json.loads(r.stdout)["depth_counts"] == reference("jump:9").depth_counts, r.output


@pytest.mark.parametrize("name", ["5x2", "flip:5x5"])
def test_out_of_core_passes_write_only_the_blocks_they_changed(tmp_path, monkeypatch, name):
    """After a segment's two files have been written whole once, a pass writes only the
    blocks it (or the pass before, for the other file) may have changed: less than the
    whole table every pass, and the result is still the engine's, tablebase included."""
    from puzzlespace.explore import segments

    written = {"blocks": 0, "whole": 0}
    real_blocks = segments.write_blocks

    def blocks(f, table, dirty):
        n = real_blocks(f, table, dirty)
        written["blocks"] += n
        return n

    monkeypatch.setattr(segments, "write_blocks", blocks)
    p = ps.load_puzzle(name)
    tables = []
    real_keep = segments.SegmentStore.keep

    def keep(self, role, k, table, changed=None):
        before = written["blocks"]
        real_keep(self, role, k, table, changed)
        if written["blocks"] == before and self.dir is not None:
            written["whole"] += len(table)
        tables.append(len(table))

    monkeypatch.setattr(segments.SegmentStore, "keep", keep)
    result = explore_segmented(p, segments=3, threads=2, out_dir=tmp_path, keep_table=True, antipode_limit=20)
    assert_same(result, reference(name))
    assert written["blocks"] > 0
    assert written["blocks"] + written["whole"] < sum(tables)


@settings(deadline=None)
@given(st.integers(1, 5 * (1 << 14)), st.data())
def test_writing_the_flagged_blocks_makes_the_file_the_table(size, data):
    """A file that differs from a table only in flagged blocks equals it once those blocks
    are written (a table of ``size`` bytes, 2 bits a state; the last block short)."""
    import tempfile

    from puzzlespace.bits import BLOCK_BITS, new_blocks
    from puzzlespace.explore.segments import write_blocks

    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    old = rng.integers(0, 256, size, dtype=np.uint8)
    dirty = new_blocks(size * 4)
    dirty[:] = data.draw(st.lists(st.booleans(), min_size=len(dirty), max_size=len(dirty)))
    table = old.copy()
    step = (1 << BLOCK_BITS) // 4
    for b in np.flatnonzero(dirty):
        part = table[b * step:(b + 1) * step]
        part[:] = rng.integers(0, 256, len(part), dtype=np.uint8)
    with tempfile.TemporaryFile() as f:
        old.tofile(f)
        written = write_blocks(f, table, dirty)
        f.seek(0)
        assert np.array_equal(np.fromfile(f, dtype=np.uint8), table)
    assert written == sum(len(table[b * step:(b + 1) * step]) for b in np.flatnonzero(dirty))


@settings(deadline=None)
@given(st.lists(st.integers(0, 5000), max_size=400), st.integers(0, 10**12))
def test_a_bitmap_of_marks_gives_back_its_ranks(ranks, lo):
    """Marks set in a bitmap and read back in pieces: the distinct ranks, in order, from
    ``lo`` on (against a sorted set)."""
    from puzzlespace.explore import segments

    bits = np.zeros(segments.bitmap_bytes(5001), dtype=np.uint8)
    segments.set_bits(bits, np.array(ranks, dtype=np.int64))
    step = 7  # pieces smaller than the file's, so that the offsets between them count
    got = np.concatenate([np.empty(0, dtype=np.int64),
                          *segments.bitmap_ranks((bits[a:a + step] for a in range(0, len(bits), step)), lo)])
    assert got.tolist() == [lo + r for r in sorted(set(ranks))]


def test_a_bitmap_of_marks_of_the_wrong_size_is_refused(tmp_path, monkeypatch):
    """A bitmap of marks a byte short or a byte long (its checksum made to match, as if
    written so) is refused in one line, never merged."""
    import zlib

    monkeypatch.setattr(BitmapStore, "packed_share", 0)

    p, ck = ps.load_puzzle("jump:7:1,3"), tmp_path / "ck"

    def stop(depth, done, total, states):
        if depth == 8 and done == 2:
            raise _Stop

    with pytest.raises(_Stop):
        explore_segmented(p, segments=3, out_dir=ck, progress=stop, marks="bitmap")
    manifest = json.loads((ck / "manifest.json").read_text())
    last = max(f for f in manifest["files"] if f.startswith("bits-7-"))
    saved = {f: f.read_bytes() for f in ck.iterdir() if f.is_file()}
    for raw in (saved[ck / last][:-1], saved[ck / last] + b"\0"):
        for f, content in saved.items():
            f.write_bytes(content)
        (ck / last).write_bytes(raw)
        files = dict(manifest["files"], **{last: f"crc32:{zlib.crc32(raw):08x}"})
        checkpoint.write_manifest(ck, dict({k: v for k, v in manifest.items() if k != "checksum"}, files=files))
        r = CliRunner().invoke(app, ["explore", "jump:7:1,3", "--out", str(ck), "--resume"])
        assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1 and "corrupt" in r.stderr, r.output


@settings(deadline=None)
@given(st.sampled_from(["jump:9", "4x3", "flip:5x5"]), st.integers(1, 2), st.integers(1, 12),
       st.integers(-5000, 5000))
def test_the_segments_chosen_fit_the_memory_as_they_are_cut(name, tables, parts, off):
    """The fewest segments that fit --max-memory, counting the largest segment as
    segment_bounds cuts it (rounded up to the alignment, so larger than an equal share):
    a checkpoint made with a --max-memory resumes with it. The budgets tried are about
    the program (its size fixed at 50 MiB here) and a ``parts``-th of the tables."""
    from unittest import mock

    index = ps.load_puzzle(name).state_index()
    with mock.patch.object(segments, "current_rss", lambda: 50 << 20):
        share = -(-tables * segments.table_bytes(index.size) // parts)
        max_memory = segments.memory_needed(index, 2, tables, 0) + share + off
        try:
            n = segments.segments_to_fit(index, 2, tables, max_memory)
        except PuzzleError:
            assert segments.memory_needed(index, 2, tables, segments.segment_align(index)) > max_memory
            return
        largest = lambda n: max(hi - lo for lo, hi in segments.segment_bounds(index, n))  # noqa: E731
        assert segments.memory_needed(index, 2, tables, largest(n)) <= max_memory
        assert n == 1 or segments.memory_needed(index, 2, tables, largest(n - 1)) > max_memory


def test_a_bitmap_of_marks_counts_in_the_memory_and_the_disk_needed(tmp_path, monkeypatch):
    """With --marks bitmap the bit a state it holds is counted: more segments for the same
    --max-memory; and the disk must hold two passes' bitmaps beside the tables."""
    from puzzlespace import resources
    from puzzlespace.explore import engine, segments

    for module in (resources, engine, segments):
        monkeypatch.setattr(module, "current_rss", lambda: 50 << 20)
    big = ps.load_puzzle("jump:12").state_index()  # a 1.5 GiB table, a 0.7 GiB bitmap
    assert segments.segments_to_fit(big, 2, 1, 1 << 30) == 2
    assert segments.segments_to_fit(big, 2, 1, 1 << 30, "bitmap") >= 8  # 2 without the bitmap counted
    tables = 2 * segments.table_bytes(big.size)
    monkeypatch.setattr(segments.checkpoint, "free_disk", lambda path: tables + 4 * segments.SENT_BUFFER * 8 + 1)
    segments._check_disk(tmp_path, big.size, 1, "packed")
    with pytest.raises(PuzzleError, match="the segment files need about"):
        segments._check_disk(tmp_path, big.size, 1, "bitmap")
    r = CliRunner().invoke(app, ["explore", "jump:9", "--workers", "2", "--marks", "bitmap"])
    assert r.exit_code == 2 and "--marks bitmap is for a run by segments in one process" in r.stderr, r.output
    r = CliRunner().invoke(app, ["explore", "jump:9", "--marks", "bitmap"])  # in memory: no marks between segments
    assert r.exit_code == 2 and r.stderr.startswith("error: --marks bitmap is for a run by segments, in files: give --out")


@pytest.mark.parametrize("marks", MARKS)
def test_a_disk_filling_under_the_segment_files_is_one_line_and_resumes(tmp_path, monkeypatch, marks):
    """The disk full as a pass writes its marks: one line that names the intact
    checkpoint (and, for packed marks, the bitmap that bounds them); --resume finishes."""
    import errno

    from puzzlespace.explore import segments

    marks = marks_kept(monkeypatch, marks)

    calls = [0]
    real = segments.write_block if marks == "packed" else segments.write_blocks

    def full(*args):
        calls[0] += 1
        if calls[0] > 12:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*args)

    monkeypatch.setattr(segments, "write_block" if marks == "packed" else "write_blocks", full)
    out = tmp_path / "ck"
    cmd = ["explore", "flip:5x5", "--segments", "3", "--out", str(out), "--json", "--marks", marks]
    r = CliRunner().invoke(app, cmd)
    assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1 and "No space left" in r.stderr, r.output
    assert "is intact" in r.stderr and ("a bit per state: --marks bitmap" in r.stderr) == (marks == "packed")
    assert "--resume" in r.stderr and ("--marks bitmap" in r.stderr)
    monkeypatch.undo()
    r = CliRunner().invoke(app, cmd + ["--resume"])
    assert r.exit_code == 0 and json.loads(r.stdout)["depth_counts"] == reference("flip:5x5").depth_counts, r.output


def test_a_pass_with_few_marks_sends_them_packed_and_switches_to_the_bitmap_past_its_share(tmp_path, monkeypatch):
    """With --marks bitmap, the passes of few marks write packed files only; the others
    a bitmap (and the packed marks sent before the switch): the same result."""
    written = []
    real = checkpoint.write_manifest

    def noted(out, manifest):
        written.append(sorted(manifest["files"]))
        real(out, manifest)

    monkeypatch.setattr(checkpoint, "write_manifest", noted)
    monkeypatch.setattr(BitmapStore, "packed_share", 0.02)
    result = explore_segmented(ps.load_puzzle("flip:5x5"), segments=3, out_dir=tmp_path, keep_table=True,
                               antipode_limit=20, marks="bitmap")
    assert_same(result, reference("flip:5x5"))
    kinds = [{f.split("-")[0] for f in files} & {"sent", "bits"} for files in written]
    assert {"sent"} in kinds and {"sent", "bits"} in kinds, kinds


_NO_CODE_AFTER_PLAN = """
import sys, tempfile
from pathlib import Path
import numba
import puzzlespace as ps
from puzzlespace import bits
from puzzlespace.explore import engine, packing, segments

def compiled():
    modules = (bits, engine, packing, segments)
    return {(m.__name__, name, str(sig)) for m in modules for name, f in vars(m).items()
            if isinstance(f, numba.core.registry.CPUDispatcher) and f.py_func.__module__ == m.__name__
            for sig in f.signatures}

puzzle = ps.load_puzzle(sys.argv[1])
segments.load_code(puzzle.state_index())
before = compiled()
with tempfile.TemporaryDirectory() as d:
    segments.BitmapStore.packed_share = float(sys.argv[3])
    segments.explore_segmented(puzzle, segments=3, threads=2, out_dir=Path(d), keep_table=True, marks=sys.argv[2],
                               antipode_limit=5)
print(sorted(compiled() - before))
"""


@pytest.mark.parametrize("name, marks, share", [("3x3", "packed", 0.25), ("flip:4x3", "bitmap", 0.0),
                                                ("jump:7:1,3", "bitmap", 0.25)])
def test_the_memory_plan_loads_all_the_code_a_pass_runs(name, marks, share):
    """A run by segments measures the program's memory after :func:`load_code`: a whole
    run (marks sent packed and as bitmaps, written, read back and merged, layers closed,
    stepped and copied to a tablebase) loads no compiled code after it."""
    run = subprocess.run([sys.executable, "-c", _NO_CODE_AFTER_PLAN, name, marks, str(share)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]", run.stdout


@pytest.mark.parametrize("error, advice", [(OSError(28, "No space left on device"),
                                            "free space (or bound the marks between segments by a bit per state: "
                                            "--marks bitmap) and run it again"),
                                           (OSError(5, "Input/output error"), "check the disk and run it again"),
                                           (OSError("113440 requested and 0 written"),
                                            "free space or check the disk and run it again")])
def test_a_disk_that_fails_before_the_first_checkpoint_is_said_as_such(tmp_path, monkeypatch, error, advice):
    """The first tables are written before any layer is saved: a full or failing disk
    then says so and to run it again, as later on (not an error on the output)."""
    from puzzlespace.explore import segments

    def failing(*args):
        raise error

    monkeypatch.setattr(segments, "seed_tables", failing)
    r = CliRunner().invoke(app, ["explore", "3x3", "--segments", "3", "--out", str(tmp_path / "ck"), "--json"])
    assert r.exit_code == 2 and r.stderr == f"error: could not read or write the segment files in " \
        f"{str(tmp_path / 'ck')!r} ({error.strerror or error}); {advice}\n", r.output


def test_the_manifest_of_the_most_segments_is_read_back(tmp_path):
    """A run cut into the most segments allowed, of a puzzle of 16!/2 ranks, with a
    tablebase and marks in flight to every segment: its manifest is within what a resume
    reads (it once outgrew it, and the run could not be resumed)."""
    size, n = 10_461_394_944_000, checkpoint.MAX_SEGMENTS
    bounds = [[size * k // n, size * (k + 1) // n] for k in range(n)]
    files = {}
    for k in range(n):
        files.update({f"seg-{k}-1.bin": "crc32:0123abcd", f"tb-{k}-1.bin": "crc32:0123abcd",
                      f"sent-119-{k}.bin": "crc32:0123abcd"})
    counted = {str(k): 1_000_000_000 + k for k in range(n)}
    fields = {"format": "puzzlespace-segments/2", "puzzle": "sliding:4x4", "goal": list(range(1, 16)) + [0],
              "scheme": "token-group-lex/half/v1", "size": size, "tablebase": True, "segments": bounds,
              "depth": 119, "depth_counts": [1] * 120, "seconds": 1e6, "version": "0.1.0", "files": files,
              "carried": counted, "sizes": counted}
    checkpoint.write_manifest(tmp_path, fields)
    assert (tmp_path / checkpoint.MANIFEST).stat().st_size <= checkpoint.MAX_MANIFEST // 2
    assert checkpoint.read_manifest(tmp_path, "")["segments"] == bounds
    with pytest.raises(PuzzleError, match="a run is cut into at most 65,536"):
        explore_segmented(ps.load_puzzle("2x2"), segments=n + 1)
    refused = CliRunner().invoke(app, ["explore", "2x2", "--segments", str(n + 1)])
    assert refused.exit_code == 2 and "'65537' is more than 65,536" in refused.stderr, refused.output
