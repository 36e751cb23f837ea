"""A cheap look with CPython's ``ast`` before parsing with LibCST: which files can hold a
class-style use (``codemod check``'s CM002-CM004)."""

from __future__ import annotations

import ast
from pathlib import Path

from codemod.analysis import python_trees
from codemod.fileio import SourceFile


def _class_style(tree: ast.Module, names: frozenset[str]) -> bool:
    """Whether ``tree`` names one of ``names`` (as ``Name`` or ``x.Name``) in a class
    statement's bases, an ``isinstance``/``issubclass`` call's positional arguments or a
    comparison: the only places a finding of CM002-CM004 can be.

    One walk, carrying whether the node lies in such a place (imports are skipped: they
    hold no expressions).
    """
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, inside = stack.pop()
        if inside and ((isinstance(node, ast.Name) and node.id in names)
                       or (isinstance(node, ast.Attribute) and node.attr in names)):
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Compare):
            stack.extend((child, True) for child in ast.iter_child_nodes(node))
        elif isinstance(node, ast.ClassDef):
            stack.extend((base, True) for base in node.bases)
            stack.extend((child, inside) for field, value in ast.iter_fields(node)
                         if field != "bases" for child in _nodes(value))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("isinstance", "issubclass"):
            stack.extend((arg, True) for arg in node.args)
            stack.append((node.func, inside))
            stack.extend((keyword, inside) for keyword in node.keywords)
        else:
            stack.extend((child, inside) for child in ast.iter_child_nodes(node))
    return False


def _nodes(value: object) -> list[ast.AST]:
    """The nodes of one field of a node (``ast.iter_child_nodes`` for one field)."""
    if isinstance(value, ast.AST):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, ast.AST)]
    return []


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
                self._trees[path] = python_trees.parse(self.sources[path].text)
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
        return _class_style(tree, frozenset(local))
