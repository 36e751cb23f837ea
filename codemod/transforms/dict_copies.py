"""Rebind a parameter's methods after code copies its attributes onto another object.

What it does
    After a statement that replaces or extends an object's attribute dict,
    ``t.__dict__ = p.__dict__.copy()``, ``t.__dict__.update(p.__dict__)`` or
    ``t.__dict__ |= p.__dict__``, it adds
    ``rebind_param_methods(t)``; a ``t.__dict__.update(...)`` inside an expression becomes
    ``rebind_param_methods(t, t.__dict__.update(...))`` (the copy, then the rebinding, and
    the call's value).
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
    is followed by it wherever a parameter can take part (``may_copy_param``): only an
    object copying into its own dict (``self.__dict__.update(state)`` in an ordinary
    class) or out of it is left byte-identical. ``t`` is evaluated a second
    time, so only a plain name or a short attribute chain qualifies; other targets, and
    copies written differently (``vars(t).update``), are left alone: docs/fix-safety.md "Known
    limits". The helper is imported at module level unless the runtime module loads this
    file itself (then inside the function: no import cycle).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from codemod.analysis.init_shapes import code_of
from codemod.planning.plan import Plan
from codemod.runtime.helpers import PARAM_ATTR_DICT, REBIND_PARAM_METHODS
from codemod.transforms.dict_copy_screen import may_rewrite as may_rewrite
from codemod.transforms.dict_forms import DICT_VIEWS, attr_dict_of, copied_object, copy_target, setattr_copy
from codemod.transforms.local_imports import with_import_first
from codemod.transforms.refs import FileRefs

_HELPER = REBIND_PARAM_METHODS
_VIEW = PARAM_ATTR_DICT


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
        #: The entries of ``_imported_inside`` set aside while a ``def``'s header is visited.
        self._held: list[list[str]] = []
        #: Per enclosing function: the helpers an expression in it calls that must be
        #: imported inside it (``local``).
        self._imported_inside: list[list[str]] = []
        #: Enclosing scopes: ("class", is a Parameter class) or ("def", an ordinary
        #: object's own ``self`` name visible there, or None).
        self._scopes: list[tuple[str, object]] = []
        self._param_classes = {p.name for p in refs.plan.classes.values()
                               if p.facts.module == refs.ff.module_name}
        #: Reads rewritten to ``param_attr_dict`` (the old-style view).
        self.reads = 0
        self._stores = 0
        #: ids of the copy calls that are statements of their own (a rebinding statement
        #: follows them). An earlier run's ``rebind_param_methods(t, <copy>)`` needs no
        #: entry: a file naming the helper is never given to this transformer.
        self._copies_placed: set[int] = set()
        #: Keys a converted parameter's dict has that the old instance's did not, and the
        #: backing fields it no longer holds (the view answers them).
        self.added_names = added_names(refs.plan)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._scopes.append(("class", node.name.value in self._param_classes))

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self._scopes.pop()
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions += 1
        self._imported_inside.append([])
        params = [*node.params.posonly_params, *node.params.params]
        own: object = None
        if self._scopes and self._scopes[-1] == ("class", False) and params:
            own = params[0].name.value  # a method of an ordinary class
        elif self._scopes and self._scopes[-1][0] == "def":
            own = self._scopes[-1][1]  # a closure inside such a method sees it too
        self._scopes.append(("def", own))

    # A ``def``'s decorators, parameters (their defaults and annotations) and return
    # annotation run where the ``def`` does, before the body's import of a helper:
    # while they are visited, the function is not entered yet.
    def _visit_header(self, node: cst.FunctionDef) -> None:
        self._functions -= 1
        self._held.append(self._imported_inside.pop())

    def _leave_header(self, node: cst.FunctionDef) -> None:
        self._functions += 1
        self._imported_inside.append(self._held.pop())

    visit_FunctionDef_decorators = visit_FunctionDef_params = visit_FunctionDef_returns = _visit_header
    leave_FunctionDef_decorators = leave_FunctionDef_params = leave_FunctionDef_returns = _leave_header

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        self._functions -= 1
        helpers = self._imported_inside.pop()
        if helpers:
            updated_node = with_import_first(updated_node, self.runtime, helpers)
        self._scopes.pop()
        return updated_node

    def may_copy_param(self, small: cst.BaseSmallStatement, target: cst.BaseExpression) -> bool:
        """``may_involve_param`` for a copy statement's target and copied object."""
        return self.may_involve_param(target, copied_object(small))

    def may_involve_param(self, *sides: cst.BaseExpression | None) -> bool:
        """Whether a converted parameter can be the copy's source or target.

        Not when an ordinary object copies into or out of its own attribute dict
        (``self`` of a method of a class that is not a Parameter class: pickling's
        ``__setstate__``, lazy modules, proxies). Otherwise yes, in any file: a
        parameter can reach any function, whatever the file imports or its names say
        (the helpers answer as before for every other object).
        """
        own = self._scopes[-1][1] if self._scopes and self._scopes[-1][0] == "def" else None
        for side in sides:
            if own is not None and isinstance(side, cst.Name) and side.value == own:
                return False
        return True

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

    def _helper_in_expression(self, helper: str) -> cst.BaseExpression | None:
        """The runtime's ``helper`` as an expression here can call it: with ``local``, a
        name the enclosing function imports first thing (``with_import_first``). None,
        counted as ``skipped``, outside every function where the helper cannot be imported
        (``local``) or may not be defined yet (the runtime module's own module level)."""
        if (self.local or self.refs.is_runtime) and not self._functions:
            self.skipped += 1
            return None
        if self.local and not self.refs.is_runtime:
            if helper not in self._imported_inside[-1]:
                self._imported_inside[-1].append(helper)
            return cst.Name(helper)
        return cst.Name(helper) if self.refs.is_runtime else self.refs.name_in(self.runtime, helper)

    def _old_view(self, obj: cst.BaseExpression) -> cst.BaseExpression | None:
        """``param_attr_dict(obj)`` as this file spells it (None: cannot be called here)."""
        func = self._helper_in_expression(_VIEW)
        if func is None:
            return None
        self.reads += 1
        return cst.Call(func=func, args=[cst.Arg(obj.deep_clone())])

    def _keyed(self, key: cst.BaseExpression) -> bool:
        """A literal key whose answer conversion changed (a former property, a method...)."""
        return isinstance(key, cst.SimpleString) and key.evaluated_value in self.added_names

    def visit_Expr(self, node: cst.Expr) -> None:
        """A call that is a statement of its own: a copy there is followed by a rebinding
        statement (``leave_SimpleStatementLine``)."""
        self._copies_placed.add(id(node.value))

    def _copy_in_expression(self, original_node: cst.Call,
                            updated_node: cst.Call) -> cst.BaseExpression | None:
        """``t.__dict__.update(...)`` inside an expression (a lambda, a comprehension, an
        operand), where no statement can follow it: ``rebind_param_methods(t, <the
        call>)``, which runs the copy, then rebinds, and gives back the call's value.
        None when the call is not such a copy or cannot be rewritten here."""
        if id(original_node) in self._copies_placed:
            return None
        copy = cst.Expr(updated_node)
        target = copy_target(copy)
        if target is None:
            return None
        if not self.may_copy_param(copy, target):
            self.out_of_scope += 1
            return None
        func = self._helper_in_expression(_HELPER)
        if func is None:
            return None
        self.count += 1
        return cst.Call(func=func, args=[cst.Arg(target.deep_clone()), cst.Arg(updated_node)])

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        """``p.__dict__.get("weight_loader")`` / ``vars(p).get(...)`` for an added name; a
        copy inside an expression (``_copy_in_expression``)."""
        rebound = self._copy_in_expression(original_node, updated_node)
        if rebound is not None:
            return rebound
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
        operand = operand.with_changes(for_in=loop.with_changes(iter=new_iter))
        key: cst.BaseExpression | None = loop.target if method is None or method.attr.value == "keys" else None
        if method is not None and method.attr.value == "items" and isinstance(loop.target, cst.Tuple) \
                and loop.target.elements:
            key = loop.target.elements[0].value  # ``for k, v in p.__dict__.items()``
        if isinstance(key, cst.Name):
            # The keys are the old ones now: read by the loop's key, the dict is the view
            # too (``{k: p.__dict__[k] for k in p.__dict__}``; the new dict has no ``_f``).
            keyed = _KeyedReads(obj, key.value, lambda: self._old_view(obj))
            operand = operand.visit(keyed)  # type: ignore[assignment]
        return operand


    def _copy_view(self, operand: cst.BaseExpression) -> cst.BaseExpression | None:
        """An operand of ``==``/``!=`` that is a copy or a view of an attribute dict
        (``p.__dict__.copy()``, ``.items()``, ``.keys()``, ``.values()``, ``dict(p.__dict__)``,
        ``{**vars(p)}``), made from ``param_attr_dict(p)`` instead (None: not one)."""
        if isinstance(operand, cst.Call) and isinstance(operand.func, cst.Attribute) \
                and operand.func.attr.value in DICT_VIEWS and not operand.args:
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


