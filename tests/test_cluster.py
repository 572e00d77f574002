"""Exploration on a Dask cluster (worker processes on this machine) against the in-memory
engine: the same counts, antipodes and tablebase bytes whatever the number of segments,
of workers and which worker owns which segment, in memory and with checkpoints; the
command line's options and refusals. A cluster's failures: tests/test_cluster_faults.py."""

import contextlib
import json
import os
import signal
import traceback
import subprocess
import sys
import threading
import time

import pytest

import puzzlespace as ps
from puzzlespace.errors import PuzzleError
from puzzlespace.explore import checkpoint, cluster, cluster_tasks, dask_cluster
from puzzlespace.explore.cluster import explore_distributed
from puzzlespace.explore.dask_cluster import local_cluster, remote_cluster
from puzzlespace.explore.segments import FORMAT, explore_segmented, file_crc
from puzzlespace.resources import available_memory

from reference import layers_and_crossing
from clusters import comparable, run_cli
from test_segments import EXAMPLES, assert_same, reference

distributed = pytest.importorskip("distributed")

#: Every family, each on a board small enough to cut into more segments than workers.
PUZZLES = ["2x2", "3x2", "3x3", "jump:7:1,3", "flip:4x3", "flip:5x5", f"graph:{EXAMPLES / 'theta0.toml'}"]
#: Boards of the same families with more layers: the same code (PUZZLES covers it), run slow.
LARGER = ["4x2", "5x2", "jump:9", f"graph:{EXAMPLES / 'petersen.toml'}"]
#: (segments, workers) pairs: every number of workers from 1 to 4, more segments than workers.
SPLITS = [(1, 1), (2, 2), (3, 3), (7, 4)]
#: The puzzle of PUZZLES run on every split by default: few layers, of up to 160,000 states.
EVERY_SPLIT = "flip:5x5"


@pytest.fixture(scope="module")
def client():
    """A cluster of four workers for the module, started once the code of every family's
    runs is in numba's cache, so that the workers load it rather than each compile it."""
    from puzzlespace.explore.segments import load_code

    for name in PUZZLES:
        load_code(ps.load_puzzle(name).state_index())
    with local_cluster(4, threads=1) as c:
        yield c


def workers(client, count: int) -> list[str]:
    """The first ``count`` workers of the cluster, by address, once it has that many (a
    worker its nanny restarts is back within seconds); all of them listed, whatever
    number a version of Dask lists by default."""
    client.wait_for_workers(count, timeout=60)
    return sorted(dask_cluster.workers_seen(client))[:count]


def runs(default: list, slow: list) -> list:
    """Parameters of a test that makes each run of a list of (puzzle, segments, workers):
    ``default`` by default, and in the slow run the ``slow`` ones too (more layers and
    splits, the same code)."""
    return [pytest.param(default, id="some"), pytest.param(default + slow, id="all", marks=pytest.mark.slow)]


def split_cases() -> list:
    """(puzzle, splits, in files) cases: by default every split on EVERY_SPLIT in memory
    and the last (the most segments and workers) in files, and the last on the others, in
    memory or in files by turns; in the slow run every split on every puzzle both ways,
    the same code on more layers."""
    def case(name, splits, files, **marks):
        short = name.rsplit("/", 1)[-1]
        return pytest.param(name, splits, files, **marks, id=f"{short}{'-every-split' if len(splits) > 1 else ''}-"
                                                             f"{'in-files' if files else 'in-memory'}")

    others = [name for name in PUZZLES if name != EVERY_SPLIT]
    return [case(EVERY_SPLIT, SPLITS, False), case(EVERY_SPLIT, SPLITS[-1:], True),
            case(EVERY_SPLIT, SPLITS, True, marks=pytest.mark.slow),
            *(case(name, SPLITS[-1:], bool(i % 2)) for i, name in enumerate(others)),
            *(case(name, SPLITS, files, marks=pytest.mark.slow) for name in [*others, *LARGER]
              for files in (False, True))]


@pytest.mark.parametrize("name, splits, files", split_cases())
def test_cluster_matches_the_engine(client, tmp_path, name, splits, files):
    """Each of ``splits`` (pairs of SPLITS), the segments held in the workers' memory or
    in files under ``--out``: the in-memory engine's counts, antipodes and tablebase."""
    ref = reference(name)
    for segments, count in splits:
        result = explore_distributed(ps.load_puzzle(name), client, segments=segments, workers=workers(client, count),
                                     out_dir=tmp_path / str(segments) if files else None, keep_table=True,
                                     antipode_limit=20)
        assert_same(result, ref)


def test_a_local_cluster_batches_messages_briefly(client):
    """The streams of the cluster local_cluster starts wait STREAM_INTERVAL, not Dask's
    2 to 10 ms, to batch messages."""
    from puzzlespace.explore.dask_cluster import STREAM_INTERVAL

    assert client.scheduler_comm.interval == STREAM_INTERVAL
    assert set(client.run(lambda dask_worker: dask_worker.batched_stream.interval).values()) == {STREAM_INTERVAL}
    assert set(client.run_on_scheduler(lambda dask_scheduler: [
        s.interval for s in [*dask_scheduler.stream_comms.values(), *dask_scheduler.client_comms.values()]])) \
        == {STREAM_INTERVAL}


