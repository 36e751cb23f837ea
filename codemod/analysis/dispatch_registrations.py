"""Functions whose annotations a dispatcher reads as classes: ``functools.singledispatch``
(and ``singledispatchmethod``) registers a function by its first parameter's annotation,
through ``@f.register``, the call ``f.register(handler)`` or an alias (``on =
f.register``, then ``@on``).

An annotation rewritten to ``Parameter`` there would make the handler take every
parameter: the rewrite leaves such annotations as they are, and the class they name is
refused (a leftover). ``@x.register`` is recognised by its form alone; the call and the
alias forms are found here, once per file, on CPython's tree: a statement of its own
(``f.register(handler)``, ``h = f.register(handler)``, ``on = f.register``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from codemod.analysis import python_trees
from codemod.analysis.names import statements_in_scope


@dataclass(frozen=True)
class Registrations:
    """What a module registers with a dispatcher, besides ``@x.register``."""

    #: Functions passed alone to a ``.register(...)`` call (``f.register(handler)``).
    functions: frozenset[str] = frozenset()
    #: Names bound to a ``.register`` attribute (``on = f.register``): ``@on`` registers.
    aliases: frozenset[str] = frozenset()

    def registers(self, name: str, decorators: list[str | None]) -> bool:
        """Whether the function ``name`` (decorated by ``decorators``, each a plain name or
        None) is registered by a call or through an alias."""
        return name in self.functions or any(d in self.aliases for d in decorators if d)


NONE = Registrations()

#: ``.register`` read or called (not ``register_buffer``): a file without one registers
#: nothing this module looks for, and is not walked.
_REGISTER = re.compile(r"\.\s*register\b")


def registrations(text: str) -> Registrations:
    """The call and alias registrations of the module ``text`` (none for a text that
    does not say ``register`` or does not parse)."""
    if "register" not in text or _REGISTER.search(text) is None:
        return NONE
    try:
        tree = python_trees.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return NONE
    functions: set[str] = set()
    aliases: set[str] = set()
    # Statements only (a call of its own, or an assignment's value): walking every
    # expression of each file that says ``.register`` cost ~0.1 s on vLLM 0.34.
    for stmt, _ in statements_in_scope(tree):
        value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else None
        if isinstance(value, ast.Call) and _is_register(value.func) and len(value.args) == 1 \
                and not value.keywords and isinstance(value.args[0], ast.Name):
            functions.add(value.args[0].id)
        elif isinstance(stmt, ast.Assign) and _is_register(stmt.value):
            aliases.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
    return Registrations(frozenset(functions), frozenset(aliases)) if functions or aliases else NONE


def _is_register(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Attribute) and expr.attr == "register"
