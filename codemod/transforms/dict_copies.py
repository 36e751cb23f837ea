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
    copies written differently (``vars(t).update``), are left alone: docs/fix-safety.md "Known
    limits". The helper is imported at module level unless the runtime module loads this
    file itself (then inside the function: no import cycle).
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Iterator, Sequence

import libcst as cst

from codemod.analysis import python_trees
from codemod.analysis.names import dotted
from codemod.analysis.text_search import lines_matching
from codemod.planning.plan import Plan
from codemod.transforms.refs import FileRefs
from codemod.transforms.use_sites import is_simple

_HELPER = "rebind_param_methods"
_VIEW = "param_attr_dict"
#: Methods giving a copy or a view of a dict, compared as the dict itself would be.
_DICT_VIEWS = frozenset({"copy", "items", "keys", "values"})

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
        #: Reads rewritten to ``param_attr_dict`` (the old-style view).
        self.reads = 0
        self._stores = 0
        #: Keys a converted parameter's dict has that the old instance's did not, and the
        #: backing fields it no longer holds (the view answers them).
        self.added_names = added_names(refs.plan)
        text = refs.ff.text or refs.ff.module.code
        names = {p.name for p in refs.plan.classes.values() if p.converted or p.shadow}
        self._imports_torch = bool(_IMPORTS_TORCH.search(text)) or any(
            re.search(rf"\b{re.escape(name)}\b", text) for name in names)

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
        """``may_involve_param`` for a copy statement's target and copied object."""
        return self.may_involve_param(target, copied_object(small))

    def may_involve_param(self, *sides: cst.BaseExpression | None) -> bool:
        """Whether a converted parameter can be the copy's source or target.

        Not when an ordinary object copies into or out of its own attribute dict
        (``self`` of a method of a class that is not a Parameter class: pickling's
        ``__setstate__``, lazy modules, proxies). Otherwise yes in a file that imports
        torch or names a converted class, and elsewhere only when the copy names a parameter, weight or tensor.
        """
        own = self._scopes[-1][1] if self._scopes and self._scopes[-1][0] == "def" else None
        for side in sides:
            if own is not None and isinstance(side, cst.Name) and side.value == own:
                return False
        if self._imports_torch:
            return True
        words = [dotted(side) or "" for side in sides if side is not None]
        return any(_PARAM_WORDS.search(w) for w in words)

    def _rebind(self, small: cst.BaseSmallStatement | None,
                target: cst.BaseExpression) -> list[cst.BaseSmallStatement] | None:
        """The statements that follow the copy onto ``target`` (None: leave it alone).
        ``small``: the copy statement (None: already found in scope)."""
        if small is not None and not self.may_copy_param(small, target):
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

    def _with_rebinds(self, body: Sequence[cst.BaseSmallStatement]) -> list[cst.BaseSmallStatement] | None:
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

    # -- copies by a setattr loop -------------------------------------------------------------
    def leave_For(self, original_node: cst.For, updated_node: cst.For
                  ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        """``for k, v in s.__dict__.items(): setattr(t, k, v)`` copies like ``update``."""
        found = setattr_copy(updated_node)
        if found is None or updated_node.orelse is not None:
            return updated_node
        target, source = found
        if not self.may_involve_param(target, source):
            self.out_of_scope += 1
            return updated_node
        rebind = self._rebind(None, target)
        if rebind is None:
            return updated_node
        return cst.FlattenSentinel([updated_node, *(cst.SimpleStatementLine(body=[s]) for s in rebind)])

    # -- reads that inspect the dict ----------------------------------------------------------
    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._stores += 1

    def leave_AssignTarget(self, original_node: cst.AssignTarget, updated_node: cst.AssignTarget) -> cst.AssignTarget:
        self._stores -= 1
        return updated_node

    def visit_Del(self, node: cst.Del) -> None:
        self._stores += 1

    def leave_Del(self, original_node: cst.Del, updated_node: cst.Del) -> cst.Del:
        self._stores -= 1
        return updated_node

    def _old_view(self, obj: cst.BaseExpression) -> cst.BaseExpression | None:
        """``param_attr_dict(obj)`` as this file spells it (None: cannot be called here)."""
        if self.local and not self.refs.is_runtime:
            self.skipped += 1  # would need an import inside the function: left alone
            return None
        if self.refs.is_runtime and not self._functions:
            self.skipped += 1
            return None
        self.reads += 1
        func = cst.Name(_VIEW) if self.refs.is_runtime else self.refs.name_in(self.runtime, _VIEW)
        return cst.Call(func=func, args=[cst.Arg(obj.deep_clone())])

    def _keyed(self, key: cst.BaseExpression) -> bool:
        """A literal key whose answer conversion changed (a former property, a method...)."""
        return isinstance(key, cst.SimpleString) and key.evaluated_value in self.added_names

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        """``p.__dict__.get("weight_loader")`` / ``vars(p).get(...)`` for an added name."""
        func = updated_node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "get" and updated_node.args):
            return updated_node
        obj = attr_dict_of(func.value)
        if obj is None or not self._keyed(updated_node.args[0].value):
            return updated_node
        view = self._old_view(obj)
        return updated_node if view is None else updated_node.with_changes(func=func.with_changes(value=view))

    def leave_Subscript(self, original_node: cst.Subscript, updated_node: cst.Subscript) -> cst.BaseExpression:
        """``p.__dict__["weight_loader"]`` (a read, not a store or ``del``)."""
        obj = attr_dict_of(updated_node.value)
        if obj is None or self._stores or len(updated_node.slice) != 1:
            return updated_node
        index = updated_node.slice[0].slice
        if not isinstance(index, cst.Index) or not self._keyed(index.value):
            return updated_node
        view = self._old_view(obj)
        return updated_node if view is None else updated_node.with_changes(value=view)

    def leave_Comparison(self, original_node: cst.Comparison, updated_node: cst.Comparison) -> cst.BaseExpression:
        """``"weight_loader" in p.__dict__``; ``==`` / ``!=`` between attribute dicts (two
        parameters of one kind compare as before; comprehensions are made old-style
        wherever they are, ``leave_DictComp``)."""
        left = updated_node.left
        targets = list(updated_node.comparisons)
        changed = False
        equality = any(isinstance(t.operator, (cst.Equal, cst.NotEqual)) for t in targets)
        if equality:
            new_left = self._views_in(left)
            changed = new_left is not left
            left = new_left
        previous = original_node.left
        for i, target in enumerate(targets):
            comparator = target.comparator
            if isinstance(target.operator, (cst.In, cst.NotIn)):
                obj = attr_dict_of(comparator)
                if obj is not None and self._keyed(previous):
                    view = self._old_view(obj)
                    if view is not None:
                        targets[i] = target.with_changes(comparator=view)
                        changed = True
            elif equality:
                new = self._views_in(comparator)
                if new is not comparator:
                    targets[i] = target.with_changes(comparator=new)
                    changed = True
            previous = original_node.comparisons[i].comparator
        return updated_node.with_changes(left=left, comparisons=targets) if changed else updated_node

    def _comprehension(self, original_node: cst.BaseExpression, updated_node: cst.BaseExpression
                       ) -> cst.BaseExpression:
        new = self._views_in(updated_node, bare=False)
        return new

    leave_DictComp = leave_ListComp = leave_SetComp = leave_GeneratorExp = _comprehension

    def _views_in(self, operand: cst.BaseExpression, bare: bool = True) -> cst.BaseExpression:
        """``operand`` with its attribute-dict reads made old-style, when it is one
        (``p.__dict__``, ``vars(p)``) or a comprehension over one."""
        obj = attr_dict_of(operand) if bare else None
        if obj is not None:
            if not self.may_involve_param(obj):
                return operand
            view = self._old_view(obj)
            return operand if view is None else view
        if bare:
            copied = self._copy_view(operand)
            if copied is not None:
                return copied
        if not isinstance(operand, (cst.DictComp, cst.ListComp, cst.SetComp, cst.GeneratorExp)):
            return operand
        loop = operand.for_in
        source = loop.iter
        method = None
        if isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute) \
                and source.func.attr.value in ("items", "keys", "values") and not source.args:
            method, source = source.func, source.func.value
        obj = attr_dict_of(source)
        if obj is None or not self.may_involve_param(obj):
            return operand
        view = self._old_view(obj)
        if view is None:
            return operand
        new_iter = view if method is None else loop.iter.with_changes(func=method.with_changes(value=view))
        return operand.with_changes(for_in=loop.with_changes(iter=new_iter))


    def _copy_view(self, operand: cst.BaseExpression) -> cst.BaseExpression | None:
        """An operand of ``==``/``!=`` that is a copy or a view of an attribute dict
        (``p.__dict__.copy()``, ``.items()``, ``.keys()``, ``.values()``, ``dict(p.__dict__)``,
        ``{**vars(p)}``), made from ``param_attr_dict(p)`` instead (None: not one)."""
        if isinstance(operand, cst.Call) and isinstance(operand.func, cst.Attribute) \
                and operand.func.attr.value in _DICT_VIEWS and not operand.args:
            obj = attr_dict_of(operand.func.value)
            view = self._old_view(obj) if obj is not None and self.may_involve_param(obj) else None
            return None if view is None else operand.with_changes(func=operand.func.with_changes(value=view))
        if isinstance(operand, cst.Call) and isinstance(operand.func, cst.Name) and operand.func.value == "dict" \
                and len(operand.args) == 1 and not operand.args[0].star:
            obj = attr_dict_of(operand.args[0].value)
            view = self._old_view(obj) if obj is not None and self.may_involve_param(obj) else None
            return None if view is None else operand.with_changes(args=[operand.args[0].with_changes(value=view)])
        if isinstance(operand, cst.Dict) and operand.elements \
                and all(isinstance(e, cst.StarredDictElement) for e in operand.elements):
            elements = list(operand.elements)
            for i, element in enumerate(elements):
                obj = attr_dict_of(element.value)
                view = self._old_view(obj) if obj is not None and self.may_involve_param(obj) else None
                if view is not None:
                    elements[i] = element.with_changes(value=view)
            return None if elements == list(operand.elements) else operand.with_changes(elements=elements)
        return None


