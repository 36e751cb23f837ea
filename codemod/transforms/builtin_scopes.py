"""Where a builtin that a rewrite relies on names something else.

What it does
    ``BuiltinScopes`` is a LibCST transformer mixin that knows, at every node, whether
    ``isinstance``, ``issubclass``, ``type``, ``getattr``, ``hasattr`` or ``setattr``
    is the builtin there (``shadowed``): not when the module binds it (anywhere in its
    own scope: inside a module-level ``if`` or ``for`` too), when a function of
    the module declares it ``global`` and assigns it, or when a function, ``lambda`` or
    comprehension around the node binds it (a parameter, an assignment, an import, a
    nested ``def``, a ``match`` capture, a loop name).
Why
    A call of a rebound name is not the builtin: rewriting ``isinstance(p, X)`` into a
    feature check there would give another answer. The use then stays, and the class
    is refused.
Fix safety
    Names are compared in NFKC form, as CPython reads identifiers. For speed, function
    bodies are walked only when the module's text and CPython's symbol table show some
    function binding one of these names (``bound_names.bound_in_some_function``, a
    superset of the exact answer): most modules bind none, and walking every body cost
    a quarter of the rewrite's time. A comprehension's first iterable, which Python
    evaluates outside it, is taken as inside too: no rewrite there (refuses more, never
    less).
"""

from __future__ import annotations

import functools
import unicodedata

import libcst as cst

from codemod.analysis.bound_names import (
    assigned_as_global,
    bound_at_module_level,
    bound_in_some_function,
    names_bound,
)

#: Builtins whose calls a rewrite relies on.
REWRITTEN_BUILTINS = ("isinstance", "issubclass", "type", "getattr", "hasattr", "setattr")

Comprehension = cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp


class BuiltinScopes(cst.CSTTransformer):
    """Tracks the scopes around each node that may rebind a rewritten builtin. A
    subclass that visits ``FunctionDef`` itself calls ``enter_function`` and
    ``leave_scope`` from its own ``visit_FunctionDef``/``leave_FunctionDef``."""

    def __init__(self) -> None:
        super().__init__()
        self._builtins_text = ""
        #: Rebound for the whole module: bound at module level, or ``global`` and
        #: assigned in a function.
        self._module_shadowed: set[str] = set()
        #: Per enclosing function, ``lambda`` or comprehension: what it binds itself.
        self._scopes: list[_ScopeBindings] = []

    def track_builtins(self, text: str, module_bindings: set[str]) -> None:
        """Start on the module ``text``, whose module-level bindings are ``module_bindings``."""
        self._builtins_text = text
        self._module_shadowed = {n for n in REWRITTEN_BUILTINS if n in module_bindings} \
            | assigned_as_global(text, REWRITTEN_BUILTINS) \
            | bound_at_module_level(text, REWRITTEN_BUILTINS)

    def shadowed(self, builtin: str) -> bool:
        """Whether ``builtin`` here names something else than the builtin (see the
        module's docstring): the call is then not the builtin, and no rewrite applies."""
        if builtin not in REWRITTEN_BUILTINS:
            return False
        if builtin in self._module_shadowed:
            return True
        return builtin in self._bound_in_functions and any(
            builtin in scope.names for scope in self._scopes)

    @functools.cached_property
    def _bound_in_functions(self) -> frozenset[str]:
        """The rewritten builtins some function of this file may bind locally."""
        return bound_in_some_function(self._builtins_text, REWRITTEN_BUILTINS)

    def enter_function(self, node: cst.FunctionDef) -> None:
        self._scopes.append(_ScopeBindings(node.params, node.body))

    def leave_scope(self) -> None:
        self._scopes.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._scopes.append(_ScopeBindings(node.params, None))

    def leave_Lambda(self, original_node: cst.Lambda, updated_node: cst.Lambda) -> cst.BaseExpression:
        self.leave_scope()
        return updated_node

    def _visit_comprehension(self, node: Comprehension) -> None:
        self._scopes.append(_ScopeBindings(None, None, node.for_in))

    def _leave_comprehension(self, original_node: Comprehension,
                             updated_node: Comprehension) -> cst.BaseExpression:
        self.leave_scope()
        return updated_node

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _visit_comprehension
    leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = _leave_comprehension


class _ScopeBindings:
    """The rewritten builtins one function, ``lambda`` or comprehension binds in its own
    scope: parameters, statements of its body (nested functions and classes bind in
    their own), the names of its ``for`` clauses. Worked out on the first question only."""

    def __init__(self, params: cst.Parameters | None, body: cst.BaseSuite | None,
                 loops: cst.CompFor | None = None) -> None:
        self._params = params
        self._body = body
        self._loops = loops

    @functools.cached_property
    def names(self) -> set[str]:
        names: set[str] = set()
        params = self._params
        if params is not None:
            names |= {p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]}
            for star in (params.star_arg, params.star_kwarg):
                if isinstance(star, cst.Param):
                    names.add(star.name.value)
        if self._body is not None:
            names |= names_bound([self._body])  # type: ignore[list-item]  # a suite binds as its statements
        loop = self._loops
        while loop is not None:
            names |= _loop_targets(loop.target)
            loop = loop.inner_for_in
        names = {name if name.isascii() else unicodedata.normalize("NFKC", name) for name in names}
        return names & set(REWRITTEN_BUILTINS)


def _loop_targets(target: cst.BaseExpression) -> set[str]:
    """The names a ``for`` target binds (tuples, lists and starred ones unpacked)."""
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_loop_targets(element.value) for element in target.elements))
    if isinstance(target, cst.StarredElement):
        return _loop_targets(target.value)
    return set()
