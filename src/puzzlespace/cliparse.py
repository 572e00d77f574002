"""How the ``puzzlespace`` command reads its arguments: plain help, value types, one-line errors.

Built on click. Help is a usage line, the description, the arguments and options with
the names of their values, and examples at the end. Every usage error is one line on
stderr, ``error: ...``, naming the problem and, where there is one, the fix; exit 2.
"""

from __future__ import annotations

import difflib
import math
import os
import sys
from fractions import Fraction
from pathlib import Path

import click

#: Exit statuses of the command.
EXIT_OK, EXIT_UNSOLVABLE, EXIT_USAGE, EXIT_STOPPED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class Command(click.Command):
    """A command whose help lists its arguments (``arguments``: (name, help) pairs, a help
    text given as a function made when the help is shown) and ends with ``examples``
    (command lines, shown as they are)."""

    def __init__(self, *args, arguments=(), examples=(), **kwargs):
        kwargs.setdefault("context_settings", CONTEXT)
        super().__init__(*args, **kwargs)
        self.arguments = list(arguments)
        self.examples = list(examples)

    def format_options(self, ctx, formatter) -> None:
        if self.arguments:
            with formatter.section("Arguments"):
                formatter.write_dl([(name, text() if callable(text) else text) for name, text in self.arguments])
        super().format_options(ctx, formatter)

    def format_epilog(self, ctx, formatter) -> None:
        if self.examples:
            with formatter.section("Examples"):
                for line in self.examples:
                    formatter.write(f"{'':>{formatter.current_indent}}{line}\n")


class Group(click.Group):
    """A command group that runs without click's own error printing (see :meth:`main`)."""

    command_class = Command

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("context_settings", CONTEXT)
        super().__init__(*args, **kwargs)

    def parse_args(self, ctx, args):
        if not args:
            click.echo(ctx.get_help())
            ctx.exit(EXIT_OK)
        return super().parse_args(ctx, args)

    def resolve_command(self, ctx, args):
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            near = difflib.get_close_matches(name, self.list_commands(ctx), n=1)
            hint = f"did you mean '{near[0]}'?" if near else f"see '{ctx.command_path} --help'"
            raise click.UsageError(f"unknown command '{name}' ({hint})", ctx)
        return super().resolve_command(ctx, args)

    def group(self, *args, **kwargs):
        kwargs.setdefault("cls", Group)
        return super().group(*args, **kwargs)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        """Run the command; usage errors become one line on stderr (exit 2) and Ctrl-C exit 130."""
        args = sys.argv[1:] if args is None else list(args)
        try:
            with self.make_context(prog_name or "puzzlespace", args, **extra) as ctx:
                self.invoke(ctx)
            code = EXIT_OK
        except click.exceptions.Exit as exc:
            code = exc.exit_code
        except click.UsageError as exc:
            click.echo(f"error: {usage_message(exc)}", err=True)
            code = EXIT_USAGE
        except click.ClickException as exc:
            click.echo(f"error: {_plain(exc.format_message())}", err=True)
            code = EXIT_USAGE
        except KeyboardInterrupt:
            quiet_finalizers()
            click.echo("stopped: interrupted", err=True)
            code = EXIT_INTERRUPTED
        except OSError as exc:  # the output itself failed (a full disk, a closed pipe)
            click.echo(f"error: cannot write the output: {exc.strerror or exc}", err=True)
            code = EXIT_USAGE
        if standalone_mode:
            sys.exit(code)
        return code


def quiet_finalizers() -> None:
    """Say nothing, from now on, of errors in objects' finalizers: after a Ctrl-C, objects
    it left half made (numba's and LLVM's, loading or compiling code) fail in theirs, and
    the one line that says the run stopped is all there is to say."""
    sys.unraisablehook = lambda unraisable: None


def _plain(message: str) -> str:
    """click's sentence as a clause: lower-case start, no full stop, no line breaks."""
    message = " ".join(message.split())
    return (message[:1].lower() + message[1:]).rstrip(".")


def usage_message(exc: click.UsageError) -> str:
    """One line for a usage error: what is wrong, then the fix or where to look."""
    where = f"see '{exc.ctx.command_path} --help'" if exc.ctx is not None else "see 'puzzlespace --help'"
    if isinstance(exc, click.NoSuchOption):
        if exc.option_name[1:2].isdigit() or exc.option_name[1:2] in ("/", ",", " ", "."):
            return f"unknown option {exc.option_name} (use -- before a position that starts with -)"
        near = exc.possibilities and difflib.get_close_matches(exc.option_name, exc.possibilities, n=1)
        return f"unknown option {exc.option_name} ({f'did you mean {near[0]}?' if near else where})"
    if isinstance(exc, click.MissingParameter):
        return f"{_plain(exc.format_message())} ({where})"
    if isinstance(exc, click.BadParameter) and exc.param is not None:  # --output, not click's '-o' / '--output'
        name = max(exc.param.opts, key=len) if isinstance(exc.param, click.Option) else exc.param.human_readable_name
        return f"invalid value for {name}: {_plain(exc.message)}"
    message = _plain(exc.format_message())
    if "unexpected extra argument" in message:
        return f"{message} (quote a position that holds spaces; {where})"
    if message.startswith("unknown command"):
        return message
    return f"{message} ({where})"


