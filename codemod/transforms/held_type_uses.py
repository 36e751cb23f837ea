"""Comparisons through a name that holds an object's type: ``t = type(p)``, then ``t == X``.

What it does
    In a function where a name holds an object's type and is compared with a converted
    class (``analysis/held_types.py`` says which names qualify: every read a comparison,
    a membership test or a ``raise`` message), the binding ``t = type(p)`` becomes ``t =
    param_type(p)``; each converted class ``X`` it is compared with becomes
    ``Features.X`` (``t is X`` -> ``t == Features.X``, ``is not`` -> ``!=``); each other
    object's type in those comparisons, ``type(q)`` or ``q.__class__``, becomes
    ``param_type(q)``. ``nn.Parameter``, other classes and literals stay.
Why
    A converted parameter's ``type(p)`` is ``Parameter``: ``t == ModelWeightParameter``
    would never hold and ``t == nn.Parameter`` would hold for every converted parameter
    (SGLang's offloader picks how to rebuild a parameter so).
Fix safety
    ``param_type(p)`` is the former class's kind (its ``Features`` member's value, one
    string per kind) for a converted parameter and ``type(p)`` for anything else, so
    every comparison answers as before: kinds equal kinds, a class never equals a kind.
    ``is`` becomes ``==`` only against a ``Features`` member (two equal kinds may be two
    string objects after a copy or pickling). ``p`` is evaluated once, where it was.
    A name read any other way (``t(...)``, ``t.__name__``, ``t == cls`` with ``cls`` a
    parameter) is left as it is, and the class compared with it stays refused (the value
    proof, ``analysis/class_values.py``). A ``raise`` message that formats ``t`` shows
    the kind's qualified name (a string) where it showed the class.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable
from typing import cast

import libcst as cst

from codemod.analysis import held_types
from codemod.analysis.held_types import (
    HeldType,
    HeldTypes,
    covered_names,
    file_held_types,
    scope_path,
)
from codemod.runtime.helpers import PARAM_TYPE
from codemod.transforms.refs import FileRefs

_LIBCST_NAME = {"Eq": "Equal", "NotEq": "NotEqual"}  # the others are spelled alike


def _libcst_nodes(ast_nodes: tuple[type[ast.AST], ...]) -> tuple[type[cst.CSTNode], ...]:
    return tuple(getattr(cst, _LIBCST_NAME.get(node.__name__, node.__name__)) for node in ast_nodes)


# LibCST's spelling of the comparisons ``analysis/held_types.py`` lets a held name stand in;
# the type-comparison and use-site rewrites read the same groups.
EQUALITY = _libcst_nodes(held_types.EQUALITY)
MEMBERSHIP = _libcst_nodes(held_types.MEMBERSHIP)
CONTAINERS = cast(tuple[type[cst.Tuple], type[cst.List], type[cst.Set]],
                  _libcst_nodes(held_types.CONTAINERS))


class HeldTypeUses:
    """The part of the use-site and type-comparison rewrites that handles names holding an
    object's type (the use-site rewrite where a converted class is compared with one, the
    type-comparison rewrite where only types or ``Parameter`` are).

    The transformer calls ``enter_held_scope``/``leave_held_scope`` around each class
    and function and ``held_binding`` from ``leave_Assign``; it provides ``refs``,
    ``counts``, ``converted`` and ``_handle``, and ``leave_single_comparison``, which
    ``leave_Comparison`` here asks of a one-operator comparison no held name is in.
    """

    refs: FileRefs
    counts: Counter[str]
    #: Whether a name compared with no converted class, only with another object's type
    #: or ``Parameter`` (``HeldType.compares_types``), is rewritten here too: by the
    #: type-comparison rewrite, which imports the helper where the file can import it.
    held_without_class = False

    def converted(self, expr: cst.BaseExpression) -> str | None:
        """Qualified name of the converted class ``expr`` names, else None (a rewrite that
        does not read class names: none)."""
        return None

    def _handle(self, expr: cst.BaseExpression) -> None:
        """Record that a rewrite consumed the mention ``expr`` (none to record here)."""

    def held_helper(self, runtime_of: str | None) -> cst.BaseExpression:
        """``param_type`` as this place calls it, from the runtime of the converted class
        ``runtime_of`` (None: the file's runtime)."""
        return self.refs.helper(PARAM_TYPE, runtime_of)

    def init_held_types(self, text: str) -> None:
        self._held_types: HeldTypes = file_held_types(text)
        #: The names of the classes and functions around the node visited.
        self._held_path: list[str] = []
        #: Per scope entered: the held names rewritten there (a function's own, and those
        #: of the functions around it, which a nested function reads), each a name that is
        #: compared with a converted class (that class, which decides the family's
        #: runtime) or with another object's type or ``Parameter`` (None); None for a class
        #: body.
        self._held_scopes: list[dict[str, str | None] | None] = []
        #: Per scope entered: the names whose binding is in that scope.
        self._held_own: list[frozenset[str]] = []
        #: (line of the binding, name, why) of each name compared with ``Parameter`` that
        #: is left as it is (reported as a warning: it now holds for every converted
        #: parameter). One compared only with other types is left without a word, as
        #: it changes only for two parameters of different kinds.
        self.held_left: list[tuple[int, str, str]] = []

    @property
    def held_names(self) -> frozenset[str]:
        """Every name of the file that may hold an object's type the rewrite covers."""
        return covered_names(self._held_types)

    def enter_held_scope(self, name: str, function: bool) -> None:
        self._held_path.append(name)
        if not function:
            self._held_scopes.append(None)
            self._held_own.append(frozenset())
            return
        around = self._visible()
        own: dict[str, str | None] = {}
        for held in self._held_types.get(scope_path(self._held_path), {}).values():
            why = held.why_not or self._not_a_tree_class(held)
            qualname = self._held_compared_class(held) if why is None else None
            if why is None and (qualname is not None or (self.held_without_class and held.compares_types)):
                own[held.name] = qualname
            elif why is not None and held.compares_parameter:
                self.held_left.append((held.binding.lineno, held.name, why))
        self._held_scopes.append({**around, **own})
        self._held_own.append(frozenset(own))

    def leave_held_scope(self) -> None:
        self._held_path.pop()
        self._held_scopes.pop()
        self._held_own.pop()

    def _held_compared_class(self, held: HeldType) -> str | None:
        """The first converted class ``held`` is compared with (None: none)."""
        for side in held.classes:
            qualname = self.converted(_as_cst(side))
            if qualname is not None:
                return qualname
        return None

    def _not_a_tree_class(self, held: HeldType) -> str | None:
        """Why a side ``held`` is compared with (a name or attribute chain) may be no
        Parameter class of the tree, which only those sides are let be (None: each is
        one: a converted class becomes its ``Features`` member, a kept one compares as
        before)."""
        plan = self.refs.plan
        for side in held.classes:
            if plan.index.canonical(self.refs.ff.resolve(_as_cst(side))) not in plan.classes:
                return f"compared with `{ast.unparse(side)}` at line {side.lineno}, no Parameter class of the tree"
        return None

    def _visible(self) -> dict[str, str | None]:
        return next((s for s in reversed(self._held_scopes) if s is not None), {})

    def held_binding(self, updated: cst.Assign) -> cst.Assign | None:
        """``t = type(p)`` -> ``t = param_type(p)`` for a name rewritten in this scope."""
        if not self._held_own or len(updated.targets) != 1:
            return None
        target = updated.targets[0].target
        if not isinstance(target, cst.Name) or target.value not in self._held_own[-1]:
            return None
        subject = type_subject(updated.value)
        if subject is None:
            return None
        helper = self.held_helper(self._visible()[target.value])
        self.counts["held-type"] += 1
        return updated.with_changes(value=cst.Call(func=helper, args=[cst.Arg(subject)],
                                                   lpar=updated.value.lpar, rpar=updated.value.rpar))

    def leave_Comparison(self, original_node: cst.Comparison,
                         updated_node: cst.Comparison) -> cst.BaseExpression:
        held = self.held_comparison(original_node, updated_node)
        if held is not None:
            return held
        if len(original_node.comparisons) != 1:
            return updated_node
        return self.leave_single_comparison(original_node, updated_node)

    def leave_single_comparison(self, original_node: cst.Comparison,
                                updated_node: cst.Comparison) -> cst.BaseExpression:
        """The transformer's own rewrite of ``a OP b`` (none here)."""
        return updated_node

    def held_comparison(self, original: cst.Comparison, updated: cst.Comparison) -> cst.Comparison | None:
        """A comparison of a held name rewritten (see the module doc); None when it is none."""
        visible = self._visible()
        if not visible or len(original.comparisons) != 1:
            return None
        target = original.comparisons[0]
        op = target.operator
        if isinstance(op, EQUALITY):
            held = _held_name(original.left, visible)
            if held is not None:
                return self._rewrite_side(original, updated, 1, visible[held])
            held = _held_name(target.comparator, visible)
            if held is not None:
                return self._rewrite_side(original, updated, 0, visible[held])
            return None
        held = _held_name(original.left, visible)
        if not isinstance(op, MEMBERSHIP) or held is None or not isinstance(target.comparator, CONTAINERS) \
                or any(isinstance(e, cst.StarredElement) for e in target.comparator.elements):
            return None
        container = updated.comparisons[0].comparator
        assert isinstance(container, CONTAINERS)
        elements = [element.with_changes(value=self._held_operand(old.value, element.value, visible[held])[0])
                    for old, element in zip(target.comparator.elements, container.elements)]
        if all(new.value is element.value for new, element in zip(elements, container.elements)):
            return updated
        return updated.with_changes(comparisons=[updated.comparisons[0].with_changes(
            comparator=container.with_changes(elements=elements))])

    def _rewrite_side(self, original: cst.Comparison, updated: cst.Comparison, index: int,
                      runtime_of: str | None) -> cst.Comparison:
        """``updated`` with its side ``index`` (0: left, 1: the comparator) rewritten."""
        target = updated.comparisons[0]
        original_side = original.left if index == 0 else original.comparisons[0].comparator
        side = updated.left if index == 0 else target.comparator
        new_side, feature = self._held_operand(original_side, side, runtime_of)
        if new_side is side:
            return updated
        operator = _as_equality(target.operator) if feature else target.operator
        if index == 0:
            return updated.with_changes(left=new_side, comparisons=[target.with_changes(operator=operator)])
        return updated.with_changes(comparisons=[target.with_changes(comparator=new_side, operator=operator)])

    def _held_operand(self, original: cst.BaseExpression, updated: cst.BaseExpression,
                      runtime_of: str | None) -> tuple[cst.BaseExpression, bool]:
        """A converted class -> its ``Features`` member (True); ``type(q)``/``q.__class__``
        -> ``param_type(q)`` from the runtime of class ``runtime_of``; anything else as
        it is."""
        qualname = self.converted(original)
        if qualname is not None:
            self._handle(original)
            feature = self.refs.feature(qualname)
            return feature.with_changes(lpar=updated.lpar, rpar=updated.rpar), True
        subject = type_subject(updated)
        if subject is None:
            return updated, False
        helper = self.held_helper(runtime_of)
        return cst.Call(func=helper, args=[cst.Arg(subject)], lpar=updated.lpar,
                        rpar=updated.rpar), False


def _as_cst(side: ast.expr) -> cst.BaseExpression:
    return cst.parse_expression(ast.unparse(side))


def _held_name(expr: cst.BaseExpression, visible: dict[str, str | None]) -> str | None:
    return expr.value if isinstance(expr, cst.Name) and expr.value in visible else None


def type_subject(expr: cst.BaseExpression,
                 type_shadowed: Callable[[], bool] | None = None) -> cst.BaseExpression | None:
    """``x`` of ``type(x)`` (one positional argument; not where ``type_shadowed()`` says
    ``type`` is not the builtin, asked only of such a call) or of ``x.__class__``; else
    None. The one reading of "an object's type" on LibCST's tree, for every rewrite of a
    comparison of types (``analysis.type_comparisons.is_type_of`` reads CPython's)."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "type" \
            and len(expr.args) == 1 and expr.args[0].keyword is None and not expr.args[0].star:
        return None if type_shadowed is not None and type_shadowed() else expr.args[0].value
    if isinstance(expr, cst.Attribute) and expr.attr.value == "__class__":
        return expr.value
    return None


def _as_equality(operator: cst.BaseCompOp) -> cst.BaseCompOp:
    """``is`` -> ``==``, ``is not`` -> ``!=`` (the spacing kept); others as they are."""
    if isinstance(operator, cst.Is):
        return cst.Equal(whitespace_before=operator.whitespace_before,
                         whitespace_after=operator.whitespace_after)
    if isinstance(operator, cst.IsNot):
        return cst.NotEqual(whitespace_before=operator.whitespace_before,
                            whitespace_after=operator.whitespace_after)
    return operator
