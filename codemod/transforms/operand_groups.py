"""Parentheses around the ``a or b`` a rewrite writes in place of one operand.

What it does
    A rewrite that replaces a call or a comparison with ``a or b`` (``isinstance`` with a
    tuple mixing converted classes and classes that stay classes, ``type(p) in (...)``
    likewise) writes it in parentheses (``_grouped``); the statement and argument slots
    where nothing binds to it (``if``/``while``/``assert`` tests, ``return`` and
    expression statements, conditional tests, comprehension conditions, arguments,
    elements) drop them again (``_ungrouped``).
Why
    ``or`` binds looser than the call or comparison it replaces: under ``not`` or beside
    ``and`` it must stay one operand, and in a slot of its own the parentheses are noise.
Fix safety
    ``not type(p) in (K, X)`` becomes ``not (type(p) is K or param_kind_is(p, ...))``,
    never ``not type(p) is K or ...``, which Python reads as ``(not ...) or ...``.
    Parentheses are dropped only from a check this rewrite wrote, never from the file's.
"""

from __future__ import annotations

import libcst as cst
from libcst import CSTNodeT

#: Node type -> its field that takes a whole expression: nothing binds to what it holds.
WHOLE_EXPRESSION_SLOTS: dict[type[cst.CSTNode], str] = {
    cst.If: "test", cst.While: "test", cst.Assert: "test", cst.IfExp: "test",
    cst.CompIf: "test", cst.Return: "value", cst.Expr: "value", cst.Arg: "value",
    cst.Element: "value",
}


class OperandGroups(cst.CSTTransformer):
    """The grouping of a transformer's ``a or b`` checks (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        #: ids of the ``a or b`` checks written in parentheses (``_grouped``).
        self._grouped_checks: set[int] = set()

    def _grouped(self, check: cst.BooleanOperation) -> cst.BooleanOperation:
        """``check`` in parentheses. It replaces a call or a comparison, which bind tighter
        than ``or``: under ``not`` or beside ``and`` it must stay one operand, as before
        (``not type(p) in (K, X)`` -> ``not (type(p) is K or param_kind_is(p, ...))``)."""
        grouped = check.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        self._grouped_checks.add(id(grouped))
        return grouped

    def _ungrouped(self, expr: cst.BaseExpression) -> cst.BaseExpression:
        """``expr`` without the parentheses ``_grouped`` gave it. Called for the slots that
        take a whole expression (a statement's test or value, a call's argument), where no
        operator binds to it and they would only be noise."""
        if id(expr) in self._grouped_checks:
            return expr.with_changes(lpar=[], rpar=[])
        return expr

    def on_leave(self, original_node: CSTNodeT, updated_node: CSTNodeT
                 ) -> CSTNodeT | cst.RemovalSentinel | cst.FlattenSentinel[CSTNodeT]:
        """After the transformer's own ``leave_*``: a check in one of
        ``WHOLE_EXPRESSION_SLOTS`` loses the parentheses ``_grouped`` gave it."""
        left = super().on_leave(original_node, updated_node)
        if not isinstance(left, cst.CSTNode):
            return left
        slot = WHOLE_EXPRESSION_SLOTS.get(type(left))
        if slot is None or (isinstance(left, cst.Arg) and left.star):
            return left  # ``*(a or b)``: the parentheses are needed
        value = getattr(left, slot)
        if value is None or id(value) not in self._grouped_checks:
            return left
        return left.with_changes(**{slot: self._ungrouped(value)})
