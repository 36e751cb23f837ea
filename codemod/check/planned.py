"""The engine's view for ``codemod check``: which classes exist and which ``apply``
converts, from the same pipeline stages ``apply`` runs (read, analyse, settle the plan)."""

from __future__ import annotations

from pathlib import Path

from codemod.analysis.classes import FileFacts
from codemod.analysis.index import ClassIndex
from codemod.pipeline.indexing import analyse
from codemod.pipeline.plan_rounds import settle_plan
from codemod.pipeline.reading import parse_file, read_tree
from codemod.pipeline.results import RunResult
from codemod.planning.model import Plan
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
    result, index = indexed_tree(paths, options, scope)
    result.plan = settled_plan(result, index, options)
    return result


def indexed_tree(paths: list[Path], options: Options,
                 scope: Scope | None = None) -> tuple[RunResult, ClassIndex]:
    """The first two stages: the tree read, and its class index."""
    result = read_tree(paths, options, scope)
    return result, analyse(result.sources, result)


def settled_plan(result: RunResult, index: ClassIndex, options: Options) -> Plan:
    """The plan ``apply`` would carry out (``settle_plan``, leftovers only)."""
    plan, _, _ = settle_plan(result, index, options, convert=False)
    return plan


def unplanned(index: ClassIndex) -> Plan:
    """A plan that decides nothing: no class planned, no field, no runtime module (for a
    check whose findings do not depend on the plan)."""
    return Plan(index, {}, {}, set())


def facts_of(path: Path, result: RunResult) -> FileFacts | None:
    """The parsed file, parsing it now if the analysis had no reason to (None: it fails)."""
    ff = result.facts.get(path)
    if ff is None and not any(f.path == path for f in result.failed()):
        ff = parse_file(path, result.sources[path].text, result)
    return ff
