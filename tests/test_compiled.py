"""Compiled code on first use: said once as it compiles, never counted as the work's time,
and compiled ahead by ``puzzlespace warm``."""

from __future__ import annotations

import logging
import os
import pty
import re
import subprocess
import sys
import time

import numba as nb
import pytest
from click.testing import CliRunner

import puzzlespace as ps
from puzzlespace import compiled
from puzzlespace.cli import app
from puzzlespace.warmup import warm


def _fresh_kernel():
    """A kernel numba has never compiled in this process (and keeps in no cache)."""
    @nb.njit
    def add(x):
        return x + 1

    return add


def test_a_compile_is_said_once_as_it_starts_and_left_out_of_the_works_time(caplog):
    kernel = _fresh_kernel()
    caplog.set_level(logging.INFO, logger="puzzlespace.compile")
    t0 = time.perf_counter()
    with compiled.watch("the test work") as compiles:
        assert kernel(1) == 2
        assert kernel(2) == 3  # compiled: no second compile, no second line
    wall = time.perf_counter() - t0
    said = [r.getMessage() for r in caplog.records]
    assert said == [f"compiling the test work once ({compiles.expected}); later runs start at once"]
    assert 0 < compiles.seconds <= wall and compiles.elapsed() <= wall - compiles.seconds + 0.01
    with compiled.watch("the test work") as again:  # the same work, later in the process: not said again
        _fresh_kernel()(1)
    assert len(caplog.records) == 1 and again.seconds > 0


def test_a_compile_belongs_to_the_innermost_block():
    kernel = _fresh_kernel()
    with compiled.watch("the outer work") as outer:
        with compiled.watch("the inner work", "build") as inner:
            kernel(1)
    assert inner.seconds > 0 and inner.said and outer.seconds == 0 and not outer.said


def test_time_limits_are_kept_on_a_clock_that_stands_still_while_numba_compiles():
    with compiled.watch("the clock's test work"):
        clock0, wall0 = compiled.clock(), time.monotonic()
        kernel = _fresh_kernel()
        with compiled.watch("the clock's test work") as compiles:
            kernel(1)
        on_clock, wall = compiled.clock() - clock0, time.monotonic() - wall0
    assert compiles.seconds > 0 and abs(on_clock - (wall - compiles.seconds)) < 0.01


def _on_a_terminal(args, env) -> tuple[str, str, float]:
    """(stdout, what a terminal on stderr showed, seconds) of ``puzzlespace args``."""
    main, side = pty.openpty()
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "puzzlespace", *args], stdout=subprocess.PIPE, stderr=side,
                            env=env, text=True)
    os.close(side)
    stdout, _ = proc.communicate(timeout=300)
    seconds = time.perf_counter() - t0
    shown = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(main)
    return stdout, re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown.decode()), seconds


@pytest.mark.slow
def test_a_first_run_says_it_compiles_and_reports_the_search_alone(tmp_path):
    """On an empty numba cache a weighted solve compiles IDA*: a terminal is told so, in
    a line, before the answer; the time the answer gives is the search's, not the compile's;
    the next run compiles nothing and says nothing."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"), PUZZLESPACE_CACHE=str(tmp_path / "cache"))
    args = ["solve", "4x2", "0 7 6 5/4 3 2 1", "--weight", "2", "--quiet"]
    stdout, shown, wall = _on_a_terminal(args, env)
    assert "compiling the sliding:4x2 search once (about " in shown and "later runs start at once" in shown
    reported = float(re.search(r"nodes, ([0-9.]+) s\)", stdout).group(1))
    assert wall > 1.0 and reported < 0.5 * wall
    stdout, shown, _ = _on_a_terminal(args, env)
    assert "compiling" not in shown and "ida walking weight 2" in stdout


def test_warm_runs_each_kind_of_work_a_puzzle_has():
    done = {w.work: w.seconds for w in warm(ps.load_puzzle("3x2"))}
    assert set(done) == {"search", "fast method", "exploration"}
    assert {w.work for w in warm(ps.load_puzzle("flip:4x4"))} == {"search", "exploration"}
    assert {w.work for w in warm(ps.load_puzzle("4x4"))} == {"search", "fast method"}  # 4x4's table: too large
    again = warm(ps.load_puzzle("3x2"))
    assert all(w.seconds == 0 for w in again)


def test_warm_on_the_command_line():
    r = CliRunner().invoke(app, ["warm", "2x3", "jump:5"])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].startswith("sliding:2x3: search ") and "exploration" in lines[0]
    assert lines[1].startswith("jump:5:1,2: search ")
    r = CliRunner().invoke(app, ["warm", "9x9x9"])
    assert r.exit_code == 2 and r.stderr.startswith("error: unknown puzzle")


@pytest.mark.slow
def test_warm_compiles_what_a_first_solve_runs(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"), PUZZLESPACE_CACHE=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, "-m", "puzzlespace", "warm", "4x2"], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0 and "search compiled in" in r.stdout, r.stdout + r.stderr
    for args in (["solve", "4x2", "0 7 6 5/4 3 2 1", "--weight", "2"], ["explore", "4x2"]):
        _, shown, _ = _on_a_terminal(args, env)
        assert "compiling" not in shown, shown
