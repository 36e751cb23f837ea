"""What a scope binds a name to, on CPython's tree: the values of its assignments
(``bound_values``), for the proofs that follow a value through names (a comparison's
side in ``analysis/class_values.py``, the type a side holds in
``analysis/type_comparisons.held_type``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator


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
