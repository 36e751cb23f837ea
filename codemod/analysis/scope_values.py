"""What a scope binds a name to, on CPython's tree: the values of its assignments
(``bound_values``), for the proofs that follow a value through names (a comparison's
side in ``analysis/class_values.py``, the type a side holds in
``analysis/type_comparisons.held_type``); and which names a scope, or the scopes inside
it, bind at all (``names_bound_by`` and its callers, for ``analysis/held_types.py``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator


def bound_values(name: str, scope_body: list[ast.stmt]) -> list[ast.expr] | None:
    """The values the scope whose statements are ``scope_body`` binds ``name`` to (an
    assignment, annotated, augmented or walrus; a ``for`` loop's iterable), in no order;
    an ``import`` adds none (a module or a module's name); None when it also binds it
    otherwise (``with ... as``, ``except ... as``,
    ``def``, ``class``, a ``match`` capture, a tuple target, ``del``), whose values are not
    followed, or when a function inside declares it ``global`` or ``nonlocal`` (it may
    bind it there)."""
    if any(isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names
           for statement in scope_body for node in ast.walk(statement)):
        return None
    values: list[ast.expr] = []
    for node in walk_scope(scope_body):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == name:
                    values.append(node.value)
                elif binds(target, name):
                    return None
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) \
                and binds(node.target, name):
            if node.value is None:
                continue  # ``x: T``: binds nothing
            if not isinstance(node.target, ast.Name):
                return None
            values.append(node.value)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)) and binds(node.target, name):
            if not isinstance(node.target, ast.Name):
                return None
            values.append(node.iter)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return None
        elif isinstance(node, (ast.withitem,)) and node.optional_vars is not None \
                and binds(node.optional_vars, name):
            return None
        elif isinstance(node, ast.ExceptHandler) and node.name == name:
            return None
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            continue  # a module or a module's name, accepted as a module-level import is
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name == name:
            return None
        elif isinstance(node, ast.Delete) and any(binds(t, name) for t in node.targets):
            return None
    return values


def walk_scope(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every node of ``body`` outside nested functions and classes (another scope)."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(node))


def binds(target: ast.AST, name: str) -> bool:
    """Whether the assignment target ``target`` binds ``name`` (also inside a tuple)."""
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target))


#: Scopes inside a function whose own bindings do not bind the function's names.
_INNER_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp,
                 ast.DictComp, ast.GeneratorExp)


def parameter_names(scope: ast.AST) -> set[str]:
    """The parameters of a function or ``lambda``, ``*args`` and ``**kwargs`` included."""
    arguments = scope.args  # type: ignore[attr-defined]
    named = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    named += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return {a.arg for a in named}


def names_bound_in_body(scope: ast.AST) -> set[str]:
    """Names ``scope``'s own body binds (any way)."""
    body = scope.body if isinstance(scope.body, list) else [ast.Expr(scope.body)]  # type: ignore[attr-defined]
    return names_bound_by(walk_scope(body))


def names_bound_within(function: ast.AST) -> set[str]:
    """Names ``function`` or any scope inside it binds (parameters included)."""
    return names_bound_by(node for node in ast.walk(function) if node is not function)


def names_bound_by(nodes: Iterable[ast.AST]) -> set[str]:
    """The names ``nodes`` bind, any way: targets, parameters, ``def``, ``class``,
    imports, ``except ... as``, ``match`` captures, ``global``/``nonlocal``."""
    bound: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)  # ``case {**rest}``
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound |= set(node.names)
    return bound


def bound_in_inner_scope(function: ast.AST, name: str) -> bool:
    """Whether a function, ``lambda``, class body or comprehension inside ``function``
    binds ``name`` (its own scope, or ``nonlocal``)."""
    for node in ast.walk(function):
        if node is function or not isinstance(node, _INNER_SCOPES):
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and name in parameter_names(node):
            return True
        for inner in ast.walk(node):
            if isinstance(inner, ast.Name) and inner.id == name and not isinstance(inner.ctx, ast.Load):
                return True
            if isinstance(inner, (ast.Nonlocal, ast.Global)) and name in inner.names:
                return True
    return False
