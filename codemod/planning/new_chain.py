"""``__new__`` bodies read as steps a factory can repeat on a plain ``Parameter``.

One ``__new__`` (a *link*) has the shape::

    <prelude: statements that build the data, not using cls>
    return super().__new__(cls, ...)            # or torch.Tensor._make_subclass(cls, ...)

or, when it sets attributes on the new tensor::

    <prelude>
    self = torch.Tensor._make_subclass(cls, data, requires_grad)   # or super().__new__(cls, ...)
    <post: statements that use self only as self.attr>
    return self

Several ``__new__`` in one MRO compose: the first runs, and its ``super().__new__(cls,
...)`` reaches the next one, whose parameters receive what was passed. The composed
factory runs every prelude in that order (with the next link's parameters bound to the
passed values by plain assignments), builds the ``Parameter`` with the last link's
arguments, then runs the post statements innermost first, as the returns unwound before.
``_make_subclass(cls, data, rg)`` is what ``Parameter.__new__`` does for a plain tensor, so
``Parameter(data, rg)`` shares the same storage with the same ``requires_grad``;
``_make_subclass``'s own default for ``requires_grad`` is ``False``, ``Parameter``'s is
``True``, so a call without it becomes ``Parameter(data, requires_grad=False)``.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, replace
from typing import TypeGuard

import libcst as cst

from codemod.analysis import cst_patterns as m
from codemod.analysis.bound_names import names_bound
from codemod.analysis.classes import docstring_and_body
from codemod.analysis.names import variables_used


class NewRefusal(Exception):
    """A ``__new__`` (chain) the factory cannot repeat; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class NewLink:
    """One class's ``__new__``, cut into the steps the factory repeats."""

    owner: str
    module: str
    params: cst.Parameters
    prelude: tuple[cst.BaseStatement, ...]
    call: cst.Call
    #: Whether the call is ``super().__new__`` (reaching the next ``__new__`` or torch's).
    calls_super: bool
    #: The name the body gives the new tensor, when statements after its creation use it.
    instance: str | None
    post: tuple[cst.BaseStatement, ...]
    docstring: cst.SimpleStatementLine | None

    @property
    def passed(self) -> tuple[cst.Arg, ...]:
        """What the call passes after ``cls``."""
        return tuple(self.call.args[1:])


@dataclass
class ComposedNew:
    """The factory's signature and steps, from the ``__new__`` chain of one class."""

    params: cst.Parameters
    prelude: tuple[cst.BaseStatement, ...]
    call_args: tuple[cst.Arg, ...]
    #: (name of the new tensor in that body, statements), in the order they ran.
    post: tuple[tuple[str, tuple[cst.BaseStatement, ...]], ...]
    docstring: cst.SimpleStatementLine | None


_MAKE_SUBCLASS = m.Attribute(
    value=m.Attribute(value=m.Name(), attr=m.Name("Tensor")), attr=m.Name("_make_subclass")
)
_SUPER_NEW = m.Attribute(value=m.Call(func=m.Name("super"), args=[]), attr=m.Name("__new__"))
_LITERAL = (m.SimpleString() | m.Integer() | m.Float() | m.Name("None") | m.Name("True")
            | m.Name("False") | m.UnaryOperation(expression=m.Integer() | m.Float()))


class _Substitute(cst.CSTTransformer):
    """Replace variables by simple values (a name or a literal), not attributes or keywords."""

    def __init__(self, values: dict[str, cst.BaseExpression]) -> None:
        super().__init__()
        self.values = values

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return False

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.Attribute:
        return updated_node.with_changes(value=original_node.value.visit(self))

    def visit_Arg(self, node: cst.Arg) -> bool:
        return False

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        return updated_node.with_changes(value=original_node.value.visit(self))

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        return self.values.get(original_node.value, updated_node)


