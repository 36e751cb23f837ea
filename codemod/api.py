"""The engine: analyse a tree, plan every class, transform each file; no writes, no printing.

``run(paths, options)`` returns a ``RunResult`` holding one ``FileResult`` per file that
mattered; the CLI decides what to write and print. ``convert_file`` is the pure per-file
step (facts + plan in, new text out).
"""

from __future__ import annotations

from pathlib import Path

from codemod import parallel
from codemod.analysis import python_trees, roots
from codemod.pipeline.conversion import (
    FileConversion,
    convert_file,
    verify_text,
)
from codemod.pipeline.indexing import analyse, file_import_targets, hierarchy_names
from codemod.pipeline.plan_rounds import settle_plan
from codemod.pipeline.reading import parse_facts, parse_file, read_tree
from codemod.pipeline.results import Mentions, Progress, RunResult
from codemod.pipeline.workers import Converted
from codemod.planning.plan import Plan
from codemod.runtime.emit import runtime_module_text
from codemod.scope import Scope, scope_of
from codemod.types import FileResult, Options, Outcome

__all__ = ["FileConversion", "Mentions", "Progress", "RunResult", "analyse", "convert_file",
           "file_import_targets", "hierarchy_names", "parse_file", "read_tree", "run", "settle_plan"]


def run(paths: list[Path], options: Options, progress: Progress | None = None) -> RunResult:
    """Analyse, plan and convert the tree under ``paths`` (nothing is written).

    A path inside a package stands for its whole tree (``scope``): the tree is planned
    and converted, and ``RunResult.scope`` says which files the given paths cover.
    With ``options.jobs`` > 1 the candidate files are converted by that many forked
    processes; the result is the same as with one.
    """
    scope = scope_of(paths, options.src)
    try:
        with parallel.fewer_collections(), roots.using(scope.roots):
            return _run(paths, options, progress, scope)
    finally:
        python_trees.clear()


def _run(paths: list[Path], options: Options, progress: Progress | None,
         scope: Scope | None = None) -> RunResult:
    result = read_tree(paths, options, scope)
    index = analyse(result.sources, result, progress)
    plan, candidates, conversions = settle_plan(result, index, options, progress)
    result.plan = plan
    for path in candidates:
        done = conversions[path]
        source = result.sources[path]
        if done.parse_error is not None:  # reported by convert_all
            continue
        if done.conversion is None:  # stopped at a leftover in what became the last round
            ff = result.facts.get(path) or parse_facts(path, source.text)[0]
            assert ff is not None
            done = Converted(convert_file(ff, plan), done.leftovers)
        conversion = done.conversion
        assert conversion is not None
        refusals = tuple(r for r in plan.refusals() if r.path == path)
        if conversion.new_text == source.text:
            outcome = Outcome.REFUSED if refusals else Outcome.UNCHANGED
            result.files.append(FileResult(path, outcome, refusals=refusals))
            continue
        error = done.error if done.verified else verify_text(conversion.new_text, path,
                                                             conversion.generated)
        if error is not None:
            result.files.append(FileResult(path, Outcome.FAILED, error=error))
            continue
        result.files.append(FileResult(
            path, Outcome.CHANGED, old_text=source.text, new_text=conversion.new_text,
            refusals=refusals, counts=tuple(sorted(conversion.counts.items())),
        ))
    _add_runtime_modules(result, plan)
    result.files.sort(key=lambda f: str(f.path))
    return result


def _add_runtime_modules(result: RunResult, plan: Plan) -> None:
    """A result for each runtime module of the plan (``codemod.runtime.emit``): a new file,
    an earlier output of ``apply`` brought up to date, or one that already says it all."""
    converted = {p.runtime_module for p in plan.classes.values() if p.converted}
    for module, runtime in sorted(plan.runtimes.items()):
        if module not in converted:
            continue
        text = runtime_module_text(runtime)
        source = result.sources.get(runtime.path)
        old = source.text if source is not None else ""
        if old == text:
            result.files.append(FileResult(runtime.path, Outcome.UNCHANGED))
        else:
            result.files.append(FileResult(runtime.path, Outcome.CHANGED, old_text=old,
                                           new_text=text))


