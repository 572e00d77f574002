"""Exceptions raised by puzzlespace.

Every problem with user input (puzzle names, positions, goals, graph files) raises
:class:`PuzzleError` with a one-line message that names what is wrong; the CLI prints
that line and exits with status 2.
"""

from __future__ import annotations


class PuzzleError(ValueError):
    """Bad input: the message is one line, fit to show a user as it is."""


class DamagedFile(PuzzleError):
    """A file puzzlespace reads back is not what it claims (damaged, truncated, of another
    kind): refused, never used. The message names the file; where the caller knows the
    fix (make it again, rebuild it) it adds it."""


class Undecided(RuntimeError):
    """A question that puzzlespace cannot answer within its limits (said, never guessed)."""


class SearchStopped(RuntimeError):
    """A search stopped before it finished: time limit, node limit or interruption.

    ``lower_bound``: the fewest moves a solution can have, as proven before it stopped
    (0 when nothing is proven). ``interrupted``: stopped by Ctrl-C rather than a limit.
    """

    def __init__(self, message: str, *, nodes: int = 0, seconds: float = 0.0, lower_bound: int = 0,
                 interrupted: bool = False):
        super().__init__(message)
        self.nodes = nodes
        self.seconds = seconds
        self.lower_bound = lower_bound
        self.interrupted = interrupted


class Unsolvable(Exception):
    """The position cannot reach the goal; ``verdict`` says why."""

    def __init__(self, verdict):
        super().__init__(f"unsolvable: {verdict.reason}")
        self.verdict = verdict
