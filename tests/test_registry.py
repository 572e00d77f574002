"""Families register themselves: a new one (here the examples of docs/api.md) plugs into
``load_puzzle``, the command line and its help without any edit to puzzlespace."""

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import puzzlespace as ps
from puzzlespace import registry

DOCS = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def _adding_a_family_examples() -> list[str]:
    section = DOCS.read_text().split("## Adding a family", 1)[1]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


@pytest.fixture
def clean_registry(monkeypatch):
    from puzzlespace.families import base

    registry.families()
    saved = dict(base._FAMILIES)
    yield registry
    base._FAMILIES.clear()
    base._FAMILIES.update(saved)


def test_the_built_in_families_are_registered():
    assert {"sliding", "flip", "jump", "graph"} <= {f.name for f in registry.families()}
    assert ps.load_puzzle("4x3").spec == "sliding:4x3" and ps.load_puzzle("JUMP:4").spec == "jump:4:1,2"
    with pytest.raises(ps.PuzzleError, match="unknown puzzle 'cube:3': use .*jump:N"):
        ps.load_puzzle("cube:3")


def test_the_documented_examples_run_and_plug_in(clean_registry, tmp_path):
    namespace: dict = {}
    for code in _adding_a_family_examples():
        exec(compile(code, str(DOCS), "exec"), namespace)
    assert ps.load_puzzle("pancake:6").spec == "pancake:6"
    from puzzlespace.cli import app

    runner = CliRunner()
    r = runner.invoke(app, ["solve", "pancake:6", "3 5 0 4 1 2", "--quiet"])
    assert r.exit_code == 0 and "pancake:6: optimal solution, 6 moves" in r.stdout, r.output
    page = tmp_path / "p.html"  # a family that says nothing of drawing still gets its page
    r = runner.invoke(app, ["solve", "pancake:6", "3 5 0 4 1 2", "--quiet", "--html", str(page)])
    assert r.exit_code == 0 and '<text x="0" y="0" fill="#2b2b2b">3</text>' in page.read_text()
    r = runner.invoke(app, ["check", "cube:3", "1"])
    assert r.exit_code == 2 and "pancake:N" in r.stderr


def test_the_documented_state_index_explores_like_bfs(clean_registry):
    """The pancake index of docs/api.md: the engine explores a family it knows nothing of,
    with the counts of a plain BFS, from the library and the command line."""
    import json

    from puzzlespace.contracts import StateIndex
    from puzzlespace.search.bfs import depth_counts

    namespace: dict = {}
    for code in _adding_a_family_examples():
        exec(compile(code, str(DOCS), "exec"), namespace)
    p = ps.load_puzzle("pancake:5")
    assert isinstance(p.state_index(), StateIndex)
    counts, deepest = depth_counts(p, p.goal)
    from puzzlespace.cli import app

    r = CliRunner().invoke(app, ["explore", "pancake:5", "--json", "--threads", "2"])
    assert r.exit_code == 0, r.output
    result = json.loads(r.stdout)
    assert result["depth_counts"] == counts and sorted(map(tuple, result["antipodes"])) == sorted(deepest)


def test_a_family_from_an_entry_point(clean_registry, monkeypatch):
    from puzzlespace.families.jump import JumpPuzzle

    hop = registry.Family("hop", "hop:N", lambda args: JumpPuzzle(int(args), (1, 3)))

    class Entry:
        name = "hop"

        def load(self):
            return hop

    monkeypatch.setattr(registry, "_LOADED", [False])
    monkeypatch.setattr(registry, "_entry_points", lambda: [Entry()])
    assert ps.load_puzzle("hop:5").spec == "jump:5:1,3"

    class Broken(Entry):
        def load(self):
            return object()

    monkeypatch.setattr(registry, "_LOADED", [False])
    monkeypatch.setattr(registry, "_entry_points", lambda: [Broken()])
    with pytest.raises(TypeError, match="names no puzzlespace Family"):
        registry.families()


def test_every_state_index_and_search_problem_keeps_its_contract():
    """The contracts of :mod:`puzzlespace.contracts`, checked on every family's objects."""
    from puzzlespace.contracts import FrontierSpace, IDAProblem, PuzzleRules, StateIndex
    from puzzlespace.pdb.space import PatternSpace

    root = Path(__file__).resolve().parents[1]
    for name in ("3x3", "jump:5:1,3", "flip:3x3", f"graph:{root / 'examples' / 'theta.json'}"):
        p = ps.load_puzzle(name)
        assert isinstance(p, PuzzleRules)
        index = p.state_index()
        assert isinstance(index, StateIndex) and index.rank(p.goal) < index.size
        problem = p.search_problem(p.default_heuristic()) if p.default_heuristic() else None
        assert problem is None or isinstance(problem, IDAProblem)
    p = ps.load_puzzle("3x3")
    space = PatternSpace(p.graph.neighbors, p.goal, (1, 2))
    assert isinstance(space, FrontierSpace) and not isinstance(space, StateIndex)
