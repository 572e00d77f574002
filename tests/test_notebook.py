"""Notebook display: positions show their board (SVG), solutions the page that plays them
(HTML), explorations their counts per depth; and ``examples/tour.ipynb`` runs from top to
bottom in a real kernel (nbclient)."""

from __future__ import annotations

import html
import pickle
import re
import xml.etree.ElementTree as ET

import pytest

import puzzlespace as ps
from puzzlespace.pages import solution_html


def test_a_position_is_its_state_and_draws_itself():
    p = ps.load_puzzle("4x3")
    start = p.position("0 3 2 1/8 7 6 5/4 11 10 9")
    assert start == p.parse_position("0 3 2 1/8 7 6 5/4 11 10 9") and hash(start) == hash(tuple(start))
    assert start.moves() == list(p.moves(start)) and start.play(1) == p.apply(start, 1)
    assert str(start) == p.draw(start) and pickle.loads(pickle.dumps(start)) == start
    root = ET.fromstring(start._repr_svg_())
    labels = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert labels == [str(v) if v else None for v in start]
    assert p.position() == p.goal and p.position(list(start)) == start


@pytest.mark.parametrize("bad,message", [([1, 2], "12 cells, not 2"), ("1 2 3", "3 cells"), (None, None)])
def test_a_position_is_checked(bad, message):
    p = ps.load_puzzle("4x3")
    if bad is None:
        with pytest.raises(ps.PuzzleError, match="not legal"):
            p.position().play(0)
        return
    with pytest.raises(ps.PuzzleError, match=message):
        p.position(bad)


def test_a_solution_shows_its_page_in_a_frame():
    p = ps.load_puzzle("3x3")
    sol = ps.solve(p, p.position("8 6 7/2 5 4/3 0 1"))
    frame = sol._repr_html_()
    srcdoc = re.fullmatch(r'<iframe srcdoc="([^"]*)" title="[^"]*" style="[^"]*"></iframe>', frame, re.S)
    assert srcdoc and html.unescape(srcdoc.group(1)) == solution_html(sol)


def test_an_exploration_shows_its_counts():
    from puzzlespace.explore import explore

    result = explore(ps.load_puzzle("2x3"))
    page = result._repr_html_()
    assert f"{result.states:,}" in page and "log scale" in page
    assert page.count("<title>depth ") == len(result.depth_counts)


def test_the_tour_notebook_runs(examples):
    nbformat = pytest.importorskip("nbformat", reason="no nbformat: pip install 'puzzlespace[test]'")
    nbclient = pytest.importorskip("nbclient", reason="no nbclient: pip install 'puzzlespace[test]'")
    pytest.importorskip("ipykernel", reason="no ipykernel: pip install 'puzzlespace[test]'")
    notebook = nbformat.read(examples / "tour.ipynb", as_version=4)
    for cell in notebook.cells:  # the stored outputs are for readers; these come from the run
        if cell.cell_type == "code":
            cell.outputs = []
    nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(examples)}}).execute()
    shown = [o.get("data", {}) for c in notebook.cells if c.cell_type == "code" for o in c.outputs
             if o.output_type == "execute_result"]
    assert "<svg" in shown[0]["image/svg+xml"]  # the position
    assert any("<iframe srcdoc=" in d.get("text/html", "") and "31 moves" in d["text/html"] for d in shown)
    assert any("181,440" in d.get("text/html", "") for d in shown)  # the exploration
    assert sum("image/svg+xml" in d for d in shown) == 3