class _KeyedReads(cst.CSTTransformer):
    """``x.__dict__[k]`` (``vars(x)[k]``, ``.get(k)``, ``getattr(x, k)``) for one ``x`` and
    the loop name ``k`` -> the old-style view's, inside a comprehension over ``x``'s
    rewritten dict (not in a nested scope that may rebind ``k``)."""

    def __init__(self, obj: cst.BaseExpression, key: str,
                 view: Callable[[], cst.BaseExpression | None]) -> None:
        super().__init__()
        self.code = code_of(obj)
        self.key = key
        self.view = view

    def _same(self, expr: cst.BaseExpression) -> bool:
        obj = attr_dict_of(expr)
        return obj is not None and code_of(obj) == self.code

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def leave_Subscript(self, original_node: cst.Subscript, updated_node: cst.Subscript) -> cst.BaseExpression:
        if self._same(updated_node.value) and len(updated_node.slice) == 1 and _indexed_by(updated_node, self.key):
            view = self.view()
            if view is not None:
                return updated_node.with_changes(value=view)
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        func = updated_node.func
        args = updated_node.args
        if isinstance(func, cst.Attribute) and func.attr.value == "get" and args \
                and self._same(func.value) and isinstance(args[0].value, cst.Name) \
                and args[0].value.value == self.key:
            view = self.view()
            if view is not None:
                return updated_node.with_changes(func=func.with_changes(value=view))
        if isinstance(func, cst.Name) and func.value == "getattr" and len(args) == 2 \
                and not any(a.star or a.keyword for a in args) \
                and code_of(args[0].value) == self.code \
                and isinstance(args[1].value, cst.Name) and args[1].value.value == self.key:
            # ``getattr(p, k)`` of an old key (``_f``): what the old attribute held, now
            # the view's entry (the converted parameter has no ``_f``).
            view = self.view()
            if view is not None:
                return cst.Subscript(value=view, slice=[cst.SubscriptElement(cst.Index(args[1].value))],
                                     lpar=updated_node.lpar, rpar=updated_node.rpar)
        return updated_node


def _indexed_by(node: cst.Subscript, key: str) -> bool:
    """Whether ``node``'s one index is the name ``key``."""
    index = node.slice[0].slice
    return isinstance(index, cst.Index) and isinstance(index.value, cst.Name) and index.value.value == key


def added_names(plan: Plan) -> frozenset[str]:
    """Keys a converted parameter's dict has that the old instance's did not (methods,
    former properties, feature tags, copy hooks), and the backing fields it no longer
    holds: the literal keys whose reads ``param_attr_dict`` answers."""
    names = {"_param_features", "_param_kind", "__deepcopy__", "__reduce_ex__"}
    for cls in plan.classes.values():
        if cls.converted or cls.shadow:
            names.update(cls.properties, cls.properties.values(), cls.method_funcs)
    return frozenset(names)

