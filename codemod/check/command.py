"""``codemod check`` as a command: run the check, print findings in the chosen format and
the summary, return the exit code (0 clean, 1 findings, 2 error)."""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from codemod.check.result import CheckResult
from codemod.output.reporters import render, render_statistics
from codemod.types import Options

#: Output formats of ``codemod check --format``.
FORMATS = ("text", "json", "github", "sarif")


def _summary(result: CheckResult) -> str:
    scanned = f"{result.scanned} file(s) scanned, {result.parsed} parsed"
    suppressed = f"; {len(result.suppressed)} suppressed" if result.suppressed else ""
    errors = (f"\n{len(result.errors)} file(s) could not be checked (errors above)"
              if result.errors else "")
    if not result.findings:
        if errors:
            return f"No findings in what could be checked ({scanned}{suppressed}).{errors}"
        return f"All checks passed ({scanned}{suppressed})."
    n = len(result.findings)
    fixable = result.fixable
    line = f"Found {n} finding(s) ({scanned}{suppressed}).{errors}"
    if fixable:
        line += (f"\n{fixable} fixable with `codemod apply` "
                 "(`codemod apply --dry-run PATH...` shows the diff).")
    if n - fixable:
        line += f"\n{n - fixable} need(s) a change by hand or an allow-list entry (see docs/checks.md)."
    return line


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a check imports the engine and runs it.

    A check allocates CPython and LibCST trees that reference counting frees (the
    trees hold no cycles worth finding early), and each collection walks every object
    alive: 0.2-0.25 s of CPU on vLLM 0.34, for nothing. The collector is turned back on
    afterwards (when it was on), with the objects the run left in its oldest generation
    (``gc.freeze`` then ``gc.unfreeze``, two list splices): switched on with all of
    them in the youngest, its next allocation would walk them all (~0.13 s) as the
    command prints; a later full collection finds whatever cycles the run left.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_freeze_count() == 0:  # nobody else's frozen objects to thaw
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def checked(paths: list[Path], options: Options, cache_dir: Path | None = None) -> CheckResult:
    """The result of checking ``paths``: from the cache under ``cache_dir`` when the tree
    is unchanged since the run that stored it, else from the engine (then stored).

    Without ``cache_dir`` the engine always runs. The engine (and LibCST) is imported
    only when it runs: a cache hit reads, hashes and answers. The garbage collector
    pauses meanwhile (``_collector_paused``).
    """
    with _collector_paused():
        return _checked(paths, options, cache_dir)


def _checked(paths: list[Path], options: Options, cache_dir: Path | None) -> CheckResult:
    if cache_dir is None:
        from codemod.check.engine import check_tree

        return check_tree(paths, options)
    from codemod.check.cache import CheckCache, tree_state

    cache = CheckCache(cache_dir)
    state = tree_state(paths, options)
    if state is not None:
        hit = cache.load(state)
        if hit is not None:
            return hit
    digests = state.digests() if state is not None else []
    from codemod.check.engine import check_tree

    result = check_tree(paths, options)
    if state is not None and tree_state(paths, options) == state:
        # Stored only when no file changed while the engine read the tree: the entry
        # then pairs the contents with the findings made from exactly those.
        cache.store(state, digests, result)
    return result


def run_check(paths: list[Path], options: Options, *, output_format: str = "text",
              statistics: bool = False, output: TextIO | None = None,
              err: TextIO | None = None, color: bool | None = None,
              cache_dir: Path | None = None) -> int:
    """Check ``paths``, print findings (``output``, default stdout) and the summary
    (``err``, default stderr); return the exit code: 0 clean, 1 findings, 2 error.
    ``cache_dir``: where the result cache lives (None: no cache; see ``check.cache``)."""
    import click

    result = checked(paths, options, cache_dir)
    out = output if output is not None else sys.stdout
    err_stream = err if err is not None else sys.stderr
    for error in result.errors:
        click.secho(f"error: {error}", fg="red", file=err_stream, color=color)
    for warning in result.warnings:
        click.secho(f"warning: {warning}", fg="yellow", file=err_stream, color=color)
    if statistics:
        text = render_statistics(result.findings, output_format)
    else:
        text = render(result.findings, output_format, errors=result.errors)
    if text:
        out.write(text)
        out.flush()
    click.secho(_summary(result), bold=True, file=err_stream, color=color)
    return result.exit_code
