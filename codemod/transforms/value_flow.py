"""Which leftover uses of a converted class need a class, whatever value flows there.

What it does
    ``is_class_style`` says of one mention (LibCST) whether its own position needs a
    class: an attribute read, an ``isinstance``/``issubclass`` argument, a ``type(...)``
    comparison, an operand of ``|``, a class base. Such a use is a leftover even with
    ``allow-value-uses``. Every other leftover mention hands the class on as a value;
    whether that value stays valid is proven tree-wide by ``analysis.class_values``
    (the one place that decides value uses, for apply, the leftover screen and check).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider

from codemod.analysis.class_specs import is_union


def _parents(module: cst.Module) -> dict[cst.CSTNode, cst.CSTNode]:
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    return dict(wrapper.resolve(ParentNodeProvider))


def is_class_style(node: cst.CSTNode, parents: dict[cst.CSTNode, cst.CSTNode]) -> bool:
    """A use that needs a class: attribute access, isinstance/issubclass, type
    comparison, an operand of ``|`` (``X | Y`` calls ``type.__or__``; a function has none)."""
    parent = parents.get(node)
    if isinstance(parent, cst.Attribute) and parent.value is node:
        return True
    if is_union(parent):  # type: ignore[arg-type]
        return True
    # Walk up through tuples/lists (``isinstance(p, (X, Y))``).
    up = parent
    while isinstance(up, (cst.Element, cst.Tuple, cst.List, cst.Set)):
        up = parents.get(up)
    if isinstance(up, cst.Arg):
        call = parents.get(up)
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and \
                call.func.value in ("isinstance", "issubclass"):
            return True
    if isinstance(up, cst.ComparisonTarget):
        comparison = parents.get(up)
        if isinstance(comparison, cst.Comparison):
            sides = [comparison.left, *(t.comparator for t in comparison.comparisons)]
            return any(_is_type_of(s) for s in sides)
    if isinstance(up, cst.Comparison):
        sides = [up.left, *(t.comparator for t in up.comparisons)]
        return any(_is_type_of(s) for s in sides)
    if isinstance(up, cst.Arg) and isinstance(parents.get(up), cst.ClassDef):
        return True
    return False


def _is_type_of(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "type":
        return True
    return isinstance(expr, cst.Attribute) and expr.attr.value == "__class__"


def class_style_uses(module: cst.Module, nodes: list[cst.CSTNode]) -> set[int]:
    """ids of the ``nodes`` (mentions in ``module``) whose position needs a class."""
    if not nodes:
        return set()
    parents = _parents(module)
    return {id(node) for node in nodes if is_class_style(node, parents)}
