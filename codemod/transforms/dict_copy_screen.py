"""Which files ``DictCopyTransformer`` can change, decided on CPython's tree (``may_rewrite``)
so that a file that merely calls ``vars(...)`` is never parsed by LibCST.

The screen may say a file can change where the transformer then leaves it alone, never
the reverse: every shape the transformer acts on is matched here, and so is its rule for
an ordinary class's own ``self`` (``DictCopyTransformer.may_involve_param``).
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Iterator

from codemod.analysis import python_trees
from codemod.analysis.text_search import lines_matching
from codemod.transforms.dict_forms import DICT_VIEWS


def may_rewrite(text: str, keys: frozenset[str],
                param_classes: frozenset[str] | None = None) -> bool:
    """Whether ``DictCopyTransformer`` can change a file: a cheap screen with CPython's
    parser, so that a file merely calling ``vars(...)`` is never parsed by LibCST.

    True for every shape the transformer acts on (an attribute-dict copy, a ``setattr``
    loop over one, a read of one of ``keys`` through ``.get``/``[...]``/``in``, an
    equality or a comprehension over an attribute dict), and for text CPython cannot
    parse; it may say True where the transformer then leaves the file alone.

    ``param_classes``: the names of the Parameter classes this file defines, when known;
    then a copy into, a comprehension over or an equality of the attribute dict of a
    method's own ``self`` in an ordinary class (or a closure in it) is passed over, as
    the transformer leaves it alone (``may_involve_param``)."""
    try:
        tree = python_trees.parse(text)
    except (SyntaxError, ValueError):
        return True
    for node, own in _walk_lines(tree, _lines_naming_attr_dicts(text), param_classes):
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Attribute) and t.attr == "__dict__" and not _is_own(t.value, own)
                   for t in targets):
                return True
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and _is_attr_dict(func.value):
                if func.attr == "update" and not _is_own(_dict_object(func.value), own):
                    return True
                if func.attr == "get" and node.args and _is_key(node.args[0], keys):
                    return True
        elif isinstance(node, ast.Subscript):
            if _is_attr_dict(node.value) and _is_key(node.slice, keys):
                return True
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for op, left, right in zip(node.ops, operands, operands[1:]):
                if isinstance(op, (ast.In, ast.NotIn)) and _is_key(left, keys) \
                        and _is_attr_dict(right):
                    return True
                if isinstance(op, (ast.Eq, ast.NotEq)) and any(
                        (_is_attr_dict(o) or _over_attr_dict(o) or _copy_of_attr_dict(o))
                        and not _own_dicts_only(o, own)
                        for o in (left, right)):
                    return True
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            if _over_attr_dict(node) and not _own_dicts_only(node, own):
                return True
        elif isinstance(node, ast.For):
            if _dict_items(node.iter) and any(
                    isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "setattr"
                    for stmt in node.body for n in ast.walk(stmt)):
                return True
    return False


def _is_own(obj: ast.AST | None, own: str | None) -> bool:
    """``obj`` is the plain name ``own`` (an ordinary object's own ``self``)."""
    return own is not None and isinstance(obj, ast.Name) and obj.id == own


def _dict_object(node: ast.AST) -> ast.AST | None:
    """``x`` of ``x.__dict__``, ``vars(x)`` or ``getattr(x, "__dict__")``."""
    if isinstance(node, ast.Attribute) and node.attr == "__dict__":
        return node.value
    if isinstance(node, ast.Call) and node.args and _is_attr_dict(node):
        return node.args[0]
    return None


def _own_dicts_only(node: ast.AST, own: str | None) -> bool:
    """Every attribute dict an equality operand or a comprehension's first loop reads
    (as ``DictCopyTransformer._views_in`` finds them) is ``own``'s."""
    if own is None:
        return False
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        source = node.generators[0].iter
        if isinstance(source, ast.Call) and isinstance(source.func, ast.Attribute) \
                and source.func.attr in ("items", "keys", "values") and not source.args:
            source = source.func.value
        return _is_own(_dict_object(source), own)
    if _is_attr_dict(node):
        return _is_own(_dict_object(node), own)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return _is_own(_dict_object(node.func.value), own)
    if isinstance(node, ast.Call) and node.args:
        return _is_own(_dict_object(node.args[0]), own)
    if isinstance(node, ast.Dict):
        return all(v is None or not _is_attr_dict(v) or _is_own(_dict_object(v), own)
                   for v in node.values)
    return False


#: A line that can hold an attribute dict: ``x.__dict__``, ``vars(x)``, ``getattr(x, "__dict__")``.
_ATTR_DICT_WORD = re.compile(r"__dict__|\bvars\b")


def _lines_naming_attr_dicts(text: str) -> list[int]:
    """Sorted 1-based numbers of the lines (as CPython numbers them) that mention
    ``__dict__`` or ``vars``."""
    return lines_matching(text, _ATTR_DICT_WORD)


def _walk_lines(tree: ast.AST, lines: list[int], param_classes: frozenset[str] | None = None,
                ) -> Iterator[tuple[ast.AST, str | None]]:
    """``ast.walk(tree)`` without the statements and expressions that span none of
    ``lines``: every shape ``may_rewrite`` looks for holds an attribute dict, whose
    spelling lies on one of them, inside the node that holds it. With each node, the
    own ``self`` of the ordinary class's method it is in (None: none, or
    ``param_classes`` not given), found as ``DictCopyTransformer`` finds it."""
    Scope = tuple[str, object]
    stack: list[tuple[ast.AST, Scope | None]] = [(tree, None)]
    while stack:
        node, scope = stack.pop()
        first = getattr(node, "lineno", None)
        if first is not None:
            for decorator in getattr(node, "decorator_list", ()):
                first = min(first, decorator.lineno)
            at = bisect.bisect_left(lines, first)
            if at == len(lines) or lines[at] > node.end_lineno:  # type: ignore[attr-defined]
                continue
        own = scope[1] if scope is not None and scope[0] == "def" and param_classes is not None else None
        yield node, own if isinstance(own, str) else None
        inner = scope
        if isinstance(node, ast.ClassDef):
            inner = ("class", param_classes is None or node.name in param_classes)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            params = [*node.args.posonlyargs, *node.args.args]
            mine: object = None
            if scope == ("class", False) and params:
                mine = params[0].arg
            elif scope is not None and scope[0] == "def":
                mine = scope[1]
            inner = ("def", mine)
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))


