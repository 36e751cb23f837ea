"""Bases that may be torch's ``Parameter`` (or a Parameter class) through a binding the
class index does not follow: a module-level assignment (``P = nn.Parameter``, then
``class Scale(P)``) or a star import (``from torch.nn import *``, then
``class Scale(Parameter)``).

Such a class may be a Parameter subclass. Skipping it would leave it a subclass with no
word (and ``check`` silent); converting it would rest on a guess. The index counts it as
a Parameter class and the planner refuses it with the reason given here, so ``apply``
names it and ``check`` reports it (CM001, not fixable).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Container

from codemod.analysis import python_trees
from codemod.analysis.classes import ClassFacts, FileFacts
from codemod.analysis.names import dotted, resolve_dotted

#: The last name of a base spelled as torch's Parameter classes are.
ROOT_NAMES = frozenset({"Parameter", "UninitializedParameter"})


def unsure_parameter_base(facts: ClassFacts, ff: FileFacts | None,
                          is_parameter: Callable[[str | None], bool],
                          is_class: Container[str]) -> str | None:
    """Why a base of ``facts`` (a class of ``ff``) may be a Parameter class that the index
    cannot prove; None when every base is resolved or is plainly something else.

    ``is_parameter`` says whether a qualified name (re-exports followed) is torch's
    ``Parameter`` or a Parameter class of the index; ``is_class`` holds the qualified
    names of the classes the index knows (a base naming one is no assignment).
    """
    if ff is None or not ff.text:
        return None
    for expr, qualname in zip(facts.base_exprs, facts.base_qualnames):
        spelled = dotted(expr)
        if spelled is None:
            continue
        head = spelled.partition(".")[0]
        if qualname is None:
            if spelled.rpartition(".")[2] in ROOT_NAMES and _star_imports(ff.text):
                return (f"its base `{spelled}` may be torch's Parameter through `import *`, "
                        "which the tool does not follow; import it by name")
            continue
        if head in ff.bindings or head not in ff.globals or qualname in is_class:
            continue
        for value in _assigned_names(ff.text, head):
            if is_parameter(resolve_dotted(value, ff.bindings, ff.module_name, ff.globals)):
                return (f"its base `{spelled}` is `{value}` bound by an assignment, which "
                        "the tool does not follow; name the base directly")
    return None


def _star_imports(text: str) -> bool:
    return "import" in text and "*" in text and any(
        isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names)
        for node in ast.walk(_tree(text)))


@functools.lru_cache(maxsize=256)
def _assigned_names(text: str, name: str) -> list[str]:
    """The dotted names a module-level assignment binds ``name`` to (``name = a.b``)."""
    values = []
    for stmt in _tree(text).body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                value = python_trees.dotted_expr(stmt.value)
                if value is not None:
                    values.append(value)
    return values


def _tree(text: str) -> ast.Module:
    try:
        return python_trees.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ast.Module(body=[], type_ignores=[])
