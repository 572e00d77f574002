"""Every command on a multi-tile board (``3x3:mtm``, ``4x2:mtm``), and both lengths of a
sliding solution (single-tile and multi-tile) in text, JSON, pictures, pages and batches,
each checked against the reference BFS (tests/reference.py)."""

import json
import random
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import puzzlespace as ps
from puzzlespace.cli import app
from puzzlespace.families.grid_lines import merge_walk, walk_cells

from puzzles import examples, random_solvable
from reference import mtm_distances as distances, replay_directions

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]
#: An 8-puzzle position 21 multi-tile moves (30 single-tile moves) from the goal.
FAR = "8 7 6/5 4 3/2 1 0"


def run(*args):
    return runner.invoke(app, list(args))


def distance(size: str, text: str) -> int:
    p = ps.load_puzzle(f"{size}:mtm")
    return distances(size)[p.parse_position(text)]


# ----- the metric in the help and the README --------------------------------------------------
@pytest.mark.parametrize("command", ["check", "solve", "explore", "distance", "generate", "batch"])
def test_the_help_says_stm_is_the_default_and_mtm_the_multi_tile_metric(command):
    r = run(command, "--help")
    words = " ".join(r.stdout.split())
    assert r.exit_code == 0 and ":stm, the default" in words and ":mtm" in words and "multi-tile metric" in words


def test_the_readme_says_so_too():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "`:stm`, the default" in readme and "`sliding:WxH:mtm` (or `WxH:mtm`)" in readme
    assert "multi-tile metric" in readme


# ----- solve ------------------------------------------------------------------------------------
def test_solve_prints_both_lengths():
    r = run("solve", "3x3:mtm", FAR, "--quiet")
    assert r.exit_code == 0, r.output
    n = distance("3x3", FAR)
    head = r.stdout.splitlines()[0]
    assert re.match(rf"sliding:3x3:mtm: optimal solution, {n} moves \((\d+) in the single-tile metric\) \(", head)
    directions = re.search(r"^directions: (.*)$", r.stdout, re.MULTILINE).group(1).split()
    p = ps.load_puzzle("3x3:mtm")
    assert len(directions) == n and replay_directions(p, p.parse_position(FAR), directions) == p.goal
    stm = run("solve", "3x3", FAR, "--quiet")
    assert stm.exit_code == 0 and "optimal solution, 30 moves (" in stm.stdout
    merged = int(re.search(r"30 moves \((\d+) in the multi-tile metric\)", stm.stdout).group(1))
    assert n <= merged < 30


