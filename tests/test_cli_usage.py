"""The command line as a newcomer meets it: help, usage errors, versions, the demo, and
the answers scripts rely on (JSON on every outcome, the cached tablebase, distinct draws)."""

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from puzzlespace import __version__
from puzzlespace.cli import app

runner = CliRunner()


def run(*args):
    return runner.invoke(app, list(args))


def one_error_line(result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def test_help_is_plain():
    r = run("solve", "--help")
    assert r.exit_code == 0
    text = r.stdout
    assert text.startswith("Usage: puzzlespace solve [OPTIONS] PUZZLE POSITION\n")
    assert "<bool>" not in text and "<str>" not in text and "{puzzle}" not in text and "╭" not in text
    assert "--goal POSITION" in text and "--time-limit SECONDS" in text and "--json " in text
    assert "Arguments:" in text and "Examples:\n  puzzlespace solve 3x3" in text
    assert "pattern-database" in text and "build" in text  # --time-limit says it counts the build


def test_batch_help_keeps_sentences_whole():
    text = run("batch", "--help").stdout
    paragraphs = [" ".join(p.split()) for p in text.split("\n\n")]
    assert any(p.startswith("A line that is not a position gets a row") and p.endswith("stopped some.")
               for p in paragraphs)
    assert all(len(line) <= 100 for line in text.splitlines())


def test_no_arguments_prints_help_and_version_exists():
    r = run()
    assert r.exit_code == 0 and r.stdout.startswith("Usage: puzzlespace [OPTIONS] COMMAND")
    assert "solve" in r.stdout and "explore" in r.stdout
    r = run("--version")
    assert r.exit_code == 0 and r.stdout.strip() == f"puzzlespace {__version__}"


@pytest.mark.parametrize("args, words", [
    (("solve", "jump:3", "-1", "2", "3", "0"), ["unknown option -1", "use -- before a position"]),
    (("solve", "3x3", "1 2 3/4 5 6/7 8 0", "--time-limit", "soon"), ["--time-limit", "'soon'", "seconds"]),
    (("solve", "3x3", "1 2 3/4 5 6/7 8 0", "--time-limit", "nan"), ["--time-limit"]),
    (("solve", "3x3", "1 2 3/4 5 6/7 8 0", "--jsn"), ["--jsn", "did you mean --json"]),
    (("sovle", "3x3"), ["unknown command 'sovle'", "did you mean 'solve'"]),
    (("solve", "3x3"), ["missing argument", "POSITION", "puzzlespace solve --help"]),
    (("solve", "3x3", "1", "2", "3"), ["unexpected extra argument", "quote a position"]),
    (("generate", "3x3", "--count", "0"), ["--count", "less than 1"]),
    (("generate", "3x3", "--seed", "-1"), ["--seed"]),
    (("explore", "3x3", "--threads", "x"), ["--threads", "whole number"]),
    (("solve", "3x3", "1 2 3/4 5 6/7 8 0", "--method", "dfs"), ["--method", "dfs"]),
])
def test_usage_errors_are_one_line_with_the_fix(args, words):
    line = one_error_line(run(*args))
    for w in words:
        assert w in line, line


def test_errors_have_no_blank_line_before_them():
    """Run as a process (no test runner between): stderr is exactly the error line."""
    for args in (["explore", "9x9"], ["solve", "3x3", "1 2 3/4 5 6/7 0 8", "--heuristic", "pdb:9-9"]):
        done = subprocess.run([sys.executable, "-m", "puzzlespace.cli", *args], capture_output=True, text=True)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: "), repr(done.stderr)


def test_check_gives_the_verdict_first_in_one_short_line():
    r = run("check", "3x3", "1 2 3/4 5 6/8 7 0")
    last = r.stdout.splitlines()[-1]
    assert r.exit_code == 1 and last.startswith("unsolvable: ") and len(last.split()) <= 25
    assert "odd permutation" in last and "0 moves" in last and "Wilson" not in last
    r = run("check", "3x3", "1 2 3/4 5 6/8 7 0", "--explain")
    assert r.stdout.splitlines()[-1].startswith("why: ") and "Wilson" in r.stdout
    r = run("check", "3x3", "1 2 3/4 5 0/7 8 6")
    assert "1 move from home" in r.stdout and "1 moves" not in r.stdout
    data = json.loads(run("check", "3x3", "1 2 3/4 5 6/8 7 0", "--json").stdout)
    assert data["start"] == [1, 2, 3, 4, 5, 6, 8, 7, 0] and "Wilson" in data["reason"] and data["summary"]


def test_check_and_solve_json_name_the_position_alike():
    checked = json.loads(run("check", "3x3", "1 2 3/4 5 6/0 7 8", "--json").stdout)
    solved = json.loads(run("solve", "3x3", "1 2 3/4 5 6/0 7 8", "--json").stdout)
    assert checked["start"] == solved["start"] == [1, 2, 3, 4, 5, 6, 0, 7, 8]
    assert solved["status"] == "solved"


def test_a_stopped_solve_still_prints_its_json():
    r = run("solve", "5x5", "0 24 23 22 21/20 19 18 17 16/15 14 13 12 11/10 9 8 7 6/5 4 3 2 1",
            "--heuristic", "linear-conflict", "--time-limit", "1", "--json")
    assert r.exit_code == 3
    data = json.loads(r.stdout)
    assert data["status"] == "stopped" and data["lower_bound"] >= 100 and data["nodes"] > 0
    assert data["start"][1] == 24 and r.stderr.startswith("stopped: time limit reached")
    r = run("solve", "jump:6:1,3", "1 2 3 4 5 6 0", "--goal", "0 6 5 4 3 2 1", "--json")
    data = json.loads(r.stdout)
    assert r.exit_code == 1 and data["status"] == "unsolvable" and data["solvable"] is False


def test_bfs_lower_bounds_are_proven():
    from puzzlespace import load_puzzle
    from puzzlespace.errors import SearchStopped
    from puzzlespace.search.bfs import bfs, bidirectional_bfs

    p = load_puzzle("4x3")
    start = p.parse_position("0 3 2 1/8 7 6 5/4 11 10 9")  # 53 moves
    for search in (bfs, bidirectional_bfs):
        with pytest.raises(SearchStopped) as stopped:
            search(p, start, p.goal, max_states=20_000)
        assert 1 <= stopped.value.lower_bound <= 53


def test_method_table_and_distance_use_the_cached_tablebase(tmp_path):
    cache = str(tmp_path / "c")
    assert run("distance", "3x3", "8 6 7/2 5 4/3 0 1", "--cache-dir", cache).exit_code == 2
    r = run("solve", "3x3", "8 6 7/2 5 4/3 0 1", "--method", "table", "--cache-dir", cache)
    assert "explore sliding:3x3 --save cache" in one_error_line(r)
    os.environ["PUZZLESPACE_CACHE"], old = cache, os.environ["PUZZLESPACE_CACHE"]
    try:
        assert run("explore", "3x3", "--save", "cache", "--json").exit_code == 0
    finally:
        os.environ["PUZZLESPACE_CACHE"] = old
    r = run("solve", "3x3", "8 6 7/2 5 4/3 0 1", "--method", "table", "--json", "--cache-dir", cache)
    data = json.loads(r.stdout)
    assert r.exit_code == 0 and data["method"] == "table" and data["length"] == 31
    r = run("distance", "3x3", "8 6 7/2 5 4/3 0 1", "--cache-dir", cache)
    assert r.exit_code == 0 and r.stdout.strip() == "31"


def test_generate_draws_distinct_positions():
    r = run("generate", "3x3", "--count", "2", "--depth", "31", "--json")
    assert sorted(json.loads(r.stdout)) == sorted([[8, 6, 7, 2, 5, 4, 3, 0, 1], [6, 4, 7, 8, 5, 0, 3, 2, 1]])
    line = one_error_line(run("generate", "3x3", "--count", "5", "--depth", "31"))
    assert "only 2 positions" in line and "--count 2" in line
    drawn = json.loads(run("generate", "2x2", "--count", "12", "--seed", "3", "--json").stdout)
    assert len({tuple(s) for s in drawn}) == 12
    assert "only 12 positions" in one_error_line(run("generate", "2x2", "--count", "13"))
    many = json.loads(run("generate", "3x3", "--count", "200", "--depth", "20", "--seed", "5", "--json").stdout)
    assert len({tuple(s) for s in many}) == 200


def test_demo_reads_top_down_and_suggests_what_next():
    r = run("demo")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].startswith("puzzlespace demo:") and "seed" not in r.stdout
    solve_line = next(line for line in lines if line.startswith("sliding:3x3: optimal solution"))
    seconds = re.search(r"([0-9.]+) s[,)]", solve_line).group(1)
    row = next(line for line in lines if "sliding:3x3" in line and "│" in line)
    assert f" {seconds} " in row
    at = lines.index("try next:")
    assert len([line for line in lines[at + 1:] if line.strip().startswith("puzzlespace ")]) == 3


