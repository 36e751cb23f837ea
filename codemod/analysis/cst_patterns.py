"""Structural patterns over LibCST nodes, for the stages before any conversion: the part
of ``libcst.matchers`` that analysis and planning use (``matches``, ``findall``, a
pattern per node type, ``|``, ``ZeroOrMore``), spelled the same way, so that a module
reads ``from codemod.analysis import cst_patterns as m`` and ``m.matches(node,
m.Attribute(value=m.Name("self")))`` as it would with LibCST's.

Why not ``libcst.matchers`` itself: importing it defines a matcher dataclass for each of
LibCST's node types, ~0.19 s before the first line of work. ``check`` never needs it
(it converts nothing), and ``apply`` imports it with the conversion machinery while
forked processes run the tree-wide screens (``pipeline.plan_rounds``), not before
reading the tree. The transforms keep using LibCST's matchers and codemods.

Semantics, as LibCST's for this subset: a pattern names a node type (the node's type
must be that one) and some of its fields; a field left out matches anything; a field
given as a pattern matches a node field that matches it (``a | b``: either); a list
matches a sequence element by element, ``ZeroOrMore()`` as its last element matching
any rest; any other value (a string, None) must equal the node's field. ``findall``
gives every node of a tree that matches, the tree's root included, in source order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import libcst as cst


class Pattern:
    """A node type and the fields a matching node must have."""

    __slots__ = ("node_type", "fields")

    def __init__(self, node_type: type[cst.CSTNode], fields: dict[str, object]) -> None:
        self.node_type = node_type
        self.fields = fields

    def __or__(self, other: AnyPattern) -> OneOf:
        return OneOf((self, other))


class OneOf:
    """Any of several patterns (``a | b``)."""

    __slots__ = ("options",)

    def __init__(self, options: tuple[AnyPattern, ...]) -> None:
        self.options = options

    def __or__(self, other: AnyPattern) -> OneOf:
        return OneOf((*self.options, other))


class ZeroOrMore:
    """The rest of a sequence, whatever it holds (only as a list's last element)."""

    __slots__ = ()


AnyPattern = Pattern | OneOf


def matches(node: object, pattern: AnyPattern) -> bool:
    """Whether ``node`` matches ``pattern`` (see the module doc)."""
    if isinstance(pattern, OneOf):
        return any(matches(node, option) for option in pattern.options)
    if type(node) is not pattern.node_type:
        return False
    return all(_field_matches(getattr(node, name), want) for name, want in pattern.fields.items())


def _field_matches(value: object, want: object) -> bool:
    if isinstance(want, (Pattern, OneOf)):
        return matches(value, want)
    if isinstance(want, list):
        if not isinstance(value, Sequence):
            return False
        if want and isinstance(want[-1], ZeroOrMore):
            head = want[:-1]
            return len(value) >= len(head) and all(map(_field_matches, value, head))
        return len(value) == len(want) and all(map(_field_matches, value, want))
    return value == want


def findall(tree: cst.CSTNode, pattern: AnyPattern) -> list[cst.CSTNode]:
    """Every node of ``tree`` (itself included) that matches ``pattern``, in source order."""
    found: list[cst.CSTNode] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if matches(node, pattern):
            found.append(node)
        stack.extend(reversed(node.children))
    return found


def _pattern(node_type: type[cst.CSTNode]) -> Callable[..., Pattern]:
    """The pattern maker of ``node_type``: fields by keyword, or its first field by
    position (``Name("self")`` is ``Name(value="self")``, as in LibCST's matchers)."""
    first = dataclasses.fields(node_type)[0].name

    def make(*args: object, **fields: object) -> Pattern:
        if len(args) > 1 or (args and first in fields):
            raise TypeError(f"{node_type.__name__}: one positional field at most ({first})")
        if args:
            fields[first] = args[0]
        return Pattern(node_type, fields)

    make.__name__ = make.__qualname__ = node_type.__name__
    return make


Arg = _pattern(cst.Arg)
Assign = _pattern(cst.Assign)
AssignTarget = _pattern(cst.AssignTarget)
Attribute = _pattern(cst.Attribute)
Call = _pattern(cst.Call)
Comparison = _pattern(cst.Comparison)
ComparisonTarget = _pattern(cst.ComparisonTarget)
Del = _pattern(cst.Del)
Dict = _pattern(cst.Dict)
Expr = _pattern(cst.Expr)
Float = _pattern(cst.Float)
If = _pattern(cst.If)
IndentedBlock = _pattern(cst.IndentedBlock)
Integer = _pattern(cst.Integer)
Is = _pattern(cst.Is)
Name = _pattern(cst.Name)
Pass = _pattern(cst.Pass)
Raise = _pattern(cst.Raise)
Return = _pattern(cst.Return)
SimpleStatementLine = _pattern(cst.SimpleStatementLine)
SimpleString = _pattern(cst.SimpleString)
UnaryOperation = _pattern(cst.UnaryOperation)
Yield = _pattern(cst.Yield)
