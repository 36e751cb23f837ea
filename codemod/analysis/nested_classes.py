"""Parameter classes defined below a module's top level: in a function, in a class body,
or in a module-level ``if``/``try``/``with``/loop/``match`` block.

``apply`` converts only the classes of a module's body (``classes.analyse_file``): one
defined elsewhere exists only once its enclosing code runs, and a factory cannot take
its place. Such a class stays a class, and ``codemod check`` must still see it (the CI
guard's job: a subclass written inside a function is the subclass style all the same).
``nested_parameter_classes`` finds them on CPython's tree; a class counts when one of
its bases names, through the file's imports and module-level names, torch's
``Parameter`` or a Parameter class of the index, or is another such class the file
defines below its top level (by its name).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from codemod.analysis.classes import FileFacts
from codemod.analysis.names import import_aliases, resolve_dotted
from codemod.analysis.python_trees import dotted_expr

#: What a compound statement at a module's top level is called in a message.
_BLOCKS: dict[type, str] = {
    ast.If: "an `if` block", ast.Try: "a `try` block", ast.With: "a `with` block",
    ast.AsyncWith: "a `with` block", ast.For: "a `for` loop", ast.AsyncFor: "a `for` loop",
    ast.While: "a `while` loop", ast.Match: "a `match` block",
}
if hasattr(ast, "TryStar"):
    _BLOCKS[ast.TryStar] = "a `try` block"

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class NestedClass:
    """A class statement below a module's top level that derives from torch's Parameter."""

    node: ast.ClassDef
    #: ``make.<locals>.Local``, ``Holder.Inner``, ``Cond``: the class's ``__qualname__``.
    qualname: str
    #: Where it is defined, for a message: "function `make`", "class `Holder`", "an `if` block".
    where: str


def nested_parameter_classes(
    tree: ast.Module, resolve: Callable[[str], list[str]],
    is_parameter_class: Callable[[str], bool], module_name: str = "", is_package: bool = False,
) -> list[NestedClass]:
    """The classes below ``tree``'s top level deriving from torch's Parameter, in the
    order they appear.

    ``resolve`` gives the qualified names a dotted name (``nn.Parameter``) may stand for
    in this module's scope (none: not known); ``is_parameter_class`` says whether a
    qualified name is torch's ``Parameter`` or a Parameter class of the index. A base
    bound in an enclosing function or class body is read there first: by that scope's
    own imports (``module_name`` resolves relative ones), or, for a class, variable or
    parameter it binds, as a Parameter class only when it is one found here in that
    scope.
    """
    statements = list(_nested_class_statements(tree, module_name, is_package))
    found: dict[int, NestedClass] = {}
    found_names: set[tuple[str, str]] = set()  # (scope prefix, class name)
    changed = True
    while changed:  # a nested class may derive from one defined after it in the file
        changed = False
        for node, qualname, where, scopes in statements:
            if id(node) in found or not _derives(node, scopes, resolve, is_parameter_class,
                                                 found_names):
                continue
            found[id(node)] = NestedClass(node, qualname, where)
            found_names.add((qualname[:len(qualname) - len(node.name)], node.name))
            changed = True
    return [found[id(node)] for node, _, _, _ in statements if id(node) in found]


def nested_parameter_classes_of_file(
    tree: ast.Module, ff: FileFacts, canonical: Callable[[str], str | None],
    is_parameter_class: Callable[[str], bool],
) -> list[NestedClass]:
    """``nested_parameter_classes`` of an analysed file: names resolved through its
    imports and module-level names, then re-exports (``canonical``), as the index
    resolves a top-level class's bases."""
    def resolve(spelled: str) -> list[str]:
        qualname = resolve_dotted(spelled, ff.bindings, ff.module_name, ff.globals)
        return [] if qualname is None else [canonical(qualname) or qualname]

    return nested_parameter_classes(tree, resolve, is_parameter_class, ff.module_name,
                                    ff.path.name == "__init__.py")


@dataclass(frozen=True)
class _Scope:
    """A function or class body enclosing a class statement: what it binds itself."""

    #: The ``__qualname__`` prefix of what it defines (``make.<locals>.``, ``Holder.``).
    prefix: str
    #: Names its own import statements bind -> qualified name.
    imports: dict[str, str]
    #: Every other name it binds (definitions, assignment and loop targets, parameters).
    bound: frozenset[str]


