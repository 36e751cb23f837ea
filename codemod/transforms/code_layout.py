"""Generated statements laid out as a person would write them: PEP 8 blank lines, calls and
signatures on one line when they fit in 88 columns, else broken the way black would.

Only layout: each function returns the same code whatever the line breaks, so a change
here changes how the output reads, never what it does.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

#: The longest line of code a conversion writes (ruff's and black's default).
LINE_LENGTH = 88


def _fits(line: str) -> bool:
    """Whether ``line`` (with its indentation) is at most ``LINE_LENGTH`` long."""
    return len(line) <= LINE_LENGTH


def is_import_line(stmt: cst.BaseStatement) -> bool:
    """Whether ``stmt`` is a line of ``import`` / ``from ... import`` statements."""
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in stmt.body)


def two_blank_lines(stmt: cst.BaseStatement) -> cst.BaseStatement:
    """PEP 8 spacing before a top-level definition, keeping its own comments."""
    comments = [line for line in stmt.leading_lines if line.comment is not None]  # type: ignore[attr-defined]
    return stmt.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine(), *comments])


def kwargs_check_call(check: str, kind: str, star_kwarg: str, accepted: list[str]) -> str:
    """``check("Kind", kwargs, ("a", "b"))`` laid out as one call: on one line (inside a
    function body, 88 columns) when it fits, else its arguments on one indented line,
    else the keyword names filled onto as few lines as fit after the call's first line."""
    quoted = [f'"{n}"' for n in accepted]
    names = ", ".join(quoted) + ("," if len(quoted) == 1 else "")
    head = f'"{kind}", {star_kwarg}'
    one_line = f"{check}({head}, ({names}))"
    if len(one_line) + 4 <= LINE_LENGTH:
        return one_line
    if len(head) + len(names) + 12 <= LINE_LENGTH:
        return f"{check}(\n    {head}, ({names})\n)"
    lines: list[str] = []
    for name in quoted:
        if lines and len(lines[-1]) + len(name) + 2 + 8 <= LINE_LENGTH:
            lines[-1] += f" {name},"
        else:
            lines.append(f"{name},")
    inner = "".join(f"    {line}\n" for line in lines)
    return f"{check}({head}, (\n{inner}))"


def _display(opening: str, items: list[str], closing: str) -> str:
    """A tuple or dict display on one line (a one-item tuple keeps its comma)."""
    comma = "," if opening == "(" and len(items) == 1 else ""
    return f"{opening}{', '.join(items)}{comma}{closing}"


def _item_lines(item: str, opening: str, indent: str) -> list[str]:
    """One item of a display laid out one item a line, with its comma; a dict entry too
    long for its line has its value in parentheses on a line of its own (a name cannot
    be split; ruff format keeps this layout)."""
    line = f"{indent}{item},"
    key, colon, value = item.partition(": ")
    if _fits(line) or opening != "{" or not colon:
        return [line]
    return [f"{indent}{key}: (", f"{indent}    {value}", f"{indent}),"]


def layout_call(func: str, args: list[tuple[str, str, list[str], str]]) -> str:
    """``func(...)`` laid out as by hand: on one line when it fits in 88 columns, else its
    arguments on one line of their own, else one argument a line, and a display too long
    for its line one item a line.

    Each argument is ``(prefix, opening, items, closing)``: a display argument is
    ``prefix`` (``"bases="``) and the display; a plain one is ``prefix`` alone.
    """
    flat = [prefix + (_display(opening, items, closing) if opening else "")
            for prefix, opening, items, closing in args]
    line = f"{func}({', '.join(flat)})"
    if len(line) <= LINE_LENGTH:
        return line
    if len(", ".join(flat)) + 4 <= LINE_LENGTH:
        return f"{func}(\n    {', '.join(flat)}\n)"
    out = [f"{func}("]
    for (prefix, opening, items, closing), text in zip(args, flat):
        if not opening or len(text) + 5 <= LINE_LENGTH:
            out.append(f"    {text},")
        else:
            out.append(f"    {prefix}{opening}")
            for item in items:
                out.extend(_item_lines(item, opening, "        "))
            out.append(f"    {closing},")
    return "\n".join([*out, ")"])


def call_line(func: str, first: str, args: list[str]) -> cst.BaseStatement:
    """``func(first, a, b)``, one argument a line when that is too long."""
    line = f"{func}({', '.join([first, *args])})"
    if len(line) + 4 > LINE_LENGTH:
        inner = "".join(f"    {a},\n" for a in [first, *args])
        line = f"{func}(\n{inner})"
    return cst.parse_statement(line)


