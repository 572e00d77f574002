"""A cluster's failures: killed and paused workers, a scheduler stopped or killed, Ctrl-C
and SIGTERM, clusters started by hand, segments on each worker's own disk. Each starts
clusters of its own (tests/test_cluster.py shares one)."""

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import pytest

import puzzlespace as ps
from puzzlespace.errors import PuzzleError
from puzzlespace.explore import cluster, cluster_tasks, dask_cluster
from puzzlespace.explore.cluster import WorkerLost, explore_distributed
from puzzlespace.explore.dask_cluster import local_cluster, remote_cluster
from puzzlespace.explore.segments import file_parts

from clusters import children, comparable, run_cli, started_by_hand
from test_segments import assert_same, reference

distributed = pytest.importorskip("distributed")


# Slow: three clusters; by default a killed worker is said with the command that continues
# the run (tests/test_cluster_cleanup.py) and resumes are checked in tests/test_cluster.py.
@pytest.mark.slow
def test_a_killed_worker_stops_the_run_and_resume_finishes_it(tmp_path, monkeypatch):
    """SIGKILL of a worker mid-run: a WorkerLost within 60 s; a worker killed as the
    resumed run opens its segments: a WorkerLost that says the checkpoint is still
    there; then --resume on a new cluster gives the engine's results."""

    ref = reference("5x2")
    p = ps.load_puzzle("5x2")
    with local_cluster(2, threads=1) as client:
        pids = client.run(os.getpid)
        victim = sorted(pids)[1]
        killed = []

        def kill(report):
            if report.depth == 25 and not killed:
                killed.append(time.monotonic())
                os.kill(pids[victim], signal.SIGKILL)

        with pytest.raises(WorkerLost, match="left the cluster during layer 2[67].*--resume") as caught:
            explore_distributed(p, client, out_dir=tmp_path, keep_table=True, layer_done=kill)
        assert time.monotonic() - killed[0] < 60
        assert victim in str(caught.value)
    saved = json.loads((tmp_path / "manifest.json").read_text())["depth"]
    assert saved in (25, 26)
    opening = cluster._Run.open

    def killed_first(run, *args):
        os.kill(max(pids.values()), signal.SIGKILL)
        return opening(run, *args)

    with local_cluster(2, threads=1) as client, monkeypatch.context() as patched:
        pids = client.run(os.getpid)
        patched.setattr(cluster._Run, "open", killed_first)
        with pytest.raises(WorkerLost, match=f"while starting.*the checkpoint of layer {saved} in .* is intact: "
                                             "continue with --resume"):
            explore_distributed(p, client, out_dir=tmp_path, resume=True, keep_table=True)
    with local_cluster(3, threads=1) as client:
        assert_same(explore_distributed(p, client, out_dir=tmp_path, resume=True, keep_table=True,
                                        antipode_limit=20), ref)


# By default a terminal's Ctrl-C twice; the other signals slow.
@pytest.mark.parametrize("signum, group, presses", [
    pytest.param(signal.SIGINT, True, 1, id="ctrl-c from a terminal", marks=pytest.mark.slow),
    pytest.param(signal.SIGINT, True, 2, id="ctrl-c twice"),
    pytest.param(signal.SIGTERM, True, 1, id="SIGTERM to the job", marks=pytest.mark.slow),
    pytest.param(signal.SIGTERM, False, 1, id="SIGTERM to the client", marks=pytest.mark.slow),
    pytest.param(signal.SIGTERM, False, 2, id="SIGTERM to the client twice", marks=pytest.mark.slow)])
