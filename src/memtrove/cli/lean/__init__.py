"""The read commands without Typer and Rich: ``search``, ``vsearch``, ``query``, ``get`` and
``status`` start in a fraction of the full CLI's time.

``memtrove COMMAND ...`` comes here first (see :mod:`memtrove.__main__`). A command line it
fully understands (:mod:`.parsing`) runs here (:mod:`.commands`) and prints exactly what the
Typer command prints (:mod:`.output`, :mod:`.views`); a search goes to a running ``memtrove
serve`` of the same vault when there is one. Anything else (``--help``, an unknown option, a
usage error, shell completion, output that is not UTF-8, ``MEMTROVE_LEAN=off``) is left to
the Typer CLI, so its messages and exit statuses stay the only ones.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from memtrove.cli.lean.parsing import Parsed

__all__ = ["finished", "main", "understood"]


def understood(arguments: Sequence[str], env: Mapping[str, str] | None = None) -> Parsed | None:
    """The parsed command line when this path takes it, else None (the Typer CLI does)."""
    env = os.environ if env is None else env
    if env.get("MEMTROVE_LEAN", "").strip().lower() in ("off", "0", "false", "no"):
        return None
    if any(name.startswith("_") and name.endswith("_COMPLETE") for name in env):
        return None  # shell completion is the Typer CLI's
    encoding = getattr(sys.stdout, "encoding", None) or "ascii"
    try:
        if codecs.lookup(encoding).name != "utf-8":
            return None  # typer.echo re-wraps such a stream; Rich may fail on it
    except LookupError:
        return None
    from memtrove.cli.lean.parsing import NotUnderstood, parse

    try:
        return parse(arguments)
    except NotUnderstood:
        return None


def main(arguments: Sequence[str]) -> None:
    """Run the read command and exit; return (having done nothing) when the Typer CLI
    should take the command line."""
    parsed = understood(arguments)
    if parsed is None:
        return
    from memtrove.cli.lean.commands import run
    from memtrove.cli.lean.output import unexpected

    try:
        code = run(parsed)
    except KeyboardInterrupt:
        code = 130  # as Typer: no message
    except OSError as failure:
        if failure.errno != errno.EPIPE:
            if os.environ.get("MEMTROVE_DEBUG"):
                raise
            unexpected(failure)
            code = 1
        else:  # the reader went away: exit 1 quietly, as click does
            _silence_stdout()
            code = 1
    except Exception as failure:
        if os.environ.get("MEMTROVE_DEBUG"):
            raise
        unexpected(failure)
        code = 1
    _exit(finished(code))


def _exit(code: str | int | None) -> None:
    """Exit with ``code`` without tearing the interpreter down: finalising the ~150 modules
    a search loads takes longer than the search itself, and nothing is left to do (the vault
    is closed and stdout flushed). A process still running threads exits normally."""
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        sys.exit(code)
    if code is None or isinstance(code, int):
        status = code or 0
    else:
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(f"{code}\n")
        status = 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)


def finished(code: str | int | None) -> str | int | None:
    """``code``, once stdout is flushed; 1, quietly, when its reader went away (``| head``)
    before the rest of the output, instead of Python's warning at exit (status 120)."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        return 1
    return code


def _silence_stdout() -> None:
    """Point stdout and stderr at the null device, so flushing them at exit cannot fail."""
    null = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            os.dup2(null, stream.fileno())
    os.close(null)