def laid_out(params: cst.Parameters, name: str, returns: str | None) -> dict[str, cst.CSTNode]:
    """A method's parameters (``__new__``, ``__init__`` or another method, now the module-
    level ``def name(...)``) as a hand-written signature would lay them out: continuation
    lines were aligned under the old ``def method(``, so a signature that spanned lines is
    put on one line when it fits in 88 columns, else one parameter per line. ``returns``
    is the return annotation's code, if any."""
    code = cst.Module(body=[]).code_for_node
    if "\n" not in code(params) or params.posonly_params:
        return {"params": params}
    pieces: list[str] = [code(p.with_changes(comma=cst.MaybeSentinel.DEFAULT,
                                             whitespace_after_param=cst.SimpleWhitespace("")))
                         for p in params.params]
    if isinstance(params.star_arg, cst.Param):
        pieces.append(code(params.star_arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)))
    elif params.kwonly_params:
        pieces.append("*")
    pieces += [code(p.with_changes(comma=cst.MaybeSentinel.DEFAULT,
                                   whitespace_after_param=cst.SimpleWhitespace("")))
               for p in params.kwonly_params]
    if isinstance(params.star_kwarg, cst.Param):
        pieces.append(code(params.star_kwarg.with_changes(comma=cst.MaybeSentinel.DEFAULT)))
    if any("#" in piece or '"""' in piece or "'''" in piece for piece in pieces):
        return {"params": params}  # a comment or a long string: left as written
    pieces = [" ".join(piece.split()) if "\n" in piece else piece for piece in pieces]
    arrow = f" -> {returns}" if returns is not None else ""
    line = f"def {name}({', '.join(pieces)}){arrow}: pass"
    parsed = cst.ensure_type(cst.parse_statement(line), cst.FunctionDef)
    if len(line) - len(" pass") > LINE_LENGTH:
        parsed = one_param_per_line(parsed, "    ")
    return {"params": parsed.params, "whitespace_before_params": parsed.whitespace_before_params}


def _line_break(indent: str) -> cst.ParenthesizedWhitespace:
    return cst.ParenthesizedWhitespace(
        first_line=cst.TrailingWhitespace(), empty_lines=[], indent=False,
        last_line=cst.SimpleWhitespace(indent),
    )


def one_param_per_line(fn: cst.FunctionDef, indent: str) -> cst.FunctionDef:
    """``fn`` (a top-level function) with each parameter on a line of its own, indented by
    ``indent``, and a trailing comma after the last one."""
    params = fn.params
    # The parameters in the order they are written, each with the slot that holds it.
    slots: list[cst.CSTNode] = [*params.posonly_params]
    if isinstance(params.posonly_ind, cst.ParamSlash):
        slots.append(params.posonly_ind)
    slots.extend(params.params)
    if isinstance(params.star_arg, (cst.Param, cst.ParamStar)):
        slots.append(params.star_arg)
    slots.extend(params.kwonly_params)
    if params.star_kwarg is not None:
        slots.append(params.star_kwarg)
    if not slots:
        return fn
    laid: dict[int, cst.CSTNode] = {}
    for i, slot in enumerate(slots):
        last = i == len(slots) - 1
        comma = cst.Comma(whitespace_after=_line_break("" if last else indent))
        laid[id(slot)] = slot.with_changes(comma=comma)

    def placed(node: Any) -> Any:
        """``node`` with its comma laid out, if it is a parameter slot."""
        return laid.get(id(node), node)

    new_params = params.with_changes(
        posonly_params=[placed(p) for p in params.posonly_params],
        posonly_ind=placed(params.posonly_ind),
        params=[placed(p) for p in params.params],
        star_arg=placed(params.star_arg),
        kwonly_params=[placed(p) for p in params.kwonly_params],
        star_kwarg=placed(params.star_kwarg) if params.star_kwarg is not None else None,
    )
    return fn.with_changes(params=new_params, whitespace_before_params=_line_break(indent))


# -- long rewritten lines -----------------------------------------------------------------
#: Statement headers whose expression black wraps in optional parentheses.
_HEADERS = ("if ", "elif ", "while ", "assert ", "return ")
#: Operators a line inside brackets may start with, after a split before it.
_LEADING = ("and ", "or ", "if ", "else ")
_code = cst.Module(body=[]).code_for_node


