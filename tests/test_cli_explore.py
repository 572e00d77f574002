"""The explore, distance and generate commands, and --plot."""

import json
import re

from click.testing import CliRunner

import puzzlespace as ps
from puzzlespace.cli import app

runner = CliRunner()


def test_cli_explore_save_distance_generate(tmp_path, monkeypatch):
    monkeypatch.setenv("PUZZLESPACE_CACHE", str(tmp_path / "cache"))
    r = runner.invoke(app, ["explore", "3x3", "--json", "--save", "cache"])
    data = json.loads(r.stdout)
    assert r.exit_code == 0 and data["max_depth"] == 31 and data["states"] == 181440 and data["peak_memory_bytes"] > 0
    assert len(data["depth_counts"]) == 32 and data["antipode_count"] == 2
    r = runner.invoke(app, ["solve", "3x3", "8 6 7/2 5 4/3 0 1", "--json"])
    assert json.loads(r.stdout)["method"] == "table" and json.loads(r.stdout)["length"] == 31
    table = next((tmp_path / "cache" / "tables").glob("*.pstb"))
    r = runner.invoke(app, ["distance", "3x3", "1 2 3/4 5 6/0 7 8", "--table", str(table)])
    assert r.stdout.strip() == "2"
    r = runner.invoke(app, ["generate", "3x3", "--count", "5", "--depth", "20", "--table", str(table), "--seed", "3",
                            "--json"])
    p = ps.load_puzzle("3x3")
    assert all(ps.solve(p, tuple(s)).length == 20 for s in json.loads(r.stdout))
    r = runner.invoke(app, ["generate", "3x3", "--count", "2", "--depth", "31", "--seed", "3", "--json"])
    assert sorted(json.loads(r.stdout)) in ([[6, 4, 7, 8, 5, 0, 3, 2, 1]] * 2, [[8, 6, 7, 2, 5, 4, 3, 0, 1]] * 2,
                                            sorted([[6, 4, 7, 8, 5, 0, 3, 2, 1], [8, 6, 7, 2, 5, 4, 3, 0, 1]]))
    r = runner.invoke(app, ["generate", "3x3", "--count", "3", "--seed", "9"])
    assert r.exit_code == 0 and all(p.check(p.parse_position(line)).solvable for line in r.stdout.splitlines())
    assert runner.invoke(app, ["generate", "3x3", "--count", "3", "--seed", "9"]).stdout == r.stdout
    r = runner.invoke(app, ["distance", "3x3", "1 2 3/4 5 6/0 7 8", "--table", str(tmp_path / "none.pstb")])
    assert r.exit_code == 2 and "cannot be read" in r.stderr

def test_plot(tmp_path):
    path = tmp_path / "depths.png"
    r = runner.invoke(app, ["explore", "3x2", "--json", "--plot", str(path)])
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert r.exit_code == 2 and "matplotlib" in r.stderr and not path.exists()
    else:
        assert r.exit_code == 0 and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    r = runner.invoke(app, ["explore", "3x2", "--plot", str(tmp_path / "depths.gif")])
    assert r.exit_code == 2


def test_progress_off_a_terminal_is_a_line_a_layer(tmp_path):
    """--progress with stderr in a file (a batch job's log): a line as each layer's pass
    ends, in memory and by segments, so that a long run is seen to go on; the JSON on
    stdout is as without it."""
    plain = json.loads(runner.invoke(app, ["explore", "3x3", "--json"]).stdout)
    for extra in ([], ["--segments", "2", "--out", str(tmp_path / "ck")]):
        r = runner.invoke(app, ["explore", "3x3", "--json", "--progress", *extra])
        assert r.exit_code == 0, r.output
        lines = r.stderr.splitlines()
        form = r"layer \d+: (\d+) of \1 parts done, [\d,]+ states found so far, [\d.]+ s"
        assert len(lines) >= plain["max_depth"] and all(re.fullmatch(form, line) for line in lines), r.stderr
        got = json.loads(r.stdout)
        assert got["depth_counts"] == plain["depth_counts"]


def test_resuming_a_finished_checkpoint_reports_this_runs_time_and_the_earlier_runs(tmp_path):
    """A resumed run's time is its own; the runs before it are said apart, not as if
    this run had taken them (in memory and by segments)."""
    for extra in ([], ["--segments", "2"]):
        out = str(tmp_path / f"ck{len(extra)}")
        first = json.loads(runner.invoke(app, ["explore", "3x2", "--out", out, "--json", *extra]).stdout)
        r = runner.invoke(app, ["explore", "3x2", "--out", out, "--resume", "--json"])
        again = json.loads(r.stdout)
        assert r.exit_code == 0 and again["depth_counts"] == first["depth_counts"]
        # the earlier run's time as its last checkpoint recorded it: all but what followed the save
        assert 0 < again["earlier_seconds"] <= first["seconds"] + 0.001
        assert first["seconds"] - again["earlier_seconds"] < 0.05 + 0.1 * first["seconds"]
        assert again["seconds"] < 0.5 * first["seconds"] + 0.05
        r = runner.invoke(app, ["explore", "3x2", "--out", out, "--resume"])
        assert re.search(r"time: [\d.]+ s on \d+ threads? \(resumed, after [\d.]+ s of the runs before\)", r.stdout)