def _derives(node: ast.ClassDef, scopes: tuple[_Scope, ...], resolve: Callable[[str], list[str]],
             is_parameter_class: Callable[[str], bool], found_names: set[tuple[str, str]]) -> bool:
    for base in node.bases:
        spelled = dotted_expr(base)
        if spelled is None:
            continue
        head, dot, rest = spelled.partition(".")
        for scope in reversed(scopes):
            if head in scope.imports:
                if is_parameter_class(scope.imports[head] + dot + rest):
                    return True
                break
            if head in scope.bound:
                if not rest and (scope.prefix, head) in found_names:
                    return True
                break
        else:
            if (not rest and ("", head) in found_names) \
                    or any(is_parameter_class(q) for q in resolve(spelled)):
                return True
    return False


def _nested_class_statements(tree: ast.Module, module_name: str, is_package: bool,
                             ) -> Iterator[tuple[ast.ClassDef, str, str, tuple[_Scope, ...]]]:
    """Every class statement below the module's top level: (node, ``__qualname__``, where,
    the function and class bodies around it, outermost first)."""
    # (statement, qualname prefix, where (None: the module's own body), enclosing scopes)
    stack: list[tuple[ast.stmt, str, str | None, tuple[_Scope, ...]]] = [
        (stmt, "", None, ()) for stmt in reversed(tree.body)]
    while stack:
        stmt, prefix, where, scopes = stack.pop()
        inner_prefix, inner_where, inner_scopes = prefix, where, scopes
        if isinstance(stmt, ast.ClassDef):
            if where is not None:
                yield stmt, f"{prefix}{stmt.name}", where, scopes
            inner_prefix, inner_where = f"{prefix}{stmt.name}.", f"class `{stmt.name}`"
            inner_scopes = scopes + (_scope_of(stmt, inner_prefix, module_name, is_package),)
        elif isinstance(stmt, _FUNCTIONS):
            inner_prefix = f"{prefix}{stmt.name}.<locals>."
            inner_where = f"function `{stmt.name}`"
            inner_scopes = scopes + (_scope_of(stmt, inner_prefix, module_name, is_package),)
        elif where is None:
            inner_where = _BLOCKS.get(type(stmt))
            if inner_where is None:
                continue  # a simple statement: holds no class statement
        children = [child for block in _blocks(stmt) for child in block]
        stack.extend((child, inner_prefix, inner_where, inner_scopes) for child in reversed(children))


def _scope_of(node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef, prefix: str,
              module_name: str, is_package: bool) -> _Scope:
    """What the body of ``node`` binds itself (not what its nested functions bind)."""
    imports: dict[str, str] = {}
    bound: set[str] = set()
    if not isinstance(node, ast.ClassDef):
        arguments = node.args
        bound.update(a.arg for a in (*arguments.posonlyargs, *arguments.args,
                                     *arguments.kwonlyargs, arguments.vararg, arguments.kwarg)
                     if a is not None)
    stack = list(node.body)
    while stack:
        stmt = stack.pop()
        for local, _, full in import_aliases(stmt, module_name, is_package):
            imports[local] = full
        if isinstance(stmt, (ast.ClassDef, *_FUNCTIONS)):
            bound.add(stmt.name)
            continue
        for target in _targets(stmt):
            bound.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        stack.extend(child for block in _blocks(stmt) for child in block)
    return _Scope(prefix, imports, frozenset(bound - set(imports)))


def _targets(stmt: ast.stmt) -> list[ast.expr]:
    """The expressions ``stmt`` itself assigns to (not those of the statements inside it)."""
    if isinstance(stmt, ast.Assign):
        return list(stmt.targets)
    if isinstance(stmt, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
        return [stmt.target]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [item.optional_vars for item in stmt.items if item.optional_vars is not None]
    return []


def _blocks(stmt: ast.stmt) -> Iterator[list[ast.stmt]]:
    """The statement lists directly inside ``stmt``, in source order."""
    for field in ("body", "handlers", "orelse", "finalbody"):
        block = getattr(stmt, field, None)
        if not isinstance(block, list):
            continue
        if field == "handlers":
            for handler in block:
                yield handler.body
        else:
            yield block
    for case in getattr(stmt, "cases", None) or ():
        yield case.body
