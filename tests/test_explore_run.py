"""How an exploration runs, chosen by the library (:mod:`puzzlespace.explore.run`) with no
command line: in memory, by segments (asked for, or for a memory budget), on a cluster;
the notes said and when; the refusals and their messages; resuming; workers capped to
the run's segments."""

import os
import re

import pytest

import puzzlespace as ps
from puzzlespace.errors import PuzzleError
from puzzlespace.explore import checkpoint, engine, segments
from puzzlespace.explore import run as planning
from puzzlespace.explore.run import explore_puzzle, plan_exploration, saved_layer

def counts(name: str) -> list[int]:
    return engine.explore(ps.load_puzzle(name), threads=1, antipode_limit=0).depth_counts


def test_a_run_is_in_memory_unless_asked_otherwise():
    plan = plan_exploration(ps.load_puzzle("3x3"))
    assert (plan.mode, plan.segments, plan.workers, plan.notes) == ("memory", 0, None, ())
    result = plan.run(antipode_limit=1)
    assert result.states == 181_440 and result.antipode_count == 2 and len(result.antipodes) == 1


def test_segments_asked_for_are_kept_in_files(tmp_path):
    said = []
    plan = plan_exploration(ps.load_puzzle("3x3"), out=tmp_path, segments=4)
    assert (plan.mode, plan.segments, plan.notes) == ("segments", 4, ())
    result = plan.run(said=said.append)
    assert result.depth_counts == counts("3x3") and said == []
    assert len(list(tmp_path.glob("seg-*.bin"))) == 4


def test_fewer_segments_than_asked_are_said_once_the_run_is_under_way(tmp_path):
    """The ranks of 2x2 make one segment; the note comes before the first report, and a
    run refused before it starts (another run's checkpoint in the way) says only why."""
    p = ps.load_puzzle("2x2")
    align = p.state_index().group * 64
    note = f"--segments 1000: sliding:2x2's ranks, cut at multiples of {align}, make 1 segment; exploring in 1"
    said, said_at_report = [], []
    result = explore_puzzle(p, out=tmp_path / "ck", segments=1000, said=said.append,
                            progress=lambda *report: said_at_report.append(len(said)))
    assert result.depth_counts == [1, 2, 2, 2, 2, 2, 1] and said == [note] and said_at_report[0] == 1
    assert plan_exploration(p, out=tmp_path / "ck", segments=1000).under_way == (note,)
    explore_puzzle(ps.load_puzzle("3x2"), out=tmp_path / "other")
    said.clear()
    with pytest.raises(PuzzleError, match="checkpoint"):
        explore_puzzle(p, out=tmp_path / "other", segments=1000, said=said.append)
    assert said == []


@pytest.fixture
def program_of_50_mib(monkeypatch):
    """The program's own size fixed at 50 MiB, so that budgets do not depend on pytest's."""
    from puzzlespace import resources

    for module in (resources, engine, segments):
        monkeypatch.setattr(module, "current_rss", lambda: 50 << 20)


def test_a_table_that_does_not_fit_the_memory_is_cut_into_segments(tmp_path, program_of_50_mib):
    p = ps.load_puzzle("jump:9")
    plan = plan_exploration(p, out=tmp_path, max_memory=111 << 20, threads=2, tablebase=True)
    assert plan.mode == "segments" and plan.segments > 1 and plan.under_way == ()
    assert re.fullmatch(rf"jump:9:1,2 does not fit --max-memory 111\.0 MiB: in memory it takes about 1\d\d\.\d MiB, "
                        rf"its table and tablebase 1\.7 MiB; exploring in {plan.segments} segments, one in memory at "
                        rf"a time, the others in '{tmp_path}'", plan.starting[0])
    said = []
    result = plan.run(said=said.append, antipode_limit=0)
    assert said == list(plan.starting) and result.depth_counts == counts("jump:9")
    assert plan_exploration(p, out=tmp_path, max_memory=1 << 30, threads=2).mode == "memory"
    assert plan_exploration(p, max_memory=111 << 20, threads=2).mode == "memory"  # no --out: the engine refuses
    with pytest.raises(PuzzleError, match=rf"^--max-memory 111\.0 MiB needs {plan.segments} segments or more, not 1$"):
        plan_exploration(p, out=tmp_path, max_memory=111 << 20, threads=2, tablebase=True, segments=1)
    with pytest.raises(PuzzleError, match=r"^--max-memory 60\.0 MiB is too little for jump:9:1,2: .* alone take "):
        plan_exploration(p, out=tmp_path, max_memory=60 << 20, threads=2)


