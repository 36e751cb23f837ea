"""The classes an ``isinstance``/``issubclass`` second argument names.

What it does
    ``class_spec_members`` flattens a class specification the way ``isinstance`` reads
    it: a tuple of specifications, nested at any depth, and PEP 604 unions ``A | B | C``
    (also inside tuples; a tuple is never an operand of a union). Each member comes
    with whether it was an operand of ``|``.
Why
    ``isinstance(p, A | B)``, ``isinstance(p, (A | B, C))`` and ``isinstance(p, (A, B, C))``
    give the same answer; the rewrite, the leftover scan and ``check`` must all see the
    same members, or one of them would miss a class the other rewrote.
Fix safety
    A starred element (``(*kinds, X)``) cannot be flattened: the answer is None and the
    callers leave the expression to the scan that reports it.
"""

from __future__ import annotations

import libcst as cst


def is_union(expr: cst.BaseExpression) -> bool:
    """``A | B`` (a PEP 604 union when its operands are classes)."""
    return isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.BitOr)


def class_spec_members(expr: cst.BaseExpression) -> list[tuple[cst.BaseExpression, bool]] | None:
    """(member, came from a union) for every class ``expr`` names, in source order."""
    out: list[tuple[cst.BaseExpression, bool]] = []
    stack: list[tuple[cst.BaseExpression, bool]] = [(expr, False)]
    while stack:
        node, in_union = stack.pop()
        # ``isinstance`` reads nested tuples; a list or set is accepted only whole (as
        # the rewrite always did), and never inside a union.
        sequence = (cst.Tuple, cst.List, cst.Set) if node is expr else cst.Tuple
        if isinstance(node, sequence) and not in_union:
            if any(isinstance(el, cst.StarredElement) for el in node.elements):
                return None
            stack.extend((el.value, False) for el in reversed(node.elements))
        elif is_union(node):
            stack.extend([(node.right, True), (node.left, True)])  # type: ignore[attr-defined]
        else:
            out.append((node, in_union))
    return out
