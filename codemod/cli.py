"""Command line: ``codemod apply [--dry-run] PATH...`` and ``codemod check PATH...``.

The CLI only reads configuration, calls the engine, writes files, prints and exits
(docs/ARCHITECTURE.md, "Files, output and exit codes"). Diffs and findings go to stdout;
progress, warnings and the summary to stderr. Exit codes as ruff/black: 0 nothing to do,
1 changes made or needed (or findings), 2 usage, configuration, input or internal error.
"""

from __future__ import annotations

import io
import os
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from codemod.config import load_config
from codemod.output.console import Progress, changes_beyond, err, summary
from codemod.run_guard import (
    EXIT_CHANGES,
    EXIT_CLEAN,
    EXIT_ERROR,
    TRACEBACK_ENV,
    CommandExit,
    run_command,
)
from codemod.types import DEFAULT_EXCLUDES, FileResult, Options

if TYPE_CHECKING:
    from codemod import api
    from codemod.verify.backup import ApplyBackup

# The engine (``codemod.api``, and LibCST with it) is imported by the command that runs
# it: ``check`` answered from its cache never loads it (~1 s of imports).

__all__ = ["EXIT_CHANGES", "EXIT_CLEAN", "EXIT_ERROR", "TRACEBACK_ENV", "cli", "main", "main_entry"]


def _options(paths: tuple[Path, ...], exclude: tuple[str, ...], extend_exclude: tuple[str, ...],
             jobs: int | None) -> Options:
    """The run's settings: the command's options over ``[tool.codemod]`` over the defaults."""
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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="codemod")
def cli() -> None:
    """Migrate torch.nn.Parameter subclasses to plain Parameters built by factory functions."""


def _no_empty_path(_ctx: click.Context, _param: click.Parameter,
                   paths: tuple[str, ...]) -> tuple[Path, ...]:
    """The paths as ``Path`` values; an empty argument (``codemod apply "$FILES"`` with
    nothing in ``FILES``) is an error, not the working directory: it would convert the
    whole tree there."""
    if any(path == "" for path in paths):
        raise click.BadParameter("an empty path; give a file or directory")
    return tuple(Path(path) for path in paths)


#: Files a report or an output must not replace: sources, stubs, the configuration.
_NOT_OUTPUTS = (".py", ".pyi", ".pyw")


def _output_path(_ctx: click.Context, param: click.Parameter, path: Path | None) -> Path | None:
    """A report or output file that is (or links to) a Python source or the project's
    ``pyproject.toml`` would replace it, and one whose directory is missing or cannot be
    written would fail only after ``apply`` rewrote the tree: errors, before the run."""
    if path is None:
        return path
    what = "report" if param.name == "report_file" else "output"
    for name in {path.name, Path(os.path.realpath(path)).name}:
        if name.lower().endswith(_NOT_OUTPUTS) or name == "pyproject.toml":
            raise click.BadParameter(f"{path}: {name} is a source or configuration file; "
                                     f"the {what} would replace it")
    directory = os.path.dirname(os.path.realpath(path))
    if not os.path.isdir(directory):
        raise click.BadParameter(f"{path}: no such directory for the {what}")
    if not os.access(directory, os.W_OK):
        raise click.BadParameter(f"{path}: its directory cannot be written")
    return path


_paths = click.argument(
    "paths", nargs=-1, required=True, type=click.Path(), callback=_no_empty_path
)
_exclude = click.option("--exclude", multiple=True, help="Glob to exclude (replaces the defaults).")
_extend = click.option("--extend-exclude", multiple=True, help="Glob to exclude, added to the defaults.")
_jobs = click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
                     help="Worker processes (default: from config, else the number of CPUs).")


