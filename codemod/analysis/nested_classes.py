"""Parameter classes defined below a module's top level: in a function, in a class body,
or in a module-level ``if``/``try``/``with``/loop/``match`` block.

``apply`` converts only the classes of a module's body (``classes.analyse_file``): one
defined elsewhere exists only once its enclosing code runs, and a factory cannot take
its place. Such a class stays a class, and ``codemod check`` must still see it (the CI
guard's job: a subclass written inside a function is the subclass style all the same).
``nested_parameter_classes`` finds them on CPython's tree; a class counts when one of
its bases names, through the file's imports and module-level names, torch's
``Parameter`` or a Parameter class of the index, or is another such class the file
defines below its top level (by its name).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from codemod.analysis.python_trees import dotted_expr

#: What a compound statement at a module's top level is called in a message.
_BLOCKS: dict[type, str] = {
    ast.If: "an `if` block", ast.Try: "a `try` block", ast.With: "a `with` block",
    ast.AsyncWith: "a `with` block", ast.For: "a `for` loop", ast.AsyncFor: "a `for` loop",
    ast.While: "a `while` loop", ast.Match: "a `match` block",
}
if hasattr(ast, "TryStar"):
    _BLOCKS[ast.TryStar] = "a `try` block"

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class NestedClass:
    """A class statement below a module's top level that derives from torch's Parameter."""

    node: ast.ClassDef
    #: ``make.<locals>.Local``, ``Holder.Inner``, ``Cond``: the class's ``__qualname__``.
    qualname: str
    #: Where it is defined, for a message: "function `make`", "class `Holder`", "an `if` block".
    where: str


def nested_parameter_classes(
    tree: ast.Module, resolve: Callable[[str], list[str]],
    is_parameter_class: Callable[[str], bool],
) -> list[NestedClass]:
    """The classes below ``tree``'s top level deriving from torch's Parameter, in the
    order they appear.

    ``resolve`` gives the qualified names a dotted name (``nn.Parameter``) may stand for
    in this module (none: not known); ``is_parameter_class`` says whether a qualified
    name is torch's ``Parameter`` or a Parameter class of the index.
    """
    statements = list(_nested_class_statements(tree))
    found: dict[int, NestedClass] = {}
    local_names: set[str] = set()
    changed = True
    while changed:  # a nested class may derive from one defined after it in the file
        changed = False
        for node, qualname, where in statements:
            if id(node) in found or not _derives(node, resolve, is_parameter_class, local_names):
                continue
            found[id(node)] = NestedClass(node, qualname, where)
            local_names.add(node.name)
            changed = True
    return [found[id(node)] for node, _, _ in statements if id(node) in found]


def _derives(node: ast.ClassDef, resolve: Callable[[str], list[str]],
             is_parameter_class: Callable[[str], bool], local_names: set[str]) -> bool:
    for base in node.bases:
        spelled = dotted_expr(base)
        if spelled is None:
            continue
        if spelled in local_names or any(is_parameter_class(q) for q in resolve(spelled)):
            return True
    return False


def _nested_class_statements(tree: ast.Module) -> Iterator[tuple[ast.ClassDef, str, str]]:
    """Every class statement below the module's top level: (node, ``__qualname__``, where)."""
    # (statement, qualname prefix, where; None for the module's own body)
    stack: list[tuple[ast.stmt, str, str | None]] = [
        (stmt, "", None) for stmt in reversed(tree.body)]
    while stack:
        stmt, prefix, where = stack.pop()
        inner_prefix, inner_where = prefix, where
        if isinstance(stmt, ast.ClassDef):
            if where is not None:
                yield stmt, f"{prefix}{stmt.name}", where
            inner_prefix, inner_where = f"{prefix}{stmt.name}.", f"class `{stmt.name}`"
        elif isinstance(stmt, _FUNCTIONS):
            inner_prefix = f"{prefix}{stmt.name}.<locals>."
            inner_where = f"function `{stmt.name}`"
        elif where is None:
            inner_where = _BLOCKS.get(type(stmt))
            if inner_where is None:
                continue  # a simple statement: holds no class statement
        children = [child for block in _blocks(stmt) for child in block]
        stack.extend((child, inner_prefix, inner_where) for child in reversed(children))


def _blocks(stmt: ast.stmt) -> Iterator[list[ast.stmt]]:
    """The statement lists directly inside ``stmt``, in source order."""
    for field in ("body", "handlers", "orelse", "finalbody"):
        block = getattr(stmt, field, None)
        if not isinstance(block, list):
            continue
        if field == "handlers":
            for handler in block:
                yield handler.body
        else:
            yield block
    for case in getattr(stmt, "cases", None) or ():
        yield case.body
