"""The command line at its edges: an output path that could not be written is refused in
one line before any work, for every output option; a Ctrl-C (or SIGTERM) pressed again
while the first one's stop is under way never cuts it short nor prints a traceback."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from puzzlespace.cli import app

runner = CliRunner()

#: Every output option that names a file, with a command that takes it.
FILE_OPTIONS = [
    (["solve", "jump:4", "0 4 3 2 1"], "--svg"),
    (["solve", "jump:4", "0 4 3 2 1"], "--html"),
    (["explore", "3x2"], "--plot"),
    (["explore", "3x2"], "--html"),
    (["explore", "3x2"], "--csv"),
    (["explore", "3x2"], "--save"),
    (["batch", "3x3", "POSITIONS"], "--output"),
]


def _refused(args: list[str], option: str, words: str, tmp_path) -> None:
    """``args`` end with exit 2 and one line that names ``option`` and says ``words``."""
    (tmp_path / "positions.txt").write_text("1 2 3/4 5 6/7 0 8\n")
    args = [str(tmp_path / "positions.txt") if a == "POSITIONS" else a for a in args]
    r = runner.invoke(app, args)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1, (args, r.output)
    assert r.stderr.startswith(f"error: invalid value for {option}: ") and words in r.stderr, r.stderr


@pytest.mark.parametrize("command, option", FILE_OPTIONS, ids=[f"{c[0]} {o}" for c, o in FILE_OPTIONS])
@pytest.mark.parametrize("where, words", [
    (".", "is a directory"), ("DIR", "is a directory"), ("DIR/", "is a directory"),
    ("FILE/x.svg", "is not a directory"), ("FILE/deeper/x.svg", "is not a directory"),
    ("MISSING/x.svg", "does not exist")])
def test_an_output_file_that_cannot_be_written_is_one_line(tmp_path, command, option, where, words):
    if option == "--save" and where.startswith("MISSING"):
        pytest.skip("--save makes the folders it is given")
    if option != "--save" and where.startswith("FILE/deeper"):
        words = "does not exist"
    (tmp_path / "file").write_text("x")
    path = where.replace("DIR", str(tmp_path)).replace("FILE", str(tmp_path / "file")).replace(
        "MISSING", str(tmp_path / "missing"))
    _refused([*command, option, path], option, words, tmp_path)


@pytest.mark.parametrize("command, option", [*FILE_OPTIONS, (["explore", "3x2"], "--out")])
def test_an_output_in_a_directory_not_writable_is_one_line(tmp_path, monkeypatch, command, option):
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o555)
    if os.geteuid() == 0:  # root writes in any directory; the system's answer is asked of os.access
        allowed = os.access
        monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != closed and allowed(path, mode))
    try:
        _refused([*command, option, str(closed / "x.svg")], option, "permission denied", tmp_path)
    finally:
        closed.chmod(0o755)


@pytest.mark.parametrize("where, words", [("FILE", "is a file"), ("FILE/ck", "is not a directory")])
def test_a_checkpoint_directory_that_cannot_be_made_is_one_line(tmp_path, where, words):
    (tmp_path / "file").write_text("x")
    _refused(["explore", "3x2", "--out", where.replace("FILE", str(tmp_path / "file"))], "--out", words, tmp_path)


def test_an_output_name_too_long_is_one_line(tmp_path):
    _refused(["explore", "3x2", "--csv", str(tmp_path / ("a" * 300))], "--csv", "too long", tmp_path)


def test_outputs_that_can_be_written_are_taken(tmp_path):
    """A device is written as a stream, and --save makes the folders it names."""
    r = runner.invoke(app, ["explore", "2x2", "--csv", os.devnull, "--save", str(tmp_path / "a" / "b" / "t.pstb")])
    assert r.exit_code == 0 and (tmp_path / "a" / "b" / "t.pstb").is_file(), r.output


def test_a_graph_solution_to_a_directory_is_one_line(tmp_path, examples):
    _refused(["solve", f"graph:{examples / 'petersen.toml'}", "0", "--html", "."], "--html", "is a directory",
             tmp_path)


# ----- Ctrl-C pressed again --------------------------------------------------------------------

def _script(body: str) -> subprocess.CompletedProcess:
    """Run ``body`` (which defines ``run()``) as the command's entry point, started by
    ``puzzlespace.__main__.main`` as the script is."""
    script = f"""
import os, signal, sys, time
from puzzlespace import cli
from puzzlespace.__main__ import main
{body}
cli.main = run
main()
"""
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)


def test_interrupts_after_the_first_are_absorbed_while_it_stops():
    """The stop the first Ctrl-C began (a checkpoint written, a cluster closed) runs to
    its end whatever comes after: a Ctrl-C or a SIGTERM."""
    done = _script("""
def run():
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
    except KeyboardInterrupt:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGINT):
            os.kill(os.getpid(), signum)
            sum(range(100_000))
        print("stopped cleanly", flush=True)
        os._exit(130)
""")
    assert done.returncode == 130 and done.stdout == "stopped cleanly\n" and "Traceback" not in done.stderr, \
        done.stderr


def test_an_interrupt_in_code_called_back_from_compiled_code_is_raised_once_it_returns():
    """An interrupt that lands in Python code numba's compiled code called (unpickling its
    constants) would come out of the compiled function as a SystemError: it is raised a
    moment later, out of that code."""
    done = _script("""
import numba.core.serialize as serialize

called_back = compile("os.kill(os.getpid(), signal.SIGINT)\\nsum(range(200_000))", serialize.__file__, "exec")

def run():
    try:
        exec(called_back, {"os": os, "signal": signal})
        print("returned", flush=True)
        time.sleep(5)
    except KeyboardInterrupt:
        os._exit(130)
""")
    # raised a moment later: after "returned" was written, perhaps before its newline
    assert done.returncode == 130 and done.stdout.startswith("returned"), (done.stdout, done.stderr)


#: 5x2's positions and God's number.
POSITIONS_5X2, RADIUS_5X2 = 1_814_400, 55


@pytest.mark.parametrize("delay, resume", [(0.0, True), (0.005, False), (0.02, False), (0.05, False), (0.2, True)])
def test_ctrl_c_pressed_again_during_a_run_by_segments(tmp_path, delay, resume):
    """Ctrl-C during a run by segments, then twice more ``delay`` seconds later (while it
    stops): the one line naming the saved layer, exit 130, no traceback; --resume then
    finishes it."""
    out = tmp_path / "ck"
    args = ["explore", "5x2", "--out", str(out), "--segments", "7", "--json"]
    proc = subprocess.Popen([sys.executable, "-m", "puzzlespace", *args, "--progress"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        if line.startswith("layer 12:"):
            break
    proc.send_signal(signal.SIGINT)
    time.sleep(delay)
    for _ in range(2):
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        time.sleep(0.01)
    stderr = proc.stderr.read()
    proc.wait(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in stderr, stderr
    assert re.fullmatch(r"stopped: interrupted; layer \d+ is saved in .* --resume.*\n", stderr.splitlines(True)[-1]), \
        stderr
    if resume:
        done = subprocess.run([sys.executable, "-m", "puzzlespace", *args, "--resume"], capture_output=True,
                              text=True, timeout=120)
        result = json.loads(done.stdout)
        assert done.returncode == 0 and result["states"] == POSITIONS_5X2 and result["max_depth"] == RADIUS_5X2
