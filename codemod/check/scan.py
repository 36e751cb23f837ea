"""A cheap look with CPython's ``ast`` before parsing with LibCST: which files can hold a
class-style use (``codemod check``'s CM002-CM004)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from codemod.analysis import python_trees
from codemod.analysis.text_search import alternation, lines_matching, misses_lines
from codemod.fileio import SourceFile


def _class_style(tree: ast.Module, names: frozenset[str], lines: list[int]) -> bool:
    """Whether ``tree`` names one of ``names`` (as ``Name`` or ``x.Name``) in a class
    statement's bases, an ``isinstance``/``issubclass`` call's positional arguments or a
    comparison: the only places a finding of CM002-CM004 can be.

    One walk, carrying whether the node lies in such a place (imports are skipped: they
    hold no expressions). ``lines`` (sorted) are the lines whose text names one of
    ``names``: a node none of whose lines is among them holds no such name, and is not
    entered. Inside an f-string every node is entered (before Python 3.12 the nodes in
    an f-string may carry other lines than their own).
    """
    stack: list[tuple[ast.AST, bool, bool]] = [(tree, False, True)]
    while stack:
        node, inside, prune = stack.pop()
        if prune and misses_lines(node, lines):
            continue
        if isinstance(node, ast.JoinedStr):
            prune = False
        if inside and ((isinstance(node, ast.Name) and node.id in names)
                       or (isinstance(node, ast.Attribute) and node.attr in names)):
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Compare):
            stack.extend((child, True, prune) for child in ast.iter_child_nodes(node))
        elif isinstance(node, ast.ClassDef):
            stack.extend((base, True, prune) for base in node.bases)
            stack.extend((child, inside, prune) for field, value in ast.iter_fields(node)
                         if field != "bases" for child in _nodes(value))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("isinstance", "issubclass"):
            stack.extend((arg, True, prune) for arg in node.args)
            stack.append((node.func, inside, prune))
            stack.extend((keyword, inside, prune) for keyword in node.keywords)
        else:
            stack.extend((child, inside, prune) for child in ast.iter_child_nodes(node))
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
        for node in _imports(tree):
            for alias in node.names:
                if alias.asname and alias.name.rpartition(".")[2] in names:
                    local.add(alias.asname)
        words = frozenset(local)
        return _class_style(tree, words, _lines_naming(self.sources[path].text, words))


def _imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement of ``tree``, at any depth (imports are statements: only
    statement lists are walked)."""
    out: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append(node)
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(node, field, None)
            if isinstance(children, list):
                stack.extend(child for child in children if isinstance(child, ast.AST))
    return out


def _lines_naming(text: str, names: frozenset[str]) -> list[int]:
    """The (1-based, sorted) lines on which one of ``names`` occurs as a whole word."""
    if not names:
        return []
    return lines_matching(text, re.compile(rf"(?<!\w)(?:{alternation(names)})(?!\w)"))