def _operands(expr: cst.BaseExpression) -> list[tuple[str, cst.BaseExpression]] | None:
    """``expr`` cut at its lowest-priority operators, as black splits a line: each piece
    with the operator it starts with (``and``/``or`` chains, ``a if c else b``, a
    comparison); one piece for a call, a name or ``not`` of one; None for anything else."""
    if expr.lpar:
        return [("", expr)]
    if isinstance(expr, cst.BooleanOperation):
        op = type(expr.operator)
        pieces: list[tuple[str, cst.BaseExpression]] = []
        node: cst.BaseExpression = expr
        while isinstance(node, cst.BooleanOperation) and isinstance(node.operator, op) \
                and not node.lpar:
            pieces.append((f"{_code(node.operator).strip()} ", node.right))
            node = node.left
        return [("", node), *reversed(pieces)]
    if isinstance(expr, cst.IfExp):
        return [("", expr.body), ("if ", expr.test), ("else ", expr.orelse)]
    if isinstance(expr, cst.Comparison):
        return [("", expr.left), *[(f"{_code(c.operator).strip()} ", c.comparator)
                                   for c in expr.comparisons]]
    if isinstance(expr, (cst.Call, cst.Name, cst.Attribute, cst.UnaryOperation,
                         cst.SimpleString, cst.Integer)):
        return [("", expr)]
    return None


