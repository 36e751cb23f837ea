"""Writing ``apply``'s changes: the order a killed run can resume from, then every changed
file replaced atomically, or none of them; and which changes fall outside the given paths.

Values in, values out: nothing here prints; the CLI renders what the functions return.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from codemod.atomic_writes import write_files_atomic
from codemod.fileio import SourceError, SourceFile, encode_source
from codemod.pipeline.results import RunResult
from codemod.planning.write_order import write_order
from codemod.types import FileResult, Outcome


@dataclass(frozen=True)
class Written:
    """What ``write_changes`` did: how many files it replaced, or the error that stopped
    it before it replaced any."""

    count: int
    error: SourceError | None = None


def ordered_changes(result: RunResult) -> list[FileResult]:
    """The changed files in the order ``apply`` replaces them.

    The runtime modules go first: every file written after them may import them. Modules
    that define converted classes go last (subclasses' before their bases',
    ``write_order``): a run killed half-way leaves their classes in place, so a second
    run still sees them and finishes the job."""
    runtimes = {r.path for r in result.plan.runtimes.values()} if result.plan else set()
    by_path = {f.path: f for f in result.changed()}
    return [by_path[p] for p in sorted(runtimes & set(by_path))] + [
        by_path[p] for p in write_order([p for p in by_path if p not in runtimes], result.plan)]


def write_changes(result: RunResult, ordered: list[FileResult]) -> Written:
    """Replace each of ``ordered`` with its new text, in that order.

    Encodes and stages every file before it replaces any: one that cannot be written
    (read-only, disk full, unencodable) leaves all of them unchanged, and is recorded in
    ``result`` as FAILED."""
    sources = {f.path: result.sources.get(f.path) or new_source(f.path, result) for f in ordered}
    try:
        write_files_atomic([
            (f.path, encode_source(f.new_text or "", sources[f.path]), sources[f.path].mode)
            for f in ordered
        ], read_as={f.path: sources[f.path].digest for f in ordered if sources[f.path].digest})
    except SourceError as exc:
        result.files.append(FileResult(exc.path or Path(), Outcome.FAILED, error=str(exc)))
        return Written(0, exc)
    return Written(len(ordered))


def new_source(path: Path, result: RunResult) -> SourceFile:
    """How to write a file ``apply`` creates (a runtime module): UTF-8, ``\\n`` line ends,
    the permissions of the root module it sits beside."""
    roots = [r.root_path for r in result.plan.runtimes.values() if r.path == path] \
        if result.plan else []
    like = result.sources.get(roots[0]) if roots else None
    return SourceFile(path, "\n", "utf-8", False, like.mode if like else 0o644)


def changed_outside(result: RunResult) -> list[Path]:
    """The changed files outside the paths the run was given (``RunResult.scope``); a
    runtime module counts as in focus with the root module it sits beside."""
    scope = result.scope
    runtime_roots = {r.path: r.root_path for r in result.plan.runtimes.values()} \
        if result.plan else {}
    return [f.path for f in result.changed() if scope is not None and not scope.in_focus(
        runtime_roots.get(f.path, f.path))]
