"""The uses of converted classes no rewrite handled, found on LibCST's tree after the rewrite.

``UseSiteTransformer`` records the nodes its rewrites consumed (``handled``); every other
name of a converted class used as a class is a leftover (``unconverted_uses``), which
makes the planner refuse the hierarchy. Each leftover gets the kind of its position
(``value_flow.leftover_kind``); a value use is dropped where the plan proves it harmless,
a use whose kind's rule needs a class never is.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import CodeRange

from codemod.analysis.classes import FileFacts
from codemod.analysis.held_types import covered_names, file_held_types
from codemod.analysis.names import dotted
from codemod.analysis.use_rules import USE_RULES, UseKind
from codemod.planning.plan import Plan
from codemod.prefilters import prefilter
from codemod.transforms.value_flow import leftover_kinds


class _UseScanner(cst.CSTVisitor):
    """Names of converted classes used as classes, outside every rewrite's reach."""

    def __init__(self, ff: FileFacts, plan: Plan, handled: set[int]) -> None:
        self.ff = ff
        self.plan = plan
        self.handled = handled
        self.found: list[tuple[cst.BaseExpression, str]] = []
        self._call_funcs: set[int] = set()
        self._skip: set[int] = set()

    def _qual(self, expr: cst.BaseExpression) -> str | None:
        qual = self.plan.index.canonical(self.ff.resolve(expr))
        return qual if self.plan.is_converted(qual) else None

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._skip.add(id(node.name))

    def visit_Param(self, node: cst.Param) -> None:
        self._skip.add(id(node.name))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._skip.add(id(node.keyword))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._skip.add(id(node.name))
        qual = f"{self.ff.module_name}.{node.name.value}"
        if qual in self.plan.classes:
            # Bases of a Parameter class are handled by converting (or refusing) the class.
            for base in node.bases:
                self._skip.add(id(base.value))

    def visit_Call(self, node: cst.Call) -> None:
        self._call_funcs.add(id(node.func))

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        # Only the object part can name a class; ``obj.X`` does not use the global ``X``.
        if id(node) in self._call_funcs and id(node) not in self._skip and id(node) not in self.handled:
            # ``m.X(...)`` constructs (the callee is no use), but the object it is called
            # on may hold one: ``reg(X).load()``, ``X.missing(p)``.
            node.value.visit(self)
        elif self._check(node):
            node.value.visit(self)
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self._check(node)

    def _check(self, node: cst.BaseExpression) -> bool:
        if id(node) in self._skip or id(node) in self.handled or id(node) in self._call_funcs:
            return False
        qual = self._qual(node)
        if qual is None:
            return True
        self.found.append((node, qual))
        return False


def unconverted_uses(ff: FileFacts, plan: Plan, handled: set[int],
                     names: frozenset[str] | None = None) -> list[tuple[int, int, str, str]]:
    """(line, col, class qualname, source) of each class-style use no rewrite handled.

    With ``names`` (every identifier a converted class can be spelled with), only the
    top-level statements that mention one are scanned, and the parent and position
    metadata are computed on the statements holding a use, not the whole module.
    """
    return [found for found, _ in classified_leftovers(ff, plan, handled, names)]


def classified_leftovers(ff: FileFacts, plan: Plan, handled: set[int], names: frozenset[str] | None,
                         ) -> list[tuple[tuple[int, int, str, str], UseKind]]:
    """``unconverted_uses``, each with the kind of its position (``value_flow.leftover_kind``):
    a value use is dropped where the plan keeps it, a use whose kind's rule needs a
    class never is."""
    scanner = _UseScanner(ff, plan, handled)
    owner: dict[int, int] = {}  # id(found node) -> index of its top-level statement
    for index, stmt in enumerate(ff.module.body):
        if names is not None and not prefilter(ff.statement_codes[index], names):
            continue
        before = len(scanner.found)
        stmt.visit(scanner)
        for node, _ in scanner.found[before:]:
            owner[id(node)] = index
    if not scanner.found:
        return []
    holders = sorted(set(owner.values()))
    scope = ff.module if names is None else ff.module.with_changes(
        body=[ff.module.body[i] for i in holders])
    held = covered_names(file_held_types(ff.text or ff.module.code))
    kinds = leftover_kinds(scope, [node for node, _ in scanner.found], held)
    positions: dict[int, dict[cst.CSTNode, CodeRange]] = {}
    out = []
    for node, qual in scanner.found:
        index = owner[id(node)]
        if names is None:
            line, col = ff.line_of(node), ff.col_of(node)
        else:
            if index not in positions:
                positions[index] = ff.statement_positions(index)
            where = positions[index][node]
            line, col = where.start.line, where.start.column + 1
        kind = kinds[id(node)]
        if not USE_RULES[kind].needs_class and plan.value_use_kept(ff.path, line, col):
            continue
        out.append(((line, col, qual, dotted(node) or cst.Module(body=[]).code_for_node(node)), kind))
    return out
