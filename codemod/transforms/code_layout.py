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
            out.extend(f"        {item}," for item in items)
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
