"""Command line: ``codemod apply [--dry-run] PATH...`` and ``codemod check PATH...``.

The CLI only reads configuration, calls the engine, writes files, prints and exits
(docs/ARCHITECTURE.md, "Files, output and exit codes"). Diffs and findings go to stdout;
progress, warnings and the summary to stderr. Exit codes as ruff/black: 0 nothing to do,
1 changes made or needed (or findings), 2 usage, configuration, input or internal error.
"""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import click

from codemod.config import ConfigError, load_config
from codemod.discovery import DiscoveryError
from codemod.fileio import SourceError
from codemod.types import DEFAULT_EXCLUDES, FileResult, Options

if TYPE_CHECKING:
    from click._termui_impl import ProgressBar

    from codemod import api
    from codemod.verify.backup import ApplyBackup

# The engine (``codemod.api``, and LibCST with it) is imported by the command that runs
# it: ``check`` answered from its cache never loads it (~1 s of imports).

EXIT_CLEAN, EXIT_CHANGES, EXIT_ERROR = 0, 1, 2


class _Exit(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


def _options(paths: tuple[Path, ...], exclude: tuple[str, ...], extend_exclude: tuple[str, ...],
             jobs: int | None) -> Options:
    config = load_config(paths[0]) if paths else load_config(Path.cwd())
    excludes = config.exclude if config.exclude is not None else DEFAULT_EXCLUDES
    if exclude:
        excludes = exclude
    return Options(
        excludes=tuple(excludes),
        extend_excludes=tuple(config.extend_exclude) + tuple(extend_exclude),
        allow_classes=tuple(config.allow_classes),
        allow_value_uses=config.allow_value_uses,
        feature_prefix=config.feature_prefix,
        src=config.src,
        jobs=jobs or config.jobs or os.cpu_count() or 1,
    )


def _err(message: str, **style: object) -> None:
    click.echo(click.style(message, **style) if style else message, err=True)  # type: ignore[arg-type]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="codemod")
def cli() -> None:
    """Migrate torch.nn.Parameter subclasses to plain Parameters built by factory functions."""


_paths = click.argument(
    "paths", nargs=-1, required=True, type=click.Path(path_type=Path)
)
_exclude = click.option("--exclude", multiple=True, help="Glob to exclude (replaces the defaults).")
_extend = click.option("--extend-exclude", multiple=True, help="Glob to exclude, added to the defaults.")
_jobs = click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
                     help="Worker processes (default: from config, else the number of CPUs).")


