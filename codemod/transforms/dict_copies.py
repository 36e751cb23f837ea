"""Rebind a parameter's methods after code copies its attributes onto another object.

What it does
    After a statement that replaces or extends an object's attribute dict,
    ``t.__dict__ = p.__dict__.copy()``, ``t.__dict__.update(p.__dict__)`` or
    ``t.__dict__ |= p.__dict__``, it adds
    ``rebind_param_methods(t)``.
Why
    A converted parameter's methods live in its ``__dict__``, each bound to it. Before
    conversion they were found on the class, so a tensor given a parameter's class and
    attributes (vLLM's ``reload/meta.py``, ``MPLinearKernel._shallow_copy``) had methods
    that acted on itself; after a plain copy they would still act on the original (a
    reload would write into the old tensor, or raise ``ReferenceError`` once it is freed).
Example
    ``meta.__dict__ = tensor.__dict__.copy()`` becomes the same line followed by
    ``rebind_param_methods(meta)``.
Fix safety
    ``rebind_param_methods`` changes only methods made by a converted module (objects
    without them, such as modules, keep their attributes as the copy left them), so the
    statement is rewritten wherever it appears, whatever the objects are. ``t`` is
    evaluated a second time, so only a plain name or a short attribute chain qualifies;
    other targets, and copies written differently (``vars(t).update``, ``setattr`` loops),
    are left alone: README "Known limits". The helper is imported at module level unless
    the runtime module loads this file itself (then inside the function: no import cycle).
"""

from __future__ import annotations

import libcst as cst

from codemod.transforms.refs import FileRefs
from codemod.transforms.use_sites import is_simple

_HELPER = "rebind_param_methods"


def _dict_of(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``t`` of ``t.__dict__`` when ``t`` is simple."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == "__dict__" and is_simple(expr.value):
        return expr.value
    return None


def copy_target(small: cst.BaseSmallStatement) -> cst.BaseExpression | None:
    """``t`` when ``small`` is ``t.__dict__ = ...``, ``t.__dict__ |= ...`` or
    ``t.__dict__.update(...)``."""
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        return _dict_of(small.targets[0].target)
    if isinstance(small, cst.AugAssign) and isinstance(small.operator, cst.BitOrAssign):
        return _dict_of(small.target)
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        func = small.value.func
        if isinstance(func, cst.Attribute) and func.attr.value == "update":
            return _dict_of(func.value)
    return None


class DictCopyTransformer(cst.CSTTransformer):
    """Adds ``rebind_param_methods(t)`` after each attribute-dict copy onto ``t``.

    ``runtime``: the runtime module to take the helper from. ``local``: this file must
    not import it at module level (the runtime module itself runs this file while it
    loads: a module-level import would be a cycle); the helper is then imported where it
    is called, inside the function, and a copy at module level is left alone
    (``skipped``). In the runtime module itself, ``local`` means: functions call the
    helper defined there; a module-level copy (which may run before the definition) is
    left alone.
    """

    def __init__(self, refs: FileRefs, runtime: str, local: bool = False) -> None:
        super().__init__()
        self.refs = refs
        self.runtime = runtime
        self.local = local
        self.count = 0
        self.skipped = 0
        self._functions = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions += 1

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        self._functions -= 1
        return updated_node

    def _rebind(self, target: cst.BaseExpression) -> list[cst.BaseSmallStatement] | None:
        """The statements that follow the copy onto ``target`` (None: leave it alone)."""
        if self.local and not self._functions:
            self.skipped += 1
            return None
        self.count += 1
        if self.refs.is_runtime:  # defined in this module, above every function's call
            return [cst.Expr(cst.Call(func=cst.Name(_HELPER), args=[cst.Arg(target.deep_clone())]))]
        if not self.local:
            func = self.refs.name_in(self.runtime, _HELPER)
            return [cst.Expr(cst.Call(func=func, args=[cst.Arg(target.deep_clone())]))]
        module = cst.parse_expression(self.runtime)
        local_import = cst.ImportFrom(module=module, names=[cst.ImportAlias(cst.Name(_HELPER))])  # type: ignore[arg-type]
        return [local_import, cst.Expr(cst.Call(func=cst.Name(_HELPER), args=[cst.Arg(target.deep_clone())]))]

    def _with_rebinds(self, body: tuple[cst.BaseSmallStatement, ...]) -> list[cst.BaseSmallStatement] | None:
        out: list[cst.BaseSmallStatement] = []
        changed = False
        for index, small in enumerate(body):
            target = copy_target(small)
            rebind = self._rebind(target) if target is not None else None
            if rebind is None:
                out.append(small)
                continue
            last = index == len(body) - 1
            out.append(small.with_changes(semicolon=cst.MaybeSentinel.DEFAULT) if last else small)
            out.extend(rebind)
            changed = True
        return out if changed else None

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        if len(updated_node.body) == 1:
            target = copy_target(updated_node.body[0])
            rebind = self._rebind(target) if target is not None else None
            if rebind is None:
                return updated_node
            # On their own lines, after the copy (comments stay with the copy).
            return cst.FlattenSentinel([updated_node, *(cst.SimpleStatementLine(body=[s]) for s in rebind)])
        body = self._with_rebinds(updated_node.body)
        return updated_node if body is None else updated_node.with_changes(body=body)

    def leave_SimpleStatementSuite(
        self, original_node: cst.SimpleStatementSuite, updated_node: cst.SimpleStatementSuite
    ) -> cst.SimpleStatementSuite:
        body = self._with_rebinds(updated_node.body)
        return updated_node if body is None else updated_node.with_changes(body=body)
