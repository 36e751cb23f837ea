"""Line and column of the nodes ``codemod check`` findings point at, from CPython's
``ast`` where it agrees with LibCST's walk, else from LibCST's positions."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import libcst as cst

from codemod.analysis.classes import FileFacts
from codemod.analysis.source_lines import char_column
from codemod.check.scan import AstFiles

#: Line breaks as the tokenizer sees them (``str.splitlines`` also splits at form feeds).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def source_lines(text: str) -> list[str]:
    return _LINE_BREAK.split(text)


class Locator:
    """Line and column of the nodes that findings point at.

    LibCST's PositionProvider walks the whole file again (about the cost of a parse, for
    every file with a finding). CPython's ``ast`` parses ten times faster and carries
    positions, so the nodes are matched by kind and order instead: the n-th class
    statement, ``isinstance``/``issubclass`` call or comparison that the LibCST visitor
    met is the n-th one in ``ast``'s source order. Where the counts differ, or ``ast``
    cannot parse the file, the file falls back to the PositionProvider.
    """

    def __init__(self, asts: AstFiles | None = None) -> None:
        self._asts = asts
        self._files: dict[Path, tuple[list[str], dict[str, list[tuple[int, int]]]] | None] = {}

    def _index(self, ff: FileFacts, text: str) -> tuple[list[str], dict[str, list[tuple[int, int]]]] | None:
        if ff.path not in self._files:
            tree: ast.Module | None = None
            if self._asts is not None and ff.path in self._asts.sources \
                    and self._asts.sources[ff.path].text == text:
                tree = self._asts.tree(ff.path)
            else:
                try:
                    tree = ast.parse(text)
                except (SyntaxError, ValueError, RecursionError):
                    pass
            if tree is None:
                self._files[ff.path] = None
                return None
            found: dict[str, list[tuple[int, int]]] = {"class": [], "call": [], "cmp": []}
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    found["class"].append((node.lineno, node.col_offset))
                elif isinstance(node, ast.Compare):
                    found["cmp"].append((node.lineno, node.col_offset))
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                        and node.func.id in ("isinstance", "issubclass"):
                    found["call"].append((node.lineno, node.col_offset))
            for places in found.values():
                places.sort()
            found["top-class"] = sorted((n.lineno, n.col_offset) for n in tree.body
                                        if isinstance(n, ast.ClassDef))
            self._files[ff.path] = (source_lines(text), found)
        return self._files[ff.path]

    def place(self, ff: FileFacts, text: str, node: cst.CSTNode, ordinal: tuple[str, int] | None,
              counts: dict[str, int]) -> tuple[int, int]:
        """(line, column), both 1-based, of ``node``, the ``ordinal``-th of its kind."""
        index = self._index(ff, text) if ordinal is not None else None
        if index is not None and ordinal is not None:
            lines, found = index
            kind, n = ordinal
            places = found[kind]
            if len(places) == counts.get(kind, -1) and n < len(places):
                line, offset = places[n]
                # ast columns count UTF-8 bytes; findings count characters, as LibCST does.
                return line, char_column(lines[line - 1], offset)
        return ff.line_of(node), ff.col_of(node)

    def place_class(self, ff: FileFacts, text: str, node: cst.ClassDef) -> tuple[int, int]:
        """(line, column) of a top-level class statement."""
        top = [stmt for stmt in ff.module.body if isinstance(stmt, cst.ClassDef)]
        ordinal = next((("top-class", i) for i, stmt in enumerate(top) if stmt is node), None)
        return self.place(ff, text, node, ordinal, {"top-class": len(top)})
