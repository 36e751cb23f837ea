"""What an earlier ``apply`` wrote beside a class it kept as a *shadow*: the class's wrap
function and the registrations of its kind.

A later run plans that class again, as if its module held only the class: converted now,
the class's factory, wrap and registrations take the place of these statements; kept
again, they are written anew (the same text). Without this, the earlier output's names
clash with the names the run generates, and every class of the module stays a class: a
migration begun with ``allow-classes``, or stopped by one use a maintainer then rewrote,
could never be finished.

Recognised only as ``apply`` writes them, and only together: a top-level ``def
<wrap name>(param, ...)`` and a top-level ``register_param_kind(<Features>.<member>,
...)`` call for the same class (with its ``register_param_fields(<Features>.<member>,
...)`` call when the class has fields). A module that defines the wrap name alone keeps
it as its own, and the class is refused for the clash, as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import libcst as cst

from codemod.runtime.helpers import REGISTER_PARAM_FIELDS, REGISTER_PARAM_KIND


def earlier_shadow_parts(body: Sequence[cst.BaseStatement | cst.BaseSmallStatement],
                         members: Mapping[str, str]) -> dict[str, list[int]]:
    """For each ``wrap name -> Features member`` of ``members`` whose earlier shadow output
    ``body`` (a module's statements) holds: the indices of those statements."""
    wraps: dict[str, int] = {}
    registrations: dict[str, list[tuple[str, int]]] = {}
    for index, stmt in enumerate(body):
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value in members \
                and _first_param(stmt) == "param":
            wraps.setdefault(stmt.name.value, index)
            continue
        registered = _registration(stmt)
        if registered is not None:
            registrations.setdefault(registered[1], []).append((registered[0], index))
    parts: dict[str, list[int]] = {}
    for wrap, index in wraps.items():
        calls = registrations.get(members[wrap], [])
        if any(helper == REGISTER_PARAM_KIND for helper, _ in calls):
            parts[wrap] = sorted([index, *(i for _, i in calls)])
    return parts


def _first_param(node: cst.FunctionDef) -> str | None:
    params = [*node.params.posonly_params, *node.params.params]
    return params[0].name.value if params else None


def _registration(stmt: cst.BaseStatement | cst.BaseSmallStatement) -> tuple[str, str] | None:
    """``(helper, member)`` of a statement ``register_param_kind(<Features>.<member>, ...)``
    or ``register_param_fields(...)`` alone on its line; else None."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    expr = stmt.body[0]
    if not isinstance(expr, cst.Expr) or not isinstance(expr.value, cst.Call):
        return None
    call = expr.value
    func = call.func
    helper = func.value if isinstance(func, cst.Name) else (
        func.attr.value if isinstance(func, cst.Attribute) else None)
    if helper not in (REGISTER_PARAM_KIND, REGISTER_PARAM_FIELDS) or not call.args:
        return None
    first = call.args[0]
    if first.keyword is not None or first.star or not isinstance(first.value, cst.Attribute):
        return None
    return helper, first.value.attr.value