def test_a_local_clusters_processes_time_their_event_loops_seldom(client):
    """The scheduler, the nannies and the workers wake every TICK to time their event
    loops, not every 20 ms."""
    from dask.utils import parse_timedelta

    from puzzlespace.explore.dask_cluster import TICK

    tick = parse_timedelta(TICK)
    assert client.run_on_scheduler(lambda dask_scheduler: dask_scheduler._tick_interval) == tick
    assert set(client.run(lambda dask_worker: dask_worker._tick_interval).values()) == {tick}
    assert set(client.run(lambda dask_worker: dask_worker._tick_interval, nanny=True).values()) == {tick}


# Slow: compiles every kernel of a run into an empty cache (the next test checks the
# loading by default). Without a puzzle (the workers compile): the module's client's path.
@pytest.mark.slow
@pytest.mark.parametrize("puzzle", [None, "3x2"])
def test_a_local_cluster_for_a_puzzle_compiles_its_code_once(tmp_path, puzzle):
    """Given the puzzle, local_cluster compiles the code of its runs in this process (into
    an empty numba cache here), and the workers of a run, keeping the tablebase and its
    antipodes, compile nothing; without it, they compile that code themselves."""
    import subprocess

    script = ("import sys\n"
              "import puzzlespace as ps\n"
              "from puzzlespace.explore.cluster import explore_distributed\n"
              "from puzzlespace.explore.dask_cluster import local_cluster\n"
              "def compiled(dask_worker=None):\n"
              "    from numba.core.registry import CPUDispatcher\n"
              "    return sum(sum(f.stats.cache_misses.values()) for name, module in list(sys.modules.items())\n"
              "               if name.startswith('puzzlespace') for f in vars(module).values()\n"
              "               if isinstance(f, CPUDispatcher))\n"
              "if __name__ == '__main__':\n"
              f"    with local_cluster(2, puzzle={puzzle and f'ps.load_puzzle({puzzle!r})'}) as client:\n"
              "        explore_distributed(ps.load_puzzle('3x2'), client, keep_table=True, antipode_limit=5)\n"
              "        from puzzlespace.explore.segments import merge_inside\n"
              "        print(len(merge_inside.signatures), sorted(client.run(compiled).values()))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path)))
    assert done.returncode == 0, done.stderr
    here, workers = done.stdout.split(" ", 1)
    assert here == ("1" if puzzle else "0")  # a pass's code: not needed in this process otherwise
    assert (workers.strip() == "[0, 0]") == (puzzle is not None)


def test_a_local_cluster_for_a_puzzle_starts_with_the_code_loaded_in_its_workers():
    """Its workers load a run's code as the cluster starts, before any run."""
    def loaded() -> int:  # nested: sent by value
        from puzzlespace.explore import engine, segments
        return min(len(f.signatures) for f in (engine._walk, segments.merge_inside, segments.partition_marks))

    with local_cluster(2, puzzle=ps.load_puzzle("3x2")) as client:
        assert sorted(client.run(loaded).values()) == [1, 1]


def test_workers_sharing_cores_expand_in_their_tasks_thread(monkeypatch):
    """A worker expands on all its Dask threads, beside the one that merges, where its
    machine has a core for every thread the run keeps busy there; on one fewer where it
    has not (none: the task's thread does both)."""
    from puzzlespace.explore.cluster_tasks import expanding_threads
    from puzzlespace.explore.dask_cluster import threads_on_hosts

    seen = {"a": {"host": "h1", "nthreads": 1}, "b": {"host": "h1", "nthreads": 1},
            "c": {"host": "h2", "nthreads": 2}, "d": {"host": "h1", "nthreads": 4}}
    assert threads_on_hosts(seen, ["a", "b", "c"]) == {"a": 4, "b": 4, "c": 3}  # d owns no segment
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(4)), raising=False)
    assert [expanding_threads(1, busy) for busy in (2, 4, 5)] == [1, 1, 0]
    assert [expanding_threads(3, busy) for busy in (4, 8)] == [3, 2]


@pytest.mark.slow  # the code of test_cluster_matches_the_engine, on a board of 53 layers and a head
def test_4x3_on_two_workers(client, tmp_path):
    p = ps.load_puzzle("4x3")
    ref = reference("4x3")
    assert_same(explore_distributed(p, client, workers=workers(client, 2), keep_table=True, antipode_limit=20), ref)
    assert_same(explore_distributed(p, client, segments=3, workers=workers(client, 2), out_dir=tmp_path,
                                    keep_table=True, antipode_limit=20), ref)


def test_workers_of_several_threads_holding_several_segments(tmp_path):
    """Two threads a worker run two of its segments' tasks at once: the visits must take
    turns (they share the worker's mark buffers), and a segment's passes come in order."""
    ref = reference("3x3")
    with local_cluster(2, threads=2) as client:
        assert_same(explore_distributed(ps.load_puzzle("3x3"), client, segments=6, keep_table=True,
                                        antipode_limit=20), ref)
        for _ in range(2):  # one segment: a pass has no takes, and must still wait for the one before
            assert_same(explore_distributed(ps.load_puzzle("3x3"), client, segments=1, workers=workers(client, 1),
                                            keep_table=True, antipode_limit=20), ref)
        assert_same(explore_distributed(ps.load_puzzle("3x3"), client, segments=5, out_dir=tmp_path,
                                        keep_table=True, antipode_limit=20), ref)


