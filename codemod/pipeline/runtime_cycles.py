"""Where a rewrite would make a circular import: a file that importing a class's runtime
module runs, and that imports nothing of the runtime's package while it is imported.

What it does
    ``cyclic_runtime_uses`` names, for each converted class used in such a file, the
    first line naming it; the planning rounds refuse those classes.
Why
    ``pkg/layers/__init__.py`` imports ``pkg/models/util.py``, which imports ``Row``
    inside a function to break that cycle. A rewrite of ``isinstance(p, Row)`` imports
    its helpers at util's top, from ``pkg.layers.params_features``: importing util then
    runs ``pkg/layers/__init__.py``, which imports util while it is half done
    (``ImportError``).
Fix safety
    Only files that name a converted class are looked at (a rewrite not tied to a class
    name imports its helper inside the function where the runtime loads the file), and
    only when the runtime's import really runs them (``rewrite_reach.loaded_by_runtime``). A
    file that already imports from the runtime's package at import time gains no new
    cycle.
"""

from __future__ import annotations

import re
from pathlib import Path

from codemod.analysis import python_trees
from codemod.analysis.import_graph import import_time_imports
from codemod.analysis.names import module_name_for
from codemod.analysis.source_lines import line_text
from codemod.analysis.text_search import unjoined
from codemod.pipeline.results import RunResult
from codemod.pipeline.rewrite_reach import loaded_by_runtime
from codemod.planning.model import Plan
from codemod.types import BlockingUse, UseForm


def cyclic_runtime_uses(plan: Plan, result: RunResult, candidates: list[Path],
                         loaded_by: dict[str, frozenset[Path]] | None = None) -> dict[str, BlockingUse]:
    """The classes a candidate file uses where a rewrite would make a circular import:
    importing the class's runtime module runs the file (a package ``__init__.py`` on the
    way imports it), and the file imports nothing of the runtime's package when it is
    imported (it imports the class inside a function, or after the names the package
    needs). The helpers a rewrite calls are imported at the file's top, which would then
    import the runtime's package while that package is importing this file.
    ``loaded_by``: what importing each runtime runs, when the round has it already."""
    defining = {p.facts.path for p in plan.classes.values()}
    converted = {q: p for q, p in plan.classes.items() if p.converted or p.shadow}
    words = {q: re.compile(rf"{re.escape(p.facts.name)}(?!\w)") for q, p in converted.items()}

    def names(word: re.Pattern[str], text: str) -> bool:
        return next(unjoined(text, word), None) is not None

    # Files chosen for a rewrite not tied to a class name import their helpers inside the
    # function where the runtime loads them (``conversion._runtime_for``).
    using = [path for path in candidates if path not in defining
             and any(names(word, result.sources[path].text) for word in words.values())]
    if not using or not plan.runtime_modules:
        return {}
    if loaded_by is None:
        loaded_by = loaded_by_runtime(plan, result)
    suspects: list[tuple[Path, str]] = []
    for path in using:
        runtimes = [r for r in sorted(plan.runtime_modules) if path in loaded_by.get(r, frozenset())]
        if not runtimes:
            continue
        try:
            tree = python_trees.parse(result.sources[path].text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        at_import = import_time_imports(tree, module_name_for(path), path.name == "__init__.py")
        for runtime in runtimes:
            package = runtime.rpartition(".")[0]
            if not any(m == package or m.startswith(package + ".") for m in at_import):
                suspects.append((path, runtime))
    found: dict[str, BlockingUse] = {}
    for path, runtime in suspects:
        text = result.sources[path].text
        for qual, class_plan in sorted(converted.items()):
            word = words[qual]
            if class_plan.runtime_module != runtime or not names(word, text):
                continue
            line = next((n for n, code in enumerate(text.splitlines(), 1) if names(word, code)), 1)
            found.setdefault(qual, BlockingUse(
                path, line, line_text(text, line), UseForm.ESCAPE,
                escape=f"in a file that importing {runtime} runs and that imports nothing of its "
                       "package at its top; the rewritten uses would import the runtime there, "
                       "a circular import"))
    return found
