"""Lay out the import statements a rewrite added or changed like the rest of the file.

What it does
    ``AddImportsVisitor`` merges new names into an existing ``from m import (...)`` on one
    line, and ``RemoveImportsVisitor`` may leave a parenthesised list ragged. Every
    top-level ``from ... import`` that is new or changed is laid out again: on one line
    when it fits the file's line length, else one name per line in parentheses with a
    trailing comma (the layout ruff/black produce); an import that spanned lines before
    keeps one name per line. Names the file already imported keep their order, and the
    names the tool added follow them.
Why
    Generated code is code people will own (DESIGN.md section 5.8).
Fix safety
    Only the layout of import statements that already differ from the original changes:
    the same names, aliases and order of statements; untouched statements keep every byte.
"""

from __future__ import annotations

import libcst as cst


def _line_limit(text: str) -> int:
    """The file's own line length: its longest line, between 79 and 100."""
    longest = max((len(line) for line in text.splitlines()), default=79)
    return max(79, min(longest, 100))


def _one_line(node: cst.ImportFrom) -> cst.ImportFrom:
    names = list(node.names)  # type: ignore[arg-type]
    names = [
        alias.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        for alias in names[:-1]
    ] + [names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
    return node.with_changes(names=names, lpar=None, rpar=None)


def _one_per_line(node: cst.ImportFrom, indent: str) -> cst.ImportFrom:
    newline = cst.ParenthesizedWhitespace(
        first_line=cst.TrailingWhitespace(),
        empty_lines=[],
        indent=True,
        last_line=cst.SimpleWhitespace(indent),
    )
    closing = cst.ParenthesizedWhitespace(
        first_line=cst.TrailingWhitespace(), empty_lines=[], indent=True,
        last_line=cst.SimpleWhitespace(""),
    )
    names = list(node.names)  # type: ignore[arg-type]
    laid = [
        alias.with_changes(comma=cst.Comma(whitespace_after=newline if i < len(names) - 1 else closing))
        for i, alias in enumerate(names)
    ]
    return node.with_changes(
        names=laid,
        lpar=cst.LeftParen(whitespace_after=newline),
        rpar=cst.RightParen(),
    )


def _source(module: cst.Module, node: cst.ImportFrom) -> str:
    dots = "." * len(node.relative)
    return dots + (module.code_for_node(node.module) if node.module is not None else "")


def format_imports(original: cst.Module, tree: cst.Module) -> cst.Module:
    """``tree`` with its new or changed top-level ``from`` imports laid out (see module doc)."""
    before = {
        original.code_for_node(stmt)
        for stmt in original.body
        if isinstance(stmt, cst.SimpleStatementLine)
    }
    # The same import as it was: its names (in order) and whether it spanned lines.
    was: dict[str, tuple[list[str], bool]] = {}
    for stmt in original.body:
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
            node = stmt.body[0]
            if isinstance(node, cst.ImportFrom) and not isinstance(node.names, cst.ImportStar):
                key = _source(original, node)
                was[key] = ([original.code_for_node(a).rstrip(", \n") for a in node.names],
                            "\n" in original.code_for_node(stmt).rstrip("\r\n"))
    limit = _line_limit(original.code)
    indent = original.default_indent
    body = list(tree.body)
    changed = False
    for index, stmt in enumerate(body):
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            continue
        node = stmt.body[0]
        if not isinstance(node, cst.ImportFrom) or isinstance(node.names, cst.ImportStar):
            continue
        if tree.code_for_node(stmt) in before:
            continue
        old_names, multiline = was.get(_source(tree, node), ([], False))
        if old_names:
            # Keep the file's names where they were; the added ones follow.
            def rank(alias: cst.ImportAlias) -> tuple[int, int]:
                text = tree.code_for_node(alias).rstrip(", \n")
                return (0, old_names.index(text)) if text in old_names else (1, 0)

            node = node.with_changes(names=sorted(node.names, key=rank))  # type: ignore[arg-type]
        flat = stmt.with_changes(body=[_one_line(node)])
        if not multiline and len(tree.code_for_node(flat).rstrip("\r\n")) <= limit:
            new = flat
        else:
            new = stmt.with_changes(body=[_one_per_line(node, indent)])
        if not new.deep_equals(stmt):
            body[index] = new
            changed = True
    return tree.with_changes(body=body) if changed else tree