class Seconds(click.ParamType):
    """A non-negative, finite number of seconds."""

    name = "seconds"

    def convert(self, value, param, ctx):
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(seconds) or seconds < 0:
            self.fail(f"{value!r} is not a number of seconds (0 or more)", param, ctx)
        return seconds


class FilePath(click.ParamType):
    """A path given on the command line, as a :class:`pathlib.Path` (no NUL characters)."""

    name = "path"

    def convert(self, value, param, ctx):
        text = str(value)
        if "\x00" in text or not text:
            self.fail(f"{text!r} is not a path", param, ctx)
        return Path(text)


class OutputPath(FilePath):
    """A path the command writes, refused in one line as the command line is read, before
    any work, where nothing could be written: for a file, a directory, or a folder that
    is missing (unless ``made``: the command makes the folders), is not a folder or
    cannot be written in; with ``folder``, for a directory, a file, or a nearest folder
    that is not one or cannot be written in. Values in ``keep`` (``cache``, say) are
    taken as they are, and a device or a named pipe (``/dev/stdout``) as a file is."""

    def __init__(self, folder: bool = False, made: bool = False, keep: tuple[str, ...] = ()):
        self.folder, self.made, self.keep = folder, made or folder, keep

    def convert(self, value, param, ctx):
        path = super().convert(value, param, ctx)
        if str(value) in self.keep:
            return path
        try:
            problem = self._problem(path, str(value))
        except OSError as exc:  # a name too long, a folder that cannot be searched
            problem = f"{str(value)!r}: {exc.strerror or exc}"
        if problem:
            self.fail(problem, param, ctx)
        return path

    def _problem(self, path: Path, text: str) -> str | None:
        """Why nothing could be written at ``path`` (``text`` as given), or None."""
        if self.folder and path.exists() and not path.is_dir():
            return f"{text!r} is a file; give a directory"
        if not self.folder and path.exists() and not path.is_file() and not path.is_dir():
            return None  # a device or a named pipe, written as a stream
        if not self.folder and (path.is_dir() or text.endswith("/") or path.name in ("", ".", "..")):
            return f"{text!r} is a directory; give a file name in it"
        nearest = path if self.folder else path.parent
        while self.made and not nearest.exists() and nearest != nearest.parent:
            nearest = nearest.parent
        if not nearest.exists():
            return f"the directory {str(nearest)!r} does not exist"
        if not nearest.is_dir():
            return f"{str(nearest)!r} is not a directory"
        if not os.access(nearest, os.W_OK | os.X_OK):
            return f"cannot write in the directory {str(nearest)!r} (permission denied)"
        return None


class Count(click.ParamType):
    """A whole number at least ``low`` (and at most ``high``, if given)."""

    name = "count"

    def __init__(self, low: int = 1, high: int | None = None):
        self.low, self.high = low, high

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            number = value
        else:
            text = str(value).strip()
            if not (text.isascii() and text.lstrip("-").isdigit()):
                self.fail(f"{value!r} is not a whole number", param, ctx)
            if len(text) > 18:
                self.fail(f"{text[:20]}... is too large (at most 18 digits)", param, ctx)
            number = int(text)
        if number < self.low:
            self.fail(f"{value!r} is less than {self.low}", param, ctx)
        if self.high is not None and number > self.high:
            self.fail(f"{value!r} is more than {self.high:,}", param, ctx)
        return number


class LazyConsole:
    """A rich ``Console`` (on stderr with ``stderr=True``) made the first time it is used:
    rich takes a while to load, and ``--version`` or ``--help`` print without it."""

    def __init__(self, stderr: bool = False):
        self._stderr = stderr
        self._console = None

    def __getattr__(self, name):
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=self._stderr, highlight=False, soft_wrap=True)
        return getattr(self._console, name)


class SegmentCount(Count):
    """A number of segments or of workers: 1 to the most a checkpoint holds (its module,
    which loads compiled code, is read as such an option is given, not as the command starts)."""

    def __init__(self):
        super().__init__(1)

    def convert(self, value, param, ctx):
        from .explore.checkpoint import MAX_SEGMENTS

        self.high = MAX_SEGMENTS
        return super().convert(value, param, ctx)


class Weight(click.ParamType):
    """A search weight W >= 1, as an exact fraction (``1.5`` is 3/2)."""

    name = "weight"

    def convert(self, value, param, ctx):
        if isinstance(value, Fraction):
            return value
        from .errors import PuzzleError
        from .search.ida import weight_coefficients

        try:
            q, p = weight_coefficients(value)
        except PuzzleError as exc:
            self.fail(str(exc), param, ctx)
        return Fraction(p, q)