# Slow: a whole 4x3 run; by default the same line and command are checked on runs by
# segments (tests/test_cli_edges.py) and an in-memory checkpoint's resume in tests/test_checkpoint.py
@pytest.mark.slow
def test_ctrl_c_in_explore_says_what_is_saved_and_how_to_resume(tmp_path, seeds):
    out = tmp_path / "ck"
    cmd = [sys.executable, "-m", "puzzlespace.cli", "explore", "4x3", "--out", str(out), "--json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        manifest = out / "manifest.json"
        try:
            if json.loads(manifest.read_text())["depth"] >= 20:
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.005)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    # layers 20 to 53 of 4x3 take seconds: a run that ends with 0 did not stop at the signal
    assert proc.returncode == 130 and stdout == "", (proc.returncode, stderr)
    depth = json.loads((out / "manifest.json").read_text())["depth"]
    assert stderr.count("\n") == 1
    assert stderr.startswith(f"stopped: interrupted; layer {depth} is saved in {str(out)!r}; continue with: ")
    again = stderr.split("continue with: ")[1].strip()
    assert again == f"puzzlespace explore 4x3 --out {out} --resume --json"  # the same options, and --resume
    assert not [f for f in out.iterdir() if f.name.endswith(".tmp")]
    resumed = subprocess.run([sys.executable, "-m", "puzzlespace.cli", *shlex.split(again)[1:]], capture_output=True,
                             text=True, check=True)
    assert json.loads(resumed.stdout)["depth_counts"] == seeds["sliding"]["4x3_depth_counts"]["counts"]


def test_cache_dir_holds_for_its_command_only(tmp_path):
    from puzzlespace import cache

    before = cache.cache_dir()
    r = run("pdb", "build", "3x3", "--heuristic", "pdb:2", "--cache-dir", str(tmp_path / "c"))
    assert r.exit_code == 0 and list((tmp_path / "c" / "pdb").glob("*.pspdb"))
    assert cache.cache_dir() == before and "PUZZLESPACE_CACHE" not in r.output
