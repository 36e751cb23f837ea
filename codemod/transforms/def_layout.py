"""Lay out what a conversion wrote that is too long for a line: function headers and
rewritten lines.

What it does
    A generated ``def`` (a factory, a wrap, a former method now a module-level function)
    whose header is longer than ``LINE_LENGTH`` (88, as ``code_layout`` lays out) gets
    one parameter per line, each followed by a comma, and the closing parenthesis on a
    line of its own: the layout ruff and black give such a header. A line a rewrite made
    longer than that (``isinstance(p, X)`` became ``has_param_feature(p, Features.X)``)
    is split as black and ruff format split it (``code_layout.lay_out_line``).
Why
    Generated code is code people will own (docs/ARCHITECTURE.md, "Generated code"): a
    wrap taking the former ``__init__``'s parameters, or a method renamed after its class
    and moved out of it, may otherwise run past the line length the engine's linter keeps.
Fix safety
    Layout only: the same parameters, defaults, annotations and order; a re-laid line
    gives the same syntax tree (compared with ``ast``, else the text stays as it was).
    Statements the conversion left alone, headers it did not change, headers already
    spread over several lines and lines as long as the file had them keep every byte.
"""

from __future__ import annotations

import ast
import bisect
import io
import tokenize

import libcst as cst

from codemod.analysis.source_lines import physical_lines
from codemod.transforms.code_layout import LINE_LENGTH, lay_out_line, one_param_per_line
from codemod.transforms.statement_visits import part_statements

#: A top-level statement the layout changed: its lines before, and after (an item of
#: which may hold several lines).
Relaid = tuple[list[str], list[str]]


def _header(module: cst.Module, fn: cst.FunctionDef) -> str:
    """The code of ``fn``'s ``def`` line(s), up to its colon."""
    bare = fn.with_changes(leading_lines=(), decorators=(),
                           body=cst.SimpleStatementSuite(body=[cst.Pass()]))
    return module.code_for_node(bare).rstrip("\r\n").removesuffix(" pass")


def _comment(fn: cst.FunctionDef) -> str:
    """The comment after ``fn``'s colon, with the spaces before it ("" when none)."""
    body = fn.body
    if isinstance(body, cst.IndentedBlock) and body.header.comment is not None:
        return body.header.whitespace.value + body.header.comment.value
    return ""


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
            if "\n" not in header and len(header) + len(_comment(stmt)) > limit:
                if own_headers is None:
                    own_headers = {fn.name.value: _header(original, fn) for fn in original.body
                                   if isinstance(fn, cst.FunctionDef)}
                if own_headers.get(stmt.name.value) != header:
                    stmt = one_param_per_line(stmt, tree.default_indent)
                    changed = True
        body.append(stmt)
    return tree.with_changes(body=body) if changed else tree


def _line_starts(text: str) -> list[tuple[int, bool]] | None:
    """Per line of ``text`` (and one past the last): the bracket depth where it starts, and
    whether it starts inside a string; None when ``text`` does not tokenize."""
    count = text.count("\n") + 2
    depth_at = [0] * count
    in_string = [False] * count
    depth = 0
    line = 0  # the last line whose start is known
    strings: list[int] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            row = tok.start[0]
            for n in range(line + 1, min(row, count - 1) + 1):
                depth_at[n - 1] = depth
                in_string[n - 1] = bool(strings)
            line = max(line, row)
            name = tokenize.tok_name[tok.type]
            if tok.type == tokenize.OP and tok.string in "([{":
                depth += 1
            elif tok.type == tokenize.OP and tok.string in ")]}":
                depth -= 1
            elif name == "FSTRING_START":
                strings.append(row)
            elif name == "FSTRING_END":
                strings.pop()
            if tok.type == tokenize.STRING or name == "FSTRING_END":
                for n in range(tok.start[0] + 1, min(tok.end[0], count - 1) + 1):
                    in_string[n - 1] = True
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    for n in range(line + 1, count + 1):
        depth_at[n - 1] = depth
    return list(zip(depth_at, in_string))