@cli.command()
@_paths
@click.option("--dry-run", is_flag=True, help="Print a unified diff; write nothing.")
@click.option("--report", "report_file", type=click.Path(dir_okay=False, path_type=Path),
              callback=_output_path,
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
    progress = Progress(sys.stderr)
    try:
        result = api.run(list(paths), options, progress=progress, keep_trees=True)
    finally:
        progress.close()
    for failed in result.failed():
        err(f"error: {failed.error}", fg="red")
    for warning in result.warnings:
        err(f"warning: {warning}", fg="yellow")
    changed = result.changed()
    written = 0
    backup: ApplyBackup | None = None
    if result.scanned == 0:
        err(f"warning: no Python files in {', '.join(map(str, paths))}", fg="yellow")
    beyond = changes_beyond(result, paths, dry_run)
    if dry_run:
        for file in changed:
            assert file.new_text is not None and file.old_text is not None
            click.echo(unified_diff(file.path, file.old_text, file.new_text,
                                    new_file=file.path not in result.sources), nl=False)
    elif changed and result.failed():
        # A file that failed may use a class converted elsewhere: write nothing.
        err("error: nothing written: fix or exclude the files above, then run again",
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
            err(f"error: {outcome.error}", fg="red")
    summary(result, dry_run, written)
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
    raise CommandExit(code)


def _report(path: Path, result: api.RunResult, options: Options, *, dry_run: bool, written: int,
            exit_code: int, elapsed: float, verify: dict[str, object] | None = None) -> int:
    """Write the migration report of this run to ``path``; the exit code, 2 when it
    cannot be written. ``verify``: the summary of a behaviour check of the converted
    tree, when one ran (the report's ``verify`` section; null without)."""
    from codemod.output.report import build_report, report_options, write_report

    context = click.get_current_context()
    given = context.find_root().obj
    argv = given.get("argv") if isinstance(given, dict) else None
    report = build_report(
        result, command_line=shlex.join(["codemod", *(argv or sys.argv[1:])]),
        options=report_options(context.params, options), directory=os.getcwd(),
        elapsed_ms=round(elapsed * 1000), exit_code=exit_code, dry_run=dry_run,
        written=written, verify=verify)
    try:
        write_report(report, path)
    except OSError as exc:
        err(f"error: {path}: cannot write the report: {exc.strerror or exc}", fg="red")
        return EXIT_ERROR
    return exit_code


def _backup(files: list[FileResult], result: api.RunResult) -> ApplyBackup:
    """A copy of each file about to be rewritten, and the list of files to be added."""
    from codemod.verify.backup import ApplyBackup

    return ApplyBackup.save([f.path for f in files if f.path in result.sources],
                            [f.path for f in files if f.path not in result.sources])



@cli.command()
@_paths
@click.option("--format", "output_format", type=click.Choice(["text", "json", "github", "sarif"]),
              default="text", show_default=True,
              help="How to print findings: text lines, JSON, GitHub annotations or SARIF 2.1.0.")
@click.option("--statistics", is_flag=True, help="Print counts per code instead of the findings.")
@click.option("--output-file", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              callback=_output_path,
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
        raise CommandExit(run_check(list(paths), options, output_format=output_format,
                              statistics=statistics, cache_dir=cache))
    buffer = io.StringIO()
    code = run_check(list(paths), options, output_format=output_format,
                     statistics=statistics, output=buffer, cache_dir=cache)
    try:
        output_file.write_text(buffer.getvalue(), encoding="utf-8")
    except OSError as exc:
        err(f"error: {output_file}: cannot write: {exc.strerror or exc}", fg="red")
        raise CommandExit(EXIT_ERROR) from None
    raise CommandExit(code)


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

    raise CommandExit(run_verify(original, converted, output_format,
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



def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` and return its exit code (for tests and scripts).

    Never raises: every error becomes a message on stderr (naming the file where one is
    known) and exit code 2; an unexpected exception is reported as an internal error,
    with its traceback only when ``CODEMOD_TRACEBACK=1`` (``run_guard``).
    """
    return run_command(cli, argv)


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
