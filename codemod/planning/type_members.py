"""Members of a converted class read through an instance's type: ``type(p).CONST``.

What it does
    ``type_member_uses`` finds, anywhere in the tree, ``type(x).name`` or
    ``x.__class__.name`` where ``name`` is a method, class constant, static method or
    property a converted (or shadow) class defines, and refuses every such class with
    the line (the planner keeps those classes, and their subclasses, as classes).
Why
    A converted parameter's type is ``torch.nn.Parameter``: ``type(p).PACK`` and
    ``type(p).load(p, w)`` found the member on the old class and raise
    ``AttributeError`` after conversion. No rewrite can tell statically which kind ``x``
    holds. (Inside the class's own methods ``self.__class__`` is refused by the class's
    own rules; ``self`` of an ordinary class's method is that object, left alone here.)
Fix safety
    Dunder names (``__name__``, ``__qualname__``, ``__module__``) are not members the
    conversion moves; they answer ``Parameter``'s and are covered elsewhere (a
    comparison with the class's name refuses it, see the safety net).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from codemod.analysis import python_trees
from codemod.analysis.text_search import alternation
from codemod.planning.plan import Plan
from codemod.types import BlockingUse, UseForm


def type_member_uses(plan: Plan, sources: dict[Path, str]) -> dict[str, BlockingUse]:
    """Qualname of each class one of whose members is read as ``type(x).name`` or
    ``x.__class__.name`` somewhere in ``sources`` -> the first such read."""
    owners: dict[str, list[str]] = {}
    for qual, cls in sorted(plan.classes.items()):
        if not (cls.converted or cls.shadow):
            continue
        for name in {*cls.facts.methods, *cls.constants, *cls.static_funcs, *cls.properties}:
            if not (name.startswith("__") and name.endswith("__")):
                owners.setdefault(name, []).append(qual)
    if not owners:
        return {}
    mention = re.compile(rf"\.\s*(?:{alternation(frozenset(owners))})(?!\w)")
    found: dict[str, BlockingUse] = {}
    for path, text in sorted(sources.items()):
        if ("type(" not in text and "__class__" not in text) or mention.search(text) is None:
            continue
        try:
            tree = python_trees.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        walker = _Walker(frozenset(owners))
        walker.visit(tree)
        lines = text.splitlines()
        for line, name in sorted(walker.found):
            code = lines[line - 1].strip() if 0 < line <= len(lines) else ""
            use = BlockingUse(path, line, code, UseForm.ESCAPE,
                              escape=f"reads `{name}` through the instance's type, which is "
                                     "torch.nn.Parameter after conversion")
            for qual in owners[name]:
                found.setdefault(qual, use)
    return found


class _Walker(ast.NodeVisitor):
    """``type(x).name`` / ``x.__class__.name`` reads, ``self`` of a method excepted."""

    def __init__(self, names: frozenset[str]) -> None:
        self.names = names
        self.found: list[tuple[int, str]] = []
        self._selves: list[str] = []
        self._direct_in_class = False

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        outer, self._direct_in_class = self._direct_in_class, True
        self.generic_visit(node)
        self._direct_in_class = outer

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        params = [*node.args.posonlyargs, *node.args.args]
        own = params[0].arg if self._direct_in_class and params else None
        if own is not None:
            self._selves.append(own)
        outer, self._direct_in_class = self._direct_in_class, False
        self.generic_visit(node)
        self._direct_in_class = outer
        if own is not None:
            self._selves.pop()

    visit_FunctionDef = _visit_function
    visit_AsyncFunctionDef = _visit_function

    def visit_Attribute(self, node: ast.Attribute) -> None:
        subject = _type_subject(node.value)
        if node.attr in self.names and subject is not None and not (
                self._selves and isinstance(subject, ast.Name) and subject.id == self._selves[-1]):
            self.found.append((node.lineno, node.attr))
        self.generic_visit(node)


def _type_subject(expr: ast.expr) -> ast.expr | None:
    """``x`` of ``type(x)`` or ``x.__class__``; None for anything else."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "type" \
            and len(expr.args) == 1 and not expr.keywords:
        return expr.args[0]
    if isinstance(expr, ast.Attribute) and expr.attr == "__class__":
        return expr.value
    return None
