"""Comparisons of two objects' types: ``type(a) is type(b)`` -> ``param_type(a) is param_type(b)``.

What it does
    In a comparison of two operands that are each ``type(x)`` (the builtin, one argument)
    or ``x.__class__``, with ``is``, ``is not``, ``==`` or ``!=``, each operand becomes
    ``param_type(x)``, from the family's runtime module; so does the type operand of such
    a comparison with torch's ``Parameter`` class (``type(p) is not nn.Parameter``). A
    membership test of an object's type in a tuple, list or set written out that holds
    another object's type or ``Parameter`` (``type(p) in (type(q), nn.Parameter, int)``)
    becomes ``param_type(p) in (param_type(q), nn.Parameter, int)``: its subject and each
    element that is an object's type (not a literal's: ``type(None)`` stays).
Why
    Every converted parameter is a plain ``Parameter``: left as it is, ``type(a) is
    type(b)`` would hold for parameters of two former classes, and for a converted
    parameter and a plain one. Engines ask it: vLLM's ``replace_parameter`` keeps the old
    parameter in place when the types match (it registers a fresh plain one when they
    differ), ``QKVCrossParallelLinear._is_same_param`` tells a weight from a scale of the
    same shape. ``param_type`` answers the former class's kind for a converted parameter
    and ``type(x)`` for anything else, so the comparison answers as before for every pair
    of objects.
Fix safety
    Rewritten wherever such a comparison stands, in any file of the tree: a parameter can
    reach any function, and for objects that are no converted parameter the answer is the
    same. ``x`` is evaluated once, in the same order. Left as they are: a ``type`` the
    code rebinds (``BuiltinScopes``), a chained comparison (``type(a) is type(b) is C``),
    other uses of a parameter's type (``type(p).__name__``, ``type(p)`` as a dict key),
    and, in a file the runtime module loads while it is imported, a comparison outside a
    function body, decorators and default values included (the helper cannot be imported
    there without a cycle; inside a function it is imported at the top of the function):
    each is reported as a warning (``module_level_comparisons``). ``codemod check``
    reports the comparisons written into a converted tree afterwards (CM006), found by
    the same rule (``analysis/type_comparisons.py``, which also holds the text gate).
"""

from __future__ import annotations

from collections import Counter

import libcst as cst

from codemod.analysis.bound_names import names_bound
from codemod.analysis.held_types import file_parameter_aliases
from codemod.analysis.type_comparisons import HELPER
from codemod.transforms.builtin_scopes import BuiltinScopes, Comprehension
from codemod.transforms.held_type_uses import CONTAINERS, EQUALITY, MEMBERSHIP, HeldTypeUses, type_subject
from codemod.transforms.local_imports import with_import_first
from codemod.transforms.refs import FileRefs
from codemod.types import PARAMETER_QUALNAMES