def attr_dict_of(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``x`` of ``x.__dict__``, ``vars(x)`` or ``getattr(x, "__dict__")``."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == "__dict__":
        return expr.value
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "getattr" \
            and len(expr.args) == 2 and not any(a.star for a in expr.args) \
            and isinstance(expr.args[1].value, cst.SimpleString) \
            and expr.args[1].value.evaluated_value == "__dict__":
        return expr.args[0].value
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "vars" \
            and len(expr.args) == 1 and not expr.args[0].star:
        return expr.args[0].value
    return None


def setattr_copy(loop: cst.For) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """(``t``, ``s``) of ``for k, v in s.__dict__.items(): setattr(t, k, v)`` (``vars(s)``
    too), when ``t`` is simple and the body is that one call."""
    it = loop.iter
    if not (isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute)
            and it.func.attr.value == "items" and not it.args):
        return None
    source = attr_dict_of(it.func.value)
    names = loop.target
    if source is None or not isinstance(names, cst.Tuple) or len(names.elements) != 2:
        return None
    key, value = (e.value for e in names.elements)
    body = loop.body.body
    if len(body) != 1:
        return None
    line = body[0]
    small = line.body[0] if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 else \
        (line if isinstance(line, cst.BaseSmallStatement) else None)
    if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
        return None
    call = small.value
    if not (isinstance(call.func, cst.Name) and call.func.value == "setattr" and len(call.args) == 3):
        return None
    target, k, v = (a.value for a in call.args)
    if not (isinstance(key, cst.Name) and isinstance(value, cst.Name) and isinstance(k, cst.Name)
            and isinstance(v, cst.Name) and k.value == key.value and v.value == value.value):
        return None
    return (target, source) if is_simple(target) else None