@cli.command()
@_paths
@click.option("--dry-run", is_flag=True, help="Print a unified diff; write nothing.")
@click.option("--report", "report_file", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Write the migration report (JSON, docs/report.md) to this file.")
@click.option("--verify", "verify_after", is_flag=True,
              help="After writing, run `codemod verify` on the result; on a difference put "
                   "the original files back (exit 1). Needs torch.")
@_exclude
@_extend
@_jobs
def apply(paths: tuple[Path, ...], dry_run: bool, report_file: Path | None,
          exclude: tuple[str, ...], extend_exclude: tuple[str, ...], jobs: int | None,
          verify_after: bool = False) -> None:
    """Convert Parameter subclasses under PATHS (in place, or as a diff with --dry-run)."""
    started = time.monotonic()
    from codemod import api
    from codemod.output.diff import unified_diff
    from codemod.output.writes import ordered_changes, write_changes

    options = _options(paths, exclude, extend_exclude, jobs)
    progress = _Progress(sys.stderr)
    try:
        result = api.run(list(paths), options, progress=progress)
    finally:
        progress.close()
    for failed in result.failed():
        _err(f"error: {failed.error}", fg="red")
    for warning in result.warnings:
        _err(f"warning: {warning}", fg="yellow")
    changed = result.changed()
    written = 0
    backup: ApplyBackup | None = None
    if result.scanned == 0:
        _err(f"warning: no Python files in {', '.join(map(str, paths))}", fg="yellow")
    beyond = _changes_beyond(result, paths, dry_run)
    if dry_run:
        for file in changed:
            assert file.new_text is not None and file.old_text is not None
            click.echo(unified_diff(file.path, file.old_text, file.new_text,
                                    new_file=file.path not in result.sources), nl=False)
    elif changed and result.failed():
        # A file that failed may use a class converted elsewhere: write nothing.
        _err("error: nothing written: fix or exclude the files above, then run again",
             fg="red")
    elif beyond:
        pass  # writing only the given files would leave the rest of the tree broken
    elif changed:
        ordered = ordered_changes(result)
        if verify_after:
            backup = _backup(ordered, result)
        outcome = write_changes(result, ordered)
        written = outcome.count
        if outcome.error is not None:
            _err(f"error: {outcome.error}", fg="red")
    _summary(result, dry_run, written)
    real_refusals = [r for r in result.refusals if not r.chosen]
    code = EXIT_ERROR if result.failed() or (beyond and not dry_run) else (
        EXIT_CHANGES if changed or real_refusals else EXIT_CLEAN)
    verified: dict[str, object] | None = None
    if code != EXIT_ERROR and verify_after and written and backup is not None:
        verify_code, verify_result = backup.verify_and_restore()
        verified = verify_result.to_dict() if verify_result is not None else None
        if verify_code != 0:
            code = verify_code
    if report_file is not None:
        code = _report(report_file, result, options, dry_run=dry_run, written=written,
                       exit_code=code, elapsed=time.monotonic() - started, verify=verified)
    raise _Exit(code)


def _report(path: Path, result: api.RunResult, options: Options, *, dry_run: bool, written: int,
            exit_code: int, elapsed: float, verify: dict[str, object] | None = None) -> int:
    """Write the migration report of this run to ``path``; the exit code, 2 when it
    cannot be written. ``verify``: the summary of a behaviour check of the converted
    tree, when one ran (the report's ``verify`` section; null without)."""
    from codemod.output.report import build_report, write_report

    context = click.get_current_context()
    given = context.find_root().obj
    argv = given.get("argv") if isinstance(given, dict) else None
    report = build_report(
        result, command_line=shlex.join(["codemod", *(argv or sys.argv[1:])]),
        options=_report_options(context.params, options), directory=os.getcwd(),
        elapsed_ms=round(elapsed * 1000), exit_code=exit_code, dry_run=dry_run,
        written=written, verify=verify)
    try:
        write_report(report, path)
    except OSError as exc:
        _err(f"error: {path}: cannot write the report: {exc.strerror or exc}", fg="red")
        return EXIT_ERROR
    return exit_code


def _report_options(params: dict[str, object], options: Options) -> dict[str, object]:
    """The command's options as given, and the settings they and the configuration gave."""
    given = {key: [str(v) for v in value] if isinstance(value, tuple) else (
        str(value) if isinstance(value, Path) else value) for key, value in params.items()}
    return {
        **given,
        "effective": {
            "excludes": list(options.excludes),
            "extendExcludes": list(options.extend_excludes),
            "allowClasses": list(options.allow_classes),
            "allowValueUses": options.allow_value_uses,
            "featurePrefix": options.feature_prefix,
            "src": [str(p) for p in options.src],
            "jobs": options.jobs,
        },
    }


def _backup(files: list[FileResult], result: api.RunResult) -> ApplyBackup:
    """A copy of each file about to be rewritten, and the list of files to be added."""
    from codemod.verify.backup import ApplyBackup

    return ApplyBackup.save([f.path for f in files if f.path in result.sources],
                            [f.path for f in files if f.path not in result.sources])


def _changes_beyond(result: api.RunResult, paths: tuple[Path, ...], dry_run: bool) -> bool:
    """Whether the conversion of the tree changes files outside the given ``paths``;
    if so, say which, and which directory to run on (nothing is written then: the given
    files alone would leave the rest of the tree using classes that became functions)."""
    from codemod.output.writes import changed_outside

    scope = result.scope
    outside = changed_outside(result)
    if not outside:
        return False
    trees = ", ".join(str(path) for path in scope.walk) if scope is not None else ""
    level = "note" if dry_run else "error"
    _err(f"{level}: converting {', '.join(map(str, paths))} also changes {len(outside)} file(s) "
         f"of its tree outside the given path(s):", fg="yellow" if dry_run else "red")
    for path in outside:
        _err(f"  {path}", fg="yellow" if dry_run else "red")
    if dry_run:
        _err(f"the diff above covers the whole tree; `codemod apply {trees}` writes it",
             fg="yellow")
    else:
        _err(f"error: nothing written: run `codemod apply {trees}` to convert the whole tree",
             fg="red")
    return True


class _Progress:
    """click's progress bar on stderr, for a run that lasts longer than a moment.

    Shown only when stderr is a terminal, and only once the run has taken ``DELAY``
    seconds (a quick run prints nothing but its result); one bar per stage of the
    engine (parsing, converting).
    """

    DELAY = 0.5
    LABELS = {"parse": "parsing   ", "convert": "converting"}

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.enabled = _isatty(stream)
        self.started = time.monotonic()
        self.bar: ProgressBar[int] | None = None
        self.stage = ""
        self.position = 0

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self.bar is not None and stage != self.stage:
            self.close()
        if self.bar is None:
            if time.monotonic() - self.started < self.DELAY:
                return
            self.bar = click.progressbar(length=total, label=self.LABELS.get(stage, stage),
                                         file=self.stream, show_pos=True)
            self.bar.__enter__()
            self.stage, self.position = stage, 0
        self.bar.length = max(total, done)
        self.bar.update(done - self.position)
        self.position = done

    def close(self) -> None:
        """End the current bar (its line stays; the summary follows below it)."""
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


def _summary(result: api.RunResult, dry_run: bool, written: int) -> None:
    """One line of what was done: "would" for a dry run; classes and rewrites only when
    files were (or would be) written, since nothing is converted otherwise."""
    plan = result.plan
    converted = len(plan.converted()) if plan else 0
    counts = result.counts()
    verb = "would change" if dry_run else "changed"
    # New files (runtime modules) are not among those scanned: named apart.
    n_new = sum(1 for f in result.changed() if f.path not in result.sources) if written or dry_run else 0
    n_changed = (len(result.changed()) if dry_run else written) - n_new
    detail = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
    line = f"{verb} {n_changed} file(s) of {result.scanned} scanned ({result.parsed} parsed)"
    if n_new:
        line += f" and {'would add' if dry_run else 'added'} {n_new} runtime module(s)"
    if n_changed and converted:
        line += f"; {'would convert' if dry_run else 'converted'} {converted} class(es)"
    if n_changed and detail:
        line += f" [{detail}]"
    _err(line, bold=True)
    refusals = result.refusals
    if refusals:
        _err(f"refused {len(refusals)} class(es), left unchanged:", fg="yellow")
        for refusal in refusals:
            _err(f"  {refusal.render()}", fg="yellow")


@cli.command()
@_paths
@click.option("--format", "output_format", type=click.Choice(["text", "json", "github", "sarif"]),
              default="text", show_default=True,
              help="How to print findings: text lines, JSON, GitHub annotations or SARIF 2.1.0.")
@click.option("--statistics", is_flag=True, help="Print counts per code instead of the findings.")
@click.option("--output-file", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the findings to this file instead of stdout.")
@_exclude
@_extend
@_jobs
@click.option("--no-cache", is_flag=True,
              help="Neither read nor write the result cache (also: CODEMOD_NO_CACHE=1).")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where the result cache lives (also: CODEMOD_CACHE_DIR; default: "
                   ".codemod_cache in the project root).")
def check(paths: tuple[Path, ...], output_format: str, statistics: bool, output_file: Path | None,
          exclude: tuple[str, ...], extend_exclude: tuple[str, ...], jobs: int | None,
          no_cache: bool, cache_dir: Path | None) -> None:
    """Report Parameter subclasses and class-style uses of converted names (changes nothing).

    Exit code 0: clean; 1: findings; 2: usage, configuration or input error. Codes are
    documented in docs/checks.md; `# codemod: ignore[CODE]` on a line suppresses them.
    An unchanged tree is answered from a cache of the last result (see --no-cache).
    """
    from codemod.check.command import run_check

    if statistics and output_format not in ("text", "json"):
        raise click.UsageError("--statistics works with --format text or json")
    options = _options(paths, exclude, extend_exclude, jobs)
    cache = _check_cache_dir(paths, no_cache, cache_dir)
    if output_file is None:
        raise _Exit(run_check(list(paths), options, output_format=output_format,
                              statistics=statistics, cache_dir=cache))
    buffer = io.StringIO()
    code = run_check(list(paths), options, output_format=output_format,
                     statistics=statistics, output=buffer, cache_dir=cache)
    try:
        output_file.write_text(buffer.getvalue(), encoding="utf-8")
    except OSError as exc:
        _err(f"error: {output_file}: cannot write: {exc.strerror or exc}", fg="red")
        raise _Exit(EXIT_ERROR) from None
    raise _Exit(code)


@cli.command()
@click.argument("original", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("converted", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="A table per class, or the result as JSON.")
@click.option("--compile", "compile_loaders", is_flag=True,
              help="Also compile each class's loader with torch.compile(fullgraph=True) and "
                   "compare with the original run eagerly (slower).")
def verify(original: Path, converted: Path, output_format: str, compile_loaders: bool) -> None:
    """Prove CONVERTED (a converted copy of ORIGINAL) behaves as ORIGINAL: build every
    converted class from both trees, call every method at tp 1/2/4, compare bit for bit.

    Exit code 0: no difference; 1: differences; 2: nothing could be verified. Needs
    torch. See docs/verify.md.
    """
    from codemod.verify.command import run_verify

    raise _Exit(run_verify(original, converted, output_format,
                           compile_loaders=compile_loaders)[0])


def _check_cache_dir(paths: tuple[Path, ...], no_cache: bool, cache_dir: Path | None) -> Path | None:
    """Where ``check``'s result cache lives: ``--cache-dir``, else ``CODEMOD_CACHE_DIR``,
    else ``.codemod_cache`` in the project root; None with ``--no-cache`` or
    ``CODEMOD_NO_CACHE=1`` (as ruff's ``--no-cache`` and ``RUFF_NO_CACHE``)."""
    from codemod.check.cache import CACHE_DIR_ENV, NO_CACHE_ENV, default_cache_dir

    if no_cache or os.environ.get(NO_CACHE_ENV, "").strip().lower() in ("1", "true", "yes"):
        return None
    if cache_dir is not None:
        return cache_dir
    if os.environ.get(CACHE_DIR_ENV):
        return Path(os.environ[CACHE_DIR_ENV])
    return default_cache_dir(paths[0] if paths else None)


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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` and return its exit code (for tests and scripts).

    Never raises: every error becomes a message on stderr (naming the file where one is
    known) and exit code 2; an unexpected exception is reported as an internal error,
    with its traceback only when ``CODEMOD_TRACEBACK=1``.
    """
    args = list(argv) if argv is not None else sys.argv[1:]
    codes: list[int] = []
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, _RECURSION_LIMIT))
    try:
        worker = _start_worker(lambda: codes.append(_run(args)))
        if worker is None:  # no thread with a large stack to be had: run here
            return _run(args)
        try:
            worker.join()
        except KeyboardInterrupt:
            # Signals reach the main thread only. The worker is a daemon: it stops when
            # the process exits; a write it was doing completes or leaves a temp file,
            # never a partial target.
            _err("aborted", fg="red")
            return EXIT_ERROR
        return codes[0] if codes else EXIT_ERROR
    finally:
        sys.setrecursionlimit(old_limit)


def _start_worker(target: Callable[[], None]) -> threading.Thread | None:
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


def _run(args: list[str]) -> int:
    """The CLI proper: click's result and every exception mapped to an exit code."""
    try:
        code = cli.main(args=args, prog_name="codemod", standalone_mode=False,
                        obj={"argv": args})
    except _Exit as exc:
        return exc.code
    except click.exceptions.Abort:
        _err("aborted", fg="red")
        return EXIT_ERROR
    except click.ClickException as exc:
        exc.show()
        return EXIT_ERROR
    except (ConfigError, DiscoveryError, SourceError) as exc:
        _err(f"error: {exc}", fg="red")
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
    _err(f"error: {where}{what}", fg="red")
    if os.environ.get(TRACEBACK_ENV) == "1":
        _err("".join(traceback.format_exception(exc)).rstrip())
    else:
        _err(f"(set {TRACEBACK_ENV}=1 to see the traceback; please report it)")


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


def main_entry() -> None:
    """Console-script entry point.

    Leaves with ``os._exit`` once the output is flushed, as mypy does: freeing every
    parsed tree and source text at interpreter shutdown costs ~0.2 s on a large tree
    and achieves nothing (files are written and closed by then, worker processes
    joined). ``main`` itself returns normally, for tests and scripts.
    """
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # e.g. the reader of a pipe went away
        code = code or EXIT_ERROR
    os._exit(code)
