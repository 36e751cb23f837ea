"""What a planning round's rewrites can reach, asked before any file is converted: the
identifiers a rewrite starts from (``rewritable_names``, ``class_spellings``), the
classes whose uses change (``rewritten_classes``), the cheap text test for the rewrites
not tied to a class name (``may_hold_shapes``), and where a runtime's helpers cannot be
imported at a file's top (``loaded_by_runtime``).

Kept apart from ``conversion`` and ``workers`` so that the processes that choose the
candidate files (``plan_rounds``) need neither LibCST's matchers nor the transforms.
"""

from __future__ import annotations

import re
from pathlib import Path

from codemod.analysis.import_graph import loaded_while_importing
from codemod.analysis.names import module_name_for
from codemod.analysis.type_comparisons import may_compare_types
from codemod.pipeline.indexing import hierarchy_names
from codemod.pipeline.results import RunResult
from codemod.planning.plan import Plan

#: ``t.__dict__ = ...``, ``t.__dict__.update(...)``, a ``setattr`` loop over ``.items()``: a
#: copy ``DictCopyTransformer`` follows with a rebinding; ``.get(``, ``[``, ``in``, ``==``:
#: a read it may make old-style (a cheap text test first; the transformer decides).
#: Each alternative starts with its literal and checks the word boundary after it
#: (``in(?<=(?<!\w)in)`` is ``\bin``): the regex engine then skips from one of four
#: first characters to the next instead of trying every alternative at every position.
DICT_COPY = re.compile(
    r"\.__dict__\s*(?:=|\|=|\.update\s*\(|\.get\s*\(|\[|\.items\s*\(|\.keys\s*\(|\.values\s*\(|!=)"
    r"|in(?<=(?<!\w)in)\s+[\w.]+\.__dict__|vars(?<=(?<!\w)vars)\s*\("
    r"|getattr(?<=(?<!\w)getattr)\s*\([^()]*[\"']__dict__[\"']"
)


def rewritable_names(plan: Plan) -> frozenset[str]:
    """Every identifier a use-site rewrite can start from: the converted classes, the
    names they are imported under anywhere in the tree, their backing fields."""
    return class_spellings(plan) | frozenset(plan.fields)


def class_spellings(plan: Plan) -> frozenset[str]:
    """Every identifier a use of a converted (or shadow) class can be spelled with."""
    return hierarchy_names(plan.index, plan.index.files.values(), rewritten_classes(plan))


def rewritten_classes(plan: Plan) -> list[str]:
    """Classes whose uses a rewrite changes: the converted ones and the kept shadows
    (``isinstance(p, Shadow)`` must also answer for converted parameters)."""
    return [q for q, p in plan.classes.items() if p.converted or p.shadow]


def param_classes_of(path: Path, plan: Plan) -> frozenset[str]:
    """Names of the plan's classes defined in the module of ``path`` (as
    ``DictCopyTransformer`` tells a Parameter class's methods from an ordinary one's)."""
    module = module_name_for(path)
    return frozenset(p.name for p in plan.classes.values() if p.facts.module == module)


def may_hold_shapes(text: str) -> bool:
    """Whether a rewrite not tied to a class name may act on ``text``: a cheap text test
    (an attribute-dict copy or read, ``DICT_COPY``, always names ``__dict__`` or
    ``vars``; a comparison of types, ``may_compare_types``)."""
    return (("__dict__" in text or "vars" in text) and DICT_COPY.search(text) is not None) \
        or may_compare_types(text)


def loaded_by_runtime(plan: Plan, result: RunResult) -> dict[str, frozenset[Path]]:
    """Per runtime module, the files importing it runs (``import_graph``): a rewrite
    must not import that runtime at the top of one of them. A runtime module this run
    writes imports nothing of the tree (only the standard library and torch): importing
    it runs its packages' ``__init__.py`` files and what they import (a file outside the
    package that one of them imports would, importing the runtime at its top, run that
    ``__init__.py`` while itself half done)."""
    texts = {path: source.text for path, source in result.sources.items()}
    loaded = {
        ff.module_name: loaded_while_importing(ff.path, ff.module_name, texts)
        for ff in plan.index.files.values() if ff.module_name in plan.runtime_modules
    }
    for module, runtime in plan.runtimes.items():
        if module not in loaded and runtime.path not in texts:
            loaded[module] = loaded_while_importing(runtime.path, module, {**texts, runtime.path: ""})
    # A file of the runtime's own package is safe: importing it runs the package's
    # ``__init__.py`` files first, so its import of the runtime finds the package begun.
    return {module: frozenset(path for path in files
                              if not _inside(module_name_for(path), module.rpartition(".")[0]))
            for module, files in loaded.items()}


def _inside(module: str, package: str) -> bool:
    return bool(package) and (module == package or module.startswith(package + "."))
