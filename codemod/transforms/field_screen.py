"""Whether a file's mentions of backing fields are all ones no rewrite touches, decided
from CPython's tree so that such a file needs no LibCST parse.

``UseSiteTransformer`` rewrites an access to a backing field ``_f`` (a former property's
storage) in two shapes only: an attribute ``obj._f`` (read, written or deleted) whose
object may be a converted parameter, and ``getattr``/``hasattr``/``setattr`` with the
literal name. In a file that defines no Parameter class, ``obj`` is ruled out only when
it is the ``self`` of a method: the first parameter of a function defined directly in a
class body (not a ``staticmethod``, no function around the class), seen from anywhere
inside that method, nested functions included. ``fields_untouched`` answers True only
when every attribute named like a field is such a ``self._f`` and no call passes a
field's name as a string: then that transformer leaves every field mention as it is.
"""

from __future__ import annotations

import ast

from codemod.analysis import python_trees


def fields_untouched(text: str, fields: frozenset[str]) -> bool:
    """True when no backing-field rewrite can act on ``text`` (see the module docstring);
    False when one may, or when CPython cannot parse the text."""
    try:
        tree = python_trees.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return _Walk(fields).untouched(tree)


class _Walk:
    """The transformer's class and method-``self`` stacks, kept the same way."""

    def __init__(self, fields: frozenset[str]) -> None:
        self.fields = fields
        self.classes = 0
        #: Per enclosing class (None) or function (its ``self``, or "" when it has none).
        self.method_self: list[str | None] = []

    def untouched(self, node: ast.AST) -> bool:
        """Whether no field rewrite acts inside ``node``."""
        if isinstance(node, ast.ClassDef):
            return self._inside(node, None, counts_as_class=True)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return self._inside(node, self._self_of(node))
        if isinstance(node, ast.Attribute) and node.attr in self.fields and not self._is_self(node.value):
            return False
        if isinstance(node, ast.Call) and any(
                isinstance(arg, ast.Constant) and arg.value in self.fields
                for arg in [*node.args, *(k.value for k in node.keywords)]):
            return False  # ``getattr(p, "_f")`` and the like
        return all(self.untouched(child) for child in ast.iter_child_nodes(node))

    def _inside(self, node: ast.AST, own_self: str | None, counts_as_class: bool = False) -> bool:
        """Walk the children of a class or function (its decorators, bases, parameters
        and body alike) with it on the stacks, as the transformer's ``visit_*`` does."""
        self.method_self.append(own_self)
        self.classes += counts_as_class
        try:
            return all(self.untouched(child) for child in ast.iter_child_nodes(node))
        finally:
            self.method_self.pop()
            self.classes -= counts_as_class

    def _self_of(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
        """The first parameter of a method directly in a class body with no function
        around it, unless a ``staticmethod``; else ""."""
        directly_in_class = bool(self.method_self) and self.method_self[-1] is None and \
            len(self.method_self) == self.classes
        params = [*fn.args.posonlyargs, *fn.args.args]
        is_static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)
        return params[0].arg if directly_in_class and params and not is_static else ""

    def _is_self(self, obj: ast.expr) -> bool:
        """Whether ``obj`` is the ``self`` of the innermost method around it."""
        own_self = next((name for name in reversed(self.method_self) if name), None)
        return bool(own_self and self.classes and isinstance(obj, ast.Name) and obj.id == own_self)
