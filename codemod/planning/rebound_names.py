"""A converted class's name bound to something else in the same file refuses the class.

What it finds
    The rewrites resolve a name once per file, from its import statements and module-level
    definitions: every ``isinstance(x, X)`` in the file is taken for the class ``X`` the
    file imports. Python resolves per scope. So when the file also binds ``X`` to
    something else, as a function or ``lambda`` parameter (``def f(X, x)``), a nested
    ``def``/``class X``, or an import of another ``X`` (``from other import X``, in a
    function or at module level), the rewrites would take that other object for the
    class: ``isinstance(x, X)`` inside ``f`` would become a feature check and answer
    differently. Each such binding is reported as an escaped use of the class, which the
    planner refuses, naming the line.
Not reported
    Imports of the same class (a function-local ``from .parameter import X`` repeating the
    module's own import; re-exports are followed); assignments, ``for``/``with`` targets,
    ``except ... as X`` and ``case`` captures, which the leftover search already reports.
    A method named like the class is reported, although the methods of its class do not
    see it: the class body after it does.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from codemod.analysis.names import import_aliases, module_name_for, statements_in_scope
from codemod.analysis.source_lines import physical_lines
from codemod.analysis.text_search import lines_matching, nfkc_text, nodes_on_lines
from codemod.planning.safety_net import Escape

#: (node, bound name, what binds it in words, the import's qualified name or None).
_Binding = tuple[ast.AST, str, str, "str | None"]


def rebound_class_names(tree: ast.Module, path: Path, text: str, names: frozenset[str],
                        converted: Callable[[str], str | None]) -> list[Escape]:
    """Every binding in ``tree`` of a name that the file also binds to a converted class
    (one of ``names``, under its own name or an alias).

    ``converted`` maps a qualified name (an import's target or ``module.X`` for a
    module-level definition) to the converted class it stands for, or None.
    """
    module = module_name_for(path)
    is_package = path.name == "__init__.py"
    imports = list(_imports(tree, module, is_package, names))
    classes: dict[str, str] = {}
    for _node, local, _what, target in imports:
        found = converted(target) if target is not None else None
        if found is not None:
            classes.setdefault(local, found)
    if not classes:
        return []
    escapes: list[Escape] = []
    watched = frozenset(classes)
    for node, local, what, target in [*imports, *_definitions(tree, watched, text)]:
        qualname = classes.get(local)
        if qualname is None or (target is not None and converted(target) == qualname):
            continue
        escapes.append((node.lineno, node.col_offset + 1, qualname,  # type: ignore[attr-defined]
                        _line(text, node.lineno), (  # type: ignore[attr-defined]
                            f"{what} also named `{local}`: the rewrites resolve a name once "
                            "per file and would take it for the class")))
    return sorted(escapes)


def _imports(tree: ast.Module, module: str, is_package: bool, names: frozenset[str],
             ) -> Iterator[_Binding]:
    """Imports of one of ``names`` (under any local name) or binding one of them, and
    module-level definitions of one of them."""
    for node, top in statements_in_scope(tree):
        for local, imported, target in import_aliases(node, module, is_package):
            if local in names or imported.rpartition(".")[2] in names:
                yield node, local, f"an import of `{target}`", target
        if top and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and node.name in names:
            yield node, node.name, f"a {_definition_kind(node)}", f"{module}.{node.name}"


def _definitions(tree: ast.Module, watched: frozenset[str], text: str) -> Iterator[_Binding]:
    """Nested ``def``/``class`` statements and parameters that bind one of ``watched``."""
    for node, top in statements_in_scope(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if not top and node.name in watched:
                yield node, node.name, f"a nested {_definition_kind(node)}", None
            if not isinstance(node, ast.ClassDef):
                yield from _parameters(node, watched)
    if "lambda" in text:
        yield from _lambda_parameters(tree, text, watched)


def _lambda_parameters(tree: ast.Module, text: str, watched: frozenset[str]) -> Iterator[_Binding]:
    """The parameters of the ``lambda`` expressions in ``tree`` that bind one of
    ``watched``; only the nodes spanning a line that spells ``lambda`` are entered."""
    for node in nodes_on_lines(tree, lines_matching(nfkc_text(text), _LAMBDA)):
        if isinstance(node, ast.Lambda):
            yield from _parameters(node, watched)


_LAMBDA = re.compile("lambda")


def _definition_kind(node: ast.AST) -> str:
    return "class" if isinstance(node, ast.ClassDef) else "function"


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
                names: frozenset[str]) -> Iterator[_Binding]:
    args = node.args
    owner = f"`{node.name}`" if not isinstance(node, ast.Lambda) else "a `lambda`"
    for arg in (*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg):
        if arg is not None and arg.arg in names:
            yield arg, arg.arg, f"a parameter of {owner}", None


def _line(text: str, lineno: int) -> str:
    """Line ``lineno`` as CPython numbers it, stripped."""
    lines = physical_lines(text)
    return lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""