def added_names(plan: Plan) -> frozenset[str]:
    """Keys a converted parameter's dict has that the old instance's did not (methods,
    former properties, feature tags, copy hooks), and the backing fields it no longer
    holds: the literal keys whose reads ``param_attr_dict`` answers."""
    names = {"_param_features", "_param_kind", "__deepcopy__", "__reduce_ex__"}
    for cls in plan.classes.values():
        if cls.converted or cls.shadow:
            names.update(cls.properties, cls.properties.values(), cls.method_funcs)
    return frozenset(names)


def may_rewrite(text: str, keys: frozenset[str],
                param_classes: frozenset[str] | None = None) -> bool:
    """Whether ``DictCopyTransformer`` can change a file: a cheap screen with CPython's
    parser, so that a file merely calling ``vars(...)`` is never parsed by LibCST.

    True for every shape the transformer acts on (an attribute-dict copy, a ``setattr``
    loop over one, a read of one of ``keys`` through ``.get``/``[...]``/``in``, an
    equality or a comprehension over an attribute dict), and for text CPython cannot
    parse; it may say True where the transformer then leaves the file alone.

    ``param_classes``: the names of the Parameter classes this file defines, when known;
    then a copy into, a comprehension over or an equality of the attribute dict of a
    method's own ``self`` in an ordinary class (or a closure in it) is passed over, as
    the transformer leaves it alone (``may_involve_param``)."""
    try:
        tree = python_trees.parse(text)
    except (SyntaxError, ValueError):
        return True
    for node, own in _walk_lines(tree, _lines_naming_attr_dicts(text), param_classes):
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Attribute) and t.attr == "__dict__" and not _is_own(t.value, own)
                   for t in targets):
                return True
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and _is_attr_dict(func.value):
                if func.attr == "update" and not _is_own(_dict_object(func.value), own):
                    return True
                if func.attr == "get" and node.args and _is_key(node.args[0], keys):
                    return True
        elif isinstance(node, ast.Subscript):
            if _is_attr_dict(node.value) and _is_key(node.slice, keys):
                return True
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for op, left, right in zip(node.ops, operands, operands[1:]):
                if isinstance(op, (ast.In, ast.NotIn)) and _is_key(left, keys) \
                        and _is_attr_dict(right):
                    return True
                if isinstance(op, (ast.Eq, ast.NotEq)) and any(
                        (_is_attr_dict(o) or _over_attr_dict(o) or _copy_of_attr_dict(o))
                        and not _own_dicts_only(o, own)
                        for o in (left, right)):
                    return True
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            if _over_attr_dict(node) and not _own_dicts_only(node, own):
                return True
        elif isinstance(node, ast.For):
            if _dict_items(node.iter) and any(
                    isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "setattr"
                    for stmt in node.body for n in ast.walk(stmt)):
                return True
    return False


