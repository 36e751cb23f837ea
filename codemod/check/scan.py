"""A cheap look with CPython's ``ast`` before parsing with LibCST: which files can hold a
class-style use (``codemod check``'s CM002-CM004)."""

from __future__ import annotations

import ast
from pathlib import Path

from codemod.fileio import SourceFile


class _Mentions(ast.NodeVisitor):
    """Whether a module names one of ``names`` (as ``Name`` or ``x.Name``) in a class
    statement's bases, an ``isinstance``/``issubclass`` call or a comparison: the only
    places a finding of CM002-CM004 can be."""

    def __init__(self, names: frozenset[str]) -> None:
        self.names = set(names)
        self.class_style = False

    def _named(self, expr: ast.AST) -> bool:
        return (isinstance(expr, ast.Name) and expr.id in self.names) or \
            (isinstance(expr, ast.Attribute) and expr.attr in self.names)

    def _mentions(self, node: ast.AST) -> bool:
        return any(self._named(sub) for sub in ast.walk(node))

    def visit_Import(self, node: ast.Import) -> None:
        return None

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        return None

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        if any(self._mentions(base) for base in node.bases):
            self.class_style = True
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        if self._mentions(node):
            self.class_style = True
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("isinstance", "issubclass") \
                and any(self._mentions(arg) for arg in node.args):
            self.class_style = True
        self.generic_visit(node)


class AstFiles:
    """CPython ``ast`` trees of the sources, parsed on first use (None: ast rejects it).

    ``ast.parse`` is about ten times cheaper than LibCST's parser, so files are looked at
    with it first and parsed with LibCST only when a finding or a refusal can be in them.
    """

    def __init__(self, sources: dict[Path, SourceFile]) -> None:
        self.sources = sources
        self._trees: dict[Path, ast.Module | None] = {}

    def tree(self, path: Path) -> ast.Module | None:
        if path not in self._trees:
            try:
                self._trees[path] = ast.parse(self.sources[path].text)
            except (SyntaxError, ValueError, RecursionError):
                self._trees[path] = None
        return self._trees[path]

    def class_style(self, path: Path, names: frozenset[str]) -> bool | None:
        """Whether ``path`` names one of ``names`` (or a local alias of one) where a
        finding of CM002-CM004 can be (None: ast rejects the file).

        ``from m import X as Y`` and ``import m.X as Y`` add ``Y`` to the names.
        """
        tree = self.tree(path)
        if tree is None:
            return None
        local = set(names)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    if alias.asname and alias.name.rpartition(".")[2] in names:
                        local.add(alias.asname)
        visitor = _Mentions(frozenset(local))
        visitor.visit(tree)
        return visitor.class_style