def test_a_stopped_local_cluster_run_says_what_it_saved_and_leaves_nothing(tmp_path, signum, group, presses):
    """A terminal's Ctrl-C reaches every process of its foreground group, the workers of
    ``--workers`` too, and a batch system's SIGTERM every process of the job: the run stops
    in seconds, with the one line that names the saved layer (no worker's traceback, nor,
    after a second Ctrl-C as it closes the cluster, Python's warning of leaked
    semaphores), and leaves no worker process behind; ``--resume`` then finishes it."""
    out = tmp_path / "ck"
    args = ["explore", "5x2", "--workers", "2", "--out", str(out), "--json"]
    proc = subprocess.Popen([sys.executable, "-m", "puzzlespace", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # until a layer is saved (a run on a cluster first writes depth -1)
        with contextlib.suppress(OSError, ValueError):
            if json.loads((out / "manifest.json").read_text())["depth"] >= 0:
                break
        time.sleep(0.02)
    assert time.monotonic() < deadline
    workers = children(proc.pid)
    (os.killpg if group else os.kill)(proc.pid, signum)
    sent = time.monotonic()
    if presses == 2:
        time.sleep(0.05)  # the run is closing the cluster
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signum)
    _, stderr = proc.communicate(timeout=120)
    assert time.monotonic() - sent < 15
    assert proc.returncode == 130 and "Traceback" not in stderr and "Warning" not in stderr, stderr
    assert re.fullmatch(r"stopped: interrupted; layer \d+ is saved in .*--resume.*\n", stderr.splitlines(True)[-1])
    time.sleep(1)
    assert workers and not {pid for pid in workers if Path(f"/proc/{pid}").exists()
                            and "Z" not in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1][:3]}
    resumed = run_cli(["explore", "5x2", "--out", str(out), "--resume", "--json"])
    assert resumed.exit_code == 0 and json.loads(resumed.stdout)["depth_counts"] == reference("5x2").depth_counts


