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

    def leave_If(self, original_node: cst.If, updated_node: cst.If) -> cst.If:
        return updated_node.with_changes(test=self._ungrouped(updated_node.test))

    def leave_While(self, original_node: cst.While, updated_node: cst.While) -> cst.While:
        return updated_node.with_changes(test=self._ungrouped(updated_node.test))

    def leave_IfExp(self, original_node: cst.IfExp, updated_node: cst.IfExp) -> cst.IfExp:
        return updated_node.with_changes(test=self._ungrouped(updated_node.test))

    def leave_CompIf(self, original_node: cst.CompIf, updated_node: cst.CompIf) -> cst.CompIf:
        return updated_node.with_changes(test=self._ungrouped(updated_node.test))

    def leave_Assert(self, original_node: cst.Assert, updated_node: cst.Assert) -> cst.Assert:
        return updated_node.with_changes(test=self._ungrouped(updated_node.test))

    def leave_Return(self, original_node: cst.Return, updated_node: cst.Return) -> cst.Return:
        if updated_node.value is None:
            return updated_node
        return updated_node.with_changes(value=self._ungrouped(updated_node.value))

    def leave_Expr(self, original_node: cst.Expr, updated_node: cst.Expr) -> cst.Expr:
        return updated_node.with_changes(value=self._ungrouped(updated_node.value))

    def leave_Element(self, original_node: cst.Element, updated_node: cst.Element) -> cst.Element:
        return updated_node.with_changes(value=self._ungrouped(updated_node.value))

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        if updated_node.star:
            return updated_node  # ``*(a or b)``: the parentheses are needed
        return updated_node.with_changes(value=self._ungrouped(updated_node.value))