@pytest.mark.parametrize("cases", runs([("3x3", 7, 4)], [("3x3", 2, 2), ("flip:5x5", 2, 2), ("flip:5x5", 7, 4)]))
@pytest.mark.parametrize("receive_at", [0, pytest.param(600, marks=pytest.mark.slow)])
def test_large_marks_taken_in_by_receive_tasks(client, monkeypatch, receive_at, cases):
    """Past RECEIVE_AT bytes a segment, a pass's marks are taken in by receive tasks before
    the next pass (0: every pass after the first; 600 bytes: the larger layers of 3x3 and
    flip:5x5 only, the others collected and merged by the visits): the same results,
    every byte checked. A chain a worker, one link a sending worker; the next visits do
    not wait on the takes themselves (which would hold their marks until they end)."""

    used, chains = [], {}
    submit_receives, submit = cluster._Run._submit_receives, cluster._Run.submit

    def spy(run, function, *args, **kwargs):  # each receive: (target worker, pass) -> the senders of each link
        if function is cluster_tasks.receive_marks:
            chains.setdefault((run.owners[args[1][0]], args[2]), []).append(args[3])
        if function is cluster_tasks.visit_segment and not args[4]:  # merged first: no take's marks held to its end
            assert not [f for f in args[5] if f.key.startswith("take-")]
        return submit(run, function, *args, **kwargs)

    monkeypatch.setattr(cluster, "RECEIVE_AT", receive_at)
    monkeypatch.setattr(cluster._Run, "_submit_receives",
                        lambda run, depth: used.append(depth) or submit_receives(run, depth))
    monkeypatch.setattr(cluster._Run, "submit", spy)
    for name, segments, count in cases:
        used.clear()
        chains.clear()
        reports = []
        owners = workers(client, count)
        result = explore_distributed(ps.load_puzzle(name), client, segments=segments, workers=owners,
                                     keep_table=True, antipode_limit=20, layer_done=reports.append)
        assert_same(result, reference(name))
        first = sum(r.slowest_worker is None for r in reports)  # the layers before, the head's, make no pass
        every = list(range(first, len(reports) + cluster.AHEAD))  # the passes after the last layer included
        assert used and (len(used) < len(reports) - 1 if receive_at else used == every)
        assert sorted({depth for _, depth in chains}) == sorted(used)
        for (target, _), links in chains.items():
            senders = [{owners[k % count] for k in link} for link in links]
            assert all(len(s) == 1 for s in senders) and len(set().union(*senders)) == len(links)
            mine = [k for k in range(segments) if owners[k % count] == target]
            assert sorted(k for link in links for k in link) == [
                k for k in range(segments) if k not in mine or len(mine) > 1]


@pytest.mark.parametrize("cases", runs([("3x3", 2, 2)], [("flip:5x5", 5, 3)]))
def test_passes_submitted_further_ahead_give_the_same(client, monkeypatch, cases):
    """Two passes submitted before the client waits (and so a tail of two passes over
    empty layers after the last): the same results, with and without receives."""

    monkeypatch.setattr(cluster, "AHEAD", 2)
    for receive_at in (0, cluster.RECEIVE_AT):
        monkeypatch.setattr(cluster, "RECEIVE_AT", receive_at)
        for name, segments, count in cases:
            assert_same(explore_distributed(ps.load_puzzle(name), client, segments=segments,
                                            workers=workers(client, count), keep_table=True, antipode_limit=20),
                        reference(name))


def test_which_worker_owns_which_segment_changes_nothing(client):
    ref = reference("3x3")
    names = workers(client, 4)
    for owners in (names[1:] + names[:1], [names[2], names[0]]):
        result = explore_distributed(ps.load_puzzle("3x3"), client, segments=5, workers=owners, keep_table=True,
                                     antipode_limit=20)
        assert_same(result, ref)


@pytest.mark.parametrize("cases", runs([("3x3", 1, 1), ("3x3", 9, 4)],
                                        [("3x3", 3, 1), ("3x3", 5, 2), *((("flip:5x5", *split) for split in (
                                            (1, 1), (3, 1), (5, 2), (9, 4))))]))
@pytest.mark.parametrize("direct", [0, pytest.param(100, marks=pytest.mark.slow)])
def test_marks_collected_a_worker_or_taken_by_each_visit_give_the_same(client, monkeypatch, direct, cases):
    """Up to DIRECT_SEGMENTS segments a visit takes its marks from the tasks that hold
    them, past it a collect a worker hands them over (0: always; 100: never): the same
    results on one to four workers, with several segments a worker."""

    collects, submit = [0], cluster._Run.submit

    def spy(run, function, *args, **kwargs):
        collects[0] += function is cluster_tasks.collect_marks
        return submit(run, function, *args, **kwargs)

    monkeypatch.setattr(cluster, "DIRECT_SEGMENTS", direct)
    monkeypatch.setattr(cluster._Run, "submit", spy)
    for name, segments, count in cases:
        collects[0] = 0
        assert_same(explore_distributed(ps.load_puzzle(name), client, segments=segments,
                                        workers=workers(client, count), keep_table=True, antipode_limit=20),
                    reference(name))
        assert bool(collects[0]) == (direct == 0)