def _is_attr_dict(node: ast.AST) -> bool:
    """``x.__dict__``, ``vars(x)`` or ``getattr(x, "__dict__")`` (as ``attr_dict_of``)."""
    if isinstance(node, ast.Attribute):
        return node.attr == "__dict__"
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return False
    if node.func.id == "getattr" and len(node.args) == 2:
        key = node.args[1]
        return isinstance(key, ast.Constant) and key.value == "__dict__"
    return node.func.id == "vars" and len(node.args) == 1


def _copy_of_attr_dict(node: ast.AST) -> bool:
    """A copy or view of an attribute dict compared as the dict (``_copy_view``):
    ``.copy()``/``.items()``/``.keys()``/``.values()``, ``dict(d)``, ``{**d}``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in DICT_VIEWS and not node.args:
        return _is_attr_dict(node.func.value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" \
            and len(node.args) == 1:
        return _is_attr_dict(node.args[0])
    if isinstance(node, ast.Dict) and node.keys and all(k is None for k in node.keys):
        return any(_is_attr_dict(v) for v in node.values)
    return False


def _dict_items(node: ast.AST) -> bool:
    """An attribute dict, or ``.items()``/``.keys()``/``.values()`` of one."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in ("items", "keys", "values") and not node.args:
        return _is_attr_dict(node.func.value)
    return _is_attr_dict(node)


def _over_attr_dict(node: ast.AST) -> bool:
    """A comprehension whose first loop runs over an attribute dict."""
    return isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)) \
        and _dict_items(node.generators[0].iter)


def _is_key(node: ast.AST, keys: frozenset[str]) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in keys
