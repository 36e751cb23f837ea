"""Class-style uses of target names in one file (checks and class bases), found by a
LibCST visitor whose names resolve as the engine's do."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import libcst as cst

from codemod import api
from codemod.analysis.class_specs import is_union
from codemod.analysis.classes import FileFacts
from codemod.analysis.index import follow_reexports
from codemod.analysis.names import dotted
from codemod.check.converted import Target
from codemod.check.planned import facts_of


class Resolver:
    """Qualified names as the engine resolves them (``FileFacts.resolve``, then re-exports
    followed like ``ClassIndex.canonical``), parsing a re-exporting module on demand.

    Only files that mention a target name can re-export it, so ``modules`` (module name
    -> path of those files) is where the next hop is looked for.
    """

    def __init__(self, run: api.RunResult, modules: dict[str, Path], stop: dict[str, Target]) -> None:
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

_EQUALITY = (cst.Is, cst.IsNot, cst.Equal, cst.NotEqual)
_MEMBERSHIP = (cst.In, cst.NotIn)
_OPERATOR_TEXT = {cst.Is: "is", cst.IsNot: "is not", cst.Equal: "==", cst.NotEqual: "!=",
                  cst.In: "in", cst.NotIn: "not in"}


class ClassStyleUses(cst.CSTVisitor):
    """Class-style uses of target names in one file: checks and class bases.

    Records ``(node, kind, [(spelling, target), ...])`` where ``kind`` says which check
    (``isinstance``, ``type() is``, ``class base``...). Names resolve as the engine's
    do (``FileFacts.resolve``, then re-exports as ``ClassIndex.canonical`` follows them),
    so ``import pkg.params as m; isinstance(p, m.X)`` and re-exports resolve like ``apply``'s.
    """

    def __init__(self, ff: FileFacts, resolver: Resolver, targets: dict[str, Target],
                 planned_classes: set[int]) -> None:
        self.ff = ff
        self.resolver = resolver
        self.targets = targets
        #: ids of the top-level ClassDef nodes that are Parameter classes of the plan:
        #: their bases are CM001's business, not a use.
        self.planned_classes = planned_classes
        self.found: list[tuple[cst.CSTNode, str, list[tuple[str, Target]]]] = []
        self._shadowed = {n for n in ("isinstance", "issubclass", "type")
                          if n in ff.globals or n in ff.bindings}
        #: ids of isinstance calls or-ed with a ``has_param_feature`` call.
        self._paired: set[int] = set()
        #: How many nodes of each kind (see ``locate.Locator``) the walk met, and the
        #: (kind, ordinal) of each reported node: how ``locate.Locator`` finds its position.
        self.counts: dict[str, int] = {"class": 0, "call": 0, "cmp": 0}
        self.ordinals: dict[int, tuple[str, int]] = {}

    def _next(self, category: str) -> tuple[str, int]:
        ordinal = self.counts[category]
        self.counts[category] = ordinal + 1
        return category, ordinal

    def _target(self, expr: cst.BaseExpression) -> Target | None:
        if not isinstance(expr, (cst.Name, cst.Attribute)):
            return None
        qual = self.resolver.canonical(self.ff.resolve(expr))
        return self.targets.get(qual) if qual is not None else None

    def _named(self, exprs: Iterable[cst.BaseExpression]) -> list[tuple[str, Target]]:
        out = []
        for expr in exprs:
            target = self._target(expr)
            if target is not None:
                out.append((dotted(expr) or target.name, target))
        return out

    @staticmethod
    def _elements(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
        """The classes a tuple/list/set or a union ``A | B`` names (nested tuples and
        unions flattened, ``*x`` skipped)."""
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
            out: list[cst.BaseExpression] = []
            for element in expr.elements:
                if isinstance(element, cst.Element):
                    out.extend(ClassStyleUses._elements(element.value))
            return out
        if is_union(expr):
            return [*ClassStyleUses._elements(expr.left),  # type: ignore[attr-defined]
                    *ClassStyleUses._elements(expr.right)]  # type: ignore[attr-defined]
        return [expr]

    def _type_subject(self, expr: cst.BaseExpression) -> str | None:
        """``"type()"`` for ``type(x)``, ``"__class__"`` for ``x.__class__``, else None."""
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) \
                and expr.func.value == "type" and "type" not in self._shadowed \
                and len(expr.args) == 1 and not expr.args[0].keyword and not expr.args[0].star:
            return "type()"
        if isinstance(expr, cst.Attribute) and expr.attr.value == "__class__":
            return "__class__"
        return None

    def _report(self, node: cst.CSTNode, kind: str, named: list[tuple[str, Target]],
                ordinal: tuple[str, int]) -> None:
        if named:
            self.found.append((node, kind, named))
            self.ordinals[id(node)] = ordinal

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        ordinal = self._next("class")
        bases = [arg.value for arg in node.bases if not arg.star]
        named = self._named(bases)
        if id(node) in self.planned_classes:
            # A Parameter class of the plan: its bases are the hierarchy (CM001), but a
            # base that is now a factory function is still CM003.
            named = [(s, t) for s, t in named if t.kind == "factory"]
        self._report(node, f"class {node.name.value}", named, ordinal)

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        # ``has_param_feature(p, Features.K) or isinstance(p, (K,))`` is what ``apply``
        # writes for a kept class K: that isinstance already has its feature check.
        if isinstance(node.operator, cst.Or):
            for one, other in ((node.left, node.right), (node.right, node.left)):
                if isinstance(one, cst.Call) and _callee(one) == "has_param_feature":
                    self._paired.add(id(other))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Name) or func.value not in ("isinstance", "issubclass"):
            return
        ordinal = self._next("call")
        if func.value in self._shadowed:
            return
        args = node.args
        if len(args) != 2 or any(a.keyword or a.star for a in args):
            return
        exprs = self._elements(args[1].value)
        if func.value == "issubclass":
            exprs = self._elements(args[0].value) + exprs
        named = self._named(exprs)
        if id(node) in self._paired:
            named = [(s, t) for s, t in named if t.kind != "shadow"]
        self._report(node, func.value, named, ordinal)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        ordinal = self._next("cmp")
        left = node.left
        for target in node.comparisons:
            op, right = target.operator, target.comparator
            subject, other = self._type_subject(left), right
            if subject is None and isinstance(op, _EQUALITY):
                subject, other = self._type_subject(right), left
            if subject is not None and isinstance(op, _EQUALITY + _MEMBERSHIP):
                exprs = self._elements(other) if isinstance(op, _MEMBERSHIP) else [other]
                self._report(node, f"{subject} {_OPERATOR_TEXT[type(op)]}", self._named(exprs),
                             ordinal)
            left = right



def _callee(call: cst.Call) -> str | None:
    """The last name of what ``call`` calls (``f`` for ``f(...)`` and ``m.f(...)``)."""
    func = call.func
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return None