def _atoms(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands of ``expr``'s unparenthesised ``and``/``or``, comparisons, ``not`` and
    ``a if c else b``, in source order."""
    if expr.lpar:
        return [expr]
    if isinstance(expr, cst.BooleanOperation):
        return [*_atoms(expr.left), *_atoms(expr.right)]
    if isinstance(expr, cst.Comparison):
        return [*_atoms(expr.left), *[a for c in expr.comparisons for a in _atoms(c.comparator)]]
    if isinstance(expr, cst.UnaryOperation):
        return _atoms(expr.expression)
    if isinstance(expr, cst.IfExp):
        return [*_atoms(expr.body), *_atoms(expr.test), *_atoms(expr.orelse)]
    return [expr]


def _trailing_calls(expr: cst.BaseExpression) -> list[cst.Call]:
    """The calls black may split ``expr`` at, the last first (its right-hand split, then
    the trailers it omits one by one): calls of a name with arguments, up to the first
    other bracket from the right."""
    calls: list[cst.Call] = []
    for atom in reversed(_atoms(expr)):
        if isinstance(atom, cst.Call) and atom.args and not atom.lpar \
                and isinstance(atom.func, (cst.Name, cst.Attribute)):
            calls.append(atom)
        elif not isinstance(atom, (cst.Name, cst.Attribute, cst.SimpleString, cst.Integer)) \
                or atom.lpar:
            break
    return calls


def _last_call(expr: cst.BaseExpression) -> cst.Call | None:
    """The call whose closing parenthesis ends ``expr`` (black's last opening bracket),
    if it has arguments to split."""
    calls = _trailing_calls(expr)
    if not calls or not _code(expr).endswith(_code(calls[0])):
        return None
    return calls[0]


#: Stands for the call being split while the rest of the expression is written out.
_MARK = "__codemod_split_here__"


def _split_at_call(head: str, expr: cst.BaseExpression, call: cst.Call, tail: str,
                   indent: str) -> list[str] | None:
    """``head + expr + tail`` split at the parentheses of ``call`` (black's right-hand
    split): the text up to its ``(``, its arguments indented on one line (or one a line,
    each with a comma, when they do not fit or end with a comma), then ``)``, the rest
    of the expression and ``tail``."""
    marked = _code(expr.deep_replace(call, cst.Name(_MARK)))
    if marked.count(_MARK) != 1:
        return None
    before, _, after = marked.partition(_MARK)
    args = [_code(a.with_changes(comma=cst.MaybeSentinel.DEFAULT)) for a in call.args]
    inner = indent + "    "
    one_line = f"{inner}{', '.join(args)}"
    magic_comma = isinstance(call.args[-1].comma, cst.Comma)
    body = [one_line] if _fits(one_line) and not magic_comma else [f"{inner}{a}," for a in args]
    return [f"{indent}{head}{before}{_code(call.func)}(", *body, f"{indent}){after}{tail}"]


def _split_at_last_call(head: str, expr: cst.BaseExpression, tail: str,
                        indent: str) -> list[str] | None:
    """``head + expr + tail`` split at the call that ends ``expr``, as black splits a line
    at its last bracket; when that first line would not fit, at the calls before it
    (while the text after the call fits on the closing line). None without such a call."""
    last = _last_call(expr)
    if last is None:
        return None
    first = _split_at_call(head, expr, last, tail, indent)
    if first is None or _fits(first[0]):
        return first
    for call in _trailing_calls(expr)[1:]:
        split = _split_at_call(head, expr, call, tail, indent)
        if split is None or not _fits(split[-1]):
            break
        if _fits(split[0]):
            return split
    return first


def _piece_lines(lead: str, expr: cst.BaseExpression, tail: str, indent: str) -> list[str]:
    """One piece of a split expression (``lead``: the operator it starts with) on lines
    of its own at ``indent``: on one line when it fits, else cut at its own operators,
    else split at the parentheses of its last call; left as it is when none applies."""
    line = f"{indent}{lead}{_code(expr)}{tail}"
    if _fits(line):
        return [line]
    pieces = _operands(expr)
    if pieces is not None and len(pieces) > 1:
        out: list[str] = []
        for i, (op, piece) in enumerate(pieces):
            out += _piece_lines(lead + op if i == 0 else op, piece,
                                tail if i == len(pieces) - 1 else "", indent)
        return out
    return _split_at_last_call(lead, expr, tail, indent) or [line]


def _can_omit_parentheses(expr: cst.BaseExpression, pieces: list[tuple[str, cst.BaseExpression]],
                          indent: str) -> bool:
    """Black's choice between splitting at the last call's parentheses and wrapping the
    whole expression in parentheses: the former for no operator, or one operator when the
    expression ends with a call that another bracket precedes or that opens within the
    line length; the parentheses for two operators or more."""
    if len(pieces) == 1:
        return True
    call = _last_call(expr)
    if len(pieces) > 2 or call is None:
        return False
    code = _code(expr)
    before = code[:len(code) - len(_code(call))] + _code(call.func)
    return "(" in before or "[" in before or _fits(f"{indent}    {before}(")


def lay_out_statement(indent: str, head: str, expr: cst.BaseExpression, tail: str,
                      parenthesize: bool) -> list[str] | None:
    """``head expr tail`` (``if `` ... ``:``, ``x = `` ..., ``assert `` ...) laid out as
    black and ruff format lay out a line too long for ``LINE_LENGTH``: split at the
    parentheses of the expression's last call when that reads well, else (``parenthesize``:
    the statement allows it) with the expression in parentheses, one operand a line, the
    operator first. None when neither applies."""
    pieces = _operands(expr)
    if pieces is None:
        return None
    wrapped = None
    if parenthesize:
        lines: list[str] = []
        for op, piece in pieces:
            lines += _piece_lines(op, piece, "", indent + "    ")
        wrapped = [f"{indent}{head}(", *lines, f"{indent}){tail}"]
        if not _can_omit_parentheses(expr, pieces, indent):
            return wrapped
    split = _split_at_last_call(head, expr, tail, indent)
    if split is None or wrapped is None:
        return split or wrapped
    # Black's second opinion: the parentheses when the split's first line is too long
    # and every line in parentheses fits.
    if _fits(split[0]) or not all(_fits(line) for line in wrapped):
        return split
    return wrapped


def _expression(code: str) -> cst.BaseExpression | None:
    try:
        return cst.parse_expression(code)
    except (cst.ParserSyntaxError, ValueError):
        return None


def lay_out_line(line: str, inside_brackets: bool) -> list[str] | None:
    """``line`` (longer than ``LINE_LENGTH``, without its line ending) laid out as black and
    ruff format would: a whole statement (an ``if``/``elif``/``while`` header, ``assert``,
    ``return``, an assignment or a call), or, ``inside_brackets``, one operand of a split
    expression (``and has_param_feature(...)``, an item with its comma). None when the
    line is none of these."""
    stripped = line.strip()
    indent = line[:len(line) - len(line.lstrip())]
    if inside_brackets:
        tail = "," if stripped.endswith(",") else ""
        content = stripped[:len(stripped) - len(tail)]
        lead = next((op for op in _LEADING if content.startswith(op)), "")
        expr = _expression(content[len(lead):])
        if expr is None:
            return None
        lines = _piece_lines(lead, expr, tail, indent)
        return lines if lines != [line] else None
    for keyword in _HEADERS:
        if stripped.startswith(keyword):
            compound = keyword in ("if ", "elif ", "while ")
            if compound != stripped.endswith(":"):
                return None
            expr = _expression(stripped[len(keyword):len(stripped) - compound])
            return None if expr is None else lay_out_statement(
                indent, keyword, expr, ":" if compound else "", parenthesize=True)
    try:
        stmt = cst.parse_statement(stripped)
    except (cst.ParserSyntaxError, ValueError):
        return None
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        head = f"{_code(small.targets[0].target)} = "
        return lay_out_statement(indent, head, small.value, "", parenthesize=True)
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        return lay_out_statement(indent, "", small.value, "", parenthesize=False)
    return None