def crossing_moves(name: str, segments: int) -> list[int]:
    """Per layer, the moves from its states to states of other segments (see
    :func:`reference.layers_and_crossing`)."""
    from puzzlespace.explore.engine import chunk_spans

    index = ps.load_puzzle(name).state_index()
    return layers_and_crossing(ps.load_puzzle(name), [lo for lo, _ in chunk_spans(index.size, index.group * 64,
                                                                                 segments)][1:])[1]


def test_marks_sent_are_the_moves_that_cross_and_all_arrive(client):
    reports = []
    explore_distributed(ps.load_puzzle("4x2"), client, segments=3, workers=workers(client, 3),
                        layer_done=reports.append)
    assert [r.crossing_marks for r in reports] == crossing_moves("4x2", 3)[:len(reports)]
    assert all(r.bytes_between_workers <= r.bytes_sent for r in reports)
    assert sum(r.bytes_between_workers for r in reports) > 0
    assert sum(r.states for r in reports) == 20160
    # the engine checks bytes sent against bytes received each layer; one worker sends nothing
    alone = []
    explore_distributed(ps.load_puzzle("4x2"), client, segments=3, workers=workers(client, 1), layer_done=alone.append)
    assert all(r.bytes_between_workers == 0 for r in alone) and sum(r.bytes_sent for r in alone) > 0


@pytest.mark.parametrize("name", ["3x3", "flip:5x5", "jump:9"])
def test_cluster_checkpoints_are_the_segments_engines(client, tmp_path, name):
    """Files under --out: the same tablebase; the checkpoint resumes with either engine."""
    ref = reference(name)
    result = explore_distributed(ps.load_puzzle(name), client, segments=3, workers=workers(client, 2),
                                 out_dir=tmp_path, keep_table=True, antipode_limit=20)
    assert_same(result, ref)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["depth_counts"] == ref.depth_counts and manifest["format"] == FORMAT
    assert sorted(p.name for p in tmp_path.glob("*.bin")) == sorted(manifest["files"])
    assert_same(explore_segmented(ps.load_puzzle(name), segments=0, out_dir=tmp_path, resume=True, keep_table=True,
                                  antipode_limit=20), ref)
    assert_same(explore_distributed(ps.load_puzzle(name), client, workers=workers(client, 3), out_dir=tmp_path,
                                    resume=True, keep_table=True, antipode_limit=20), ref)


@pytest.mark.parametrize("marks", ["packed", "bitmap"])
def test_a_segments_checkpoint_resumes_on_the_cluster(client, tmp_path, monkeypatch, marks):
    """Stopped after layer 12 by the one-process engine (its marks packed or a bitmap),
    finished on three workers."""
    from puzzlespace.explore.segments import BitmapStore

    monkeypatch.setattr(BitmapStore, "packed_share", 0)
    ref = reference("3x3")

    def stop(depth, done, total, states):
        if depth == 13:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        explore_segmented(ps.load_puzzle("3x3"), segments=4, out_dir=tmp_path, progress=stop, keep_table=True,
                          marks=marks)
    assert json.loads((tmp_path / "manifest.json").read_text())["depth"] == 12
    assert any(f.startswith("bits-" if marks == "bitmap" else "sent-")
               for f in json.loads((tmp_path / "manifest.json").read_text())["files"])
    assert_same(explore_distributed(ps.load_puzzle("3x3"), client, workers=workers(client, 3), out_dir=tmp_path,
                                    resume=True, keep_table=True, antipode_limit=20), ref)


def test_a_damaged_segment_file_is_refused_on_resume(client, tmp_path):
    def stop(depth, done, total, states):
        if depth == 10:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        explore_segmented(ps.load_puzzle("3x3"), segments=2, out_dir=tmp_path, progress=stop)
    named = json.loads((tmp_path / "manifest.json").read_text())["files"]
    seg = tmp_path / next(name for name in named if name.startswith("seg-1-"))  # the checkpoint's, not the other slot
    data = bytearray(seg.read_bytes())
    data[100] ^= 0x10
    seg.write_bytes(bytes(data))
    with pytest.raises(PuzzleError, match="corrupt"):
        explore_distributed(ps.load_puzzle("3x3"), client, workers=workers(client, 2), out_dir=tmp_path, resume=True)
    fields = json.loads((tmp_path / "manifest.json").read_text())
    files = dict(fields["files"], **{seg.name: file_crc(seg)})  # the checksum made again
    checkpoint.write_manifest(tmp_path, dict({k: v for k, v in fields.items() if k != "checksum"}, files=files))
    with pytest.raises(PuzzleError, match="its segment tables do not hold the states its manifest says"):
        explore_distributed(ps.load_puzzle("3x3"), client, workers=workers(client, 2), out_dir=tmp_path, resume=True)


# ---- the command line -----------------------------------------------------------------


def test_cli_workers_give_the_same_json(tmp_path):
    plain = run_cli(["explore", "4x2", "--json"])
    on_cluster = run_cli(["explore", "4x2", "--json", "--workers", "2", "--threads", "1", "--out", str(tmp_path),
                          "--save", str(tmp_path / "t.pstb")])
    assert on_cluster.exit_code == 0, on_cluster.output
    assert comparable(on_cluster.stdout) == comparable(plain.stdout)
    again = run_cli(["explore", "4x2", "--save", str(tmp_path / "u.pstb")])
    assert again.exit_code == 0
    assert (tmp_path / "t.pstb").read_bytes() == (tmp_path / "u.pstb").read_bytes()


