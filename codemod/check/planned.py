"""The engine's view for ``codemod check``: which classes exist and which ``apply``
converts, from the same pipeline stages ``apply`` runs (read, analyse, settle the plan)."""

from __future__ import annotations

from pathlib import Path

from codemod import api
from codemod.analysis.classes import FileFacts
from codemod.scope import Scope
from codemod.types import Options


def plan_tree(paths: list[Path], options: Options, scope: Scope | None = None) -> api.RunResult:
    """Read, analyse and plan the tree as ``api.run`` does, without building new texts.

    The refusal rounds are the engine's (``api.settle_plan``): a class used as a class
    where no rewrite reaches is refused, and the plan is made again; only the leftovers
    of each round are computed, in ``options.jobs`` processes.
    """
    result = api.read_tree(paths, options, scope)
    index = api.analyse(result.sources, result)
    result.plan, _, _ = api.settle_plan(result, index, options, convert=False)
    return result


def facts_of(path: Path, result: api.RunResult) -> FileFacts | None:
    """The parsed file, parsing it now if the analysis had no reason to (None: it fails)."""
    ff = result.facts.get(path)
    if ff is None and not any(f.path == path for f in result.failed()):
        ff = api.parse_file(path, result.sources[path].text, result)
    return ff