def lay_out_long_lines(original: str, text: str) -> str:
    """``text`` with each line longer than ``LINE_LENGTH`` that the conversion wrote laid
    out (``lay_out_long_statements``); ``text`` itself when none is."""
    laid_out, statements = lay_out_long_statements(original, text)
    return laid_out if statements else text


def lay_out_long_statements(original: str, text: str) -> tuple[str, list[Relaid]]:
    """``text`` with each line longer than ``LINE_LENGTH`` that the conversion wrote (its
    content is on no line of ``original``) laid out as black and ruff format would
    (``lay_out_line``): a whole statement, or one operand inside brackets; and the code of
    each top-level statement so changed, line by line before and after (an item of the
    latter may hold several lines). A line with a comment, one
    inside a string or a continued line stays as it is; so does a whole statement whose
    re-laid code would not give the same syntax tree.

    Only the top-level statements holding such a line are tokenized, re-parsed and
    compared: a large file with one long generated line costs one statement's work."""
    # Lines as CPython numbers them: ``str.splitlines`` also splits at a form feed,
    # ``\x85`` or ``\u2028``, which would shift every line after one.
    lines = physical_lines(text)
    own: set[str] | None = None
    candidates: list[int] = []
    for i, line in enumerate(lines):
        body = line.rstrip("\r\n")
        if len(body) > LINE_LENGTH and "#" not in body and not body.endswith("\\"):
            if own is None:
                own = {old.strip() for old in original.splitlines()}
            if body.strip() not in own:
                candidates.append(i)
    if not candidates:
        return text, []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text, []
    # 0-based [first, last) line span of each top-level statement, decorators included.
    firsts = [min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))]) - 1
              for stmt in tree.body]
    groups: dict[int, list[int]] = {}
    for i in candidates:
        k = bisect.bisect_right(firsts, i) - 1
        if k >= 0 and i < (tree.body[k].end_lineno or 0):
            groups.setdefault(k, []).append(i)
    statements: list[Relaid] = []
    for k, members in groups.items():
        first, last = firsts[k], tree.body[k].end_lineno or 0
        relaid = _relaid_inside(tree.body[k], lines[first:last], [i - first for i in members],
                                first)
        if relaid is None:
            relaid = _relaid(lines[first:last], [i - first for i in members])
            if relaid is None or not _same_statement(tree.body[k], relaid):
                continue
        statements.append((lines[first:last], relaid))
        lines[first:last] = relaid
    return ("".join(lines), statements) if statements else (text, [])


def _relaid_inside(statement: ast.stmt, lines: list[str], members: list[int],
                   offset: int) -> list[str] | None:
    """The ``lines`` of the top-level ``statement`` (its first is line ``offset`` + 1 of
    the file) with ``members`` (indexes into them) laid out, each checked on the innermost
    statement holding it rather than on the whole top-level one: a class of a thousand
    lines is not tokenized and compared for one of its lines. None when one is not laid
    out so (the caller then tries the whole statement)."""
    inner: dict[int, tuple[ast.stmt, list[int]]] = {}
    for i in members:
        stmt = _innermost(statement, offset + i + 1)
        if stmt is statement or (i and lines[i - 1].rstrip("\r\n").endswith("\\")):
            return None
        inner.setdefault(id(stmt), (stmt, []))[1].append(i)
    relaid = list(lines)
    for stmt, held in inner.values():
        first, last = _first_line(stmt) - 1 - offset, (stmt.end_lineno or 0) - offset
        new = _relaid(lines[first:last], [i - first for i in held])
        if new is None or not _same_statement(stmt, new):
            return None
        relaid[first:last] = new
    return relaid


def _innermost(statement: ast.stmt, line: int) -> ast.stmt:
    """The innermost statement in ``statement`` (itself included) whose lines, decorators
    included, hold ``line``; where two share it (``a = 1; b = (...)``), the one holding
    both."""
    found = statement
    while True:
        inner = [stmt for stmt in _child_statements(found)
                 if _first_line(stmt) <= line <= (stmt.end_lineno or 0)]
        if len(inner) != 1:
            return found
        found = inner[0]


