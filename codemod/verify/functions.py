"""Module-level functions of the family modules that take a parameter.

A family module may define functions that act on a parameter rather than methods of it
(``permute_param_layout_(param: BaseParameter, input_dim, output_dim, **kwargs)``). A
function counts when its first parameter is annotated with a family class (or with
``Parameter``), by name, as a string or inside a union. ``cases`` calls it on every built
parameter of the classes the annotation admits, in each tree's own module, and compares as
for methods: return value, exception, data and public attributes afterwards.

Its arguments come from the tree's own calls of it where their other arguments are
literals (``permute_param_layout_(x, input_dim=0, output_dim=1, packed_dim=0)``), and
otherwise from the arguments methods get (``call_args``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codemod.verify.families import Families, module_path
from codemod.verify.parsed import parse_file

#: Most distinct literal argument sets kept per function.
MAX_FORMS = 6


@dataclass
class ParamFunction:
    """One function of a family module whose first parameter takes a parameter."""

    module: str
    name: str
    #: The class name the first parameter is annotated with (``Parameter`` for any).
    admits: str
    #: Literal (args after the parameter, kwargs) from the tree's own calls.
    forms: list[tuple[tuple[Any, ...], dict[str, Any]]] = field(default_factory=list)


def _annotation_names(annotation: ast.expr | None) -> list[str]:
    """Class names an annotation names (``X``, ``mod.X``, ``"X"``, ``X | None``...)."""
    if annotation is None:
        return []
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return []
    return [n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(annotation)
            if isinstance(n, (ast.Name, ast.Attribute))]


def _functions_of(path: Path, module: str, classes: set[str]) -> list[ParamFunction]:
    tree = parse_file(path)
    if tree is None:
        return []
    found = []
    for stmt in tree.body:
        if not isinstance(stmt, ast.FunctionDef) or stmt.name.startswith("__"):
            continue
        arguments = [*stmt.args.posonlyargs, *stmt.args.args]
        if not arguments:
            continue
        names = _annotation_names(arguments[0].annotation)
        admitted = [name for name in names if name in classes] or \
            (["Parameter"] if "Parameter" in names else [])
        if admitted:
            found.append(ParamFunction(module, stmt.name, admitted[0]))
    return found


def _literal(node: ast.expr) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _harvest_forms(package_dir: Path, functions: list[ParamFunction]) -> None:
    """Fill each function's ``forms`` from calls ``name(x, <literals>)`` in the tree."""
    by_name = {function.name: function for function in functions}
    for path in sorted(package_dir.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        try:
            text = path.read_text("utf-8")
            if not any(name in text for name in by_name):
                continue
            tree = ast.parse(text)
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            callee = node.func.id if isinstance(node.func, ast.Name) else \
                node.func.attr if isinstance(node.func, ast.Attribute) else None
            function = by_name.get(callee or "")
            if function is None or len(function.forms) >= MAX_FORMS:
                continue
            values = [_literal(arg) for arg in node.args[1:]]
            keywords = {kw.arg: _literal(kw.value) for kw in node.keywords}
            if None in keywords or not all(ok for ok, _ in [*values, *keywords.values()]):
                continue
            form = (tuple(value for _, value in values),
                    {name: value for name, (_, value) in keywords.items() if name})
            if form not in function.forms:
                function.forms.append(form)


def find_param_functions(families: Families) -> list[ParamFunction]:
    """The family modules' functions taking a parameter, with the tree's literal calls."""
    classes = {member.name for member in families.classes}
    functions: list[ParamFunction] = []
    for module in families.modules:
        path = module_path(families.original_package_dir, module)
        if path is not None:
            functions += _functions_of(path, module, classes)
    if functions:
        _harvest_forms(families.original_package_dir, functions)
    return functions