def _substituted(link: NewLink, values: dict[str, cst.BaseExpression]) -> NewLink:
    """``link`` with its parameters in ``values`` replaced by what they received."""
    if not values:
        return link
    sub = _Substitute(values)
    return replace(
        link,
        prelude=tuple(s.visit(sub) for s in link.prelude),  # type: ignore[misc]
        post=tuple(s.visit(sub) for s in link.post),  # type: ignore[misc]
        call=link.call.with_changes(args=[a.visit(sub) for a in link.call.args]),
    )


def _assigned_value(stmt: cst.BaseStatement) -> cst.BaseExpression | None:
    """The value of ``x = value`` on a line of its own, else None."""
    if isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Assign):
        return stmt.body[0].value
    return None


def _creation(node: cst.BaseExpression | None, cls_name: str) -> TypeGuard[cst.Call]:
    """``super().__new__(cls, ...)`` or ``<torch>.Tensor._make_subclass(cls, ...)``."""
    return node is not None and m.matches(node, m.Call(
        func=_SUPER_NEW | _MAKE_SUBCLASS,
        args=[m.Arg(value=m.Name(cls_name), keyword=None, star=""), m.ZeroOrMore()],
    ))


def read_link(fn: cst.FunctionDef, owner: str, module: str) -> NewLink:
    """Cut one ``__new__`` into prelude, creation call and post statements."""
    params = fn.params
    if params.posonly_params or not params.params:
        raise NewRefusal(f"{owner}.__new__ has positional-only parameters or no cls parameter")
    if isinstance(params.star_arg, cst.Param):
        raise NewRefusal(f"{owner}.__new__ takes *args")
    cls_name = params.params[0].name.value
    docstring, statements = docstring_and_body(fn)
    body = list(statements)
    shape = (f"{owner}.__new__ does more than build the data and then `return "
             "super().__new__(cls, ...)` (or create the tensor, set attributes on it and "
             "return it)")
    if not body or not isinstance(body[-1], cst.SimpleStatementLine) or len(body[-1].body) != 1 \
            or not isinstance(body[-1].body[0], cst.Return):
        raise NewRefusal(shape)
    returned = body[-1].body[0].value
    instance: str | None = None
    if _creation(returned, cls_name):
        prelude, call, post = body[:-1], returned, []
    elif isinstance(returned, cst.Name):
        instance = returned.value
        at = next((i for i, s in enumerate(body[:-1]) if m.matches(s, m.SimpleStatementLine(
            body=[m.Assign(targets=[m.AssignTarget(m.Name(instance))])]))), None)
        created = _assigned_value(body[at]) if at is not None else None
        if at is None or not _creation(created, cls_name):
            raise NewRefusal(shape)
        prelude, call, post = body[:at], created, body[at + 1:-1]
    else:
        raise NewRefusal(shape)
    for stmt in [*prelude, *post]:
        if m.findall(stmt, m.Name(cls_name)):
            raise NewRefusal(f"{owner}.__new__ uses {cls_name} other than to create the tensor")
        if m.findall(stmt, m.Return() | m.Yield()):
            raise NewRefusal(f"{owner}.__new__ returns before its last statement")
        if m.findall(stmt, m.Call(func=m.Name("super"))):
            raise NewRefusal(f"{owner}.__new__ calls super() before creating the tensor")
    if instance is not None:
        _check_instance_use(owner, instance, prelude, post)
    if any(m.findall(arg.value, m.Name(cls_name)) for arg in call.args[1:]):
        raise NewRefusal(f"{owner}.__new__ passes something computed from {cls_name} to Parameter")
    calls_super = m.matches(call.func, _SUPER_NEW)
    if not calls_super:
        call = _make_subclass_as_parameter(owner, call)
    return NewLink(owner=owner, module=module, params=params.with_changes(params=params.params[1:]),
                   prelude=tuple(prelude), call=call, calls_super=calls_super,
                   instance=instance, post=tuple(post), docstring=docstring)


