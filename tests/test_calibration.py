"""Estimates from a timed probe of the real kernels, kept in the cache: the one estimator
of the command line, the API and the page; a range while the machine is busy; disk
figures that are what is written."""

from __future__ import annotations

import json
import os
import time

import pytest
from click.testing import CliRunner

import puzzlespace as ps
from puzzlespace import cache, calibration
from puzzlespace.calibration import Estimate
from puzzlespace.cli import app
from puzzlespace.pdb.heuristic import pattern_plan, pattern_problem
from puzzlespace.explore.estimate import exploration_estimate
from puzzlespace.pdb import store
from puzzlespace.pdb.store import listing
from puzzlespace.play import Games


@pytest.mark.parametrize("seconds,high,words", [
    (0.2, 0.2, "under a second"), (8.4, 8.4, "about 8 s"), (8.4, 8.6, "about 8 s"), (360, 360, "about 6 min"),
    (8.0, 20.0, "about 8 s to 20 s, the machine being busy"), (7200, 7200, "about 2.0 h")])
def test_an_estimate_in_words(seconds, high, words):
    assert str(Estimate(seconds, high)) == words


@pytest.mark.parametrize("load,factor", [(0.3, 1.0), (1.0, 1.0), (2.0, 2.0), (4.0, 3.0)])
def test_a_busy_machine_widens_the_range(monkeypatch, load, factor):
    monkeypatch.setattr(calibration.os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(calibration.os, "cpu_count", lambda: 2)
    assert calibration.busy_factor() == factor
    assert calibration.estimate(10.0) == Estimate(10.0, 10.0 * factor)


def _idle(monkeypatch):
    monkeypatch.setattr(calibration, "busy_factor", lambda: 1.0)


def test_a_probe_is_made_once_and_kept(tmp_path, monkeypatch):
    _idle(monkeypatch)
    probes = []
    real = store._probe
    monkeypatch.setattr(store, "_probe", lambda *a: probes.append(a) or real(*a))
    p = ps.load_puzzle("4x3")
    with cache.use(tmp_path):
        first = pattern_plan(p, "pdb:6-5").estimate
        again = pattern_plan(p, "pdb:4-4").estimate
        kept = json.loads((tmp_path / calibration.FILE).read_text())
    assert len(probes) == 1 and first.seconds > 0 and again.seconds > 0
    assert list(kept) == [f"pattern sliding:4x3 {store.probe_size(12)} tiles | {os.cpu_count()} threads | "
                          f"{calibration.machine()}"]


def test_a_probe_made_while_busy_is_made_again_once_the_machine_is_idle(tmp_path, monkeypatch):
    probes = []
    monkeypatch.setattr(store, "_probe", lambda *a: probes.append(a) or (1.0, 1_000_000))
    p = ps.load_puzzle("4x3")
    with cache.use(tmp_path):
        monkeypatch.setattr(calibration, "busy_factor", lambda: 2.0)
        busy = pattern_plan(p, "pdb:6-5").estimate
        pattern_plan(p, "pdb:6-5")
        assert len(probes) == 1 and busy.busy
        _idle(monkeypatch)
        idle = pattern_plan(p, "pdb:6-5").estimate
        pattern_plan(p, "pdb:6-5")
    assert len(probes) == 2 and not idle.busy


def test_a_damaged_calibration_file_is_probed_again(tmp_path, monkeypatch):
    _idle(monkeypatch)
    (tmp_path / calibration.FILE).write_text("{not json")
    with cache.use(tmp_path):
        assert pattern_plan(ps.load_puzzle("3x3"), "pdb:4-4").estimate.seconds >= 0
        assert json.loads((tmp_path / calibration.FILE).read_text())


def test_the_build_estimate_holds_within_a_factor_of_two(tmp_path, monkeypatch):
    """4x4's 6-6-3 databases: predicted against built (slack for a shared test machine)."""
    _idle(monkeypatch)
    p = ps.load_puzzle("4x4")
    with cache.use(tmp_path):
        plan = pattern_plan(p, "pdb:5-5-5")
        t0 = time.perf_counter()
        pattern_problem(p, "pdb:5-5-5", plan=plan)
        actual = time.perf_counter() - t0
    assert actual / 3 < plan.estimate.seconds < actual * 3


def test_the_exploration_estimate(tmp_path, monkeypatch):
    _idle(monkeypatch)
    with cache.use(tmp_path):
        small = exploration_estimate(ps.load_puzzle("3x3"), 2)  # the probe explores it all
        assert small is not None and small.seconds < 2
        assert exploration_estimate(ps.load_puzzle("4x4"), 2) is None  # its table is too large


def test_disk_figures_are_what_is_written(tmp_path):
    p = ps.load_puzzle("4x3")
    with cache.use(tmp_path):
        plan = pattern_plan(p, "pdb:6-5")
        pattern_problem(p, "pdb:6-5", plan=plan)
        written = sum(path.stat().st_size for path, _, _ in listing())
    assert abs(plan.disk - written) <= 16 and plan.peak_disk > plan.disk


def test_the_command_line_and_the_page_say_the_same_estimate(tmp_path, monkeypatch):
    _idle(monkeypatch)
    with cache.use(tmp_path):
        plan = pattern_plan(ps.load_puzzle("4x3"), "pdb:6-5")
        games = Games()
        try:
            opened = games.open(name="4x3")
        finally:
            games.close()
    r = CliRunner().invoke(app, ["pdb", "build", "4x3", "--cache-dir", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert f": {plan.estimate} on this machine" in r.stderr.splitlines()[0]
    assert opened["build"]["estimate"] == str(plan.estimate)