def test_cli_scheduler_and_layer_lines(client):
    address = client.scheduler.address
    result = run_cli(["explore", "3x2", "--scheduler", address, "--segments", "3", "--progress", "--json"])
    assert result.exit_code == 0, result.output
    assert comparable(result.stdout) == comparable(run_cli(["explore", "3x2", "--json"]).stdout)
    assert "Dask cluster: 4 workers" in result.stderr
    assert "layer 10: 23 states in" in result.stderr and "between workers, slowest tcp://" in result.stderr
    assert "in this process" not in result.stderr  # 360 ranks: too few for a head
    headed = run_cli(["explore", "4x2", "--scheduler", address, "--progress", "--json"])
    assert headed.exit_code == 0, headed.output
    assert comparable(headed.stdout) == comparable(run_cli(["explore", "4x2", "--json"]).stdout)
    lines = [line for line in headed.stderr.splitlines() if line.startswith("layer ")]
    assert [line.split(":")[0] for line in lines[:4]] == ["layer 0", "layer 1", "layer 2", "layer 3"]
    assert all(line.endswith(", in this process") for line in lines[:3]) and "slowest tcp://" in lines[3]


@pytest.mark.parametrize("args, message", [
    (["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], "not both"),
    (["--scheduler", "tcp://127.0.0.1:1", "--threads", "2"], "dask worker --nthreads"),
    (["--scheduler", "tcp://127.0.0.1:1"], "cannot reach the Dask scheduler at 'tcp://127.0.0.1:1'"),
    (["--scheduler", "foo"], "--scheduler 'foo' is not a scheduler's address such as tcp://HOST:8786"),
    (["--scheduler", "nonsense://x:1"], "--scheduler 'nonsense://x:1' is not a scheduler's address"),
    *[(["--scheduler", f"tcp://127.0.0.1:{port}"], f"--scheduler 'tcp://127.0.0.1:{port}' is not a scheduler's "
       "address such as tcp://HOST:8786\n") for port in ("0", "-5", "99999", "abc")],  # nothing of Python's
    (["--scheduler", "inproc://x"], "--scheduler 'inproc://x' is not a scheduler's address"),
    (["--scheduler", "tcp://127.0.0.1:1", "--max-memory", "1G"], "those of --scheduler's cluster have the limits"),
    (["--workers", "2", "--resume"], "--resume needs --out DIR"),  # said before any cluster starts
])
def test_cli_cluster_errors(args, message):
    result = run_cli(["explore", "3x2", *args])
    assert result.exit_code == 2
    assert message in result.stderr and "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_tablebase_gathered_here_must_fit_this_process(client, monkeypatch):
    """Without --out the tablebase is gathered in this process: refused before the run
    when this machine has not the memory for it."""

    monkeypatch.setattr(cluster, "available_memory", lambda: 40_000)  # 3x3's tablebase: 45,360 bytes
    with pytest.raises(PuzzleError, match=r"^without --out the tablebase \(44\.3 KiB\) is gathered in this process, "
                                          r"which has 39\.1 KiB of memory available; give --out DIR"):
        explore_distributed(ps.load_puzzle("3x3"), client, workers=workers(client, 2), keep_table=True)
    monkeypatch.setattr(cluster, "available_memory", lambda: 50_000)
    assert_same(explore_distributed(ps.load_puzzle("3x3"), client, workers=workers(client, 2), keep_table=True,
                                    antipode_limit=20), reference("3x3"))


def test_a_gathered_tablebase_comes_out_of_the_workers_share(tmp_path):
    """--workers with --max-memory and --save without --out: this process gathers the
    tablebase at the end, so the workers share what is left; refused, before any worker
    starts, where that leaves them too little."""
    from puzzlespace.bits import table_bytes
    from puzzlespace.explore.dask_cluster import WORKER_OVERHEAD, worker_memory

    size = ps.load_puzzle("6x2").state_index().size
    assert worker_memory(700 << 20, 2, size, False) == 350 << 20 > WORKER_OVERHEAD
    assert worker_memory(1 << 30, 2, size, True) == ((1 << 30) - table_bytes(size)) // 2
    with pytest.raises(PuzzleError, match="leaves the workers too little"):
        worker_memory(700 << 20, 2, size, True)
    result = run_cli(["explore", "6x2", "--workers", "2", "--max-memory", "700M", "--save", str(tmp_path / "t.tb")])
    assert result.exit_code == 2 and result.stderr == (
        "error: --save without --out gathers the tablebase (57.1 MiB) in this process, out of --max-memory 700.0 "
        "MiB, which leaves the workers too little; raise it, or give --out DIR (the tablebase is then written a "
        "segment at a time)\n"), result.output


@contextlib.contextmanager
def listener(answer: bytes | None):
    """A TCP port on this machine that accepts connections and sends ``answer`` (None:
    nothing, ever) to each; yields its address."""
    import socket

    server = socket.create_server(("127.0.0.1", 0))
    held = []

    def serve():
        with contextlib.suppress(OSError):
            while True:
                conn, _ = server.accept()
                held.append(conn)
                if answer is not None:
                    conn.sendall(answer)
                    conn.close()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    finally:
        with contextlib.suppress(OSError):
            server.shutdown(socket.SHUT_RDWR)  # wakes the accept, which would keep the port listening
        server.close()
        for conn in held:
            conn.close()


@pytest.mark.parametrize("answer", [None, b"HTTP/1.0 400 Bad request\r\n\r\n"], ids=["silent", "not Dask"])
def test_a_scheduler_address_where_no_scheduler_answers_is_refused_in_seconds(monkeypatch, answer):
    """Dask's client can wait forever on a port that accepts its connection and never
    answers as Dask does; nothing listening is said at once, not after Dask's retries."""

    monkeypatch.setattr(dask_cluster, "CONNECT_WAIT", 2.0)
    with listener(answer) as address:
        started = time.monotonic()
        result = run_cli(["explore", "3x2", "--scheduler", address])
    assert time.monotonic() - started < 10
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result.output
    assert f"what listens at '{address}' is not a Dask scheduler" in result.stderr
    started = time.monotonic()
    result = run_cli(["explore", "3x2", "--scheduler", address])  # closed now: nothing listens
    assert time.monotonic() - started < 5 and "(Connection refused); is it running?" in result.stderr


def test_a_workers_address_is_not_taken_for_the_schedulers(client):
    worker = workers(client, 1)[0]
    result = run_cli(["explore", "3x2", "--scheduler", worker])
    assert result.exit_code == 2 and "is not a Dask scheduler (a Dask Worker)" in result.stderr, result.output


def test_cli_refuses_a_segment_too_large_for_its_worker(tmp_path):
    """The check of each worker's own memory limit (the slow test below: every case)."""
    out = tmp_path / "ck"
    result = run_cli(["explore", "4x3", "--workers", "2", "--segments", "2", "--out", str(out), "--max-memory", "740M"])
    assert result.exit_code == 2 and "a segment's table takes 28.6 MiB but worker" in result.stderr, result.output
    assert "--segments N" in result.stderr and not out.exists()
    assert [line[:7] for line in result.stderr.splitlines()] == ["Dask cl", "error: "], result.stderr


@pytest.mark.slow
def test_cli_refuses_workers_too_small_for_their_segments(tmp_path):
    """Checked against each worker's own memory limit before any segment is made: 7x2 on
    4 workers of 2.75 GiB (2.5 GiB of table each, above what Dask lets a worker keep with
    the process and the marks in flight); 5x3 on 2 workers of this machine's memory
    without --max-memory (76 GiB each); with --out, one segment at a time, a segment too
    large for its worker. One line each, no traceback, no directory left behind."""
    t0 = time.monotonic()
    result = run_cli(["explore", "7x2", "--workers", "4", "--max-memory", "11G"])
    assert result.exit_code == 2 and "would hold 2.5 GiB of segments but has room for" in result.stderr
    assert "--out DIR" in result.stderr and time.monotonic() - t0 < 60
    errors = [result.stderr]
    if available_memory() < 140 << 30:  # a machine that holds 5x3 in memory would start exploring it
        result = run_cli(["explore", "5x3", "--workers", "2"])
        assert result.exit_code == 2 and "would hold 76.1 GiB of segments" in result.stderr, result.output
        errors.append(result.stderr)
    out = tmp_path / "ck"
    result = run_cli(["explore", "4x3", "--workers", "2", "--segments", "2", "--out", str(out), "--max-memory", "740M"])
    assert result.exit_code == 2 and "a segment's table takes 28.6 MiB but worker" in result.stderr, result.output
    assert "--segments N" in result.stderr and not out.exists()
    errors.append(result.stderr)
    kept = tmp_path / "kept"  # a resumed run keeps its segments: the advice is more memory, not more segments

    def stop(depth, done, total, states):
        if depth == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        explore_segmented(ps.load_puzzle("4x3"), segments=2, out_dir=kept, progress=stop)
    result = run_cli(["explore", "4x3", "--workers", "2", "--out", str(kept), "--resume", "--max-memory", "740M"])
    assert result.exit_code == 2 and "a resumed run keeps the checkpoint's 2 segments: give the workers more " \
        "memory" in result.stderr and "--segments N" not in result.stderr, result.output
    errors.append(result.stderr)
    for stderr in errors:  # the cluster's line, then the error's
        assert [line[:7] for line in stderr.splitlines()] == ["Dask cl", "error: "], stderr
    for limit in ("400M", "10M"):  # no room beside the program: refused before any worker starts (one line)
        result = run_cli(["explore", "4x3", "--workers", "2", "--out", str(out), "--max-memory", limit])
        assert result.exit_code == 2 and result.stderr.startswith("error: each worker's memory limit of ")
        assert "leaves no room for segments (Dask restarts it at 98% of it," in result.stderr  # the nanny's line
        assert len(result.stderr.splitlines()) == 1


def test_a_run_refused_for_memory_leaves_the_checkpoint_as_it_was(tmp_path):
    out = tmp_path / "ck"
    assert run_cli(["explore", "3x3", "--out", str(out), "--segments", "3", "--json"]).exit_code == 0
    before = {f.name: f.read_bytes() for f in out.iterdir()}
    refused = run_cli(["explore", "3x3", "--workers", "2", "--segments", "3", "--out", str(out),
                       "--max-memory", "400M"])
    assert refused.exit_code == 2 and "leaves no room for segments" in refused.stderr, refused.output
    assert {f.name: f.read_bytes() for f in out.iterdir()} == before
    small = run_cli(["explore", "3x2", "--workers", "2", "--max-memory", "3G", "--json"])
    assert small.exit_code == 0 and small.stderr == ("--workers 2: sliding:3x2's ranks, cut at multiples of 384, "
                                                     "make 1 segment; starting 1 worker\n"), small.stderr


@pytest.mark.slow  # the plan's choice: tests/test_explore_run.py, by default
def test_no_more_workers_start_than_the_run_has_segments(tmp_path):
    """A worker more than the segments would hold none: they are not started (a hundred
    idle processes took a minute and a half to start), and the run says so."""
    fewer = run_cli(["explore", "3x3", "--workers", "4", "--segments", "2", "--antipodes", "0"])
    assert fewer.exit_code == 0, fewer.output
    lines = fewer.stderr.splitlines()
    assert lines[0].startswith("Dask cluster: 2 workers, ") and lines[1] == "--workers 4: the run has 2 segments; " \
        "starting 2 workers", fewer.stderr
    out = tmp_path / "ck"
    assert run_cli(["explore", "3x3", "--out", str(out), "--segments", "2", "--json"]).exit_code == 0
    resumed = run_cli(["explore", "3x3", "--workers", "3", "--out", str(out), "--resume", "--json"])
    assert resumed.exit_code == 0 and resumed.stderr == ("--workers 3: the checkpoint has 2 segments; "
                                                         "starting 2 workers\n"), resumed.output
    t0 = time.monotonic()
    many = run_cli(["explore", "2x2", "--workers", "100", "--json"])
    assert many.exit_code == 0 and "make 1 segment; starting 1 worker" in many.stderr and time.monotonic() - t0 < 30
    too_many = run_cli(["explore", "4x3", "--workers", "1000"])  # this machine's memory shared out: refused at once
    assert too_many.exit_code == 2 and "leaves no room for segments" in too_many.stderr, too_many.output
    assert too_many.stderr.rstrip().endswith("or start fewer than 1000")


@pytest.mark.parametrize("where", ["check_installed", "layer"])
def test_a_connection_lost_on_a_running_client_is_one_line(client, tmp_path, monkeypatch, where):
    """A connection of Dask's closed under a call (a worker gone in its middle) while the
    client still runs, as the run starts or during a layer: a PuzzleError saying what is
    left, not an error on the segment files nor one on the output."""
    from distributed.comm import CommClosedError


    def closed(*args, **kwargs):
        raise CommClosedError("in <TCP (closed) Scheduler Broadcast>: Stream is closed")

    if where == "check_installed":
        monkeypatch.setattr(cluster, "check_installed", closed)
        message = r"lost a connection of the Dask cluster while starting \(.*Stream is closed\); run it again"
    else:
        layer = cluster._Run.layer
        monkeypatch.setattr(cluster._Run, "layer", lambda self, depth, *a: layer(self, depth, *a) if depth < 3
                            else closed())
        message = (r"lost a connection of the Dask cluster during layer 3 \(.*Stream is closed\); the checkpoint "
                   r"of layer 2 in .* is intact: continue with --resume")
    with pytest.raises(PuzzleError, match=message):
        explore_distributed(ps.load_puzzle("3x2"), client, workers=workers(client, 2), out_dir=tmp_path / "ck")


def test_cli_names_the_extra_without_dask(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    result = run_cli(["explore", "3x2", "--workers", "2"])
    assert result.exit_code == 2
    assert result.stderr.strip() == ("error: --workers and --scheduler need Dask's distributed scheduler: "
                                     'pip install "puzzlespace[cluster]"')


def test_cli_refuses_to_resume_an_in_memory_checkpoint_on_a_cluster(tmp_path):
    assert run_cli(["explore", "3x2", "--out", str(tmp_path)]).exit_code == 0
    result = run_cli(["explore", "3x2", "--out", str(tmp_path), "--resume", "--workers", "2"])
    assert result.exit_code == 2 and "made without segments" in result.stderr


def test_cli_refuses_to_resume_no_checkpoint_on_a_cluster_before_it_starts(tmp_path):
    """Not a checkpoint "made without segments": none at all, said in one line, no cluster
    started and no folder left."""
    out = tmp_path / "ck"
    result = run_cli(["explore", "3x2", "--out", str(out), "--resume", "--workers", "2"])
    assert result.exit_code == 2 and result.stderr == \
        f"error: no checkpoint to resume in {str(out)!r} (no manifest.json): run it without --resume\n"
    assert not out.exists()


def test_the_run_is_not_left_on_the_workers(client):
    explore_distributed(ps.load_puzzle("3x2"), client, segments=2)
    assert all(not held for held in client.run(lambda: len(
        __import__("puzzlespace.explore.cluster_tasks", fromlist=["_HELD"])._HELD)).values())


@pytest.mark.parametrize("receive_at", [0, 1 << 40])
def test_a_run_stopped_midway_leaves_the_cluster_usable(client, monkeypatch, receive_at):
    """An error in the client mid-run (as Ctrl-C would) lets go of every task, with or
    without receive tasks; no task is left on the scheduler and the next run is exact."""

    def stop(depth, done, segments, states):
        if depth == 12:
            raise KeyboardInterrupt

    monkeypatch.setattr(cluster, "RECEIVE_AT", receive_at)
    with pytest.raises(KeyboardInterrupt):
        explore_distributed(ps.load_puzzle("3x3"), client, segments=3, workers=workers(client, 3), progress=stop)
    left = lambda: client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))  # noqa: E731
    deadline = time.monotonic() + 10
    while left() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left() == 0
    assert_same(explore_distributed(ps.load_puzzle("3x3"), client, segments=3, workers=workers(client, 3),
                                    keep_table=True, antipode_limit=20), reference("3x3"))


def test_every_worker_is_seen_and_each_runs_this_version(monkeypatch):
    """More than five workers (some versions of Dask list five by default) all count in
    the memory check and the cluster's line; a worker with another version of
    puzzlespace, or none, is refused in a line."""

    with distributed.LocalCluster(n_workers=7, threads_per_worker=1, processes=False, memory_limit="1GB",
                                  dashboard_address=":0", silence_logs=50) as local, \
            distributed.Client(local) as client:
        assert len(dask_cluster.workers_seen(client)) == 7
        assert len({line for line in dask_cluster.memory_lines(client).values()}) == 1
        assert len(dask_cluster.memory_lines(client)) == 14  # by address and by name
        assert dask_cluster.describe_workers(client) == "7 workers, 7 threads, 6.5 GiB of memory"
        dask_cluster.check_installed(client)
        monkeypatch.setattr(dask_cluster, "__version__", "0.0.1")
        with pytest.raises(PuzzleError, match=r"worker \S+ runs puzzlespace \S+, this program 0\.0\.1: run "
                                              r"the same version on every worker"):
            explore_distributed(ps.load_puzzle("2x2"), client)

    class Client:
        def run(self, function, on_error):
            return {"tcp://w:1": ModuleNotFoundError("No module named 'puzzlespace'")}

    with pytest.raises(PuzzleError, match=r"worker tcp://w:1 cannot import puzzlespace \(ModuleNotFoundError: No "
                                          r"module named 'puzzlespace'\); install puzzlespace 0\.0\.1 on every"):
        dask_cluster.check_installed(Client())


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:1", "foo"])
def test_a_client_that_could_not_connect_is_closed_at_once(address):
    """Left for the garbage collector, a half-made client closes whenever it runs, and if
    that is inside another client's start, Dask's loop runners wait forever on the lock
    they share (a test run hung so): it must be gone when the error is raised."""
    import gc

    def clients() -> set[int]:
        return {id(o) for o in gc.get_objects() if isinstance(o, distributed.Client)}

    before = clients()
    with pytest.raises(PuzzleError) as caught:
        with remote_cluster(address):
            pass
    assert caught.value.__context__ is None and clients() <= before


def test_a_killed_clients_run_is_dropped_from_the_workers_by_the_next(client):
    """A client killed mid-run (``explore --scheduler`` SIGKILLed) never lets go of its
    run: its segments would stay in the workers' memory as long as they live. The next
    run on the cluster drops them as it starts, and leaves nothing itself; nor do the
    runs' reports stay on the scheduler."""

    runs = lambda: [c for got in client.run(lambda: [held.client for held in  # noqa: E731
                    __import__("puzzlespace.explore.cluster_tasks", fromlist=["_HELD"])._HELD.values()]).values()
                    for c in got]
    held = lambda: len(runs())  # noqa: E731
    clients = lambda: client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.clients))  # noqa: E731
    before = clients()
    cli = subprocess.Popen([sys.executable, "-m", "puzzlespace", "explore", "4x3", "--scheduler",
                            client.scheduler.address, "--json"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while held() < 4 and time.monotonic() < deadline:  # each worker holds one of its segments
        time.sleep(0.05)
    cli.kill()
    cli.wait()
    assert held() == 4
    while clients() > before and time.monotonic() < deadline:  # the scheduler has seen it go
        time.sleep(0.05)
    during = []
    assert_same(explore_distributed(ps.load_puzzle("3x2"), client, segments=2, antipode_limit=20,
                                    progress=lambda *_: during or during.append(runs())), reference("3x2"))
    assert during[0] and set(during[0]) == {client.id} and held() == 0  # its own run only; then nothing
    cluster.drop_orphaned_runs(client)  # as the next run starts
    assert not client.run_on_scheduler(lambda dask_scheduler: [
        name for name in dask_scheduler._broker._topics if name.startswith("puzzlespace-")])


def test_a_ctrl_c_is_taken_where_the_run_waits(client):
    """A Ctrl-C during a run is noted and raised where the run waits on the cluster, not
    wherever the main thread stands: there it could land in an object's finalizer, which
    swallows it (the run then went on to its end), or in a Dask call. Sent here from the
    progress callback, it comes out of the wait; the cluster then runs the next run."""
    p = ps.load_puzzle("3x3")

    def press(depth, done, total, states):
        if depth == 5:
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt) as stopped:
        explore_distributed(p, client, progress=press)
    frames = [frame.f_code.co_name for frame, _ in traceback.walk_tb(stopped.value.__traceback__)]
    assert "take_interrupt" in frames and "press" not in frames, frames
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert_same(explore_distributed(p, client), reference("3x3"))
