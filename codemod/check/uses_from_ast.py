"""Class-style uses of target names in one file, found in CPython's tree: what
``uses.ClassStyleUses`` finds with LibCST, at a tenth of the cost.

A file is read with LibCST only to be looked at by ``ClassStyleUses``; CPython's parser is
about ten times faster and the check needs nothing LibCST alone knows, except in two
cases, where this reader gives up (``Undecided``) and the file goes to LibCST as before:

* a name the file imports more than once, from different places (LibCST's
  ``import_bindings`` keeps one of them, in the order of its walk);
* a file that defines Parameter classes of the plan whose top-level classes cannot be
  matched one to one with CPython's (their bases are CM001's, not a use).

Everything else is read the same way: names resolve through the file's imports and
module-level definitions (``analysis.names.resolve``) and then through re-exports
(``index.follow_reexports``), the same checks are recognised, and positions are CPython's,
as ``locate.Locator`` gives them.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from codemod.analysis.classes import FileFacts
from codemod.analysis.compiles import cpython_rejects
from codemod.analysis.index import follow_reexports
from codemod.analysis.names import import_from_source, module_globals, module_name_for, resolve_dotted
from codemod.analysis.python_trees import dotted_expr
from codemod.check.class_checks import TYPING_UNIONS, ClassChecks
from codemod.check.converted import Target
from codemod.check.scan import AstFiles

_OPERATOR_TEXT: dict[type, str] = {ast.Is: "is", ast.IsNot: "is not", ast.Eq: "==",
                                   ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in"}


class Undecided(Exception):
    """CPython's tree cannot say what LibCST's would: read the file with LibCST."""


class Bindings(dict[str, str]):
    """Local name -> qualified name of a file's imports; a name bound to different
    places is present but cannot be read (``Undecided``)."""

    def __init__(self, unique: dict[str, str], ambiguous: frozenset[str]) -> None:
        super().__init__(unique)
        self.ambiguous = ambiguous

    def __contains__(self, name: object) -> bool:
        return name in self.ambiguous or super().__contains__(name)

    def __getitem__(self, name: str) -> str:
        if name in self.ambiguous:
            raise Undecided(name)
        return super().__getitem__(name)

    def get(self, name: str, default: str | None = None) -> str | None:  # type: ignore[override]
        if name in self.ambiguous:
            raise Undecided(name)
        return super().get(name, default)

    def names(self) -> set[str]:
        """Every local name an import binds."""
        return set(self) | set(self.ambiguous)


@dataclass
class AstFacts:
    """What resolving names needs of one file, from CPython's tree (as ``FileFacts``
    holds it from LibCST's): module name, import bindings, module-level names."""

    path: Path
    module_name: str
    bindings: Bindings
    globals: frozenset[str]

    @classmethod
    def of(cls, path: Path, module_name: str, tree: ast.Module) -> AstFacts:
        is_package = path.name == "__init__.py"
        return cls(path, module_name, import_bindings(tree, module_name, is_package),
                   module_globals(tree))


