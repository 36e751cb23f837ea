"""The attribute-dict forms, read from LibCST's nodes: ``x.__dict__``, ``vars(x)`` and
``getattr(x, "__dict__")``; a statement that copies one object's attributes into another
(``t.__dict__ = s.__dict__.copy()``, ``t.__dict__.update(...)``, ``t.__dict__ |= ...``, a
``setattr`` loop over ``s.__dict__.items()``). ``DictCopyTransformer`` acts on what these
find; they only read.
"""

from __future__ import annotations

import libcst as cst

from codemod.transforms.use_sites import is_simple

#: Methods giving a copy or a view of a dict, compared as the dict itself would be.
DICT_VIEWS = frozenset({"copy", "items", "keys", "values"})


def _dict_of(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``t`` of ``t.__dict__`` when ``t`` is simple."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == "__dict__" and is_simple(expr.value):
        return expr.value
    return None


def copied_object(small: cst.BaseSmallStatement) -> cst.BaseExpression | None:
    """``x`` when the copy's source is ``x``'s attribute dict: ``x.__dict__``,
    ``x.__dict__.copy()``, ``vars(x)``, ``dict(x.__dict__)`` (None: any other value)."""
    if isinstance(small, (cst.Assign, cst.AugAssign)):
        source: cst.BaseExpression | None = small.value
    elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and small.value.args:
        source = small.value.args[0].value
    else:
        return None
    if isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute) \
            and source.func.attr.value == "copy" and not source.args:
        source = source.func.value
    if isinstance(source, cst.Call) and isinstance(source.func, cst.Name) \
            and source.func.value in ("dict", "vars") and len(source.args) == 1:
        if source.func.value == "vars":
            return source.args[0].value
        source = source.args[0].value
    if isinstance(source, cst.Attribute) and source.attr.value == "__dict__":
        return source.value
    return None


def copy_target(small: cst.BaseSmallStatement) -> cst.BaseExpression | None:
    """``t`` when ``small`` is ``t.__dict__ = ...``, ``t.__dict__ |= ...`` or
    ``t.__dict__.update(...)``."""
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        return _dict_of(small.targets[0].target)
    if isinstance(small, cst.AugAssign) and isinstance(small.operator, cst.BitOrAssign):
        return _dict_of(small.target)
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        func = small.value.func
        if isinstance(func, cst.Attribute) and func.attr.value == "update":
            return _dict_of(func.value)
    return None


def attr_dict_of(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``x`` of ``x.__dict__``, ``vars(x)`` or ``getattr(x, "__dict__")``."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == "__dict__":
        return expr.value
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "getattr" \
            and len(expr.args) == 2 and not any(a.star for a in expr.args) \
            and isinstance(expr.args[1].value, cst.SimpleString) \
            and expr.args[1].value.evaluated_value == "__dict__":
        return expr.args[0].value
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "vars" \
            and len(expr.args) == 1 and not expr.args[0].star:
        return expr.args[0].value
    return None


def setattr_copy(loop: cst.For) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """(``t``, ``s``) of ``for k, v in s.__dict__.items(): setattr(t, k, v)`` (``vars(s)``
    too), when ``t`` is simple and the body is that one call."""
    it = loop.iter
    if not (isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute)
            and it.func.attr.value == "items" and not it.args):
        return None
    source = attr_dict_of(it.func.value)
    names = loop.target
    if source is None or not isinstance(names, cst.Tuple) or len(names.elements) != 2:
        return None
    key, value = (e.value for e in names.elements)
    body = loop.body.body
    if len(body) != 1:
        return None
    line = body[0]
    small = line.body[0] if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 else \
        (line if isinstance(line, cst.BaseSmallStatement) else None)
    if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
        return None
    call = small.value
    if not (isinstance(call.func, cst.Name) and call.func.value == "setattr" and len(call.args) == 3):
        return None
    target, k, v = (a.value for a in call.args)
    if not (isinstance(key, cst.Name) and isinstance(value, cst.Name) and isinstance(k, cst.Name)
            and isinstance(v, cst.Name) and k.value == key.value and v.value == value.value):
        return None
    return (target, source) if is_simple(target) else None
