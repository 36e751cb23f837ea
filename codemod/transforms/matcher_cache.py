"""Construct LibCST's import codemods without searching them for matcher decorators each time.

Every ``MatcherDecoratableTransformer``/``Visitor`` (``AddImportsVisitor``,
``RemoveImportsVisitor`` and the visitors they construct in turn) looks through every
attribute of itself, at construction and at its first visit, for methods decorated with
``@m.visit``, ``@m.leave``, ``@m.call_if_inside`` or ``@m.call_if_not_inside``: several
milliseconds each, and a conversion constructs a few of them per file. LibCST's own
codemod classes have no such method, and what the search finds depends only on the
class's methods, so once a LibCST class is found to have none it is not searched again
(the same empty answer). Any other class (ours, or one with decorated methods) is
searched as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import libcst.matchers._visitors as _matcher_visitors

_GATHERERS = ("_gather_constructed_visit_funcs", "_gather_constructed_leave_funcs",
              "_gather_matchers")


def _remember_none_found(gather: Callable[[object], dict[Any, Any]]) -> Callable[[object], dict[Any, Any]]:
    """``gather``, answering ``{}`` at once for a LibCST class it found nothing in before."""
    nothing_in: set[type] = set()

    def gather_once(obj: object) -> dict[Any, Any]:
        kind = type(obj)
        if kind in nothing_in:
            return {}
        found = gather(obj)
        if not found and kind.__module__.startswith("libcst."):
            nothing_in.add(kind)
        return found

    gather_once.remembers_none_found = True  # type: ignore[attr-defined]
    return gather_once


def install() -> None:
    """Replace LibCST's searches by the remembering ones (once per process). A LibCST
    release without one of these private functions keeps its own behaviour: only the
    speed-up is lost."""
    for name in _GATHERERS:
        gather = getattr(_matcher_visitors, name, None)
        if gather is not None and not getattr(gather, "remembers_none_found", False):
            setattr(_matcher_visitors, name, _remember_none_found(gather))


def warm() -> None:
    """Search the classes LibCST's import codemods construct, once, here: run
    ``add_imports`` and ``remove_imports`` on a two-line module. Worker processes forked
    afterwards inherit the (empty) answers instead of each searching every class again
    on its first conversion (~0.09 s per worker on vLLM 0.34). Nothing else is kept."""
    import libcst as cst
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

    from codemod.transforms.import_edits import add_imports, remove_imports

    tree = cst.parse_module("from pkg.a import b\n\nx = b\n")
    adding = CodemodContext(full_module_name="pkg.m", full_package_name="pkg")
    AddImportsVisitor.add_needed_import(adding, "pkg.c", "d")
    removing = CodemodContext(full_module_name="pkg.m", full_package_name="pkg")
    RemoveImportsVisitor.remove_unused_import(removing, "pkg.a", "b")
    remove_imports(add_imports(tree, adding), {"b"}, removing)
