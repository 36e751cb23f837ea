"""The tree's own class checks, before and after their rewrite, asked of every built parameter.

``apply`` rewrites ``isinstance(p, X)`` and ``type(p) is X`` (and their tuple, ``in`` and
negated forms) on family classes all over the tree, mostly outside the family modules
(loaders, kernels, reload code). This module finds each such check in a module the
conversion changed, outside the family and runtime modules, and pairs it with the
expression that replaced it: the two files are walked in step, with import statements
left out of statement lists (``apply`` adds and removes imports), so the rewritten
expression sits at the same place in the converted file as the check did in the original.

A paired site is driven without importing its module: the checked expression (``p``,
``layer.weight``...) becomes one placeholder name in both expressions, and every other name
must come from the family or runtime modules through the module's own imports (``from
..parameter import X``, ``from ..param_features import Features, has_param_feature``),
bound to that tree's copy. ``cases`` then evaluates both expressions with every built
parameter of the family bound to the placeholder and compares the answers. A site that
cannot be paired or driven so is listed with the reason, never guessed at.
"""

from __future__ import annotations

import ast
import builtins
import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from codemod.analysis.type_comparisons import (
    compared_objects,
    compared_with_parameter,
    is_type_comparison,
    may_compare_types,
)
from codemod.verify.families import Families
from codemod.verify.importer import TreeImport

#: The name the checked expression is replaced by in both expressions.
SUBJECT = "__verified_parameter__"
#: The second object of a comparison of two objects' types (``CheckSite.pair``).
OTHER = "__verified_other__"
#: Modules outside the tree whose names a check may read (``type(p) is nn.Parameter``):
#: bound from the interpreter's own copy, the same in both trees.
OUTSIDE = frozenset({"torch", "torch.nn", "torch.nn.parameter"})
_TYPE_OPS = (ast.Is, ast.IsNot, ast.Eq, ast.NotEq, ast.In, ast.NotIn)
T = TypeVar("T")


@dataclass
class CheckSite:
    """One rewritten check: where, and the original and converted expressions (subject
    replaced by ``SUBJECT``) with the imports that give their names."""

    where: str
    module: str
    original: str
    converted: str
    #: name -> (module, attribute or None for the module itself), per tree.
    original_imports: dict[str, tuple[str, str | None]]
    converted_imports: dict[str, tuple[str, str | None]]
    #: A comparison of two objects' types (``type(a) is type(b)``): ``a`` is ``SUBJECT``,
    #: ``b`` is ``OTHER``, asked of pairs of objects.
    pair: bool = False


@dataclass
class CheckSites:
    """The paired sites, and those left out with the reason."""

    sites: list[CheckSite] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class DrivenExpression:
    """One side of a site: its compiled expression and the names it reads, bound from
    that side's tree."""

    code: Any
    namespace: dict[str, Any]

    def answer(self, param: Any, other: Any = None) -> Any:
        """The expression's value with ``param`` as the checked expression (and ``other``
        as the second object of a ``pair`` site)."""
        return eval(self.code, {**self.namespace, SUBJECT: param, OTHER: other})  # noqa: S307 - the tree's own check


@dataclass
class DrivenSite:
    """A site ready to evaluate: the original check and its rewrite, each driven in its
    own tree."""

    site: CheckSite
    original: DrivenExpression
    converted: DrivenExpression


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _mentions(node: ast.AST, classes: set[str]) -> bool:
    """Whether ``node`` names a family class (``X`` or ``mod.X``)."""
    return any(isinstance(n, ast.Name) and n.id in classes
               or isinstance(n, ast.Attribute) and n.attr in classes for n in ast.walk(node))