@pytest.mark.parametrize("off", [False, True])
def test_dask_lines_logged_after_a_cluster_closed_stay_off_stderr(off):
    """What Dask logs once a run's cluster has closed (a scheduler's stream to a worker
    found closed, say, with its traceback) reaches stderr unless the command line has
    turned Dask's log lines off for its process (it reports a run in its own words)."""
    code = ("import logging, sys\n"
            "from puzzlespace.explore import dask_cluster\n"
            "if sys.argv[1] == 'off':\n"
            "    dask_cluster.dask_logs_off()\n"
            "with dask_cluster.local_cluster(1):\n"
            "    pass\n"
            "try:\n"
            "    raise OSError('closed')\n"
            "except OSError:\n"
            "    logging.getLogger('distributed.batched').info('Batched Comm Closed', exc_info=True)\n"
            "logging.getLogger('distributed.scheduler').error('a late error')\n")
    done = subprocess.run([sys.executable, "-c", code, "off" if off else "on"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    late = [line for line in done.stderr.splitlines() if "Batched Comm Closed" in line or "a late error" in line]
    assert len(late) == (0 if off else 2), done.stderr


def test_a_sigterm_as_the_local_cluster_starts_stops_it_cleanly(tmp_path):
    """A SIGTERM to the client while its cluster starts (held until the cluster is up,
    then taken): the run stops with its one line, without Python's warning of the
    workers' leaked semaphores, and leaves no worker behind."""
    proc = subprocess.Popen([sys.executable, "-m", "puzzlespace", "explore", "5x2", "--workers", "2", "--out",
                             str(tmp_path / "ck"), "--json"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    deadline = time.monotonic() + 60
    while not (started := children(proc.pid, nannies=True)) and time.monotonic() < deadline:
        time.sleep(0.005)
    assert started
    proc.send_signal(signal.SIGTERM)  # its nannies started, its workers not yet
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in stderr and "Warning" not in stderr, stderr
    assert stderr.splitlines()[-1].startswith("stopped: interrupted; "), stderr
    time.sleep(1)
    assert not {pid for pid in children(proc.pid) | started if Path(f"/proc/{pid}").exists()
                and "Z" not in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1][:3]}


def test_without_a_checkpoint_a_lost_worker_says_nothing_was_saved():
    with local_cluster(2, threads=1) as client:
        pids = client.run(os.getpid)
        victim = sorted(pids)[0]

        def kill(report):
            if report.depth == 5:
                os.kill(pids[victim], signal.SIGKILL)

        with pytest.raises(WorkerLost, match="nothing was saved"):
            explore_distributed(ps.load_puzzle("3x3"), client, layer_done=kill)


def test_a_worker_out_of_memory_stops_the_run_with_a_message():
    """A worker without a memory limit that cannot allocate: a PuzzleError that says so,
    not the worker's traceback."""

    class Failed:
        status, key = "error", "open-0-abc"

        def exception(self):
            return MemoryError("Unable to allocate 76.1 GiB for an array")

    with pytest.raises(PuzzleError, match=r"a worker ran out of memory running 'open-0-abc' \(Unable to allocate.*"
                       r"; run it again$"):
        cluster._raise_remote(Failed(), -1, cluster._left(Path("ck"), -1))


def test_a_visit_whose_report_never_comes_stops_the_run(monkeypatch):
    """A visit seen finished whose report (a Dask event) does not arrive: a PuzzleError
    after REPORT_WAIT seconds, not a hang; a report that comes is read once and the
    visit let go."""

    class Client:
        def subscribe_topic(self, topic, handler):
            self.handler = handler

        def run_on_scheduler(self, function, callback_timeout=None):
            return {"tcp://w:1": {"status": "running"}}

    class Finished:
        status, key, released = "finished", "visit-3-0-abc", False

        def release(self):
            self.released = True

    monkeypatch.setattr(cluster, "POLL", 0.05)
    monkeypatch.setattr(cluster, "REPORT_WAIT", 0.2)
    run = cluster._Run(Client(), "abc", ["tcp://w:1"], None)
    run.workers = {"tcp://w:1"}
    visit = Finished()
    t0 = time.monotonic()
    with pytest.raises(PuzzleError, match=r"task 'visit-3-0-abc' finished but its report never came; nothing was "):
        run._report_of(visit, 3)
    assert 0.2 <= time.monotonic() - t0 < 5 and not visit.released
    threading.Timer(0.1, run.client.handler, [(0.0, {"key": "visit-3-0-abc", "layer": 7})]).start()
    assert run._report_of(visit, 3) == {"key": "visit-3-0-abc", "layer": 7} and visit.released
    assert not run.reports.by_key


def test_a_worker_killed_between_polls_does_not_hang(tmp_path):
    """The client notices a worker gone even while no task of the pass can finish."""
    with local_cluster(2, threads=1) as client:
        pids = client.run(os.getpid)
        started = threading.Event()

        def kill(report):
            if report.depth == 20 and not started.is_set():
                started.set()
                for pid in pids.values():
                    os.kill(pid, signal.SIGKILL)

        t0 = time.monotonic()
        with pytest.raises(WorkerLost):
            explore_distributed(ps.load_puzzle("5x2"), client, out_dir=tmp_path, layer_done=kill)
        assert time.monotonic() - t0 < 90


def test_a_worker_that_pauses_stops_the_run_with_a_message(monkeypatch):
    """Workers that pause (Dask's default, at a fraction of their memory limit) hold
    segments that never leave them, so a paused worker would wait forever: a run that
    would pass a worker's pause line is refused before it starts, naming the setting that
    turns pausing off; one that gets there all the same (here: a line below what the
    process itself takes, and no overhead counted) stops with that message, not a hang."""
    import dask


    settings = {"distributed.worker.memory.pause": 0.02, "distributed.worker.memory.spill": False,
                "distributed.worker.memory.target": False}
    with dask.config.set(settings):
        local = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit="2GB",
                                         dashboard_address=":0", silence_logs=50)
    with local, distributed.Client(local) as client:
        lines = dask_cluster.memory_lines(client)
        assert {line.pauses for line in lines.values()} == {True}
        assert {line.at for line in lines.values()} == {40_000_000}
        with pytest.raises(PuzzleError, match=r"memory limit of 1\.9 GiB leaves no room for segments \(Dask pauses "
                                              r"it at 2% of it.*start the workers with DASK_DISTRIBUTED__WORKER__"
                                              r"MEMORY__PAUSE=False \(see docs/scaling\.md\)"):
            explore_distributed(ps.load_puzzle("4x3"), client)
        monkeypatch.setattr(dask_cluster, "WORKER_OVERHEAD", 0)
        monkeypatch.setattr(cluster, "PAUSED_WAIT", 1.0)
        t0 = time.monotonic()
        with pytest.raises(cluster.WorkerPaused, match=r"paused (while starting|during layer \d+), its memory past "
                                                       r"Dask's pause line.*MEMORY__PAUSE=False.*nothing was saved"):
            explore_distributed(ps.load_puzzle("4x3"), client)
        assert time.monotonic() - t0 < 30


@pytest.mark.slow  # the recipe's cluster runs by default in test_a_scheduler_stopped_stops_the_run[ending]
def test_a_cluster_started_by_hand_as_the_docs_say(tmp_path):
    """``explore --scheduler`` with ``--out`` on the recipe's cluster: the same JSON as in
    memory, on workers that do not pause, restarted by their nannies only past RESTART_AT
    of their limit (as the workers --workers starts)."""

    with started_by_hand(tmp_path) as (address, _):
        with distributed.Client(address) as client:
            assert {(line.fraction, line.pauses) for line in dask_cluster.memory_lines(client).values()} == {
                (dask_cluster.RESTART_AT, False)}
        got = run_cli(["explore", "3x3", "--scheduler", address, "--out", str(tmp_path / "ck"), "--json",
                       "--progress"])
    assert got.exit_code == 0, got.output
    assert comparable(got.stdout) == comparable(run_cli(["explore", "3x3", "--json"]).stdout)
    assert got.stderr.startswith("Dask cluster: 2 workers, 2 threads, 3.7 GiB of memory\nlayer 0: 1 state")


@pytest.mark.slow  # a lost scheduler by default: test_a_scheduler_stopped_stops_the_run
def test_a_scheduler_killed_mid_run_stops_it_and_resume_finishes_it(tmp_path):
    """The whole cluster lost (its scheduler SIGKILLed mid-layer): ``explore --scheduler``
    stops with the one line that says so within a minute (not as an error on its files,
    nor with Dask's own log line), and ``--resume`` on another cluster gives the in-memory
    result."""
    out = tmp_path / "ck"
    with started_by_hand(tmp_path) as (address, scheduler):
        run = subprocess.Popen([sys.executable, "-m", "puzzlespace", "explore", "5x2", "--scheduler", address, "--out",
                                str(out), "--save", str(tmp_path / "t.pstb"), "--json"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and run.poll() is None:
            with contextlib.suppress(OSError, ValueError):
                if json.loads((out / "manifest.json").read_text())["depth"] >= 20:
                    break
            time.sleep(0.02)
        os.kill(scheduler.pid, signal.SIGKILL)
        t0 = time.monotonic()
        _, stderr = run.communicate(timeout=120)
        assert time.monotonic() - t0 < 60
    assert run.returncode == 2 and re.fullmatch(
        r"error: lost the Dask scheduler during layer \d+ \(.*\); the checkpoint of layer \d+ in .* is intact: "
        r"continue with: puzzlespace explore .*--resume.*\n", stderr), stderr
    with local_cluster(2, threads=1) as client:
        assert_same(explore_distributed(ps.load_puzzle("5x2"), client, out_dir=out, resume=True, keep_table=True,
                                        antipode_limit=20), reference("5x2"))


def test_a_request_of_the_cluster_is_answered_or_given_up_on(monkeypatch):
    """``asked`` returns the request's answer or raises its error; while it waits, a
    scheduler that does not answer a check, or a worker it waits on that has left the
    cluster, ends the wait with Unanswered, which says which (and a run, when, and what
    it leaves)."""
    monkeypatch.setattr(dask_cluster, "POLL", 0.01)
    forever = threading.Event()

    class Client:
        def __init__(self, seen):
            self.seen = seen

        def run_on_scheduler(self, function, callback_timeout):
            if self.seen is None:
                raise TimeoutError
            return {w: {} for w in self.seen}

    assert dask_cluster.asked(Client(None), lambda: 7) == 7
    with pytest.raises(KeyError, match="mine"):
        dask_cluster.asked(Client(None), lambda: {}["mine"])
    with pytest.raises(dask_cluster.Unanswered) as caught:
        dask_cluster.asked(Client(["tcp://a:1"]), forever.wait, ["tcp://a:1", "tcp://b:2"])
    assert caught.value.lost == ["tcp://b:2"] and str(caught.value) == "worker tcp://b:2 left the Dask cluster"
    said = cluster._unanswered(caught.value, 3, "run it again")
    assert isinstance(said, WorkerLost) and str(said) == (
        "worker tcp://b:2 left the cluster during layer 3, taking its segments with it (likely "
        f"{cluster.LEAVING_CAUSES}); run it again")
    with pytest.raises(dask_cluster.Unanswered) as caught:
        dask_cluster.asked(Client(None), forever.wait)
    silent = f"the Dask scheduler has not answered for {dask_cluster.SCHEDULER_WAIT:g} s"
    assert str(caught.value) == f"{silent} (stopped, or its machine frozen)"
    assert str(cluster._unanswered(caught.value, -1, "run it again")) == (
        f"{silent} while starting (stopped, or its machine frozen); run it again")
    assert str(cluster._unanswered(caught.value, 31, "run it again")) == (
        f"{silent} during layer 31 (stopped, or its machine frozen); run it again")
    forever.set()


# As it starts by default; mid-run and as it ends slow (the same wait on the scheduler's
# answer; its message at each pass: test_a_request_of_the_cluster_is_answered_or_given_up_on).
@pytest.mark.parametrize("when", ["starting", pytest.param("layer", marks=pytest.mark.slow),
                                  pytest.param("ending", marks=pytest.mark.slow)])
def test_a_scheduler_stopped_stops_the_run(tmp_path, monkeypatch, when):
    """A scheduler that stops answering (SIGSTOP: its connections stay open) ends the run
    once it has not answered for SCHEDULER_WAIT seconds, with the line that says when
    and what is left, not a hang: mid-run (a check of the workers), and in the calls a
    run makes to the cluster outside its passes (the workers, their versions, settings
    and claims as it starts; dropping the files of the empty pass as it ends)."""
    monkeypatch.setattr(dask_cluster, "SCHEDULER_WAIT", 2.0)
    last = len(reference("3x3").depth_counts)  # the pass over the first empty layer
    with started_by_hand(tmp_path) as (address, scheduler):
        def stop(depth, done, total, states):
            if (when, depth, done) in (("layer", 10, 1), ("ending", last, total)):
                os.kill(scheduler.pid, signal.SIGSTOP)

        try:
            with remote_cluster(address) as client:
                if when == "starting":
                    os.kill(scheduler.pid, signal.SIGSTOP)
                t0 = time.monotonic()
                with pytest.raises(PuzzleError) as caught:
                    explore_distributed(ps.load_puzzle("3x3"), client, out_dir=tmp_path / "ck", progress=stop)
                assert time.monotonic() - t0 < 30
                os.kill(scheduler.pid, signal.SIGCONT)  # for the client to close
        finally:
            os.kill(scheduler.pid, signal.SIGCONT)
    intact = r"the checkpoint of layer {} in .* is intact: continue with --resume"
    said = {"starting": r"while starting \(stopped, or its machine frozen\); run it again",
            "layer": r"during layer 1[01] \(stopped, or its machine frozen\); " + intact.format("(9|10)"),
            "ending": rf"during layer {last} \(stopped, or its machine frozen\); " + intact.format(last - 1)}[when]
    assert re.fullmatch(r"the Dask scheduler has not answered for 2 s " + said, str(caught.value)), caught.value


def test_segments_kept_on_each_workers_own_disk(tmp_path, monkeypatch):
    """``out_dir`` a path each worker has on its own disk (here ``/proc/self/cwd/ck``, a
    path to each process's own ``ck``: each worker and this program run in a directory
    of their own): each worker keeps its segments' files there, this program the
    manifest and the tablebase gathered at the end; a worker killed mid-run is resumed
    on the workers whose disks hold its files, with the in-memory engine's results (and
    refused, saying where the files are, by a run that does not see those disks), and
    each disk is left with the files the checkpoint names."""
    (tmp_path / "client").mkdir()
    monkeypatch.chdir(tmp_path / "client")
    own = "/proc/self/cwd/ck"
    with started_by_hand(tmp_path, own_dirs=True) as (address, _), distributed.Client(address) as client:
        pids = client.run(os.getpid)

        def kill(report):
            if report.depth == 25:
                os.kill(pids[sorted(pids)[1]], signal.SIGKILL)

        with pytest.raises(WorkerLost, match="left the cluster during layer 2[67]"):
            explore_distributed(ps.load_puzzle("5x2"), client, out_dir=own, keep_table=True, layer_done=kill)
        assert not list(Path("ck").glob("*.bin"))  # the files are the workers'
        refused = run_cli(["explore", "5x2", "--out", "ck", "--resume", "--save", "t.pstb"])
        assert refused.exit_code == 2 and "if Dask workers that each keep them on their own disk made it, resume it " \
            "on those workers (--resume --scheduler ADDRESS" in refused.stderr, refused.output
        client.wait_for_workers(2, timeout=60)
        assert_same(explore_distributed(ps.load_puzzle("5x2"), client, out_dir=own, resume=True, keep_table=True,
                                        antipode_limit=20), reference("5x2"))
        explore_distributed(ps.load_puzzle("3x2"), client, out_dir="rel")  # relative: to this program's directory
        assert sorted(json.loads(Path("rel/manifest.json").read_text())["files"]) == sorted(
            f.name for f in Path("rel").glob("*.bin"))
    named = json.loads(Path("ck/manifest.json").read_text())["files"]
    held = [sorted(f.name for f in (tmp_path / w / "ck").iterdir()) for w in ("w0", "w1")]
    assert sorted(held[0] + held[1]) == sorted(named) and {file_parts(n)[1] for n in held[0]} in ({0}, {1})
    assert sorted(f.name for f in Path("ck").iterdir()) == ["manifest.json"] + sorted(
        n for n in named if n.startswith("tb-"))


def test_segments_on_workers_own_disks_refused_without_room_or_found_nowhere():
    """On the workers' own disks, a worker whose disk cannot hold its segments' files is
    named before anything is made, and a resumed segment whose files no worker has is
    named rather than started anew."""
    from puzzlespace.explore.segments import Segment

    class Client:
        def run(self, function, *args, workers):
            return {w: {"tcp://a:1": 600 << 20, "tcp://b:1": 300 << 20}[w] for w in workers}

    segs = [Segment(0, 0, 1 << 30), Segment(1, 1 << 30, 1 << 31)]
    cluster._check_disks(Client(), segs[:1], ["tcp://a:1"], Path("ck"), 1)  # two copies of 256 MiB, and the marks
    with pytest.raises(PuzzleError, match=r"^worker tcp://b:1's segment files need about 544\.0 MiB of disk in 'ck' "
                                          r"but only 300\.0 MiB is free there; choose another --out, or use more "
                                          r"workers$"):
        cluster._check_disks(Client(), segs, ["tcp://a:1", "tcp://b:1"], Path("ck"), 1)
    held = {"tcp://a:1": {1}, "tcp://b:1": set()}
    assert cluster._owner(1, ["tcp://a:1", "tcp://b:1"], held, Path("ck")) == "tcp://a:1"
    with pytest.raises(PuzzleError, match=r"^segment 0's files are on none of the workers \(each keeps its segments "
                                          r"in 'ck' on its own disk\): resume on the workers whose disks hold"):
        cluster._owner(0, ["tcp://a:1", "tcp://b:1"], held, Path("ck"))


def test_a_run_opened_as_orphans_are_dropped_stays(tmp_path):
    """drop_orphaned_runs drops the runs of clients gone, and never a run opened while it
    works, whose client the scheduler's list of clients, made before, may not name."""

    class Client:  # the workers are this process
        def run_on_scheduler(self, function, *args, **kwargs):
            assert function.__name__ == "connected"
            cluster_tasks.claim_dir("B", "client-b", str(tmp_path / "b"), False)  # just after the list is made
            return ["client-a"]

        def run(self, function, *args, workers=None, on_error="raise", **kwargs):
            return {"tcp://w:1": function(*args)}

    cluster_tasks.claim_dir("A", "client-a", str(tmp_path / "a"), False)
    cluster_tasks.claim_dir("C", "client-c", str(tmp_path / "c"), False)  # its client gone
    try:
        assert cluster.drop_orphaned_runs(Client()) == 1
        assert cluster_tasks.runs_held() == {"A": "client-a", "B": "client-b"}
    finally:
        cluster_tasks.release_runs(["A", "B", "C"])
    assert not cluster_tasks._CLAIMS


def test_a_workers_directory_is_held_by_one_run_at_a_time(tmp_path):
    """On the workers' own disks, a run holds its directory on each worker until it is
    dropped there (ended, or its client gone): another run that would keep its segments
    there (and, fresh, empty it first) is refused, naming the worker; so is a worker that
    cannot make or empty it (a read-only disk, say), not as an error on this program's
    output."""

    out = str(tmp_path / "ck")
    (tmp_path / "ck").mkdir()
    (tmp_path / "ck" / "seg-0-0.bin").write_bytes(b"A's")
    cluster_tasks.claim_dir("A", "client-a", out, False)
    cluster_tasks.claim_dir("A", "client-a", str(tmp_path / "." / "ck"), False)  # its own: again, by any path
    with pytest.raises(PuzzleError, match="another exploration keeps its segments in .* there; choose another --out"):
        cluster_tasks.claim_dir("B", "client-b", out, True)
    assert (tmp_path / "ck" / "seg-0-0.bin").exists()
    assert cluster_tasks.runs_held() == {"A": "client-a"}
    cluster_tasks.release_runs(["A"])  # A's client is gone: B may have it
    cluster_tasks.claim_dir("B", "client-b", out, True)
    assert not (tmp_path / "ck" / "seg-0-0.bin").exists()
    cluster_tasks.release_run("B")
    assert not cluster_tasks._CLAIMS and not list((tmp_path / "ck").glob(".claim*"))

    # Another process of this machine (another cluster's worker) holding it for its run:
    # refused here too, but not for the same run; once that process is killed, free.
    other = subprocess.Popen([sys.executable, "-c", "import sys; from puzzlespace.explore import cluster_tasks; "
                              f"cluster_tasks.claim_dir('D', 'client-d', {out!r}, False); print('held', flush=True); "
                              "sys.stdin.read()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline() == "held\n"
        with pytest.raises(PuzzleError, match="another exploration keeps its segments in .* there"):
            cluster_tasks.claim_dir("E", "client-e", out, True)
        assert not cluster_tasks._CLAIMS
        cluster_tasks.claim_dir("D", "client-d", out, False)
        cluster_tasks.release_run("D")
        assert (tmp_path / "ck" / ".claim-D").exists()  # the other process holds it still
    finally:
        other.kill()
        other.wait()
    cluster_tasks.claim_dir("E", "client-e", out, True)
    assert [p.name for p in (tmp_path / "ck").glob(".claim*")] == [".claim-E"]
    cluster_tasks.release_run("E")

    # Let go of whatever became of the directory: removed (not made again), or read-only.
    cluster_tasks.claim_dir("F", "client-f", out, True)
    shutil.rmtree(out)
    cluster_tasks.release_run("F")
    assert not cluster_tasks._CLAIMS and not (tmp_path / "ck").exists()
    cluster_tasks.claim_dir("G", "client-g", out, True)
    os.chmod(out, 0o555)
    try:
        cluster_tasks.release_run("G")  # its claim file cannot go (as root it can): the next claim removes it
        cluster_tasks.claim_dir("H", "client-h", out, False)
        cluster_tasks.release_run("H")
    finally:
        os.chmod(out, 0o755)
    assert not cluster_tasks._CLAIMS

    class Client:
        id = "client-c"

        def run(self, function, *args, workers, on_error):
            done = {"tcp://a:1": None, "tcp://b:1": PermissionError(13, "Permission denied"),
                    "tcp://c:1": PuzzleError("another exploration keeps its segments in 'ck' there")}
            return {w: done[w] for w in workers}

    with pytest.raises(PuzzleError, match=r"^worker tcp://b:1 cannot make or empty 'ck' on its disk \(Permission "
                                          r"denied\); choose another --out$"):
        cluster._claim_on_workers(Client(), "C", ["tcp://a:1", "tcp://b:1"], Path("ck"), True)
    with pytest.raises(PuzzleError, match=r"^on worker tcp://c:1, another exploration keeps its segments in 'ck'"):
        cluster._claim_on_workers(Client(), "C", ["tcp://c:1"], Path("ck"), True)


def test_a_resume_on_workers_own_disks_takes_the_files_the_checkpoint_names(tmp_path):
    """Where several workers' own disks hold files of a segment (an earlier run's left on
    another worker), a resume gives the segment to the worker whose files match the
    manifest's CRC-32s; a segment whose files none has is refused."""
    from puzzlespace.explore.segments import crc_text

    for worker, data in (("a", b"stale"), ("b", b"good")):
        (tmp_path / worker).mkdir()
        (tmp_path / worker / "seg-0-0.bin").write_bytes(data)
    (tmp_path / "b" / "seg-1-1.bin").write_bytes(b"one")
    manifest = {"segments": [[0, 64], [64, 128], [128, 192]], "files": {
        "seg-0-0.bin": crc_text(zlib.crc32(b"good")), "seg-1-1.bin": crc_text(zlib.crc32(b"one")),
        "seg-2-0.bin": crc_text(zlib.crc32(b"two"))}}

    class Client:
        def run(self, function, out, *args, workers):
            return {w: function(str(tmp_path / w), *args) for w in workers}

    held = cluster._segments_on_disks(Client(), ["a", "b"], Path("ck"), manifest)
    assert held == {"a": set(), "b": {0, 1}}
    assert [cluster._owner(k, ["a", "b"], held, Path("ck")) for k in (0, 1)] == ["b", "b"]
    with pytest.raises(PuzzleError, match="segment 2's files are on none of the workers"):
        cluster._owner(2, ["a", "b"], held, Path("ck"))
