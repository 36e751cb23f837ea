"""The engine's view for ``codemod check``: which classes exist and which ``apply``
converts, from the same pipeline stages ``apply`` runs (read, analyse, settle the plan)."""

from __future__ import annotations

from pathlib import Path

from codemod.analysis.classes import FileFacts
from codemod.pipeline.indexing import analyse
from codemod.pipeline.plan_rounds import settle_plan
from codemod.pipeline.reading import parse_file, read_tree
from codemod.pipeline.results import RunResult
from codemod.scope import Scope
from codemod.types import Options


def plan_tree(paths: list[Path], options: Options, scope: Scope | None = None) -> RunResult:
    """Read, analyse and plan the tree as ``api.run`` does, without building new texts.

    The refusal rounds are the engine's (``settle_plan``): a class used as a class
    where no rewrite reaches is refused, and the plan is made again; only the leftovers
    of each round are computed, in ``options.jobs`` processes. The stage modules are
    imported directly, not through ``api``: the conversion machinery then loads while
    the proofs are made elsewhere (``plan_rounds.convert_all``).
    """
    result = read_tree(paths, options, scope)
    index = analyse(result.sources, result)
    result.plan, _, _ = settle_plan(result, index, options, convert=False)
    return result


def facts_of(path: Path, result: RunResult) -> FileFacts | None:
    """The parsed file, parsing it now if the analysis had no reason to (None: it fails)."""
    ff = result.facts.get(path)
    if ff is None and not any(f.path == path for f in result.failed()):
        ff = parse_file(path, result.sources[path].text, result)
    return ff
