"""Lay out the header of each function a conversion wrote, when it is too long for a line.

What it does
    A generated ``def`` (a factory, a wrap, a former method now a module-level function)
    whose header is longer than ``LINE_LENGTH`` (88, as ``code_layout`` lays out) gets
    one parameter per line, each followed by a comma, and the closing parenthesis on a
    line of its own: the layout ruff and black give such a header.
Why
    Generated code is code people will own (docs/ARCHITECTURE.md, "Generated code"): a
    wrap taking the former ``__init__``'s parameters, or a method renamed after its class
    and moved out of it, may otherwise run past the line length the engine's linter keeps.
Fix safety
    Layout only: the same parameters, defaults, annotations and order. Statements the
    conversion left alone, headers it did not change and headers already spread over
    several lines keep every byte.
"""

from __future__ import annotations

import libcst as cst

from codemod.transforms.code_layout import LINE_LENGTH, one_param_per_line


def _header(module: cst.Module, fn: cst.FunctionDef) -> str:
    """The code of ``fn``'s ``def`` line(s), up to its colon."""
    bare = fn.with_changes(leading_lines=(), decorators=(),
                           body=cst.SimpleStatementSuite(body=[cst.Pass()]))
    return module.code_for_node(bare).rstrip("\r\n").removesuffix(" pass")


def lay_out_long_defs(original: cst.Module, tree: cst.Module,
                      limit: int = LINE_LENGTH) -> cst.Module:
    """``tree`` with every top-level function whose one-line header the conversion wrote
    or changed (a new function, or annotations rewritten) and that is now longer than
    ``limit``, laid out one parameter per line. A header as long as the file had it is
    the file's own style and stays."""
    own = {id(stmt) for stmt in original.body}
    own_headers: dict[str, str] | None = None
    body: list[cst.BaseStatement] = []
    changed = False
    for stmt in tree.body:
        if id(stmt) not in own and isinstance(stmt, cst.FunctionDef):
            header = _header(tree, stmt)
            if "\n" not in header and len(header) > limit:
                if own_headers is None:
                    own_headers = {fn.name.value: _header(original, fn) for fn in original.body
                                   if isinstance(fn, cst.FunctionDef)}
                if own_headers.get(stmt.name.value) != header:
                    stmt = one_param_per_line(stmt, tree.default_indent)
                    changed = True
        body.append(stmt)
    return tree.with_changes(body=body) if changed else tree