def _is_own(obj: ast.AST | None, own: str | None) -> bool:
    """``obj`` is the plain name ``own`` (an ordinary object's own ``self``)."""
    return own is not None and isinstance(obj, ast.Name) and obj.id == own


def _dict_object(node: ast.AST) -> ast.AST | None:
    """``x`` of ``x.__dict__``, ``vars(x)`` or ``getattr(x, "__dict__")``."""
    if isinstance(node, ast.Attribute) and node.attr == "__dict__":
        return node.value
    if isinstance(node, ast.Call) and node.args and _is_attr_dict(node):
        return node.args[0]
    return None


def _own_dicts_only(node: ast.AST, own: str | None) -> bool:
    """Every attribute dict an equality operand or a comprehension's first loop reads
    (as ``DictCopyTransformer._views_in`` finds them) is ``own``'s."""
    if own is None:
        return False
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        source = node.generators[0].iter
        if isinstance(source, ast.Call) and isinstance(source.func, ast.Attribute) \
                and source.func.attr in ("items", "keys", "values") and not source.args:
            source = source.func.value
        return _is_own(_dict_object(source), own)
    if _is_attr_dict(node):
        return _is_own(_dict_object(node), own)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return _is_own(_dict_object(node.func.value), own)
    if isinstance(node, ast.Call) and node.args:
        return _is_own(_dict_object(node.args[0]), own)
    if isinstance(node, ast.Dict):
        return all(v is None or not _is_attr_dict(v) or _is_own(_dict_object(v), own)
                   for v in node.values)
    return False


