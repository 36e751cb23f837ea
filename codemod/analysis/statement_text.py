"""Each top-level statement's code cut from a file's own text, and a changed module's code
spliced from those pieces.

LibCST writes a parsed module back exactly as it was, so the code of a statement that a
conversion keeps is the text it was parsed from: ``statement_spans`` finds where each
statement's code lies in the text, and ``splice_code`` assembles a changed module from the
kept statements' text and the code of the new ones, generating only what is new. The
result is the same text ``module.code`` would give.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from typing import Protocol

import libcst as cst

from codemod.analysis import python_trees


class CodesMade(Protocol):
    """Codes of statements made by splicing new code into a statement's old text
    (``transforms.statement_visits.Made``)."""

    def get(self, stmt: cst.CSTNode) -> tuple[str, list[str]] | None:
        """(code, generated parts) of ``stmt`` if known, else None."""


_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


def statement_spans(text: str, module: cst.Module) -> list[tuple[int, int]] | None:
    """(start, end) offsets in ``text`` of each top-level statement's code as
    ``module.code_for_node`` writes it (``module`` parsed from ``text``), or None
    where they cannot be placed for certain.

    LibCST writes a parsed module back as it was: its header lines, each statement
    (leading blank and comment lines, then its own lines, and for a compound statement
    the comment lines that close its block) and its footer lines, all whole lines. So
    each statement's code ends where the next one's begins: ``len(leading_lines)``
    lines above the line CPython numbers as its first (its first decorator's). Placed
    only when every line between the statements is blank or a comment, each statement
    starts at the left margin (an ``@`` when decorated), the header and footer have
    the lengths LibCST gives them, and the text has ``\n`` line ends (``\r\n``
    included) with a final one; else None (the caller generates the code).
    """
    if not text.endswith("\n") or text.count("\r") != text.count("\r\n"):
        return None
    try:
        tree = python_trees.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    firsts: list[int] = []  # first line of each LibCST statement (1-based)
    lasts: list[int] = []  # its last line, as CPython ends it
    for node in tree.body:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        end = node.end_lineno or node.lineno
        if lasts and first <= lasts[-1]:  # ``a; b``: one LibCST line
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                return None
            lasts[-1] = max(lasts[-1], end)
        else:
            firsts.append(first)
            lasts.append(end)
    body = module.body
    if len(firsts) != len(body):
        return None
    lines = _LINE.findall(text)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def comment_or_blank(number: int) -> bool:
        stripped = lines[number - 1].strip()
        return not stripped or stripped.startswith("#")

    starts = []
    for first, stmt in zip(firsts, body):
        begin = first - len(stmt.leading_lines)
        own = lines[first - 1]
        if own[:1].isspace() or (getattr(stmt, "decorators", None) and not own.startswith("@")):
            return None
        if not all(comment_or_blank(n) for n in range(begin, first)):
            return None
        starts.append(begin)
    if not body:
        return []
    if starts[0] != len(module.header) + 1:
        return None
    ends = starts[1:] + [len(lines) + 1 - len(module.footer)]
    # Between a statement's last line (CPython's) and the next code: comments only.
    for own_end, end in zip(lasts, ends):
        if own_end >= end or not all(comment_or_blank(n) for n in range(own_end + 1, end)):
            return None
    return [(offsets[start - 1], offsets[end - 1]) for start, end in zip(starts, ends)]



def same_lines(a: Sequence[cst.EmptyLine], b: Sequence[cst.EmptyLine]) -> bool:
    """The same nodes, or copies equal node by node (the same code)."""
    return a is b or (len(a) == len(b) and all(x is y or x.deep_equals(y) for x, y in zip(a, b)))


def splice_code(original: cst.Module, text: str, spans: list[tuple[int, int]] | None,
                codes: list[str], module: cst.Module,
                made: CodesMade | None = None) -> tuple[str, list[str] | None]:
    """``module.code`` for ``module``, made from ``original`` (parsed from ``text``, its
    statements' code ``codes`` cut at ``spans``) by replacing some top-level statements,
    and the code of the statements generated for it (None: the whole text was generated).
    A kept statement (the same node) is cut from the text; one ``made`` spliced is known,
    with its generated parts; a header or footer copied node by node is the text's own."""
    if not spans or not module.body or (
            not same_lines(module.header, original.header)
            or not same_lines(module.footer, original.footer)
            or module.has_trailing_newline != original.has_trailing_newline
            or module.default_newline != original.default_newline
            or module.default_indent != original.default_indent):
        return module.code, None
    known = {id(stmt): code for stmt, code in zip(original.body, codes)}
    parts = [text[:spans[0][0]]]
    generated: list[str] = []
    for stmt in module.body:
        code = known.get(id(stmt))
        if code is None:
            spliced = made.get(stmt) if made is not None else None
            if spliced is not None:
                code = spliced[0]
                generated.extend(spliced[1])
            else:
                code = module.code_for_node(stmt)
                generated.append(code)
        parts.append(code)
    parts.append(text[spans[-1][1]:])
    return "".join(parts), generated
