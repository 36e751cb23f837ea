"""The text LibCST parses for a file no class definition is converted in: its top-level
``class`` and ``def`` statements that name nothing a rewrite reads keep their header and
get a one-string body.

What it does
    ``skeleton_text`` replaces the body of such a statement, from its first line to its
    last, by one string literal spanning the same lines at the same indentation; every
    other character of the text stays. LibCST then builds a few nodes where it built
    the whole body.
Why
    In a file that only uses the converted classes, the rewrites touch the statements
    that name them; LibCST's parse of the rest (most of a model file: 61 KB of
    ``kda.py`` for five rewritten lines) was the largest part of converting it.
Fix safety
    The output is the same. A body replaced here names none of the words the rewrites
    start from (``words``: the classes' spellings and backing fields), no ``__dict__``,
    ``vars`` or ``import`` and no comparison of types (``may_compare_types``), so no
    transformer visits or changes it, and the file's
    bindings, globals and classes read the same (headers are kept). The text of each
    statement the conversion keeps is cut from the real text (``FileFacts.statement_codes``),
    never generated from the skeleton; the caller checks that it could be cut, and
    that ``MARKER``, which every replaced body holds, is not in the new text (a kept
    statement generated after all), else converts from a parse of the whole text. The
    line count of every replaced body is kept, so positions are the real ones. Left
    whole, so that LibCST reads the text around them as before: the first statement and
    those up to the first one after the imports at the top (an import edit may give
    that one a blank line and generate it), a body on its header's line, and a
    statement followed (up to the next statement or the end) by anything but blank
    lines and comments at the margin (an indented comment after a block belongs to the
    block): LibCST then gives the lines after it to the same owner, whose body is
    indented the same.
"""

from __future__ import annotations

import ast
import re

from codemod.analysis import python_trees
from codemod.analysis.type_comparisons import may_compare_types
from codemod.prefilters import prefilter

#: In every replaced body; never in a text this makes a skeleton of.
MARKER = "__codemod_skeleton_body__"

#: Words that keep a statement whole beside ``words``: the attribute-dict copies'
#: spellings and imports (nested ones bind names too).
_ALWAYS_KEPT = ("__dict__", "vars", "import", MARKER)

#: A class naming one of these is visited whole (the attribute-dict copies' transformer
#: does not descend into bodies): its methods are left whole too.
_VISITED_WHOLE = ("__dict__", "vars")

_LINE = re.compile(r"[^\n]*\n")


def skeleton_text(text: str, words: frozenset[str]) -> str | None:
    """``text`` with the bodies of its top-level ``class``/``def`` statements that name
    none of ``words`` replaced (see the module doc); None when nothing is replaced or
    the text is not one this reads exactly (carriage returns, no final line end, the
    marker in it, a syntax error)."""
    if "\r" in text or not text.endswith("\n") or MARKER in text:
        return None
    try:
        tree = python_trees.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines = _LINE.findall(text)
    body = tree.body
    after_imports = next((i for i, node in enumerate(body)
                          if i and not isinstance(node, (ast.Import, ast.ImportFrom))), len(body))
    replaced = 0
    for index in range(after_imports + 1, len(body)):
        node = body[index]
        following = _first_line(body[index + 1]) if index + 1 < len(body) else len(lines) + 1
        span = _body_lines(node, following, lines, words, "")
        if span is not None:
            replaced += _replace(lines, *span)
        elif isinstance(node, ast.ClassDef) and not any(
                word in "".join(lines[_first_line(node) - 1:node.end_lineno])
                for word in _VISITED_WHOLE):
            # Its methods one by one (not the last: the lines after it are the class's).
            for member, after in zip(node.body, node.body[1:]):
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    margin = lines[member.lineno - 1][:member.col_offset]
                    span = _body_lines(member, _first_line(after), lines, words, margin)
                    if span is not None:
                        replaced += _replace(lines, *span)
    return "".join(lines) if replaced else None


def _replace(lines: list[str], first: int, last: int, indent: str) -> int:
    """Lines ``first``..``last`` become one string literal at ``indent``: 1."""
    if first == last:
        lines[first - 1] = f'{indent}"""{MARKER}"""\n'
    else:
        lines[first - 1] = f'{indent}"""{MARKER}\n'
        for number in range(first + 1, last):
            lines[number - 1] = "\n"
        lines[last - 1] = '"""\n'
    return 1


def _body_lines(node: ast.stmt, next_first: int, lines: list[str], words: frozenset[str],
                margin: str) -> tuple[int, int, str] | None:
    """(first line, last line, indentation) of the body of a ``class``/``def`` whose
    header starts at ``margin`` (its indentation) that may be replaced, given the first
    line of the statement after it (past the last line for the last statement); else
    None."""
    if not isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    first = _first_line(node.body[0])
    last = node.end_lineno or node.lineno
    if first <= node.lineno or last >= next_first:
        return None  # a body on the header's line, or lines CPython numbers oddly
    if any(line.strip() and not (line.startswith("#", len(margin)) and line.startswith(margin))
           for line in lines[last:next_first - 1]):
        return None  # a comment indented deeper (the block's own) or code follows
    code = "".join(lines[_first_line(node) - 1:last])
    if any(word in code for word in _ALWAYS_KEPT) or prefilter(code, words) or may_compare_types(code):
        return None
    opening = lines[first - 1]
    indent = opening[:len(opening) - len(opening.lstrip(" \t"))]
    start = node.body[0]
    decorators = getattr(start, "decorator_list", None)
    # The body starts its line: a decorator (which always does) or the statement itself.
    starts_line = opening.startswith("@", len(indent)) if decorators and \
        min(d.lineno for d in decorators) == first else start.col_offset == len(indent)
    return (first, last, indent) if indent and starts_line else None


def _first_line(node: ast.stmt) -> int:
    """A statement's first line, its decorators included."""
    decorators = getattr(node, "decorator_list", None) or []
    return min([node.lineno, *(d.lineno for d in decorators)])
