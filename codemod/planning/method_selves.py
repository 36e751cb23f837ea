"""Which name is ``self`` where: the context the tree-wide screens share.

What it does
    ``MethodSelves`` is an ``ast.NodeVisitor`` that knows, at every node, the enclosing
    class names and the ``self`` name of the innermost method around it (the first
    parameter of a function written directly in a class body). Functions nested in a
    method keep the method's ``self``; a ``@staticmethod`` has none.
Why
    The screens for backing-field targets and for members read through ``type(x)``
    leave ``self`` of a method alone (its class's own rules handle it); they must agree
    on what ``self`` is, so it is decided here once. Given the lines where their text
    search found something, it enters only the statements that span one of them.
Fix safety
    A static method's first parameter is an ordinary argument: treating it as ``self``
    would skip reads the screens must refuse, so it is never taken for ``self``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from codemod.analysis import python_trees
from codemod.analysis.text_search import misses_lines


class MethodSelves(ast.NodeVisitor):
    """Tracks the enclosing classes and the innermost method's ``self`` name."""

    def __init__(self, lines: list[int] | None = None) -> None:
        #: Sorted line numbers where a hit may be (None: anywhere): a statement spanning
        #: none of them is not entered.
        self._lines = lines
        #: Names of the enclosing classes (innermost last).
        self._classes: list[str] = []
        #: The ``self`` names of the methods around the node (innermost last).
        self._selves: list[str] = []
        self._direct_in_class = False

    def visit(self, node: ast.AST) -> None:
        if self._lines is not None and isinstance(node, ast.stmt) and misses_lines(node, self._lines):
            return
        super().visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._classes.append(node.name)
        outer, self._direct_in_class = self._direct_in_class, True
        self.generic_visit(node)
        self._direct_in_class = outer
        self._classes.pop()

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        params = [*node.args.posonlyargs, *node.args.args]
        is_static = any(isinstance(d, ast.Name) and d.id == "staticmethod"
                        for d in node.decorator_list)
        own = params[0].arg if self._direct_in_class and params and not is_static else None
        if own is not None:
            self._selves.append(own)
        outer, self._direct_in_class = self._direct_in_class, False
        self.generic_visit(node)
        self._direct_in_class = outer
        if own is not None:
            self._selves.pop()

    visit_FunctionDef = _visit_function
    visit_AsyncFunctionDef = _visit_function

    def is_self(self, expr: ast.expr) -> bool:
        """Whether ``expr`` is the ``self`` name of the innermost method around it."""
        return bool(self._selves) and isinstance(expr, ast.Name) and expr.id == self._selves[-1]


Walker = TypeVar("Walker", bound=MethodSelves)


def walked_files(sources: dict[Path, str], hit_lines: Callable[[str], list[int]],
                 walker: Callable[[Path, list[int]], Walker]) -> Iterator[tuple[Path, str, Walker]]:
    """Each file of ``sources`` (in path order) whose text search finds lines
    (``hit_lines``), parsed and walked by ``walker(path, lines)`` over the statements
    spanning those lines; a file CPython cannot parse is left to the stages that read it."""
    for path, text in sorted(sources.items()):
        lines = hit_lines(text)
        if not lines:
            continue
        try:
            tree = python_trees.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        visitor = walker(path, lines)
        visitor.visit(tree)
        yield path, text, visitor