class TypeCompareTransformer(HeldTypeUses, BuiltinScopes):
    """Rewrites each comparison of two objects' types to compare ``param_type`` of each.

    ``runtime``: the runtime module to take ``param_type`` from. ``local``: this file must
    not import it at module level (the runtime module loads this file while it is
    imported); the helper is then imported at the top of each function that compares,
    and a comparison outside every function is left alone (``skipped``).
    """

    held_without_class = True

    def __init__(self, refs: FileRefs, runtime: str, local: bool = False) -> None:
        super().__init__()
        self.refs = refs
        self.runtime = runtime
        self.local = local and not refs.is_runtime
        self.count = 0
        self.skipped = 0
        #: Per enclosing function: whether a comparison in it needs the local import.
        self._functions: list[bool] = []
        #: The entries of ``_functions`` set aside while a ``def``'s header is visited.
        self._held: list[bool] = []
        #: Per enclosing class body (whether it binds ``type``) or other scope (None):
        #: code right in a class body that binds ``type`` calls that binding.
        self._bodies: list[bool | None] = []
        ff = refs.ff
        self.track_builtins(ff.text or ff.module.code, {*ff.globals, *ff.bindings})
        self.counts: Counter[str] = Counter()
        self.init_held_types(ff.text or ff.module.code)
        self.parameter_aliases = file_parameter_aliases(ff.text or ff.module.code)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._bodies.append("type" in names_bound([node.body]))  # type: ignore[list-item]
        self.enter_held_scope(node.name.value, function=False)

    def leave_ClassDef(self, original_node: cst.ClassDef,
                       updated_node: cst.ClassDef) -> cst.ClassDef:
        self._bodies.pop()
        self.leave_held_scope()
        return updated_node

    def visit_Lambda(self, node: cst.Lambda) -> None:
        super().visit_Lambda(node)
        self._bodies.append(None)

    def leave_Lambda(self, original_node: cst.Lambda, updated_node: cst.Lambda) -> cst.BaseExpression:
        self._bodies.pop()
        return super().leave_Lambda(original_node, updated_node)

    def _visit_comprehension(self, node: Comprehension) -> None:
        super()._visit_comprehension(node)
        self._bodies.append(None)

    def _leave_comprehension(self, original_node: Comprehension,
                             updated_node: Comprehension) -> cst.BaseExpression:
        self._bodies.pop()
        return super()._leave_comprehension(original_node, updated_node)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _visit_comprehension
    leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = _leave_comprehension

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.enter_function(node)
        self._functions.append(False)
        self._bodies.append(None)
        self.enter_held_scope(node.name.value, function=True)

    # A ``def``'s decorators, parameters (their defaults and annotations) and return
    # annotation run where the ``def`` does, before the body's import of the helper:
    # while they are visited, the function is not entered yet.
    def _visit_header(self, node: cst.FunctionDef) -> None:
        self._held.append(self._functions.pop())

    def _leave_header(self, node: cst.FunctionDef) -> None:
        self._functions.append(self._held.pop())

    visit_FunctionDef_decorators = visit_FunctionDef_params = visit_FunctionDef_returns = _visit_header
    leave_FunctionDef_decorators = leave_FunctionDef_params = leave_FunctionDef_returns = _leave_header

    def leave_FunctionDef(self, original_node: cst.FunctionDef,
                          updated_node: cst.FunctionDef) -> cst.FunctionDef:
        self.leave_scope()
        self._bodies.pop()
        self.leave_held_scope()
        if not self._functions.pop():
            return updated_node
        return with_import_first(updated_node, self.runtime, [HELPER])

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        return self.held_binding(updated_node) or updated_node

    def held_helper(self, runtime_of: str | None) -> cst.BaseExpression:
        helper = self._helper()
        assert helper is not None  # a held name is a function's: the helper is imported there
        return helper

    def leave_single_comparison(self, original_node: cst.Comparison,
                                updated_node: cst.Comparison) -> cst.BaseExpression:
        target = updated_node.comparisons[0]
        if isinstance(target.operator, MEMBERSHIP):
            return self._membership(updated_node)
        if not isinstance(target.operator, EQUALITY):
            return updated_node
        left, right = self._type_of(updated_node.left), self._type_of(target.comparator)
        # ``type(p) is nn.Parameter``: held for no former class; for a converted parameter
        # it would hold, so its type operand is compared as ``param_type`` too.
        if left is None and right is None:
            return updated_node
        if (left is None and not self._is_parameter(updated_node.left)) or \
                (right is None and not self._is_parameter(target.comparator)):
            return updated_node
        helper = self._helper()
        if helper is None:
            return updated_node
        self.count += 1
        return updated_node.with_changes(
            left=updated_node.left if left is None else _called(helper, left, updated_node.left),
            comparisons=[target if right is None else
                         target.with_changes(comparator=_called(helper, right, target.comparator))])

    def _membership(self, node: cst.Comparison) -> cst.BaseExpression:
        """``type(p) in (type(q), nn.Parameter, T)`` -> ``param_type(p) in (param_type(q),
        nn.Parameter, T)``: the subject and each element that is an object's type; left as
        it is unless an element is one or names torch's ``Parameter``."""
        subject = self._type_of(node.left)
        container = node.comparisons[0].comparator
        if subject is None or not isinstance(container, CONTAINERS) or \
                any(isinstance(element, cst.StarredElement) for element in container.elements):
            return node
        types = [_unless_literal(self._type_of(element.value)) for element in container.elements]
        if all(held is None for held in types) and \
                not any(self._is_parameter(element.value) for element in container.elements):
            return node
        helper = self._helper()
        if helper is None:
            return node
        self.count += 1
        elements = [element if held is None else
                    element.with_changes(value=_called(helper, held, element.value))
                    for element, held in zip(container.elements, types)]
        return node.with_changes(
            left=_called(helper, subject, node.left),
            comparisons=[node.comparisons[0].with_changes(
                comparator=container.with_changes(elements=elements))])

    def _is_parameter(self, operand: cst.BaseExpression) -> bool:
        """Whether ``operand`` names torch's ``Parameter`` class (through the file's imports,
        or a module-level name bound to it: ``held_types.parameter_aliases``)."""
        return self.refs.ff.resolve(operand) in PARAMETER_QUALNAMES or \
            (isinstance(operand, cst.Name) and operand.value in self.parameter_aliases)

    def _type_of(self, operand: cst.BaseExpression) -> cst.BaseExpression | None:
        """``x`` of an operand ``type(x)`` (the builtin, not in a class body the rewrite
        leaves) or ``x.__class__``; else None."""
        return type_subject(operand, lambda: self.shadowed("type") or bool(self._bodies and self._bodies[-1]))

    def _helper(self) -> cst.BaseExpression | None:
        """``param_type`` as this place can call it (None: counted as ``skipped``)."""
        if self.refs.is_runtime:
            if not self._functions:
                self.skipped += 1  # the runtime's own module level may run before it
                return None
            return cst.Name(HELPER)
        if self.local:
            if not self._functions:
                self.skipped += 1
                return None
            self._functions[-1] = True
            return cst.Name(HELPER)
        return self.refs.name_in(self.runtime, HELPER)


def _unless_literal(obj: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """``obj``, unless it is a literal (``None``, a number, a string): no parameter's type
    is a literal's (``analysis/type_comparisons.is_type_element``)."""
    if isinstance(obj, (cst.BaseNumber, cst.SimpleString, cst.Ellipsis)) or \
            (isinstance(obj, cst.Name) and obj.value in ("None", "True", "False")):
        return None
    return obj


def _called(helper: cst.BaseExpression, obj: cst.BaseExpression,
            operand: cst.BaseExpression) -> cst.Call:
    """``helper(obj)`` in the place of ``operand``, keeping its parentheses."""
    return cst.Call(func=helper, args=[cst.Arg(obj)], lpar=operand.lpar, rpar=operand.rpar)
