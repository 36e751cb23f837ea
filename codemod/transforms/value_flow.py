"""Which leftover uses of a converted class need a class, whatever value flows there.

What it does
    ``leftover_kind`` reads the kind of one leftover mention's position (LibCST), and
    ``is_class_style`` says by the kind's rule (``analysis.use_rules``) whether it needs a
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
from codemod.analysis.use_rules import USE_RULES, UseKind


def _parents(module: cst.Module) -> dict[cst.CSTNode, cst.CSTNode]:
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    return dict(wrapper.resolve(ParentNodeProvider))


def leftover_kind(node: cst.CSTNode, parents: dict[cst.CSTNode, cst.CSTNode],
                  held: frozenset[str] = frozenset()) -> UseKind:
    """The kind of a leftover mention's position, as far as its rule differs: an
    attribute access, an ``isinstance``/``issubclass`` argument, a ``type(...)``
    comparison, an operand of ``|`` (``X | Y`` calls ``type.__or__``; a function has
    none), a class base; any other position hands the class on as a ``VALUE``.

    ``held``: the names of the file that may hold an object's type the use-site rewrite
    covers (``t = type(p)``): a comparison with one is a type comparison here. The
    rewrite turns ``t == X`` into a comparison of kinds; one it left is a leftover that
    needs a class, whatever the value proof says."""
    parent = parents.get(node)
    if isinstance(parent, cst.Attribute) and parent.value is node:
        return UseKind.ATTRIBUTE
    if is_union(parent):  # type: ignore[arg-type]
        return UseKind.UNION
    # Walk up through tuples/lists (``isinstance(p, (X, Y))``).
    up = parent
    while isinstance(up, (cst.Element, cst.Tuple, cst.List, cst.Set)):
        up = parents.get(up)
    if isinstance(up, cst.Arg):
        call = parents.get(up)
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and \
                call.func.value in _CHECK_CALLS:
            return _CHECK_CALLS[call.func.value]
    if isinstance(up, cst.ComparisonTarget):
        comparison = parents.get(up)
        if isinstance(comparison, cst.Comparison):
            return _comparison_kind(comparison, held)
    if isinstance(up, cst.Comparison):
        return _comparison_kind(up, held)
    if isinstance(up, cst.Arg) and isinstance(parents.get(up), cst.ClassDef):
        return UseKind.BASE
    return UseKind.VALUE


_CHECK_CALLS = {"isinstance": UseKind.ISINSTANCE, "issubclass": UseKind.ISSUBCLASS}


def _comparison_kind(comparison: cst.Comparison, held: frozenset[str]) -> UseKind:
    """A type comparison when a side is ``type(...)``, ``x.__class__`` or a name of
    ``held``, else a value."""
    sides = [comparison.left, *(t.comparator for t in comparison.comparisons)]
    if any(_is_type_of(s) or (isinstance(s, cst.Name) and s.value in held) for s in sides):
        return UseKind.TYPE_COMPARISON
    return UseKind.VALUE


def is_class_style(node: cst.CSTNode, parents: dict[cst.CSTNode, cst.CSTNode]) -> bool:
    """A use that needs a class, whatever value flows there: its kind's rule says so."""
    return USE_RULES[leftover_kind(node, parents)].needs_class


def _is_type_of(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "type":
        return True
    return isinstance(expr, cst.Attribute) and expr.attr.value == "__class__"


def leftover_kinds(module: cst.Module, nodes: list[cst.CSTNode],
                   held: frozenset[str] = frozenset()) -> dict[int, UseKind]:
    """The kind (``leftover_kind``) of each of ``nodes`` (mentions in ``module``), by id."""
    if not nodes:
        return {}
    parents = _parents(module)
    return {id(node): leftover_kind(node, parents, held) for node in nodes}
