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
    without them, such as modules, keep their attributes as the copy left them). A copy
    is followed by it only where a parameter can take part (``may_copy_param``): an
    object copying into its own dict (``self.__dict__.update(state)`` in an ordinary
    class) or out of it, and files that neither import torch nor name a parameter, a
    weight or a tensor in the copy, are left byte-identical. ``t`` is evaluated a second
    time, so only a plain name or a short attribute chain qualifies; other targets, and
    copies written differently (``vars(t).update``), are left alone: README "Known
    limits". The helper is imported at module level unless the runtime module loads this
    file itself (then inside the function: no import cycle).
"""

from __future__ import annotations

import re

import libcst as cst

from codemod.analysis.names import dotted
from codemod.transforms.refs import FileRefs
from codemod.transforms.use_sites import is_simple

_HELPER = "rebind_param_methods"

#: A file that imports torch can hold tensors anywhere.
_IMPORTS_TORCH = re.compile(r"^\s*(?:import\s+torch\b|from\s+torch\b)", re.MULTILINE)
#: Names that tie an expression to parameters even in a file that does not import torch.
_PARAM_WORDS = re.compile(r"param|weight|tensor", re.IGNORECASE)


def _dict_of(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``t`` of ``t.__dict__`` when ``t`` is simple."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == "__dict__" and is_simple(expr.value):
        return expr.value
    return None


def copied_object(small: cst.BaseSmallStatement) -> cst.BaseExpression | None:
    """``x`` when the copy's source is ``x``'s attribute dict: ``x.__dict__``,
    ``x.__dict__.copy()``, ``vars(x)``, ``dict(x.__dict__)`` (None: any other value)."""
    if isinstance(small, (cst.Assign, cst.AugAssign)):
        source: cst.BaseExpression | None = small.value
    elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and small.value.args:
        source = small.value.args[0].value
    else:
        return None
    if isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute) \
            and source.func.attr.value == "copy" and not source.args:
        source = source.func.value
    if isinstance(source, cst.Call) and isinstance(source.func, cst.Name) \
            and source.func.value in ("dict", "vars") and len(source.args) == 1:
        if source.func.value == "vars":
            return source.args[0].value
        source = source.args[0].value
    if isinstance(source, cst.Attribute) and source.attr.value == "__dict__":
        return source.value
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
        #: Copies left alone because no parameter can take part (``may_copy_param``).
        self.out_of_scope = 0
        self._functions = 0
        #: Enclosing scopes: ("class", is a Parameter class) or ("def", an ordinary
        #: object's own ``self`` name visible there, or None).
        self._scopes: list[tuple[str, object]] = []
        self._param_classes = {p.name for p in refs.plan.classes.values()
                               if p.facts.module == refs.ff.module_name}
        self._imports_torch = bool(_IMPORTS_TORCH.search(refs.ff.text or refs.ff.module.code))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._scopes.append(("class", node.name.value in self._param_classes))

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self._scopes.pop()
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions += 1
        params = [*node.params.posonly_params, *node.params.params]
        own: object = None
        if self._scopes and self._scopes[-1] == ("class", False) and params:
            own = params[0].name.value  # a method of an ordinary class
        elif self._scopes and self._scopes[-1][0] == "def":
            own = self._scopes[-1][1]  # a closure inside such a method sees it too
        self._scopes.append(("def", own))

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        self._functions -= 1
        self._scopes.pop()
        return updated_node

    def may_copy_param(self, small: cst.BaseSmallStatement, target: cst.BaseExpression) -> bool:
        """Whether a converted parameter can be the copy's source or target.

        Not when an ordinary object copies into or out of its own attribute dict
        (``self`` of a method of a class that is not a Parameter class: pickling's
        ``__setstate__``, lazy modules, proxies). Otherwise yes in a file that imports
        torch, and elsewhere only when the copy names a parameter, weight or tensor.
        """
        own = self._scopes[-1][1] if self._scopes and self._scopes[-1][0] == "def" else None
        source = copied_object(small)
        for side in (target, source):
            if own is not None and isinstance(side, cst.Name) and side.value == own:
                return False
        if self._imports_torch:
            return True
        words = [dotted(target) or "", dotted(source) if source is not None else ""]
        return any(_PARAM_WORDS.search(w) for w in words)

    def _rebind(self, small: cst.BaseSmallStatement,
                target: cst.BaseExpression) -> list[cst.BaseSmallStatement] | None:
        """The statements that follow the copy onto ``target`` (None: leave it alone)."""
        if not self.may_copy_param(small, target):
            self.out_of_scope += 1
            return None
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
            rebind = self._rebind(small, target) if target is not None else None
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
            rebind = self._rebind(updated_node.body[0], target) if target is not None else None
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