@pytest.mark.parametrize("options, message", [
    (dict(workers=2, scheduler="tcp://127.0.0.1:1"),
     "give --workers (a cluster on this machine) or --scheduler (a running one), not both"),
    (dict(segments=2), "--segments keeps the segments in files: give --out DIR"),
    (dict(resume=True), checkpoint.RESUME_NEEDS_OUT),
    (dict(max_memory=1 << 30, scheduler="tcp://127.0.0.1:1"),
     "--max-memory shares this machine's memory out among the workers --workers starts; those of --scheduler's "
     "cluster have the limits they were started with (dask worker --memory-limit)"),
    (dict(threads=2, scheduler="tcp://127.0.0.1:1"),
     "--threads sets the threads of each worker --workers starts; those of --scheduler's cluster have the threads "
     "they were started with (dask worker --nthreads)"),
    (dict(marks="bitmap", workers=2),
     "--marks bitmap is for a run by segments in one process: a cluster's workers send their marks packed"),
    (dict(marks="bitmap"), "--marks bitmap is for a run by segments, in files: give --out DIR (with --segments N, "
                           "or --max-memory SIZE below the table)"),
    (dict(out="FILE"), "--out 'FILE' is a file; give a directory for the checkpoints"),
], ids=["workers-and-scheduler", "segments-without-out", "resume-without-out", "memory-of-a-running-cluster",
        "threads-of-a-running-cluster", "bitmap-on-a-cluster", "bitmap-without-out", "out-a-file"])
def test_what_does_not_go_together_is_refused_before_anything_starts(tmp_path, monkeypatch, options, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "FILE").write_text("")
    with pytest.raises(PuzzleError) as refused:
        explore_puzzle(ps.load_puzzle("3x3"), **options)
    assert str(refused.value) == message
    assert sorted(os.listdir(tmp_path)) == ["FILE"]


def test_a_checkpoint_is_resumed_as_it_was_made(tmp_path):
    p, out, whole = ps.load_puzzle("3x3"), tmp_path / "ck", tmp_path / "whole"
    explore_puzzle(p, out=out, segments=4)
    assert saved_layer(out) == len(counts("3x3")) - 1 and saved_layer(tmp_path / "none") == -1
    plan = plan_exploration(p, out=out, resume=True, segments=2)
    assert (plan.mode, plan.segments, plan.notes) == ("segments", None,
                                                      ("--segments 2: --resume keeps the checkpoint's 4 segments",))
    assert plan.run().depth_counts == counts("3x3")
    explore_puzzle(p, out=whole)
    plan = plan_exploration(p, out=whole, resume=True, segments=3)
    assert plan.mode == "memory" and plan.notes == (f"--segments 3: the checkpoint in {str(whole)!r} was made "
                                                    "without segments; --resume continues it so",)
    assert plan.run().depth_counts == counts("3x3")
    with pytest.raises(PuzzleError, match="was made without segments: resume it without --workers or --scheduler"):
        plan_exploration(p, out=whole, resume=True, workers=2)


def test_no_more_workers_start_than_the_run_has_segments(tmp_path):
    p = ps.load_puzzle("3x3")
    plan = plan_exploration(p, workers=4, segments=2, max_memory=3 << 30)
    assert (plan.mode, plan.workers, plan.segments) == ("cluster", 2, 2)
    assert plan.notes == ("--workers 4: the run has 2 segments; starting 2 workers",)
    assert plan.threads == max(1, (os.cpu_count() or 1) // 2) and plan.worker_memory == (3 << 30) // 2
    small = ps.load_puzzle("3x2")
    assert plan_exploration(small, workers=2).notes == (
        "--workers 2: sliding:3x2's ranks, cut at multiples of 384, make 1 segment; starting 1 worker",)
    explore_puzzle(p, out=tmp_path, segments=2)
    plan = plan_exploration(p, out=tmp_path, resume=True, workers=3, threads=1)
    assert (plan.workers, plan.threads, plan.notes) == (2, 1, ("--workers 3: the checkpoint has 2 segments; "
                                                               "starting 2 workers",))
    assert plan_exploration(p, scheduler="tcp://127.0.0.1:1").workers is None


def test_a_run_on_a_local_cluster_logs_its_workers_and_layers():
    lines, reports = [], []
    result = explore_puzzle(ps.load_puzzle("3x3"), workers=2, segments=2, threads=1, log=lines.append,
                            layer_done=reports.append)
    assert result.depth_counts == counts("3x3")
    assert lines[0].startswith("Dask cluster: 2 workers, 2 threads, ") and len(lines) == len(reports) + 1
    assert all(re.fullmatch(r"layer \d+: [\d,]+ states? in [\d.]+ s, .*", line) for line in lines[1:]), lines


def test_the_tablebase_is_saved_where_asked(tmp_path):
    from puzzlespace.explore import tablebase

    p, path, said = ps.load_puzzle("jump:6"), tmp_path / "tb" / "t.pstb", []
    result = explore_puzzle(p, save=path, said=said.append)
    assert said == [f"tablebase written to {path}"]
    assert tablebase.load(path, p).depth_counts == result.depth_counts
    with pytest.raises(PuzzleError, match=r"^--save '.*' is a directory; give a file name such as "):
        explore_puzzle(p, save=tmp_path)


def test_a_large_fresh_run_in_memory_says_how_long_it_takes(monkeypatch, tmp_path):
    p = ps.load_puzzle("flip:3x3")
    assert plan_exploration(p).estimate_note() is None  # too small to be worth a probe
    monkeypatch.setattr(planning, "ESTIMATE_FROM", 1)
    assert re.fullmatch(r"exploring flip:3x3: 192 positions, .* on this machine", plan_exploration(p).estimate_note())
    said = []
    plan_exploration(p).run(said=said.append, estimate=True)
    assert said[0].startswith("exploring flip:3x3: 192 positions")
    assert plan_exploration(p, out=tmp_path, segments=2).estimate_note() is None