def _subject(node: ast.AST, classes: set[str]) -> ast.expr | None:
    """The checked expression when ``node`` is a class check on a family class."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id == "isinstance" and len(node.args) == 2 and not node.keywords \
            and _mentions(node.args[1], classes):
        return node.args[0]
    if isinstance(node, ast.Compare) and len(node.ops) == 1 \
            and isinstance(node.ops[0], _TYPE_OPS) and isinstance(node.left, ast.Call) \
            and isinstance(node.left.func, ast.Name) and node.left.func.id == "type" \
            and len(node.left.args) == 1 and _mentions(node.comparators[0], classes):
        return node.left.args[0]
    return None


def _children(node: ast.AST) -> Iterator[tuple[tuple[str, int], ast.AST]]:
    """Child nodes with their step: statement lists count only non-import statements."""
    for name, value in ast.iter_fields(node):
        if isinstance(value, ast.AST):
            yield (name, -1), value
        elif isinstance(value, list):
            index = 0
            for item in value:
                if not isinstance(item, ast.AST):
                    continue
                if isinstance(item, (ast.Import, ast.ImportFrom)):
                    continue
                yield (name, index), item
                index += 1


def _outermost(node: ast.AST, match: Callable[[ast.expr], T | None],
               path: tuple[tuple[str, int], ...] = ()) \
        -> Iterator[tuple[tuple[tuple[str, int], ...], ast.expr, T]]:
    """(path, expression, what ``match`` found in it) for every outermost expression
    under ``node`` that ``match`` finds something in."""
    for step, child in _children(node):
        found = match(child) if isinstance(child, ast.expr) else None
        if found is not None:
            yield (*path, step), child, found  # type: ignore[misc]
        else:
            yield from _outermost(child, match, (*path, step))


def _compared(node: ast.expr) -> tuple[ast.expr, ast.expr] | None:
    """The two objects of a comparison of their types (the rule ``apply`` rewrites them
    by: ``analysis/type_comparisons.py``)."""
    return compared_objects(node) if is_type_comparison(node) else None


def _follow(node: ast.AST, path: tuple[tuple[str, int], ...]) -> ast.AST | None:
    """The node at ``path`` (as ``_outermost`` gives it) in another tree, if any."""
    found: ast.AST | None = node
    for step in path:
        if found is None:
            return None
        found = next((child for where, child in _children(found) if where == step), None)
    return found


class _Replace(ast.NodeTransformer):
    """Replaces every occurrence of one expression (compared by ``ast.dump``) by a name."""

    def __init__(self, subject: ast.expr, name: str = SUBJECT) -> None:
        self.dump = ast.dump(subject)
        self.name = name
        self.count = 0

    def visit(self, node: ast.AST) -> Any:
        if isinstance(node, ast.expr) and ast.dump(node) == self.dump:
            self.count += 1
            return ast.copy_location(ast.Name(self.name, ast.Load()), node)
        return super().visit(node)


def _with_subject(expression: ast.expr, subject: ast.expr, name: str = SUBJECT) -> tuple[str, int]:
    """The expression's source with ``subject`` replaced by ``name``, and how many times it was."""
    replacer = _Replace(subject, name)
    replaced = replacer.visit(ast.parse(ast.unparse(expression), mode="eval").body)
    return ast.unparse(replaced), replacer.count


def _with_subjects(expression: ast.expr, first: ast.expr, second: ast.expr) -> tuple[str, bool]:
    """The expression's source with ``first`` as ``SUBJECT`` and ``second`` as ``OTHER``,
    and whether each was found."""
    code, found_first = _with_subject(expression, first)
    replaced, found_second = _with_subject(ast.parse(code, mode="eval").body, second, OTHER)
    return replaced, bool(found_first and found_second)


