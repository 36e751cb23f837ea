"""Which leftover uses of a converted class are only ever *called*, so they stay valid.

What it does
    Given the uses of converted class names that no rewrite handled, it proves some of them
    harmless: after conversion the name is the factory, and a value that is only called
    (or compared with ``==``/``is`` to another converted name) behaves exactly as the class
    did as a constructor. The proof is local to one function: ``cls = X`` or a local dict
    ``{key: X}`` read as ``d[key]``, where every read of that variable is a call, a
    comparison, a membership test or a further assignment to such a variable.
Why
    Engines pick a parameter kind at run time (``param_cls = PackedvLLMParameter`` ...
    ``param_cls(data=...)``). Refusing the hierarchy for that would be needlessly strict.
Fix safety
    Anything else (a module-level table, a value passed to another function, an attribute
    read on the class) is not proven and stays a leftover, unless the user opts in with
    ``allow-value-uses``, which accepts every *value* use (never an ``isinstance``,
    ``issubclass``, ``type() is``, attribute or ``X | Y`` use, which would break for certain).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider

from codemod.analysis.class_specs import is_union

_COMPARE_OPS = (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot)


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


def _enclosing_function(node: cst.CSTNode, parents: dict[cst.CSTNode, cst.CSTNode]) -> cst.FunctionDef | None:
    up = parents.get(node)
    while up is not None and not isinstance(up, cst.FunctionDef):
        up = parents.get(up)
    return up


def _assigned_name(node: cst.CSTNode, parents: dict[cst.CSTNode, cst.CSTNode]) -> str | None:
    """``name = node`` / ``name: T = node`` -> ``name``."""
    parent = parents.get(node)
    if isinstance(parent, cst.Assign) and parent.value is node and len(parent.targets) == 1:
        target = parent.targets[0].target
        return target.value if isinstance(target, cst.Name) else None
    if isinstance(parent, cst.AnnAssign) and parent.value is node:
        return parent.target.value if isinstance(parent.target, cst.Name) else None
    return None


class _Reads(cst.CSTVisitor):
    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.found: list[cst.Name] = []

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.names:
            self.found.append(node)


def _only_called(name: str, scope: cst.FunctionDef, parents: dict[cst.CSTNode, cst.CSTNode],
                 depth: int = 0) -> bool:
    """Every read of local ``name`` in ``scope`` calls it, compares it or re-binds it."""
    if depth > 3:
        return False
    reads = _Reads({name})
    scope.body.visit(reads)
    for occurrence in reads.found:
        parent = parents.get(occurrence)
        if isinstance(parent, cst.AssignTarget) or (
            isinstance(parent, cst.AnnAssign) and parent.target is occurrence
        ):
            continue  # a binding, not a read
        if isinstance(parent, cst.Annotation):
            continue
        if isinstance(parent, cst.Call) and parent.func is occurrence:
            continue
        if isinstance(parent, cst.Comparison) or isinstance(parent, cst.ComparisonTarget):
            continue  # == / is against another factory, or `key in table`
        if isinstance(parent, cst.Subscript) and parent.value is occurrence:
            holder = parents.get(parent)
            if isinstance(holder, cst.Call) and holder.func is parent:
                continue
            rebound = _assigned_name(parent, parents)
            if rebound is not None and (rebound == name or _only_called(rebound, scope, parents, depth + 1)):
                continue
            return False
        rebound = _assigned_name(occurrence, parents)
        if rebound is not None and _only_called(rebound, scope, parents, depth + 1):
            continue
        return False
    return True


def proven_calls_only(module: cst.Module, nodes: list[cst.CSTNode]) -> tuple[set[int], set[int]]:
    """(ids of uses proven to be only called, ids of uses that need a class)."""
    if not nodes:
        return set(), set()
    parents = _parents(module)
    proven: set[int] = set()
    class_style: set[int] = set()
    for node in nodes:
        if is_class_style(node, parents):
            class_style.add(id(node))
            continue
        scope = _enclosing_function(node, parents)
        if scope is None:
            continue
        parent = parents.get(node)
        if isinstance(parent, cst.ComparisonTarget) or isinstance(parent, cst.Comparison):
            proven.add(id(node))
            continue
        name = _assigned_name(node, parents)
        if name is None and isinstance(parent, cst.DictElement) and parent.value is node:
            name = _assigned_name(parents.get(parent), parents)  # type: ignore[arg-type]
        if name is not None and _only_called(name, scope, parents):
            proven.add(id(node))
    return proven, class_style
