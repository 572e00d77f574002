"""The command line: exit statuses, JSON output, and one clear line for every bad input."""

import json
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from click.testing import CliRunner

from puzzlespace.cli import app

runner = CliRunner()


def run(*args):
    return runner.invoke(app, list(args))


def assert_bad_input(result, *words):
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for w in words:
        assert w in lines[0]


def test_check_exit_statuses():
    assert run("check", "3x3", "8 6 7/2 5 4/3 0 1").exit_code == 0
    r = run("check", "3x3", "1 2 3 4 5 6 8 7 0")
    assert r.exit_code == 1 and "unsolvable" in r.stdout
    r = run("check", "flip:3x3", "BWB/WBB/BBB", "--json")
    data = json.loads(r.stdout)
    assert r.exit_code == 0 and data["solvable"] is True and data["start"] == [0, 1, 0, 1, 0, 0, 0, 0, 0]


def test_solve_json():
    r = run("solve", "4x3", "0 3 2 1/8 7 6 5/4 11 10 9", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["length"] == 53 and data["optimal"] is True and len(data["path"]) == 54
    assert data["goal"] == list(range(1, 12)) + [0] and data["method"] == "ida" and data["nodes"] > 0


def test_solve_human_output_shows_boards_and_both_notations():
    r = run("solve", "3x3", "1 2 3/4 5 6/0 7 8")
    assert r.exit_code == 0
    assert "2 moves" in r.stdout and "tiles: 7 8" in r.stdout and "directions: RR" in r.stdout
    assert "start" in r.stdout and "1 2 3" in r.stdout
    r = run("solve", "3x3", "1 2 3/4 5 6/0 7 8", "--quiet")
    assert "start" not in r.stdout


def test_solve_other_families():
    r = run("solve", "jump:4", "1 2 3 4 0", "--goal", "0 4 3 2 1", "--json")
    assert json.loads(r.stdout)["length"] == 12
    r = run("solve", "flip:3x3", "BWB/WBB/BBB", "--json")
    data = json.loads(r.stdout)
    assert data["length"] == 7 and all(m[0] in "rc" for m in data["moves"])


def test_solve_unsolvable():
    r = run("solve", "jump:6:1,3", "1 2 3 4 5 6 0", "--goal", "0 6 5 4 3 2 1")
    assert r.exit_code == 1 and "unsolvable" in r.stderr


def test_solve_time_limit():
    r = run("solve", "5x5", "24 23 22 21 20/19 18 17 16 15/14 13 12 11 10/9 8 7 6 5/4 3 2 1 0",
            "--time-limit", "0.2", "--heuristic", "linear-conflict")
    assert r.exit_code == 3 and r.stderr.startswith("stopped: time limit")


def test_graph_file(examples):
    r = run("check", f"graph:{examples / 'petersen.toml'}", "1 2 3 4 5 6 7 8 0 9")
    assert r.exit_code == 0
    r = run("solve", f"graph:{examples / 'petersen.toml'}", "1 2 3 4 0 6 7 8 9 5", "--json")
    assert json.loads(r.stdout)["length"] == 1


@pytest.mark.parametrize("args, words", [
    (("check", "1x5", "1 2 3 4 0"), ["2 columns"]),
    (("check", "0x0", "0"), ["2 columns"]),
    (("check", "jump:0", "0"), ["pieces"]),
    (("check", "jump:3:", "1 2 3 0"), ["empty"]),
    (("check", "jump:3:4", "1 2 3 0"), ["does not fit"]),
    (("check", "flip:3", "WWW"), ["WxH"]),
    (("check", "cube:3", "1"), ["unknown puzzle"]),
    (("check", "3x3", "1 2 3 4 5 6 7 8"), ["8 cells", "expected 9"]),
    (("check", "3x3", "1 2 3 4 5 6 7 8 8"), ["more than once"]),
    (("check", "3x3", "1 2 3 4 5 6 7 8 9"), ["out of range"]),
    (("check", "3x3", "1 2 3 4 x 6 7 8 0"), ["not a whole number"]),
    (("check", "3x3", "1 2/3 4 5 6/7 8 0"), ["row 1"]),
    (("check", "3x3", "1 2 3/4 5 6/7 8 0", "--goal", "1 2 3"), ["goal"]),
    (("check", "flip:3x3", "BWX/WBB/BBB"), ["unknown symbol"]),
    (("check", "flip:3x3", "BW"), ["cells"]),
    (("solve", "3x3", "1 2 3/4 5 6/7 8 0", "--method", "bfs", "--goal", "1 1 1 1 1 1 1 1 1"), ["goal"]),
    (("check", "graph:/no/such/file.toml", "1 0"), ["does not exist"]),
    (("solve", "3x3", "1 2 3/4 5 6/7 0 8", "--method", "table", "--heuristic", "walking"), ["IDA* only", "table"]),
    (("generate", "4x4", "--depth", "20"), ["exact depth", "without a tablebase", "of memory"]),
])
def test_bad_input_is_one_line(args, words):
    assert_bad_input(run(*args), *words)


@pytest.mark.parametrize("content, words", [
    ("nodes = 3\nedges = [[0, 1], [1, 5]]", ["unknown node"]),
    ("nodes = 3\nedges = [[0, 1], [1, 1]]", ["self-loop"]),
    ("nodes = 3\nedges = [[0, 1], [1, 0], [1, 2]]", ["twice"]),
    ("nodes = 4\nedges = [[0, 1], [2, 3]]", ["not connected"]),
    ("nodes = 3\nedges = [[0, 1], [1, 2]", ["syntax"]),
    ("edges = [[0, 1]]", ["missing 'nodes'"]),
    ("nodes = 3\nedges = [[0, 1], [1, 2]]\ncolour = 1", ["unknown key"]),
    ("nodes = 3\nedges = [[0, 1], [1, 2]]\ngoal = [1, 1, 0]", ["more than once"]),
    ("nodes = [\"a\", \"a\"]\nedges = []", ["twice"]),
])
def test_bad_graph_files(tmp_path, content, words):
    path = tmp_path / "g.toml"
    path.write_text(content)
    assert_bad_input(run("check", f"graph:{path}", "1 2 0"), *words)


def test_bad_json_graph(tmp_path):
    path = tmp_path / "g.json"
    path.write_text('{"nodes": 3, "edges": [[0, 1], [1, 2]')
    assert_bad_input(run("check", f"graph:{path}", "1 2 0"), "JSON")


PUZZLES = ["3x3", "sliding:4x3", "jump:5", "jump:4:1,3", "flip:3x3", "flip:4x2"]


@settings(deadline=None)
@given(st.sampled_from(PUZZLES), st.text(alphabet=string.printable + "□■ー１", max_size=40))
def test_random_text_never_crashes(puzzle, text):
    r = run("check", puzzle, "--", text)
    assert r.exit_code in (0, 1, 2), r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    if r.exit_code == 2:
        assert len(r.stderr.strip().splitlines()) == 1


@st.composite
def near_valid(draw):
    puzzle = draw(st.sampled_from(["3x3", "4x3", "jump:6", "flip:3x3"]))
    n = {"3x3": 9, "4x3": 12, "jump:6": 7, "flip:3x3": 9}[puzzle]
    if puzzle.startswith("flip"):
        cells = draw(st.lists(st.sampled_from("WB10x"), min_size=n - 1, max_size=n + 1))
        return puzzle, "".join(cells)
    cells = draw(st.permutations(range(n)))
    cells = list(cells)
    edit = draw(st.sampled_from(["none", "drop", "dup", "big", "neg", "extra"]))
    if edit == "drop":
        cells.pop()
    elif edit == "dup":
        cells[0] = cells[-1]
    elif edit == "big":
        cells[0] = n + draw(st.integers(0, 5))
    elif edit == "neg":
        cells[0] = -1
    elif edit == "extra":
        cells.append(0)
    sep = draw(st.sampled_from([" ", ",", ", ", "  "]))
    return puzzle, sep.join(map(str, cells))


@settings(deadline=None)
@given(near_valid())
def test_near_valid_positions(case):
    puzzle, text = case
    r = run("check", puzzle, "--", text)
    assert r.exit_code in (0, 1, 2)
    assert r.exception is None or isinstance(r.exception, SystemExit)
    if r.exit_code == 2:
        assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("error: ")


def test_demo_solves_the_showcase():
    r = run("demo")
    assert r.exit_code == 0, r.output
    for spec, length in (("sliding:3x3", "31"), ("sliding:4x3", "53"), ("jump:4", "12"), ("flip:5x5", "13")):
        line = next(line for line in r.stdout.splitlines() if spec in line and "│" in line)
        assert f" {length} " in line


def test_pdb_build_list_verify_and_solve_with_it(tmp_path):
    cache = str(tmp_path / "c")
    r = run("pdb", "build", "3x3", "--heuristic", "pdb:4-4", "--cache-dir", cache)
    assert r.exit_code == 0, r.output
    assert "building pattern database for tiles 1,2,3,4" in r.stderr and "ready" in r.stdout
    r = run("pdb", "list", "--cache-dir", cache, "--json")
    data = json.loads(r.stdout)
    assert sorted(d["tiles"] for d in data) == [[1, 2, 3, 4], [5, 6, 7, 8]]
    assert all(d["entries"] == 3024 and d["bits"] == 4 and d["puzzle"] == "sliding:3x3" for d in data)
    assert "sliding:3x3" in run("pdb", "list", "--cache-dir", cache).stdout
    r = run("solve", "3x3", "8 6 7/2 5 4/3 0 1", "--heuristic", "pdb:4-4", "--cache-dir", cache, "--json")
    data = json.loads(r.stdout)
    assert r.exit_code == 0 and data["length"] == 31 and data["heuristic"] == "pdb:4-4"
    assert "building" not in r.stderr
    r = run("pdb", "verify", "--cache-dir", cache)
    assert r.exit_code == 0 and "2 of 2" in r.stdout
    victim = sorted((tmp_path / "c" / "pdb").glob("*.pspdb"))[0]
    raw = bytearray(victim.read_bytes())
    raw[-1] ^= 1
    victim.write_bytes(bytes(raw))
    r = run("pdb", "verify", "--cache-dir", cache)
    assert r.exit_code == 1 and "checksum" in r.stdout and "1 of 2" in r.stdout
    r = run("solve", "3x3", "8 6 7/2 5 4/3 0 1", "--heuristic", "pdb:4-4", "--cache-dir", cache, "-q")
    assert r.exit_code == 0 and "31 moves" in r.stdout and "corrupt" in r.stderr
    assert run("pdb", "verify", "--cache-dir", cache).exit_code == 0


def test_pdb_and_heuristic_errors(tmp_path):
    assert_bad_input(run("solve", "3x3", "1 2 3/4 5 6/7 0 8", "--heuristic", "pdb:9-9"), "sum")
    assert_bad_input(run("solve", "3x3", "1 2 3/4 5 6/7 0 8", "--heuristic", "fastest"), "unknown heuristic")
    assert_bad_input(run("pdb", "build", "3x3", "--heuristic", "manhattan"), "needs no pattern databases")
    assert_bad_input(run("solve", "flip:3x3", "BWB/WBB/BBB", "--heuristic", "pdb:4"), "no tiles")
    r = run("pdb", "list", "--cache-dir", str(tmp_path / "empty"))
    assert r.exit_code == 0 and "no pattern databases" in r.stdout


def test_batch_csv_and_json_lines(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("# two 8-puzzle positions, Korf-style ids, and one unsolvable\n"
                   "17 8 6 7 2 5 4 3 0 1\n\n1 2 3/4 5 6/0 7 8\n1 2 3 4 5 6 8 7 0\n")
    r = run("batch", "3x3", str(src))
    assert r.exit_code == 0, r.output
    rows = [line.split(",") for line in r.stdout.strip().splitlines()]
    assert rows[0] == ["id", "status", "length", "nodes", "seconds", "moves", "error", "lower_bound"]
    assert [row[-1] for row in rows[1:]] == ["31", "2", ""]
    assert [row[:3] for row in rows[1:]] == [["17", "solved", "31"], ["2", "solved", "2"], ["3", "unsolvable", ""]]
    assert "solved 2 of 3" in r.stderr
    out = tmp_path / "out.jsonl"
    r = run("batch", "3x3", str(src), "--format", "jsonl", "--threads", "2", "--heuristic", "manhattan", "-o", str(out))
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert [x["length"] for x in recs] == [31, 2, None] and recs[1]["moves"] == "7 8"
    assert recs[0]["start"] == [8, 6, 7, 2, 5, 4, 3, 0, 1] and "parity" in recs[2]["reason"] or recs[2]["reason"]
    assert_bad_input(run("batch", "3x3", str(tmp_path / "missing.txt")), "cannot read")


def test_batch_answers_every_good_line_and_reports_the_bad_ones(tmp_path):
    import csv
    import io

    src = tmp_path / "in.txt"
    src.write_bytes(b"1 2 3/4 5 6/0 7 8\n1 2 3 4\n\xff\xfe not text\n8 6 7 2 5 4 3 0 1\n1 2 3 4 5 6 8 7 0\n")
    r = run("batch", "3x3", str(src))
    assert r.exit_code == 2
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [(x["id"], x["status"]) for x in rows] == [("1", "solved"), ("2", "invalid"), ("3", "invalid"),
                                                       ("4", "solved"), ("5", "unsolvable")]
    assert rows[1]["error"] == "line 2: position has 4 cells, expected 9" and "UTF-8" in rows[2]["error"]
    assert rows[3]["length"] == "31" and rows[0]["error"] == ""
    assert "solved 2 of 3 (2 invalid lines)" in r.stderr
    r = run("batch", "3x3", str(src), "--format", "jsonl")
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    assert recs[1]["status"] == "invalid" and recs[1]["start"] == [] and recs[3]["length"] == 31
    r = run("batch", "3x3", str(src), "--strict")
    assert r.exit_code == 2 and r.stdout == "" and "line 2" in r.stderr and "--strict" in r.stderr


def test_the_command_keeps_scipy_out():
    """numba would import SciPy (0.3 s) on a command's first compiled call; ``main`` stops it."""
    import subprocess
    import sys

    code = ("import sys; from puzzlespace import cli; cli._keep_scipy_out()\n"
            "try:\n    import scipy\nexcept ImportError:\n    print('kept out')\n"
            "from puzzlespace.registry import load_puzzle; load_puzzle('2x2').state_index()\n"
            "print(sys.modules['scipy'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["kept", "out", "None"]