def _module_name(package: str, package_dir: Path, path: Path) -> str:
    rel = path.relative_to(package_dir).with_suffix("")
    parts = [package, *rel.parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(tree: ast.Module, module: str, is_package: bool, wanted: set[str]) \
        -> dict[str, tuple[str, str | None]]:
    """Names the module binds (anywhere in it) from the modules in ``wanted``, or to them."""
    bound: dict[str, tuple[str, str | None]] = {}
    here = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = here[:len(here) - (node.level - 1)] if node.level > 1 else here
                base = ".".join([*parent, *([node.module] if node.module else [])])
            for alias in node.names:
                name = alias.asname or alias.name
                if f"{base}.{alias.name}" in wanted:
                    bound[name] = (f"{base}.{alias.name}", None)
                elif base in wanted:
                    bound[name] = (base, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in wanted:
                    bound[alias.asname] = (alias.name, None)
                elif not alias.asname and alias.name.split(".")[0] in wanted:
                    top = alias.name.split(".")[0]
                    bound[top] = (top, None)
    return bound


def find_check_sites(families: Families) -> CheckSites:
    """Every rewritten family-class check outside the family and runtime modules."""
    found = CheckSites()
    classes = {member.name for member in families.classes}
    wanted = set(families.modules) | set(families.runtime_modules)
    original_dir, converted_dir = families.original_package_dir, families.converted_package_dir
    for path in sorted(original_dir.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        module = _module_name(families.package, original_dir, path)
        twin = converted_dir / path.relative_to(original_dir)
        if module in wanted or not twin.is_file():
            continue
        try:
            before_text = path.read_text("utf-8")
            if not any(name in before_text for name in classes) and not may_compare_types(before_text):
                continue
            after_text = twin.read_text("utf-8")
            if after_text == before_text:
                continue
            before, after = ast.parse(before_text), ast.parse(after_text)
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            continue
        is_package = path.name == "__init__.py"
        before_imports = _imports(before, module, is_package, wanted | OUTSIDE)
        after_imports = _imports(after, module, is_package, wanted | OUTSIDE)
        rel = path.relative_to(original_dir.parent).as_posix()
        changed = _ChangedModule(rel, module, before, after, before_imports, after_imports)
        _single_sites(found, changed, lambda n: _subject(n, classes), "expression", "check")
        for where, compare, (first, second) in _outermost(before, _compared):
            site = f"{rel}:{compare.lineno}"
            if ast.dump(first) == ast.dump(second):
                continue  # one object's type compared with itself: the same answer always
            counterpart = _follow(after, where)
            if not isinstance(counterpart, ast.expr):
                found.skipped.append(f"{site}: no rewritten comparison at the same place")
                continue
            original, _ = _with_subjects(compare, first, second)
            converted, uses = _with_subjects(counterpart, first, second)
            if not uses:
                found.skipped.append(f"{site}: the rewritten comparison does not compare "
                                     f"`{ast.unparse(first)}` and `{ast.unparse(second)}`")
                continue
            found.sites.append(CheckSite(site, module, original, converted,
                                         before_imports, after_imports, pair=True))
        _single_sites(found, changed, compared_with_parameter, "comparison", "compare")
    return found


@dataclass(frozen=True)
class _ChangedModule:
    """One changed module: its place, its two trees and what their imports bind."""

    rel: str
    module: str
    before: ast.Module
    after: ast.Module
    before_imports: dict[str, tuple[str, str | None]]
    after_imports: dict[str, tuple[str, str | None]]


def _single_sites(found: CheckSites, changed: _ChangedModule,
                  match: Callable[[ast.expr], ast.expr | None], noun: str, verb: str) -> None:
    """The sites of one checked object ``match`` finds in ``changed`` (a class check, a
    type compared with ``Parameter``), or why each is left out (``noun``/``verb`` word it)."""
    for where, check, subject in _outermost(changed.before, match):
        site = f"{changed.rel}:{check.lineno}"
        counterpart = _follow(changed.after, where)
        if not isinstance(counterpart, ast.expr):
            found.skipped.append(f"{site}: no rewritten {noun} at the same place")
            continue
        original, _ = _with_subject(check, subject)
        converted, uses = _with_subject(counterpart, subject)
        if not uses:
            found.skipped.append(f"{site}: the rewritten {noun} does not {verb} "
                                 f"`{ast.unparse(subject)}`")
            continue
        found.sites.append(CheckSite(site, changed.module, original, converted,
                                     changed.before_imports, changed.after_imports))


def _namespace(code: str, imports: dict[str, tuple[str, str | None]], tree: TreeImport) \
        -> dict[str, Any] | str:
    """The names ``code`` uses, bound from ``tree``; or the first name that cannot be."""
    namespace: dict[str, Any] = {}
    for name in sorted(_names(ast.parse(code, mode="eval")) - {SUBJECT, OTHER}):
        if name in imports:
            module_name, attribute = imports[name]
            module = tree.module(module_name) if module_name not in OUTSIDE \
                else importlib.import_module(module_name)
            if module is not None and (attribute is None or hasattr(module, attribute)):
                namespace[name] = module if attribute is None else getattr(module, attribute)
                continue
        if not hasattr(builtins, name):
            return name
    return namespace


def drive(sites: CheckSites, before: TreeImport, after: TreeImport) -> list[DrivenSite]:
    """The sites whose names all resolve in both trees (the others join ``skipped``)."""
    driven = []
    for site in sites.sites:
        original = _namespace(site.original, site.original_imports, before)
        converted = _namespace(site.converted, site.converted_imports, after)
        if isinstance(original, str) or isinstance(converted, str):
            missing = original if isinstance(original, str) else converted
            sites.skipped.append(f"{site.where}: `{missing}` is not from the family's modules")
            continue
        driven.append(DrivenSite(
            site, DrivenExpression(compile(site.original, site.where, "eval"), original),
            DrivenExpression(compile(site.converted, site.where, "eval"), converted)))
    return driven
