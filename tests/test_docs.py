"""Every console example in the README and the docs runs, and prints what the page shows.

A ``console`` block holds commands (lines starting with ``$ ``) each followed by its
expected output (stdout and stderr together). Expected lines are compared with the real
ones, all of them, in order; ``...`` in a line stands for any text (timings, node
rates), and a line that is only ``...`` for any number of lines. A command shown with no
output is run and its output not compared. Every command must exit with a status below 4
(0-3 are the program's answers; 130 would be an interruption, 127 a missing program).
``echo $?`` prints the status of the command before it.

A block that takes long (a whole large exploration) is marked by an HTML comment on the
line before it, ``<!-- slow: why -->``, and runs in the slow run; the default run checks
what it runs on smaller cases.

Commands run in a temporary folder holding a copy of ``examples/``, with an empty cache,
so every block is checked as a newcomer would see it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "examples" / "README.md"]


def console_blocks(path: Path) -> list[tuple[int, list[str], bool]]:
    """(line number, lines, slow) of every ```console block of a Markdown page; a block
    is slow (it runs in the slow run) when the line before it is an HTML comment that
    starts ``<!-- slow``."""
    blocks, current, start, before = [], None, 0, ""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if current is None and line.strip() == "```console":
            current, start, slow = [], number, before.strip().startswith("<!-- slow")
        elif current is not None and line.strip() == "```":
            blocks.append((start, current, slow))
            current = None
        elif current is not None:
            current.append(line)
        before = line
    return blocks


def commands(lines: list[str]) -> list[tuple[str, list[str]]]:
    """(command, expected output lines) in the order of the block."""
    out: list[tuple[str, list[str]]] = []
    for line in lines:
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
    return out


def _pattern(line: str) -> re.Pattern:
    return re.compile(".*".join(re.escape(part) for part in line.rstrip().split("...")) + r"\s*")


def matches(expected: list[str], got: list[str]) -> bool:
    """Whether ``got`` fits ``expected`` (``...`` wildcards, see the module docstring)."""
    if not expected:
        return not got
    head, rest = expected[0], expected[1:]
    if head.strip() == "...":
        return any(matches(rest, got[i:]) for i in range(len(got) + 1))
    return bool(got) and bool(_pattern(head).fullmatch(got[0].rstrip())) and matches(rest, got[1:])


CASES = [pytest.param(path, number, lines, id=f"{path.relative_to(ROOT)}:{number}",
                      marks=pytest.mark.slow if slow else ())
         for path in PAGES for number, lines, slow in console_blocks(path)]


def test_the_pages_have_console_examples():
    pages = [case.values[0] for case in CASES if not case.marks]
    assert len(pages) >= 8 and ROOT / "README.md" in pages


def test_the_matcher():
    assert matches(["a ... c", "..."], ["a bb c", "x", "y"])
    assert matches(["...", "z"], ["x", "y", "z"])
    assert not matches(["a ... c"], ["a b d"])
    assert not matches(["x", "y"], ["x"])
    assert not matches(["x"], ["x", "surplus"])


@pytest.fixture
def workdir(tmp_path) -> Path:
    """A folder with a copy of ``examples/`` and an empty cache, new for every block."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    return tmp_path


@pytest.mark.parametrize("path, number, lines", CASES)
def test_console_example(path, number, lines, workdir):
    env = dict(os.environ, PUZZLESPACE_CACHE=str(workdir / "cache"), COLUMNS="100", TERM="dumb")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    status = 0
    for command, expected in commands(lines):
        if command.strip() == "echo $?":
            got = [str(status)]
        else:
            run = subprocess.run(command, shell=True, cwd=workdir, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True, timeout=600)
            status, got = run.returncode, run.stdout.splitlines()
            assert status < 4, f"{path.name}:{number}: `{command}` exited {status}:\n{run.stdout}"
        assert not expected or matches(expected, got), (
            f"{path.name}:{number}: `{command}` printed:\n" + "\n".join(got) + "\n--- the page shows:\n"
            + "\n".join(expected))


def test_the_readme_says_where_the_cache_lives_as_the_code_chooses_it(monkeypatch, tmp_path):
    from puzzlespace.cache import cache_dir

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    said = re.search(r"It is `\$PUZZLESPACE_CACHE` if set, else\s+`\$XDG_CACHE_HOME/puzzlespace`, else "
                     r"`~/\.cache/puzzlespace`; `--cache-dir DIR`", readme)
    assert said and "puzzlespace warm" in readme and "NUMBA_CACHE_DIR" in readme
    monkeypatch.setenv("PUZZLESPACE_CACHE", str(tmp_path / "a"))
    assert cache_dir() == tmp_path / "a"
    monkeypatch.delenv("PUZZLESPACE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert cache_dir() == tmp_path / "x" / "puzzlespace"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "puzzlespace"