def import_bindings(tree: ast.Module, module_name: str, is_package: bool) -> Bindings:
    """``analysis.names.import_bindings`` read from CPython's tree: every import in the
    statements LibCST's walk enters (bodies, ``else``, ``except``, ``finally``; not
    ``case`` blocks, which it does not enter); ``import *`` binds nothing."""
    seen: dict[str, set[str]] = {}
    for node in _import_statements(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                head = alias.name.split(".")[0]
                local, full = (alias.asname, alias.name) if alias.asname else (head, head)
                seen.setdefault(local, set()).add(full)
        else:
            source = import_from_source(node, module_name, is_package)
            for alias in node.names:
                if alias.name == "*":
                    continue
                full = f"{source}.{alias.name}" if source else alias.name
                seen.setdefault(alias.asname or alias.name, set()).add(full)
    unique = {local: next(iter(targets)) for local, targets in seen.items() if len(targets) == 1}
    return Bindings(unique, frozenset(local for local, targets in seen.items() if len(targets) > 1))


def _import_statements(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            children = getattr(node, field, None)
            if isinstance(children, list):
                stack.extend(child for child in children
                             if isinstance(child, (ast.stmt, ast.excepthandler)))


def resolve(expr: ast.expr, bindings: dict[str, str], module_name: str,
            module_globals: frozenset[str]) -> str | None:
    """``analysis.names.resolve`` for CPython's nodes (``Undecided`` for a head bound
    to more than one place)."""
    return resolve_dotted(dotted_expr(expr), bindings, module_name, module_globals)


class AstResolver:
    """``uses.Resolver`` reading the re-exporting modules with CPython's parser: a module
    the analysis parsed keeps its LibCST facts; another is read from CPython's tree,
    unless that tree does not compile (then ``parse``, LibCST's reading, reports it as
    before)."""

    def __init__(self, facts: dict[Path, FileFacts], modules: dict[str, Path],
                 stop: dict[str, Target], asts: AstFiles,
                 parse: Callable[[Path], FileFacts | None],
                 failed: Callable[[Path], bool]) -> None:
        self.facts = facts
        self.failed = failed
        self.modules = modules
        self.stop = stop
        self.asts = asts
        self.parse = parse
        self.files: dict[str, FileFacts | AstFacts | None] = {
            ff.module_name: ff for ff in facts.values()}

    def _file(self, module: str) -> FileFacts | AstFacts | None:
        if module not in self.files:
            path = self.modules.get(module)
            self.files[module] = self.read(path) if path is not None else None
        return self.files[module]

    def read(self, path: Path) -> FileFacts | AstFacts | None:
        """The facts of ``path``: LibCST's when parsed already (or when CPython's parser
        or compiler rejects it: ``parse`` then reports it), else CPython's."""
        if path in self.facts:
            return self.facts[path]
        if self.failed(path):
            return None
        tree = self.asts.tree(path)
        if tree is None or cpython_rejects(path, tree) is not None:
            return self.parse(path)
        return AstFacts.of(path, module_name_for(path), tree)

    def canonical(self, qualname: str | None) -> str | None:
        """Follow re-exports, as ``uses.Resolver.canonical`` does."""
        return follow_reexports(qualname, self.stop, self._file)  # type: ignore[arg-type]


#: Nodes without a child that ``AstClassStyleUses.run`` acts on: names, constants and
#: the operator and context singletons (``ast.Load()``...). Not pushed at all.
_LEAVES = (ast.Name, ast.Constant, ast.expr_context, ast.operator, ast.boolop, ast.cmpop,
           ast.unaryop)


def _inner_children(node: ast.AST) -> list[ast.AST]:
    """``ast.iter_child_nodes(node)`` in the same order, less the leaves no rule looks at
    (``_LEAVES``): every Python-level step of this walk counts, on the ~6,000 nodes of
    each file that names a class."""
    children: list[ast.AST] = []
    for field in node._fields:
        value = getattr(node, field, None)
        if isinstance(value, list):
            children.extend(item for item in value
                            if isinstance(item, ast.AST) and not isinstance(item, _LEAVES))
        elif isinstance(value, ast.AST) and not isinstance(value, _LEAVES):
            children.append(value)
    return children


class AstClassStyleUses(ClassChecks):
    """``ClassChecks``' rule over CPython's tree: records a ``CheckUse`` for each check or
    class base naming a target."""

    def __init__(self, bindings: dict[str, str], module_name: str, module_globals: frozenset[str],
                 canonical: Callable[[str | None], str | None], targets: dict[str, Target],
                 planned: set[int]) -> None:
        super().__init__(targets, planned, module_globals, bindings)
        self.bindings = bindings
        self.module_name = module_name
        self.module_globals = module_globals
        self.canonical = canonical

    def run(self, tree: ast.Module) -> None:
        """Visit every node, parents before children (``Undecided`` propagates)."""
        stack: list[ast.AST] = [tree]
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(node, ast.ClassDef):
                self.class_statement(node, node.name,
                                     [base for base in node.bases if not isinstance(base, ast.Starred)])
            elif isinstance(node, ast.BoolOp):
                # LibCST nests ``a or b or c`` as ``(a or b) or c``: only the first two
                # operands of an ``or`` ever face each other as calls.
                if isinstance(node.op, ast.Or) and len(node.values) >= 2:
                    self.either_or(node.values[0], node.values[1])
            elif isinstance(node, ast.Call):
                self._call(node)
            elif isinstance(node, ast.Compare):
                lefts = [node.left, *node.comparators]
                self.comparison(node, [(left, _OPERATOR_TEXT.get(type(op)), right)
                                       for left, op, right in zip(lefts, node.ops, node.comparators)])
            stack.extend(reversed(_inner_children(node)))

    def _call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("isinstance", "issubclass"):
            args = node.args
            plain = len(args) == 2 and not node.keywords \
                and not any(isinstance(a, ast.Starred) for a in args)
            self.check_call(node, func.id, args if plain else None)

    # -- taking CPython's nodes apart -------------------------------------------------------
    def parts(self, expr: ast.expr) -> list[ast.expr] | None:
        if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
            return [element for element in expr.elts if not isinstance(element, ast.Starred)]
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.BitOr, ast.Add)):
            return [expr.left, expr.right]
        if isinstance(expr, ast.IfExp):
            return [expr.body, expr.orelse]
        if isinstance(expr, ast.NamedExpr):
            return [expr.value]
        if isinstance(expr, ast.Subscript) \
                and (dotted_expr(expr.value) or "").rpartition(".")[2] in TYPING_UNIONS:
            members = expr.slice
            return list(members.elts) if isinstance(members, ast.Tuple) else [members]
        return None

    def callee(self, expr: ast.expr) -> str | None:
        func = expr.func if isinstance(expr, ast.Call) else None
        if isinstance(func, ast.Name):
            return func.id
        return func.attr if isinstance(func, ast.Attribute) else None

    def is_type_call(self, expr: ast.expr) -> bool:
        return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) \
            and expr.func.id == "type" and len(expr.args) == 1 and not expr.keywords \
            and not isinstance(expr.args[0], ast.Starred)

    def is_class_attribute(self, expr: ast.expr) -> bool:
        return isinstance(expr, ast.Attribute) and expr.attr == "__class__"

    def target_of(self, expr: ast.expr) -> Target | None:
        if not isinstance(expr, (ast.Name, ast.Attribute)):
            return None
        qual = self.canonical(resolve(expr, self.bindings, self.module_name, self.module_globals))
        return self.targets.get(qual) if qual is not None else None

    def spelling(self, expr: ast.expr) -> str | None:
        return dotted_expr(expr)
