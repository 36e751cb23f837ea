"""Whether a name read from a module of the tree is made when it is read: by a module
``__getattr__``, or by code that fills the module's namespace at run time.

The rewrites resolve a name through the statements that bind it; a name its module
binds nowhere (in any statement form CPython's symbol table knows, through no star
import, and no submodule of that name) is one they cannot see. ``planning/
unbound_imports.py`` asks this of imports and attribute reads, the safety net of
``getattr(module, "X")`` and ``import_module("m").X``.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Protocol


class _ModuleBindings(Protocol):
    """What a module binds at module level (the safety net's ``_ModuleInfo``)."""

    explicit: dict[str, list[str]]
    stars: list[str]


class TreeReader(Protocol):
    """What this reads of the tree: ``planning.safety_net.SafetyNet`` provides it."""

    def info(self, module: str) -> _ModuleBindings | None: ...

    def module_path(self, module: str) -> Path | None: ...

    def module_scope(self, module: str) -> frozenset[str] | None: ...

    def exports(self, module: str, name: str) -> bool: ...

    def tree(self, path: Path) -> ast.Module | None: ...


def made_at_run_time(net: TreeReader, source: str, name: str, seen: set[str] | None = None) -> str | None:
    """Why ``name`` read from the module ``source`` is made at run time, or None when
    ``source`` is no module of the tree, binds it, or may get it from a star import of a
    module that binds it or is outside the tree."""
    seen = set() if seen is None else seen
    info = net.info(source)
    if info is None or source in seen or name in info.explicit \
            or net.module_path(f"{source}.{name}") is not None:
        return None
    seen.add(source)
    bound = net.module_scope(source)
    if bound is None or name in bound:
        return None
    stars = [star for star in info.stars if net.info(star) is None or net.exports(star, name)]
    reasons = [made_at_run_time(net, star, name, seen) for star in stars]
    if stars:
        # Through star imports: made at run time only where every module they name makes it.
        return None if None in reasons else reasons[0]
    tree = net.tree(net.module_path(source))  # type: ignore[arg-type]  # info: a file
    lazy = tree is not None and any(isinstance(stmt, ast.FunctionDef) and stmt.name == "__getattr__"
                                    for stmt in tree.body)
    if lazy:
        return (f"read from {source}, whose module `__getattr__` makes `{name}` on demand, "
                "which no rewrite follows")
    return (f"read from {source}, which binds no `{name}` where the rewrites look "
            "(it is made at run time), which no rewrite follows")
