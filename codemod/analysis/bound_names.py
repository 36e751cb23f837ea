"""Names that statements bind in the function they belong to, read from LibCST's nodes:
assignment, loop, ``with``/``except`` and walrus targets, ``del``, imports, nested
``def`` and ``class`` (whose bodies bind in their own scope and are not entered).
"""

from __future__ import annotations

import libcst as cst

#: Each node type that binds the names in one of its fields, and that field.
_BINDING_FIELDS: dict[type[cst.CSTNode], str] = {
    cst.AssignTarget: "target",
    cst.AugAssign: "target",
    cst.AnnAssign: "target",
    cst.NamedExpr: "target",
    cst.For: "target",
    cst.AsName: "name",
    cst.Del: "target",
}


class _Bound(cst.CSTVisitor):
    """Names that statements bind (assignments, imports, loops, ``with``/``except`` targets)."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        """Record what ``node`` binds, then visit it as usual (``visit_*`` below)."""
        field = _BINDING_FIELDS.get(type(node))
        if field is not None:
            self._targets(getattr(node, field))
        return super().on_visit(node)

    def _targets(self, node: cst.CSTNode | None) -> None:
        """The names of an assignment target (tuples, lists and starred ones unpacked)."""
        if node is None:
            return
        if isinstance(node, cst.Name):
            self.names.add(node.value)
        elif isinstance(node, (cst.Tuple, cst.List)):
            for element in node.elements:
                self._targets(element.value)
        elif isinstance(node, cst.StarredElement):
            self._targets(node.value)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is None:
            head: cst.BaseExpression = node.name
            while isinstance(head, cst.Attribute):
                head = head.value
            if isinstance(head, cst.Name):
                self.names.add(head.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.names.add(node.name.value)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.names.add(node.name.value)
        return False


def names_bound(stmts: tuple[cst.BaseStatement, ...] | list[cst.BaseStatement]) -> set[str]:
    """Names that ``stmts`` bind in the function they belong to."""
    bound = _Bound()
    for stmt in stmts:
        stmt.visit(bound)
    return bound.names