#: A line that can hold an attribute dict: ``x.__dict__``, ``vars(x)``, ``getattr(x, "__dict__")``.
_ATTR_DICT_WORD = re.compile(r"__dict__|\bvars\b")


def _lines_naming_attr_dicts(text: str) -> list[int]:
    """Sorted 1-based numbers of the lines (as CPython numbers them) that mention
    ``__dict__`` or ``vars``."""
    return lines_matching(text, _ATTR_DICT_WORD)


def _walk_lines(tree: ast.AST, lines: list[int], param_classes: frozenset[str] | None = None,
                ) -> Iterator[tuple[ast.AST, str | None]]:
    """``ast.walk(tree)`` without the statements and expressions that span none of
    ``lines``: every shape ``may_rewrite`` looks for holds an attribute dict, whose
    spelling lies on one of them, inside the node that holds it. With each node, the
    own ``self`` of the ordinary class's method it is in (None: none, or
    ``param_classes`` not given), found as ``DictCopyTransformer`` finds it."""
    Scope = tuple[str, object]
    stack: list[tuple[ast.AST, Scope | None]] = [(tree, None)]
    while stack:
        node, scope = stack.pop()
        first = getattr(node, "lineno", None)
        if first is not None:
            for decorator in getattr(node, "decorator_list", ()):
                first = min(first, decorator.lineno)
            at = bisect.bisect_left(lines, first)
            if at == len(lines) or lines[at] > node.end_lineno:  # type: ignore[attr-defined]
                continue
        own = scope[1] if scope is not None and scope[0] == "def" and param_classes is not None else None
        yield node, own if isinstance(own, str) else None
        inner = scope
        if isinstance(node, ast.ClassDef):
            inner = ("class", param_classes is None or node.name in param_classes)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            params = [*node.args.posonlyargs, *node.args.args]
            mine: object = None
            if scope == ("class", False) and params:
                mine = params[0].arg
            elif scope is not None and scope[0] == "def":
                mine = scope[1]
            inner = ("def", mine)
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))


def _is_attr_dict(node: ast.AST) -> bool:
    """``x.__dict__``, ``vars(x)`` or ``getattr(x, "__dict__")`` (as ``attr_dict_of``)."""
    if isinstance(node, ast.Attribute):
        return node.attr == "__dict__"
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return False
    if node.func.id == "getattr" and len(node.args) == 2:
        key = node.args[1]
        return isinstance(key, ast.Constant) and key.value == "__dict__"
    return node.func.id == "vars" and len(node.args) == 1


def _copy_of_attr_dict(node: ast.AST) -> bool:
    """A copy or view of an attribute dict compared as the dict (``_copy_view``):
    ``.copy()``/``.items()``/``.keys()``/``.values()``, ``dict(d)``, ``{**d}``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in _DICT_VIEWS and not node.args:
        return _is_attr_dict(node.func.value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" \
            and len(node.args) == 1:
        return _is_attr_dict(node.args[0])
    if isinstance(node, ast.Dict) and node.keys and all(k is None for k in node.keys):
        return any(_is_attr_dict(v) for v in node.values)
    return False


def _dict_items(node: ast.AST) -> bool:
    """An attribute dict, or ``.items()``/``.keys()``/``.values()`` of one."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in ("items", "keys", "values") and not node.args:
        return _is_attr_dict(node.func.value)
    return _is_attr_dict(node)


def _over_attr_dict(node: ast.AST) -> bool:
    """A comprehension whose first loop runs over an attribute dict."""
    return isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)) \
        and _dict_items(node.generators[0].iter)


def _is_key(node: ast.AST, keys: frozenset[str]) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in keys
