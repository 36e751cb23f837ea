"""Class-style uses of target names in one file (checks and class bases), found by a
LibCST visitor whose names resolve as the engine's do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import libcst as cst

from codemod.analysis.classes import FileFacts
from codemod.analysis.index import follow_reexports
from codemod.analysis.names import dotted
from codemod.analysis.use_rules import UseKind
from codemod.check.class_checks import TYPING_UNIONS, ClassChecks
from codemod.check.converted import Target
from codemod.check.planned import facts_of
from codemod.pipeline.results import RunResult


class Resolver:
    """Qualified names as the engine resolves them (``FileFacts.resolve``, then re-exports
    followed like ``ClassIndex.canonical``), parsing a re-exporting module on demand.

    Only files that mention a target name can re-export it, so ``modules`` (module name
    -> path of those files) is where the next hop is looked for.
    """

    def __init__(self, run: RunResult, modules: dict[str, Path], stop: dict[str, Target]) -> None:
        self.run = run
        self.modules = modules
        self.stop = stop
        self.files: dict[str, FileFacts | None] = {ff.module_name: ff for ff in run.facts.values()}

    def _file(self, module: str) -> FileFacts | None:
        if module not in self.files:
            path = self.modules.get(module)
            self.files[module] = facts_of(path, self.run) if path is not None else None
        return self.files[module]

    def canonical(self, qualname: str | None) -> str | None:
        """Follow re-exports: ``pkg.X`` -> ``pkg.mod.X`` when ``pkg/__init__.py`` imports it."""
        return follow_reexports(qualname, self.stop, self._file)


# -- the use-site visitor -----------------------------------------------------------------

_OPERATOR_TEXT = {cst.Is: "is", cst.IsNot: "is not", cst.Equal: "==", cst.NotEqual: "!=",
                  cst.In: "in", cst.NotIn: "not in"}


class ClassStyleUses(ClassChecks, cst.CSTVisitor):
    """Class-style uses of target names in one file: checks and class bases, found by
    ``ClassChecks``' rule in LibCST's tree.

    Records a ``CheckUse`` for each. Names resolve as the engine's do
    (``FileFacts.resolve``, then re-exports as ``ClassIndex.canonical`` follows them), so
    ``import pkg.params as m; isinstance(p, m.X)`` and re-exports resolve like ``apply``'s.
    """

    def __init__(self, ff: FileFacts, resolver: Resolver, targets: dict[str, Target],
                 planned_classes: set[int]) -> None:
        super().__init__(targets, planned_classes, ff.globals, ff.bindings)
        self.ff = ff
        self.resolver = resolver
        #: How many nodes of each kind (see ``locate.Locator``) the walk met, and the
        #: (kind, ordinal) of each reported node: how ``locate.Locator`` finds its position.
        self.counts: dict[str, int] = {"class": 0, "call": 0, "cmp": 0}
        self.ordinals: dict[int, tuple[str, int]] = {}
        self._ordinal: tuple[str, int] = ("class", 0)

    def _next(self, category: str) -> None:
        ordinal = self.counts[category]
        self.counts[category] = ordinal + 1
        self._ordinal = category, ordinal

    def report(self, node: Any, kind: UseKind, label: str, named: list[tuple[str, Target]]) -> None:
        super().report(node, kind, label, named)
        if named:
            self.ordinals[id(node)] = self._ordinal

    # -- taking LibCST's nodes apart --------------------------------------------------------
    def parts(self, expr: cst.BaseExpression) -> list[cst.BaseExpression] | None:
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
            return [element.value for element in expr.elements if isinstance(element, cst.Element)]
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.BitOr, cst.Add)):
            return [expr.left, expr.right]
        if isinstance(expr, cst.IfExp):
            return [expr.body, expr.orelse]
        if isinstance(expr, cst.NamedExpr):
            return [expr.value]
        if isinstance(expr, cst.Subscript) \
                and (dotted(expr.value) or "").rpartition(".")[2] in TYPING_UNIONS:
            return [element.slice.value for element in expr.slice
                    if isinstance(element.slice, cst.Index)]
        return None

    def callee(self, expr: cst.BaseExpression) -> str | None:
        func = expr.func if isinstance(expr, cst.Call) else None
        if isinstance(func, cst.Name):
            return func.value
        return func.attr.value if isinstance(func, cst.Attribute) else None

    def is_type_call(self, expr: cst.BaseExpression) -> bool:
        return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) \
            and expr.func.value == "type" and len(expr.args) == 1 \
            and not expr.args[0].keyword and not expr.args[0].star

    def is_class_attribute(self, expr: cst.BaseExpression) -> bool:
        return isinstance(expr, cst.Attribute) and expr.attr.value == "__class__"

    def target_of(self, expr: cst.BaseExpression) -> Target | None:
        if not isinstance(expr, (cst.Name, cst.Attribute)):
            return None
        qual = self.resolver.canonical(self.ff.resolve(expr))
        return self.targets.get(qual) if qual is not None else None

    def spelling(self, expr: cst.BaseExpression) -> str | None:
        return dotted(expr)

    # -- the walk -----------------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._next("class")
        self.class_statement(node, node.name.value, [arg.value for arg in node.bases if not arg.star])

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        if isinstance(node.operator, cst.Or):
            self.either_or(node.left, node.right)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Name) or func.value not in ("isinstance", "issubclass"):
            return
        self._next("call")
        args = node.args
        plain = len(args) == 2 and not any(a.keyword or a.star for a in args)
        self.check_call(node, func.value, [a.value for a in args] if plain else None)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self._next("cmp")
        lefts = [node.left, *(target.comparator for target in node.comparisons)]
        self.comparison(node, [(left, _OPERATOR_TEXT.get(type(target.operator)), target.comparator)
                               for left, target in zip(lefts, node.comparisons)])
