"""The engine's entry point: ``run`` chains the pipeline's stages (``codemod.pipeline``) and
returns their values; no writes, no printing.

read (``reading.read_tree``) -> index (``indexing.analyse``) -> classify uses and plan
(``plan_rounds.settle_plan``) -> transform and verify (``conversion``, ``workers``) ->
result (``outcomes.record_outcomes``). ``run(paths, options)`` returns a ``RunResult``
holding one ``FileResult`` per file that mattered; the CLI decides what to write and
print. The stages' public names that ``check``, the scripts and the tests use are
re-exported here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from codemod import parallel
from codemod.analysis import python_trees, roots
from codemod.pipeline.indexing import analyse, file_import_targets, hierarchy_names
from codemod.pipeline.nested_parameters import kept_message
from codemod.pipeline.outcomes import record_outcomes
from codemod.pipeline.plan_rounds import settle_plan
from codemod.pipeline.reading import parse_file, read_tree
from codemod.pipeline.results import Mentions, Progress, RunResult
from codemod.scope import Scope, scope_of
from codemod.types import Options

if TYPE_CHECKING:
    from codemod.analysis.classes import FileFacts
    from codemod.pipeline.converted import FileConversion
    from codemod.planning.plan import Plan

__all__ = ["Mentions", "Progress", "RunResult", "analyse", "convert_file",
           "file_import_targets", "hierarchy_names", "parse_file", "read_tree", "run", "settle_plan"]


def run(paths: list[Path], options: Options, progress: Progress | None = None, *,
        keep_trees: bool = False) -> RunResult:
    """Analyse, plan and convert the tree under ``paths`` (nothing is written).

    A path inside a package stands for its whole tree (``scope``): the tree is planned
    and converted, and ``RunResult.scope`` says which files the given paths cover.
    With ``options.jobs`` > 1 the candidate files are converted by that many forked
    processes; the result is the same as with one.

    CPython's trees of the run's texts (``python_trees``) are freed at the end, unless
    ``keep_trees``: the CLI leaves the process right after (``os._exit``), and freeing
    them costs ~0.04 s on the newest vLLM; the next run's ``read_tree`` frees them.
    """
    scope = scope_of(paths, options.src)
    try:
        with parallel.fewer_collections(), roots.using(scope.roots):
            return _run(paths, options, progress, scope)
    finally:
        if not keep_trees:
            python_trees.clear()


def _run(paths: list[Path], options: Options, progress: Progress | None,
         scope: Scope | None = None) -> RunResult:
    """The stages in order, each filling ``result`` or returning what the next one reads."""
    result = read_tree(paths, options, scope)
    index = analyse(result.sources, result, progress)
    result.warnings += [f"{path}:{nested.node.lineno}: {kept_message(nested)}"
                        for path, nested in result.nested_classes]
    plan, candidates, conversions = settle_plan(result, index, options, progress)
    result.plan = plan
    record_outcomes(result, plan, candidates, conversions)
    return result




def convert_file(ff: FileFacts, plan: Plan) -> FileConversion:
    """``conversion.convert_file``. The conversion machinery (LibCST's matchers and
    codemods, the transforms) is imported when first needed, not by reading and planning
    (``plan_rounds._import_conversion``)."""
    from codemod.pipeline.conversion import convert_file as convert

    return convert(ff, plan)
