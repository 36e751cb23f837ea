"""The Parameter classes of a run defined below a module's top level (``apply`` keeps
them as classes: ``analysis.nested_classes``), found in the files the class index
parsed: every file whose class statements may name torch's ``Parameter`` or a Parameter
class in their bases is among them (``indexing.analyse``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from codemod.analysis import python_trees
from codemod.analysis.classes import FileFacts
from codemod.analysis.index import ClassIndex
from codemod.analysis.names import resolve_dotted
from codemod.analysis.nested_classes import NestedClass, nested_parameter_classes
from codemod.pipeline.results import RunResult
from codemod.types import PARAMETER_QUALNAMES, UNINITIALIZED_QUALNAMES

#: A class statement that is indented: the only kind below a module's top level.
_INDENTED_CLASS = re.compile(r"^[ \t]+class\s", re.MULTILINE)


def nested_parameter_classes_of(result: RunResult, index: ClassIndex,
                                ) -> list[tuple[Path, NestedClass]]:
    """(path, class) for every Parameter class below a module's top level, in path order."""
    found: list[tuple[Path, NestedClass]] = []

    def is_parameter_class(qualname: str) -> bool:
        return (qualname in PARAMETER_QUALNAMES or qualname in UNINITIALIZED_QUALNAMES
                or qualname in index.param_classes)

    for path, ff in sorted(result.facts.items()):
        text = result.sources[path].text if path in result.sources else ff.text
        if "class" not in text or not _INDENTED_CLASS.search(text):
            continue
        try:
            tree = python_trees.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue  # LibCST read it; CPython's compile check reports the file
        found += [(path, nested) for nested in nested_parameter_classes(
            tree, _resolver(ff, index), is_parameter_class, ff.module_name,
            path.name == "__init__.py")]
    return found


def _resolver(ff: FileFacts, index: ClassIndex) -> Callable[[str], list[str]]:
    """What a dotted name of ``ff`` stands for: through its imports and module-level
    names, then re-exports (as the index resolves a top-level class's bases)."""
    def resolve(spelled: str) -> list[str]:
        qualname = resolve_dotted(spelled, ff.bindings, ff.module_name, ff.globals)
        return [] if qualname is None else [index.canonical(qualname) or qualname]
    return resolve


def kept_message(nested: NestedClass) -> str:
    """Why ``apply`` leaves ``nested`` a class, as warnings and findings say it."""
    return (f"`{nested.node.name}` derives from torch.nn.Parameter but is defined in "
            f"{nested.where}; `codemod apply` converts only classes defined at a module's "
            "top level, so it stays a class")
