"""Resolve names to qualified names from a module's own import statements.

docs/ARCHITECTURE.md, "Speed budget": LibCST's ScopeProvider + QualifiedNameProvider cost 7-8x the parse, so
module-level names are resolved from the parsed ``import`` statements directly. A name
bound by ``import a.b`` resolves to ``a``; ``from x import y as z`` binds ``z`` to ``x.y``;
relative imports are resolved against the module's own dotted name.
"""

from __future__ import annotations

import ast
import symtable
from collections.abc import Iterable, Iterator
from pathlib import Path

import libcst as cst

from codemod.analysis import python_trees, roots


def module_name_for(path: Path) -> str:
    """Dotted module name of ``path``, from the import roots of the run in progress
    (``analysis.roots``: namespace directories below a top package are packages)."""
    return roots.current().module_name(path)


def dotted(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = dotted(node.value)
        return None if head is None else f"{head}.{node.attr.value}"
    return None


def variables_used(nodes: Iterable[cst.CSTNode]) -> set[str]:
    """Every name ``nodes`` use as a variable (not an attribute name after a dot, not an
    argument keyword)."""
    names = _Variables()
    for node in nodes:
        node.visit(names)
    return names.names


class _Variables(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False


def is_name_or_literal(expr: cst.BaseExpression) -> bool:
    """A name or a literal: evaluating it again, or later, gives the same object."""
    return isinstance(expr, (cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString))


def _relative_base(module: str, is_package: bool, level: int) -> str:
    parts = module.split(".") if module else []
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
    return ".".join(parts)


def statements_in_scope(tree: ast.AST) -> Iterator[tuple[ast.stmt, bool]]:
    """Every statement of ``tree``, at any depth, with whether it runs in the module's
    scope (inside a module-level ``if`` or ``try`` it still does; inside a ``def`` or
    ``class``, not). Imports and definitions are statements: the expressions, most of
    the nodes, need no walk."""
    stack: list[tuple[ast.AST, bool]] = [(tree, True)]
    while stack:
        node, top = stack.pop()
        if isinstance(node, ast.stmt):
            yield node, top
        inner = top and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(node, field, None)
            if isinstance(children, list):
                stack.extend((child, inner) for child in children)


def import_from_source(node: ast.ImportFrom, module_name: str, is_package: bool) -> str:
    """The absolute module ``from ... import`` reads from (relative levels resolved
    against ``module_name``, as ``import_bindings`` does)."""
    source = node.module or ""
    if node.level:
        base = _relative_base(module_name, is_package, node.level)
        source = f"{base}.{source}" if base and source else (base or source)
    return source


def import_targets(tree: ast.AST, module_name: str, is_package: bool) -> list[tuple[str, str]]:
    """(local name, qualified name) of every import in CPython's ``tree``, in the
    words of ``import_bindings`` (a local name may come more than once)."""
    return [(local, full) for node, _top in statements_in_scope(tree)
            for local, _name, full in import_aliases(node, module_name, is_package)]


def module_globals(tree: ast.Module) -> frozenset[str]:
    """The names the module's top-level statements define (``classes._module_globals``):
    classes, functions, and plain-name targets of assignments."""
    names: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(stmt.name)
            continue
        targets: list[ast.expr] = []
        if isinstance(stmt, ast.Assign):
            targets = stmt.targets
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
            targets = [stmt.target]
        names.update(t.id for t in targets if isinstance(t, ast.Name))
    return frozenset(names)


def module_scope_bindings(text: str, path: str = "<module>") -> frozenset[str] | None:
    """Every name the module ``text`` binds in its module scope, in any statement form
    (definitions, imports, assignment and loop targets, ``with``/``except`` names, at any
    depth outside functions and classes, and in a function that declares it ``global``),
    by CPython's symbol table; None when it does not compile. Star imports bind nothing
    here."""
    try:
        table = symtable.symtable(text, path, "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names = {symbol.get_name() for symbol in table.get_symbols()
             if symbol.is_assigned() or symbol.is_imported()}
    pending = list(table.get_children())
    while pending:
        inner = pending.pop()
        pending.extend(inner.get_children())
        names.update(symbol.get_name() for symbol in inner.get_symbols()
                     if symbol.is_declared_global() and (symbol.is_assigned() or symbol.is_imported()))
    return frozenset(names)


def literal_all(text: str) -> frozenset[str] | None:
    """The names a module's ``__all__`` lists, when one top-level ``__all__ = [...]`` (or a
    tuple) of string literals binds it and nothing else names it (no ``__all__ +=``,
    ``.extend``, ``[:] =``, ``globals()["__all__"]``, ``module.__all__``): else None,
    also when the module has none or does not parse."""
    if "__all__" not in text:
        return None
    try:
        tree = python_trees.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    named = [node for node in ast.walk(tree)
             if (isinstance(node, ast.Name) and node.id == "__all__")
             or (isinstance(node, ast.Attribute) and node.attr == "__all__")
             or (isinstance(node, ast.Constant) and node.value == "__all__")]
    statement = next((stmt for stmt in tree.body if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                      and stmt.targets[0] in named), None)
    if len(named) != 1 or statement is None or not isinstance(statement.value, (ast.List, ast.Tuple)):
        return None
    names = [e.value for e in statement.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return frozenset(names) if len(names) == len(statement.value.elts) else None


def import_aliases(node: ast.stmt, module_name: str, is_package: bool,
                   ) -> Iterator[tuple[str, str, str]]:
    """Each name the statement ``node`` binds if it is an import: (the local name, the
    imported name as written, its qualified name in the words of ``import_bindings``).
    Star imports, and statements other than imports, bind nothing here."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            local = alias.asname or alias.name.split(".")[0]
            yield local, alias.name, alias.name if alias.asname else local
    elif isinstance(node, ast.ImportFrom):
        source = import_from_source(node, module_name, is_package)
        for alias in node.names:
            if alias.name != "*":
                yield (alias.asname or alias.name, alias.name,
                       f"{source}.{alias.name}" if source else alias.name)


def import_bindings(
    module: cst.Module, module_name: str, is_package: bool
) -> dict[str, str]:
    """Local name -> qualified name for every module-level (and nested) import.

    Imports anywhere in the module are included (a conditional or function-local import
    of a parameter class is still a use of it); ``import *`` binds nothing here.
    """
    bindings: dict[str, str] = {}

    class Collector(cst.CSTVisitor):
        def visit_Import(self, node: cst.Import) -> None:
            for alias in node.names:
                full = dotted(alias.name)
                if full is None:
                    continue
                if alias.asname is not None:
                    bindings[alias.asname.name.value] = full  # type: ignore[union-attr]
                else:
                    head = full.split(".")[0]
                    bindings[head] = head

        def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
            if isinstance(node.names, cst.ImportStar):
                return
            source = dotted(node.module) if node.module is not None else ""
            level = len(node.relative)
            if level:
                base = _relative_base(module_name, is_package, level)
                source = f"{base}.{source}" if base and source else (base or source or "")
            if source is None:
                return
            for alias in node.names:
                name = dotted(alias.name)
                if name is None:
                    continue
                local = (
                    alias.asname.name.value  # type: ignore[union-attr]
                    if alias.asname is not None
                    else name
                )
                bindings[local] = f"{source}.{name}" if source else name

        # Class and function bodies are walked too: imports there are rare but real.

    # Walk statements only (not expressions): imports are statements, and skipping the
    # expression trees makes this several times cheaper than a full visit.
    collector = Collector()
    stack: list[cst.CSTNode] = list(module.body)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    collector.visit_Import(small)
                elif isinstance(small, cst.ImportFrom):
                    collector.visit_ImportFrom(small)
        elif isinstance(stmt, cst.BaseCompoundStatement):
            for child in stmt.children:
                if isinstance(child, (cst.BaseSuite, cst.BaseCompoundStatement, cst.Else,
                                      cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally,
                                      cst.SimpleStatementLine)):
                    stack.append(child)
        elif isinstance(stmt, cst.IndentedBlock):
            stack.extend(stmt.body)
        elif isinstance(stmt, cst.SimpleStatementSuite):
            stack.append(cst.SimpleStatementLine(body=stmt.body))
        elif isinstance(stmt, (cst.Else, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally)):
            stack.append(stmt.body)
    return bindings


def resolve(expr: cst.BaseExpression, bindings: dict[str, str], module_name: str,
            module_globals: frozenset[str]) -> str | None:
    """Qualified name of a Name/Attribute chain, or None if it is not statically known.

    A head bound by an import resolves through it; a head defined at module level
    resolves to ``module_name.head``.
    """
    return resolve_dotted(dotted(expr), bindings, module_name, module_globals)


def resolve_dotted(text: str | None, bindings: dict[str, str], module_name: str,
                   module_globals: frozenset[str]) -> str | None:
    """Qualified name of the dotted name ``text`` (``a.b.c``), or None: the one rule of
    ``resolve``, shared by the readers of LibCST's and of CPython's trees."""
    if text is None:
        return None
    head, _, rest = text.partition(".")
    if head in bindings:
        base = bindings[head]
    elif head in module_globals:
        base = f"{module_name}.{head}" if module_name else head
    else:
        return None
    return f"{base}.{rest}" if rest else base
