"""The Parameter classes of a run defined below a module's top level (``apply`` keeps
them as classes: ``analysis.nested_classes``), found in the files the class index
parsed: every file whose class statements may name torch's ``Parameter`` or a Parameter
class in their bases is among them (``indexing.analyse``)."""

from __future__ import annotations

import re
from pathlib import Path

from codemod.analysis import python_trees
from codemod.analysis.index import ClassIndex
from codemod.analysis.nested_classes import NestedClass, nested_parameter_classes_of_file
from codemod.pipeline.results import RunResult

#: A class statement that is indented: the only kind below a module's top level.
_INDENTED_CLASS = re.compile(r"^[ \t]+class\s", re.MULTILINE)


def nested_parameter_classes_of(result: RunResult, index: ClassIndex,
                                ) -> list[tuple[Path, NestedClass]]:
    """(path, class) for every Parameter class below a module's top level, in path order."""
    found: list[tuple[Path, NestedClass]] = []
    for path, ff in sorted(result.facts.items()):
        text = result.sources[path].text if path in result.sources else ff.text
        if "class" not in text or not _INDENTED_CLASS.search(text):
            continue
        try:
            tree = python_trees.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue  # LibCST read it; CPython's compile check reports the file
        found += [(path, nested) for nested in nested_parameter_classes_of_file(
            tree, ff, index.canonical, index.is_parameter)]
    return found


def kept_message(nested: NestedClass) -> str:
    """Why ``apply`` leaves ``nested`` a class, as warnings and findings say it."""
    return (f"`{nested.node.name}` derives from torch.nn.Parameter but is defined in "
            f"{nested.where}; `codemod apply` converts only classes defined at a module's "
            "top level, so it stays a class")
