"""A command loads what it runs, no more: ``--version``, ``--help`` and ``check`` load no
compiled code (numba), and a solve of a small space loads none either."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import sys
from puzzlespace.cli import app
app.main({args!r}, standalone_mode=False)
sys.stdout.write("\\nLOADED " + " ".join(m for m in ("numba", "numpy", "rich") if m in sys.modules) + "\\n")
"""


def loaded(*args: str) -> set[str]:
    """The heavy modules a fresh process loaded to run ``puzzlespace args``."""
    r = subprocess.run([sys.executable, "-c", PROBE.format(args=list(args))], capture_output=True, text=True,
                       timeout=120)
    line = next(line for line in r.stdout.splitlines() if line.startswith("LOADED"))
    return set(line.split()[1:])


@pytest.mark.parametrize("args,allowed", [
    (["--version"], set()),
    (["--help"], {"rich"}),
    (["solve", "--help"], {"numpy", "rich"}),  # the help names the families, whose modules use NumPy
    (["check", "3x3", "1 2 3/4 5 6/8 7 0"], {"numpy", "rich"}),
    (["check", "flip:5x5", "WWBWW/WWBWW/BWBBW/WWWWW/WWWWW"], {"numpy", "rich"}),
    (["solve", "3x3", "8 6 7/2 5 4/3 0 1", "--quiet"], {"numpy", "rich"}),  # a small space: plain search
])
def test_a_command_loads_no_compiled_code_it_does_not_run(args, allowed):
    assert loaded(*args) <= allowed


def test_a_search_that_runs_compiled_code_loads_it():
    assert "numba" in loaded("solve", "3x3", "8 6 7/2 5 4/3 0 1", "--weight", "2", "--quiet")