def test_solve_json_has_both_lengths():
    r = run("solve", "3x3:mtm", FAR, "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    p = ps.load_puzzle("3x3:mtm")
    n = distance("3x3", FAR)
    tiles = sum(len(t.split(",")) for t in data["notations"]["tiles"])
    assert data["length"] == n and data["optimal"] and list(data["lengths"]) == ["multi-tile", "single-tile"]
    assert data["lengths"] == {"multi-tile": n, "single-tile": tiles} and tiles > n
    assert data["moves"] == data["notations"]["directions"]
    assert replay_directions(p, tuple(data["start"]), data["moves"]) == p.goal
    stm = json.loads(run("solve", "3x3", FAR, "--json").stdout)
    assert list(stm["lengths"]) == ["single-tile", "multi-tile"] and stm["lengths"]["single-tile"] == 30
    flip = json.loads(run("solve", "flip:3x3", "WBW/BBB/WBW", "--json").stdout)
    assert flip["lengths"] == {}


def test_solve_svg_and_html_show_the_multi_tile_moves_and_both_lengths(tmp_path):
    page, picture = tmp_path / "s.html", tmp_path / "s.svg"
    r = run("solve", "3x3:mtm", FAR, "-q", "--html", str(page), "--svg", str(picture))
    assert r.exit_code == 0, r.output
    data = json.loads(run("solve", "3x3:mtm", FAR, "--json").stdout)
    both = f"{data['length']} moves ({data['lengths']['single-tile']} in the single-tile metric)"
    texts = [t.text for t in ET.fromstring(picture.read_text()).iter("{http://www.w3.org/2000/svg}text") if t.text]
    assert f"sliding:3x3:mtm: {both}" in texts
    longest = max(data["moves"], key=len)  # a move of two tiles: L2, U2...
    assert len(longest) == 2 and any(t.endswith((f": {longest}", f": {longest} (goal)")) for t in texts)
    html = page.read_text()
    assert f"<title>sliding:3x3:mtm: {both}</title>" in html and f"<td>{both}, proven optimal</td>" in html
    assert f"&nbsp;{longest}</li>" in html


def test_a_one_metric_family_prints_one_length():
    r = run("solve", "jump:4", "1 2 3 4 0", "--goal", "0 4 3 2 1", "--quiet")
    assert r.exit_code == 0 and "optimal solution, 12 moves (bibfs" in r.stdout


# ----- explore, distance, generate with a tablebase ---------------------------------------------
def test_explore_counts_the_reference_layers():
    r = run("explore", "3x3:mtm", "--json", "--antipodes", "3")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    counts = [0] * (max(distances("3x3").values()) + 1)
    for d in distances("3x3").values():
        counts[d] += 1
    assert data["max_depth"] == 24 and data["depth_counts"] == counts


def test_distance_and_generate_read_the_saved_tablebase(tmp_path, monkeypatch):
    monkeypatch.setenv("PUZZLESPACE_CACHE", str(tmp_path))
    r = run("explore", "3x3:mtm", "--save", "cache")
    assert r.exit_code == 0, r.output
    assert run("distance", "3x3", FAR).exit_code == 2  # the single-tile board has none
    got = run("distance", "3x3:mtm", FAR)
    assert got.exit_code == 0 and int(got.stdout) == distance("3x3", FAR)
    gen = run("generate", "3x3:mtm", "--depth", "20", "--count", "3", "--seed", "2")
    assert gen.exit_code == 0, gen.output
    lines = gen.stdout.strip().splitlines()
    assert len(lines) == 3 and all(distance("3x3", line) == 20 for line in lines)
    table = run("solve", "3x3:mtm", FAR, "--method", "table", "--json")
    assert json.loads(table.stdout)["length"] == distance("3x3", FAR)


def test_a_single_tile_tablebase_is_refused_for_the_multi_tile_board(tmp_path):
    stm = tmp_path / "stm.pstb"
    assert run("explore", "3x3", "--save", str(stm)).exit_code == 0
    for command in (["distance", "3x3:mtm", FAR], ["solve", "3x3:mtm", FAR]):
        r = run(*command, "--table", str(stm))
        assert r.exit_code == 2 and "is for puzzle 'sliding:3x3', not 'sliding:3x3:mtm'" in r.stderr, r.output


# ----- check, batch, pdb ------------------------------------------------------------------------
def test_check():
    assert run("check", "4x2:mtm", "0 7 6 5/4 3 2 1").exit_code == 0
    r = run("check", "4x2:mtm", "2 1 3 4/5 6 7 0", "--json")
    assert r.exit_code == 1 and json.loads(r.stdout)["solvable"] is False


def test_batch_gives_the_optimum_and_both_lengths(tmp_path):
    p = ps.load_puzzle("4x2:mtm")
    rng = random.Random(3)
    starts = [random_solvable(p, rng) for _ in range(4)]
    src = tmp_path / "in.txt"
    src.write_text("".join(p.format_position(s) + "\n" for s in starts) + "2 1 3 4/5 6 7 0\n")
    r = run("batch", "4x2:mtm", str(src), "--format", "jsonl")
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    for row, start in zip(rows, starts):
        assert row["status"] == "solved" and row["length"] == distances("4x2")[start]
        assert row["lengths"]["multi-tile"] == row["length"] <= row["lengths"]["single-tile"]
    assert rows[-1]["status"] == "unsolvable" and rows[-1]["lengths"] == {}
    csv = run("batch", "4x2:mtm", str(src))
    assert csv.exit_code == 0 and csv.stdout.splitlines()[1].split(",")[2] == str(rows[0]["length"])


def test_pattern_databases_are_built_and_read_in_the_metric(tmp_path):
    cache = ["--cache-dir", str(tmp_path)]
    r = run("pdb", "build", "3x3:mtm", "--heuristic", "pdb:4-4", *cache)
    assert r.exit_code == 0, r.output
    listed = json.loads(run("pdb", "list", "--json", *cache).stdout)
    assert listed and all(x["puzzle"] == "sliding:3x3:mtm" for x in listed)
    got = run("solve", "3x3:mtm", FAR, "--heuristic", "pdb:4-4", "--json", *cache)
    data = json.loads(got.stdout)
    assert got.exit_code == 0 and data["length"] == distance("3x3", FAR) and data["heuristic"] == "pdb:4-4"


# ----- both lengths of any solution -------------------------------------------------------------
@examples(25)
@given(st.integers(0, 2**32 - 1))
def test_a_single_tile_solution_merged_is_a_multi_tile_one_no_longer(seed):
    """Either metric's length is that of the same solution replayed in it: merged, a
    single-tile solution is a multi-tile one of at most its length (and at least the
    multi-tile optimum); a multi-tile one, walked, a single-tile one of its tiles' count."""
    stm, mtm = ps.load_puzzle("4x2"), ps.load_puzzle("4x2:mtm")
    start = random_solvable(stm, random.Random(seed))
    sol = ps.solve(stm, start)
    merged = merge_walk(stm.width, start.index(0), sol.moves)
    assert mtm.replay(start, merged)[-1] == stm.goal
    assert sol.lengths == {"single-tile": sol.length, "multi-tile": len(merged)}
    assert distances("4x2")[start] <= len(merged) <= sol.length
    multi = ps.solve(mtm, start)
    walk = walk_cells(mtm.width, start.index(0), multi.moves)
    assert stm.replay(start, walk)[-1] == stm.goal
    assert multi.lengths == {"multi-tile": multi.length, "single-tile": len(walk)} and len(walk) >= sol.length
