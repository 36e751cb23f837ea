"""Shapes of a Parameter class's members, read from LibCST: what a cooperative
``__init__`` does (``InitFacts``), which property is a plain backing field, which
``__torch_function__`` only forwards, and what a function does with ``self``.

These readers decide nothing: a shape they cannot describe raises ``UnsupportedShape``
with the reason, and the planner (``codemod.planning.plan``) turns it into a refusal.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import libcst as cst

from codemod.analysis import cst_patterns as m
from codemod.analysis.classes import PropertyFacts, docstring_and_body
from codemod.analysis.pre_statements import order_matters, returns


class UnsupportedShape(Exception):
    """A member whose shape no generated function can repeat: the reason, and the line it
    names (0: the class's)."""

    def __init__(self, reason: str, line: int = 0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


@dataclass
class InitFacts:
    """The shape of a cooperative ``__init__``."""

    self_name: str
    params: cst.Parameters
    param_names: tuple[str, ...]
    star_kwarg: str | None
    #: The statement ``super().__init__(...)``, if any.
    super_stmt: cst.SimpleStatementLine | None
    #: Names the super call passes on explicitly, and whether it passes ``**kwargs``.
    forwarded: frozenset[str]
    forwards_rest: bool
    pre: tuple[cst.BaseStatement, ...]
    post: tuple[cst.BaseStatement, ...]
    docstring: cst.SimpleStatementLine | None
    #: Attributes of self that the body assigns, and that it reads.
    writes: frozenset[str]
    reads: frozenset[str]
    #: The super call passes something other than its own arguments unchanged
    #: (positional arguments, literals, expressions, reads of self): a *relay*. Its wrap
    #: then calls the wraps of the classes after it itself, with what it passed.
    relays: bool = False
    #: The arguments of ``super().__init__(...)``, as written.
    super_args: tuple[cst.Arg, ...] = ()
    #: A relay only for its statements before the call (``_order_matters``).
    ordered_pre: bool = False
    #: Its body reads its ``**kwargs`` other than passing it on (only where it calls no
    #: ``super().__init__``: after the call, that is refused).
    reads_rest: bool = False
    #: Each parameter's default, as code (name -> ``code_of(default)``), in order.
    defaults: dict[str, str] = field(default_factory=dict)

    @property
    def forwarded_defaults(self) -> dict[str, str]:
        """Parameters with a default of its own that it passes on by name (not a relay):
        the factory passes the bases the caller's keywords only, so each next
        ``__init__`` must default them alike (``_check_defaults``)."""
        if self.relays:
            return {}
        return {name: code for name, code in self.defaults.items() if name in self.forwarded}


def is_super_call(node: cst.CSTNode, method: str | None = None) -> bool:
    """``super().<method>(...)`` (any method when ``method`` is None)."""
    attr = m.Attribute(value=m.Call(func=m.Name("super"), args=[]))
    if method is not None:
        attr = m.Attribute(value=m.Call(func=m.Name("super"), args=[]), attr=m.Name(method))
    return m.matches(node, m.Call(func=attr))


class SelfUse(cst.CSTVisitor):
    """Attributes of ``self`` read and written, ``super()`` uses, class reads."""

    def __init__(self, self_name: str) -> None:
        self.self_name = self_name
        self.writes: set[str] = set()
        self.reads: set[str] = set()
        self.calls: set[str] = set()
        self.super_calls: list[tuple[str, cst.Call]] = []
        self.bad: list[str] = []
        self._super_ok: set[int] = set()

    def read_statements(self, statements: Iterable[cst.BaseStatement]) -> None:
        """Visit ``statements`` in order, as a module holding just them would be."""
        for stmt in statements:
            stmt.visit(self)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._record_write(target.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._record_write(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._record_write(node.target)

    def _record_write(self, target: cst.BaseExpression) -> None:
        if m.matches(target, m.Attribute(value=m.Name(self.self_name))):
            self.writes.add(target.attr.value)  # type: ignore[attr-defined]

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if m.matches(node.value, m.Name(self.self_name)):
            self.reads.add(node.attr.value)
            if node.attr.value == "__class__":
                self.bad.append("reads self.__class__")

    def visit_Call(self, node: cst.Call) -> None:
        if m.matches(node.func, m.Attribute(value=m.Name(self.self_name))):
            self.calls.add(node.func.attr.value)  # type: ignore[attr-defined]
        self._record_by_name(node)
        if not m.matches(node.func, m.Name("getattr") | m.Name("hasattr") | m.Name("setattr")
                         | m.Name("vars") | m.Name("isinstance") | m.Name("type")) \
                and any(m.matches(a.value, m.Name(self.self_name)) for a in node.args):
            # ``describe(self)``: the callee may read any attribute.
            self.reads.add("__dict__")
        if is_super_call(node):
            name = node.func.attr.value  # type: ignore[attr-defined]
            self.super_calls.append((name, node))
            self._super_ok.add(id(node.func.value))  # type: ignore[attr-defined]
        elif m.matches(node, m.Call(func=m.Name("type"), args=[m.Arg(m.Name(self.self_name))])):
            self.bad.append("reads type(self)")

    def _record_by_name(self, node: cst.Call) -> None:
        """``getattr``/``hasattr(self, "x")`` read ``x``, ``setattr(self, "x", v)`` writes it;
        ``vars(self)``, a computed name and ``self`` passed to another call read
        ``__dict__`` (any attribute)."""
        if not isinstance(node.func, cst.Name) or not node.args \
                or not m.matches(node.args[0].value, m.Name(self.self_name)):
            return
        kind = node.func.value
        if kind == "vars":
            self.reads.add("__dict__")
        if kind not in ("getattr", "hasattr", "setattr") or len(node.args) < 2:
            return
        name = node.args[1].value
        if not isinstance(name, cst.SimpleString):
            self.reads.add("__dict__")
        elif kind == "setattr":
            self.writes.add(str(name.evaluated_value))
        else:
            self.reads.add(str(name.evaluated_value))

    def leave_Call(self, original_node: cst.Call) -> None:
        if m.matches(original_node.func, m.Name("super")) and id(original_node) not in self._super_ok:
            self.bad.append("uses super() other than as super().method(...)")


class OddFieldStores(cst.CSTVisitor):
    """Changes of ``self.<field>`` other than a plain read or an ``=`` target: ``+=``, an
    annotated assignment, ``del``, a target inside a tuple/list, a ``for`` or ``with``
    target. No helper rewrites those, so in a function bound onto a converted parameter
    they would touch a field the parameter does not hold."""

    def __init__(self, self_name: str, fields: frozenset[str]) -> None:
        self.self_name, self.fields = self_name, fields
        #: (field, what the code does with it), in source order.
        self.found: list[tuple[str, str]] = []

    def _flag(self, target: cst.CSTNode, how: str) -> None:
        pattern = m.Attribute(value=m.Name(self.self_name))
        for node in [target, *m.findall(target, pattern)]:
            if m.matches(node, pattern) and node.attr.value in self.fields:  # type: ignore[attr-defined]
                self.found.append((node.attr.value, how))  # type: ignore[attr-defined]

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        operator = cst.Module(body=[]).code_for_node(node.operator).strip()
        self._flag(node.target, f"changes in place (`{operator}`)")

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._flag(node.target, "assigns with an annotation")

    def visit_Del(self, node: cst.Del) -> None:
        self._flag(node.target, "deletes")

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if not isinstance(node.target, cst.Attribute):
            self._flag(node.target, "unpacks into")

    def visit_For(self, node: cst.For) -> None:
        self._flag(node.target, "loops into")

    def visit_AsName(self, node: cst.AsName) -> None:
        self._flag(node.name, "binds with `as`")


def read_property_field(prop: PropertyFacts) -> tuple[str, bool]:
    """The backing field of a property that behaves as a plain attribute.

    Accepted: a getter ``return self._f`` (optionally preceded by ``if self._f is None:
    raise AttributeError(...)``, the "deleted" state), a setter ``self._f = value`` and
    a deleter ``self._f = None`` / ``del self._f``. Returns (field, nullable).
    """
    getter = prop.getter
    if getter is None:
        raise UnsupportedShape(f"property {prop.name!r} has no getter")
    self_name = first_param(getter)
    _, body = docstring_and_body(getter)
    nullable = False
    field_read = m.Attribute(value=m.Name(self_name))
    if len(body) == 2 and m.matches(body[0], m.If(
        test=m.Comparison(left=field_read, comparisons=[
            m.ComparisonTarget(operator=m.Is(), comparator=m.Name("None"))]),
        body=m.IndentedBlock(body=[m.SimpleStatementLine(body=[
            m.Raise(exc=m.Call(func=m.Name("AttributeError")))])]),
        orelse=None,
    )):
        nullable_field = body[0].test.left.attr.value  # type: ignore[attr-defined]
        body = body[1:]
        nullable = True
    else:
        nullable_field = None
    if not (len(body) == 1 and m.matches(
        body[0], m.SimpleStatementLine(body=[m.Return(value=field_read)])
    )):
        raise UnsupportedShape(
            f"property {prop.name!r} computes its value; only a plain read of a backing "
            "field becomes an attribute"
        )
    fld = body[0].body[0].value.attr.value  # type: ignore[attr-defined]
    if nullable_field is not None and nullable_field != fld:
        raise UnsupportedShape(f"property {prop.name!r} checks one field and returns another")
    if prop.setter is not None:
        s_self = first_param(prop.setter)
        params = [*prop.setter.params.posonly_params, *prop.setter.params.params]
        value = params[1].name.value if len(params) == 2 else None
        _, sbody = docstring_and_body(prop.setter)
        if value is None or len(sbody) != 1 or not m.matches(sbody[0], m.SimpleStatementLine(
            body=[m.Assign(targets=[m.AssignTarget(m.Attribute(
                value=m.Name(s_self), attr=m.Name(fld)))], value=m.Name(value))]
        )):
            raise UnsupportedShape(
                f"property {prop.name!r} has a setter that does more than store the value"
            )
    if prop.deleter is not None:
        d_self = first_param(prop.deleter)
        _, dbody = docstring_and_body(prop.deleter)
        target = m.Attribute(value=m.Name(d_self), attr=m.Name(fld))
        clears = len(dbody) == 1 and (
            m.matches(dbody[0], m.SimpleStatementLine(body=[m.Del(target=target)]))
            or (nullable and m.matches(dbody[0], m.SimpleStatementLine(body=[m.Assign(
                targets=[m.AssignTarget(target)], value=m.Name("None"))])))
        )
        if not clears:
            raise UnsupportedShape(
                f"property {prop.name!r} has a deleter that does more than clear the field"
            )
    return fld, nullable


def read_init_facts(fn: cst.FunctionDef) -> InitFacts:
    """The shape of a cooperative ``__init__``, or ``UnsupportedShape`` saying what no
    wrap can repeat (``*args``, two super calls, ``super()`` used otherwise...)."""
    params = fn.params
    if params.posonly_params or isinstance(params.star_arg, cst.Param):
        raise UnsupportedShape("__init__ takes positional-only or *args parameters")
    if not params.params:
        raise UnsupportedShape("__init__ has no self parameter")
    self_name = params.params[0].name.value
    names = tuple(p.name.value for p in params.params[1:]) + tuple(
        p.name.value for p in params.kwonly_params
    )
    star_kwarg = params.star_kwarg.name.value if params.star_kwarg else None
    docstring, body = docstring_and_body(fn)
    super_index = None
    for i, stmt in enumerate(body):
        if m.matches(stmt, m.SimpleStatementLine(body=[m.Expr(value=m.Call())])) and \
                is_super_call(stmt.body[0].value, "__init__"):  # type: ignore[attr-defined]
            if super_index is not None:
                raise UnsupportedShape("__init__ calls super().__init__() twice")
            super_index = i
    use = SelfUse(self_name)
    use.read_statements(body)
    if use.bad:
        raise UnsupportedShape(f"__init__ {use.bad[0]}")
    inits = [c for c, _ in use.super_calls if c == "__init__"]
    if len(inits) != (0 if super_index is None else 1) or len(use.super_calls) != len(inits):
        raise UnsupportedShape("__init__ calls super() other than as one top-level super().__init__(...)")
    forwarded: set[str] = set()
    forwards_rest = False
    relays = False
    pre = body[:super_index] if super_index is not None else ()
    post = body[super_index + 1:] if super_index is not None else body
    if super_index is not None and returns(pre):
        raise UnsupportedShape("__init__ may return before super().__init__()")
    if star_kwarg is not None and super_index is not None and _names_read(post, star_kwarg):
        raise UnsupportedShape(
            f"__init__ reads **{star_kwarg} after super().__init__(); the factory passes every "
            "wrap the caller's keywords, not what the old call left in it"
        )
    super_args: tuple[cst.Arg, ...] = ()
    if super_index is not None:
        call = body[super_index].body[0].value  # type: ignore[attr-defined]
        super_args = tuple(call.args)
        for arg in call.args:
            if arg.star == "**" and m.matches(arg.value, m.Name(star_kwarg or "")):
                forwards_rest = True
            elif arg.star:
                raise UnsupportedShape(
                    f"super().__init__() is passed {arg.star}{code_of(arg.value)}, whose "
                    "names are known only at run time"
                )
            elif arg.keyword is not None and m.matches(arg.value, m.Name(arg.keyword.value)) \
                    and arg.keyword.value in names:
                forwarded.add(arg.keyword.value)
            else:
                relays = True
        if relays:
            forwarded = {a.keyword.value for a in call.args if a.keyword is not None}
    if star_kwarg is not None and forwards_rest and _names_read(pre, star_kwarg):
        raise UnsupportedShape(
            f"__init__ uses **{star_kwarg} before passing it on to super().__init__(); "
            "the keywords it takes are known only at run time"
        )
    ordered_pre = super_index is not None and not relays and order_matters(pre, forwarded, self_name)
    if ordered_pre:
        # Its wrap must run these statements, then the bases' wraps, as a relay's does.
        relays = True
        forwarded = {a.keyword.value for a in super_args if a.keyword is not None}
    return InitFacts(
        self_name=self_name,
        params=params,
        param_names=names,
        star_kwarg=star_kwarg,
        super_stmt=body[super_index] if super_index is not None else None,  # type: ignore[arg-type]
        forwarded=frozenset(forwarded),
        forwards_rest=forwards_rest,
        pre=tuple(pre),
        post=tuple(post),
        docstring=docstring,
        writes=frozenset(use.writes),
        reads=frozenset(use.reads - use.writes),
        relays=relays,
        super_args=super_args,
        ordered_pre=ordered_pre,
        reads_rest=star_kwarg is not None and super_index is None and _names_read(body, star_kwarg),
        defaults={p.name.value: code_of(p.default)
                  for p in (*params.params[1:], *params.kwonly_params) if p.default is not None},
    )


def _names_read(body: Iterable[cst.BaseStatement], name: str) -> bool:
    """Whether ``body`` mentions ``name``."""
    finder = _NameFinder(name)
    for stmt in body:
        stmt.visit(finder)
    return finder.found


class _NameFinder(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        self.name = name
        self.found = False

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.name:
            self.found = True


def forwards_torch_function(fn: cst.FunctionDef) -> bool:
    """``__torch_function__`` that only calls ``super().__torch_function__`` with its own
    arguments (optionally after ``if kwargs is None: kwargs = {}``): a plain Parameter
    already behaves so, and the member can be dropped."""
    params = [p.name.value for p in [*fn.params.posonly_params, *fn.params.params]]
    if len(params) != 5:
        return False
    _, body = docstring_and_body(fn)
    kwargs = params[4]
    if body and m.matches(body[0], m.If(
        test=m.Comparison(left=m.Name(kwargs), comparisons=[
            m.ComparisonTarget(operator=m.Is(), comparator=m.Name("None"))]),
        body=m.IndentedBlock(body=[m.SimpleStatementLine(body=[m.Assign(
            targets=[m.AssignTarget(m.Name(kwargs))], value=m.Dict(elements=[]))])]),
        orelse=None,
    )):
        body = body[1:]
    if len(body) != 1 or not m.matches(body[0], m.SimpleStatementLine(body=[m.Return(
        value=m.Call(func=m.Attribute(value=m.Call(func=m.Name("super"), args=[]),
                                      attr=m.Name("__torch_function__"))))])):
        return False
    call = body[0].body[0].value  # type: ignore[attr-defined]
    passed = [a.value.value if isinstance(a.value, cst.Name) and not a.keyword and not a.star
              else None for a in call.args]
    return passed == params[1:]


def code_of(node: cst.CSTNode) -> str:
    """The source text of an expression (for messages)."""
    return cst.Module(body=[]).code_for_node(node)


def first_param(fn: cst.FunctionDef) -> str:
    """The name a function gives its first parameter (``self`` when it has none)."""
    params = list(fn.params.posonly_params) + list(fn.params.params)
    return params[0].name.value if params else "self"
