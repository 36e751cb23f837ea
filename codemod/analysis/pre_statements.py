"""The statements an ``__init__`` runs before ``super().__init__()``: whether they must run
before the bases' bodies (``order_matters``: then the class is a relay, whose wrap runs
them first, as the old ``__init__`` did), and whether they may return early (``returns``:
refused, the factory runs every wrap).

A statement is *plain* when it can neither raise nor change state outside the instance
being built: ``pass``, a string standing alone, and assignments of names, literals and
containers written out of them to locals or attributes of ``self``. Anything else (a
call, a store into a module's dict or another object, ``global``, ``assert``, a division,
an attribute read) may be seen by the bases' bodies or raise before them.
"""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from codemod.analysis import cst_patterns as m
from codemod.analysis.bound_names import names_bound


def order_matters(pre: Iterable[cst.BaseStatement], forwarded: set[str], self_name: str) -> bool:
    """Whether the statements before ``super().__init__()`` must run before the bases'
    ``__init__`` bodies: they rebind a parameter passed on by name (the bases received
    the new value), call anything (a side effect the bases' bodies may see or follow: a
    log, a counter, a registry), or are not plain (``_plain_assignment``: a store into a
    module's dict or object, ``global``, an ``assert``, a division, an attribute read: a
    state change the bases may read, or an exception that must come before theirs)."""
    pre = list(pre)
    if forwarded & names_bound(pre):
        return True
    return any(m.findall(stmt, m.Call()) for stmt in pre) or \
        not all(_plain_assignment(stmt, self_name) for stmt in pre)


def _plain_assignment(stmt: cst.BaseStatement, self_name: str) -> bool:
    """``pass``, ``self.x = y`` / ``x: T = 1``: stores of a name, a literal or a container
    written out of those (``_plain_value``) into a local name or an attribute of
    ``self``, which can neither raise nor change state outside the instance being
    built."""
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    for small in stmt.body:
        if isinstance(small, cst.Pass) or (isinstance(small, cst.Expr) and isinstance(
                small.value, (cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis))):
            continue  # ``pass``, ``...``, a string standing alone
        if isinstance(small, cst.Assign):
            targets = [t.target for t in small.targets]
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            targets = [small.target]
        else:
            return False
        if not all(isinstance(t, cst.Name) or m.matches(t, m.Attribute(value=m.Name(self_name)))
                   for t in targets):
            return False
        if not _plain_value(small.value):  # type: ignore[arg-type]
            return False
    return True


def _plain_value(value: cst.BaseExpression) -> bool:
    """A name, a literal, or a tuple, list or set written out of those, or a dict whose
    keys are literals (``{"q": 0, "k": 1}``): none can raise (an attribute read can, a
    ``-x`` can, a dict or set of names can: unhashable)."""
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus) \
            and isinstance(value.expression, cst.BaseNumber):
        return True
    if isinstance(value, (cst.Tuple, cst.List)):
        return all(isinstance(e, cst.Element) and _plain_value(e.value) for e in value.elements)
    if isinstance(value, cst.Set):
        return all(isinstance(e, cst.Element) and _literal(e.value) for e in value.elements)
    if isinstance(value, cst.Dict):
        return all(isinstance(e, cst.DictElement) and _literal(e.key) and _plain_value(e.value)
                   for e in value.elements)
    return isinstance(value, (cst.Name, cst.BaseNumber, cst.SimpleString))


def _literal(value: cst.BaseExpression) -> bool:
    """A number, a string or ``None``/``True``/``False``."""
    return isinstance(value, (cst.BaseNumber, cst.SimpleString)) or \
        (isinstance(value, cst.Name) and value.value in ("None", "True", "False"))


def returns(body: Iterable[cst.BaseStatement]) -> bool:
    """Whether ``body`` holds a ``return`` outside nested functions and classes."""
    return any(_ReturnFinder.holds(stmt) for stmt in body)


class _ReturnFinder(cst.CSTVisitor):
    """Finds a ``return`` that belongs to the function being read."""

    def __init__(self) -> None:
        self.found = False

    @classmethod
    def holds(cls, stmt: cst.BaseStatement) -> bool:
        finder = cls()
        stmt.visit(finder)
        return finder.found

    def visit_Return(self, node: cst.Return) -> None:
        self.found = True

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False