def _child_statements(node: ast.AST) -> list[ast.stmt]:
    """The statements directly in ``node``'s blocks (an ``except`` clause's and a ``case``'s
    included)."""
    found: list[ast.stmt] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.stmt):
            found.append(child)
        elif isinstance(child, (ast.excepthandler, ast.match_case)):
            found += _child_statements(child)
    return found


def _first_line(stmt: ast.stmt) -> int:
    return min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])


def _same_statement(stmt: ast.stmt, relaid: list[str]) -> bool:
    """Whether the re-laid lines of ``stmt`` (whole lines, its first at its own indentation)
    parse as one statement with ``stmt``'s syntax tree: an indented one inside an ``if``
    block, so that the lines around it, which are the file's own, meet it as before."""
    code = "".join(relaid)
    indented = stmt.col_offset > 0
    try:
        module = ast.parse("if 1:\n" + code if indented else code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    body = module.body[0].body if indented and len(module.body) == 1 else module.body  # type: ignore[attr-defined]
    return len(body) == 1 and ast.dump(body[0]) == ast.dump(stmt)


def with_relaid(generated: list[str], relaid: list[Relaid]) -> list[str]:
    """The code of the ``generated`` statements once ``relaid`` (``lay_out_long_statements``),
    so that each part of the final text that is not the file's own is parsed once, in its
    final form:

    * a generated statement whose code ends with a re-laid one's former code (the lines
      above it, blank or comments, begin a statement's code) gets the new code;
    * else, when every re-laid line lies inside spliced parts of the statement
      (``part_statements``: the rest of it is the file's own text), those parts get their
      re-laid lines;
    * else the re-laid statement is added whole."""
    codes = list(generated)
    for before_lines, after_lines in relaid:
        before, after = "".join(before_lines), "".join(after_lines)
        whole = next((i for i, code in enumerate(codes) if code.endswith(before)), None)
        if whole is not None:
            codes[whole] = codes[whole][:len(codes[whole]) - len(before)] + after
            continue
        parts = _relaid_parts(codes, before_lines, after_lines)
        if parts is None:
            codes.append(after if after.endswith(("\n", "\r")) else after + "\n")
        else:
            for i, code in parts.items():
                codes[i] = code
    return codes


def _relaid_parts(codes: list[str], before_lines: list[str],
                  after_lines: list[str]) -> dict[int, str] | None:
    """Index in ``codes`` -> new code, for the spliced parts holding the re-laid lines of
    one statement; None unless each re-laid line lies inside one of them."""
    before = "".join(before_lines)
    starts = [0]
    for line in before_lines:
        starts.append(starts[-1] + len(line))
    line_at = {start: n for n, start in enumerate(starts)}
    changed = {n for n, (old, new) in enumerate(zip(before_lines, after_lines)) if old != new}
    parts: dict[int, str] = {}
    for i, code in enumerate(codes):
        statements = part_statements(code)
        if not statements:
            continue
        offset = before.find(statements)
        first, end = line_at.get(offset), line_at.get(offset + len(statements))
        if offset < 0 or first is None or end is None or not changed.intersection(range(first, end)):
            continue
        parts[i] = code[:len(code) - len(statements)] + "".join(after_lines[first:end])
        changed -= set(range(first, end))
    return parts if parts and not changed else None


def _relaid(lines: list[str], long_lines: list[int]) -> list[str] | None:
    """The lines of one top-level statement with each of ``long_lines`` (indexes into
    them) laid out, each still one item of the list; None when none could be."""
    starts = _line_starts("".join(lines))
    if starts is None:
        return None
    relaid = list(lines)
    changed = False
    for i in long_lines:
        (depth, in_string), (after, _) = starts[i], starts[i + 1]
        if in_string or depth != after or (i and lines[i - 1].rstrip("\r\n").endswith("\\")):
            continue
        body = lines[i].rstrip("\r\n")
        new = lay_out_line(body, inside_brackets=depth > 0)
        if new:
            ending = lines[i][len(body):]
            relaid[i] = (ending or "\n").join(new) + ending
            changed = True
    return relaid if changed else None