def _check_instance_use(owner: str, instance: str, prelude: list[cst.BaseStatement],
                        post: list[cst.BaseStatement]) -> None:
    """The new tensor may be used only as ``self.attr`` after its creation: anything else
    (passing it on, ``type(self)``, rebinding the name) could see that it is no longer an
    instance of the class."""
    if instance in variables_used(prelude):
        raise NewRefusal(f"{owner}.__new__ uses {instance!r} before creating it")
    if instance in names_bound(post):
        raise NewRefusal(f"{owner}.__new__ rebinds {instance!r} after creating the tensor")
    as_object = sum(len(m.findall(s, m.Attribute(value=m.Name(instance)))) for s in post)
    if sum(len(m.findall(s, m.Name(instance))) for s in post) != as_object:
        raise NewRefusal(f"{owner}.__new__ uses the new tensor {instance!r} other than "
                         f"as {instance}.attr; a plain Parameter is not an instance of {owner}")


def _make_subclass_as_parameter(owner: str, call: cst.Call) -> cst.Call:
    """``_make_subclass(cls, data[, rg])`` as the arguments ``Parameter`` takes for the same
    tensor (its own default for ``requires_grad`` is ``False``)."""
    rest = list(call.args[1:])
    if not rest or len(rest) > 2 or any(a.keyword or a.star for a in rest):
        raise NewRefusal(f"{owner}.__new__ calls _make_subclass with arguments Parameter does not take")
    if len(rest) == 1:
        rest.append(cst.Arg(keyword=cst.Name("requires_grad"), value=cst.Name("False"),
                            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
    return call.with_changes(args=[call.args[0], *rest])


def compose(links: list[NewLink], home_module: str, class_names: set[str]) -> ComposedNew:
    """Steps of the ``__new__`` chain ``links`` (MRO order) for a factory in ``home_module``.

    ``class_names`` are the tree's Parameter class names: code moved out of a class is not
    rewritten again, so it must not mention them.
    """
    first = links[0]
    prelude: list[cst.BaseStatement] = []
    posts: list[tuple[str, tuple[cst.BaseStatement, ...]]] = []
    steps: list[tuple[NewLink, list[cst.BaseStatement]]] = []
    for position in range(len(links)):
        link = links[position]
        own = [*link.prelude, *link.post]
        _check_moved_code(link, own, home_module, class_names)
        bindings: list[cst.BaseStatement] = []
        if position > 0:
            bindings, values = bind(steps[-1][0], link)
            link = _substituted(link, values)
        steps.append((link, [*bindings, *link.prelude]))
        if not link.calls_super or position == len(links) - 1:
            break
    for index, (link, before) in enumerate(steps):
        prelude += before
        if link.instance is not None:
            later = [s for step, stmts in steps[index + 1:] for s in [*stmts, *step.post]]
            clash = variables_used(list(link.post)) & names_bound(later) - {link.instance}
            if clash:
                raise NewRefusal(f"{link.owner}.__new__ uses {sorted(clash)[0]!r} after "
                                 "creating the tensor, which a later __new__ of the MRO rebinds")
            posts.insert(0, (link.instance, link.post))
    creating = steps[-1][0]
    return ComposedNew(params=first.params, prelude=tuple(prelude), call_args=creating.passed,
                       post=tuple(posts), docstring=first.docstring)


def _check_moved_code(link: NewLink, stmts: list[cst.BaseStatement], home_module: str,
                      class_names: set[str]) -> None:
    """Code moved into the factory keeps its meaning: no class of the family in it, and
    (moved from another module) no name that module's globals gave it."""
    used = variables_used([*stmts, *(a.value for a in link.passed)])
    mentioned = used & class_names
    if mentioned:
        raise NewRefusal(f"{link.owner}.__new__ mentions {sorted(mentioned)[0]}, which the "
                         "factory's copy of its steps would not rewrite")
    if link.module == home_module:
        return
    own = {p.name.value for p in [*link.params.params, *link.params.kwonly_params]}
    if isinstance(link.params.star_kwarg, cst.Param):
        own.add(link.params.star_kwarg.name.value)
    if link.instance is not None:
        own.add(link.instance)
    free = used - own - names_bound(stmts) - set(dir(builtins)) - {"super"}
    if free:
        raise NewRefusal(f"{link.owner}.__new__ uses {sorted(free)[0]!r} from its module "
                         f"{link.module}; the factory is in another module")


def bind(caller: NewLink, callee: NewLink) -> tuple[list[cst.BaseStatement],
                                                    dict[str, cst.BaseExpression]]:
    """``callee``'s parameters set to what ``caller``'s ``super().__new__(cls, ...)`` passed:
    a name or literal that ``callee`` never rebinds is put in place of the parameter (the
    value cannot change in between); any other value is an assignment, in the order the
    arguments were evaluated."""
    params = callee.params
    positional = [p.name.value for p in params.params]
    keyword_ok = set(positional) | {p.name.value for p in params.kwonly_params}
    star_kwarg = params.star_kwarg.name.value if isinstance(params.star_kwarg, cst.Param) else None
    body_names = variables_used([*callee.prelude, *callee.post, *(a.value for a in callee.passed)])
    where = f"{caller.owner}.__new__ passes"
    assigned: list[tuple[str, cst.BaseExpression]] = []
    filled: set[str] = set()
    for i, arg in enumerate(caller.passed):
        if arg.star:
            raise NewRefusal(f"{where} {arg.star}{cst.Module([]).code_for_node(arg.value)} "
                             f"on to {callee.owner}.__new__; the factory could not tell what "
                             "each parameter receives")
        if arg.keyword is None:
            if i >= len(positional):
                raise NewRefusal(f"{where} more positional arguments than {callee.owner}.__new__ takes")
            name = positional[i]
        else:
            name = arg.keyword.value
            if name not in keyword_ok:
                if star_kwarg is None:
                    raise NewRefusal(f"{where} {name!r}, which {callee.owner}.__new__ does not take")
                if star_kwarg in body_names:
                    raise NewRefusal(f"{callee.owner}.__new__ reads **{star_kwarg}, which "
                                     f"{caller.owner}.__new__ fills")
                if not m.matches(arg.value, m.Name() | _LITERAL):
                    raise NewRefusal(f"{where} an expression as {name!r}, which "
                                     f"{callee.owner}.__new__ ignores")
                continue
        if name in filled:
            raise NewRefusal(f"{where} {name!r} twice to {callee.owner}.__new__")
        filled.add(name)
        assigned.append((name, arg.value))
    for param in [*params.params, *params.kwonly_params]:
        name = param.name.value
        if name in filled:
            continue
        if param.default is None:
            raise NewRefusal(f"{where} nothing for {callee.owner}.__new__'s {name!r}")
        if not m.matches(param.default, _LITERAL):
            raise NewRefusal(f"{callee.owner}.__new__'s default for {name!r} was computed once, "
                             "when the class was created")
        assigned.append((name, param.default))
    if star_kwarg is not None and star_kwarg in body_names:
        raise NewRefusal(f"{callee.owner}.__new__ reads **{star_kwarg}, which "
                         f"{caller.owner}.__new__ fills")
    out: list[cst.BaseStatement] = []
    values: dict[str, cst.BaseExpression] = {}
    done: set[str] = set()
    rebound = names_bound([*callee.prelude, *callee.post])
    for name, value in assigned:
        if m.matches(value, m.Name(name)):
            continue
        if variables_used([value]) & done:
            raise NewRefusal(f"{where} values that read {callee.owner}.__new__'s parameter "
                             "names; plain assignments would change them")
        if m.matches(value, m.Name() | _LITERAL) and not ({name} | variables_used([value])) & rebound:
            values[name] = value
            continue
        done.add(name)
        out.append(cst.SimpleStatementLine(body=[cst.Assign(
            targets=[cst.AssignTarget(cst.Name(name))], value=value)]))
    if variables_used(list(values.values())) & done:
        raise NewRefusal(f"{where} values that read {callee.owner}.__new__'s parameter "
                         "names; plain assignments would change them")
    return out, values
