"""The CLI run as a process should be: in a thread with a large stack and a high recursion
limit (deeply nested code is valid input), every way a command can end mapped to an exit
code, and an unexpected exception reported as an internal error naming the file being
processed, never as a traceback (unless ``CODEMOD_TRACEBACK=1``).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import traceback
from collections.abc import Callable, Sequence

import click

from codemod.config import ConfigError
from codemod.discovery import DiscoveryError
from codemod.fileio import SourceError
from codemod.output.console import err

EXIT_CLEAN, EXIT_CHANGES, EXIT_ERROR = 0, 1, 2


class CommandExit(Exception):
    """Raised by a command to end with ``code`` (click's own exit would print nothing
    different, but could not be told apart from a usage error)."""

    def __init__(self, code: int) -> None:
        self.code = code


#: LibCST's parser, visitors and code generation recurse once or more per nesting level
#: of the code they read. Python's default limit (1,000 frames) fails on valid code
#: such as 150 nested lists or a 1,000-term ``a + b + ...`` chain, and the native parser
#: overflows the 8 MiB main-thread stack (a segfault, not an exception) on a few
#: thousand nested brackets. So the command runs in a thread with a large stack (only
#: address space: pages are committed as they are touched) and a higher limit.
_RECURSION_LIMIT = 100_000
_STACK_BYTES = 512 * 2**20
#: Set to 1 to print the traceback of an internal error.
TRACEBACK_ENV = "CODEMOD_TRACEBACK"


def run_command(command: click.Command, argv: Sequence[str] | None = None) -> int:
    """Run ``command`` with ``argv`` and return its exit code (for tests and scripts).

    Never raises: every error becomes a message on stderr (naming the file where one is
    known) and exit code 2; an unexpected exception is reported as an internal error,
    with its traceback only when ``CODEMOD_TRACEBACK=1``.
    """
    args = list(argv) if argv is not None else sys.argv[1:]
    codes: list[int] = []
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, _RECURSION_LIMIT))
    try:
        worker = start_worker(lambda: codes.append(_run(command, args)))
        if worker is None:  # no thread with a large stack to be had: run here
            return _run(command, args)
        try:
            worker.join()
        except KeyboardInterrupt:
            # Signals reach the main thread only. The worker is a daemon: it stops when
            # the process exits; a write it was doing completes or leaves a temp file,
            # never a partial target.
            err("aborted", fg="red")
            return EXIT_ERROR
        return codes[0] if codes else EXIT_ERROR
    finally:
        sys.setrecursionlimit(old_limit)


def start_worker(target: Callable[[], None]) -> threading.Thread | None:
    """``target`` started in a daemon thread with a large stack; None when none can start."""
    try:
        old_size = threading.stack_size(_STACK_BYTES)
    except (ValueError, RuntimeError):
        return None
    try:
        worker = threading.Thread(target=target, name="codemod", daemon=True)
        worker.start()
    except RuntimeError:  # e.g. the address space is limited (ulimit -v)
        return None
    finally:
        threading.stack_size(old_size)
    return worker


def _run(command: click.Command, args: list[str]) -> int:
    """The CLI proper: click's result and every exception mapped to an exit code."""
    try:
        code = command.main(args=args, prog_name="codemod", standalone_mode=False,
                            obj={"argv": args})
    except CommandExit as exc:
        return exc.code
    except click.exceptions.Abort:
        err("aborted", fg="red")
        return EXIT_ERROR
    except click.ClickException as exc:
        exc.show()
        return EXIT_ERROR
    except (ConfigError, DiscoveryError, SourceError) as exc:
        err(f"error: {exc}", fg="red")
        return EXIT_ERROR
    except RecursionError as exc:
        _internal(exc, "the code is nested too deeply to convert (maximum recursion depth"
                  " exceeded)")
        return EXIT_ERROR
    except MemoryError as exc:
        _internal(exc, "out of memory")
        return EXIT_ERROR
    except BrokenPipeError:
        # stdout was closed early (``codemod apply --dry-run | head``): stop quietly,
        # and keep the interpreter from complaining when it flushes stdout at exit.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    except Exception as exc:  # noqa: BLE001 - the last line of defence
        _internal(exc, f"internal error: {type(exc).__name__}: {exc}")
        return EXIT_ERROR
    return code if isinstance(code, int) else EXIT_CLEAN


def _internal(exc: BaseException, what: str) -> None:
    """Report an exception that escaped the engine, naming the file being processed."""
    path = _file_in_flight(exc)
    where = f"{path}: " if path is not None else ""
    err(f"error: {where}{what}", fg="red")
    if os.environ.get(TRACEBACK_ENV) == "1":
        err("".join(traceback.format_exception(exc)).rstrip())
    else:
        err(f"(set {TRACEBACK_ENV}=1 to see the traceback; please report it)")


def _file_in_flight(exc: BaseException) -> str | None:
    """The file the innermost codemod frame of ``exc``'s traceback was working on.

    The engine names the file it works on ``path`` (or holds it as ``ff.path``, a
    file's facts); the innermost frame of a ``codemod`` module that has one of them is
    the best guess. None when no frame has one.
    """
    found = None
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_globals.get("__name__", "").startswith("codemod."):
            local = frame.f_locals
            candidate = getattr(local.get("ff"), "path", None) or local.get("path")
            if isinstance(candidate, (str, os.PathLike)) and os.fspath(candidate).endswith(".py"):
                found = os.fspath(candidate)
        tb = tb.tb_next
    return found
