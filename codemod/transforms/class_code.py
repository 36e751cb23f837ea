"""The former class's code, rewritten to run in the module-level functions that replace it.

``self`` renamed to the wrap's parameter (``Rename``), ``super().m()`` pointed at the
implementation the planner proved is next (``SuperCalls``), backing fields read and
written as the parameter's attributes (``FieldsAsAttributes``), ``__init__`` cut at its
``super().__init__`` call, and what ``__new__`` did to the new tensor replayed on the
factory's local. Each keeps what the statements did; only names and targets change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeGuard, cast

import libcst as cst
import libcst.matchers as m

from codemod.planning.plan import ClassPlan
from codemod.transforms.refs import FileRefs, FStringQuotes
from codemod.transforms.store_targets import StoreTargets


class Rename(cst.CSTTransformer):
    """Rename a variable (``self`` -> ``param``), not attributes or nested rebindings."""

    def __init__(self, old: str, new: str) -> None:
        super().__init__()
        self.old, self.new = old, new

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)  # only the object part is a variable
        return False

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.Attribute:
        return updated_node.with_changes(value=original_node.value.visit(self))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        params = node.params
        all_params = [*params.posonly_params, *params.params, *params.kwonly_params]
        return not any(p.name.value == self.old for p in all_params)

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return not any(p.name.value == self.old for p in node.params.params)

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        return updated_node.with_changes(value=original_node.value.visit(self))

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        return updated_node.with_changes(value=self.new) if updated_node.value == self.old else updated_node


class SuperCalls(cst.CSTTransformer):
    """``super().m(args)`` -> ``_impl_of_m(self, args)``, per the planner's targets."""

    def __init__(self, method: str, plan: ClassPlan, refs: FileRefs, self_name: str) -> None:
        super().__init__()
        self.method, self.plan, self.refs, self.self_name = method, plan, refs, self_name
        self.classes = refs.plan.classes

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not m.matches(
            original_node.func, m.Attribute(value=m.Call(func=m.Name("super"), args=[]))
        ):
            return updated_node
        called = original_node.func.attr.value  # type: ignore[attr-defined]
        target = self.classes[self.plan.super_targets[(self.method, called)]]
        return updated_node.with_changes(
            func=self.refs.name_in(target.facts.module, target.method_funcs[called]),
            args=[cst.Arg(cst.Name(self.self_name)), *updated_node.args],
        )


class FieldsAsAttributes(StoreTargets, FStringQuotes):
    """``self._f`` -> ``self.f`` in the former class's code: a parameter holds the attribute.

    ``fields`` maps each backing field to (attribute, None meant "deleted"). Reads of a
    nullable field become ``getattr(self, "f", None)`` (absent attribute: the field was
    None); writes of it become ``set_param_field(self, "_f", "f", v, none_deletes=True)``,
    or, for the one write of a wrap that nothing before it sets (``first_writes``),
    ``if v is not None: self.f = v``. Only ``self`` is rewritten: any other object is the
    use-site rewrite's (``set_param_field`` / ``param_field``).
    """

    def __init__(self, self_name: str, fields: dict[str, tuple[str, bool]],
                 set_helper: Callable[[], cst.BaseExpression],
                 first_writes: frozenset[str] = frozenset()) -> None:
        super().__init__()
        self.self_name, self.fields, self.set_helper = self_name, fields, set_helper
        self.first_writes = first_writes

    def _field(self, node: cst.BaseExpression) -> str | None:
        if m.matches(node, m.Attribute(value=m.Name(self.self_name))) and \
                node.attr.value in self.fields:  # type: ignore[attr-defined]
            return node.attr.value  # type: ignore[attr-defined]
        return None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        params = node.params
        return not any(p.name.value == self.self_name
                       for p in [*params.posonly_params, *params.params, *params.kwonly_params])

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return not any(p.name.value == self.self_name for p in node.params.params)


    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        fld = self._field(original_node)
        if fld is None:
            return updated_node
        name, none_deletes = self.fields[fld]
        if none_deletes and id(original_node) not in self._stores:
            q = self.quote()
            return cst.parse_expression(f'getattr({self.self_name}, {q}{name}{q}, None)')
        if none_deletes and fld not in self.first_writes:
            return updated_node  # a write: ``leave_Assign`` turns it into the helper call
        return updated_node.with_changes(attr=cst.Name(name))

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.BaseSmallStatement:
        if len(updated_node.targets) != 1:
            return updated_node
        fld = self._field(updated_node.targets[0].target)
        if fld is None or not self.fields[fld][1]:
            return updated_node
        args = [cst.Arg(cst.Name(self.self_name)), cst.Arg(self.literal(fld)),
                cst.Arg(self.literal(self.fields[fld][0])), cst.Arg(updated_node.value),
                cst.Arg(cst.Name("True"), keyword=cst.Name("none_deletes"), equal=cst.AssignEqual(
                    cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))]
        return cst.Expr(cst.Call(func=self.set_helper(), args=args))

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine,
                                  updated_node: cst.SimpleStatementLine) -> cst.BaseStatement:
        if len(updated_node.body) != 1 or not isinstance(updated_node.body[0], cst.Assign):
            return updated_node
        assign = updated_node.body[0]
        if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Attribute):
            return updated_node
        name = assign.targets[0].target.attr.value
        fld = next((f for f in self.first_writes if self.fields[f][0] == name), None)
        if fld is None or not m.matches(assign.targets[0].target, m.Attribute(value=m.Name(self.self_name))):
            return updated_node
        value = cst.Module(body=[]).code_for_node(assign.value)
        new = cst.parse_statement(f"if {value} is not None:\n    {self.self_name}.{name} = {value}\n")
        return new.with_changes(leading_lines=updated_node.leading_lines)


def first_writes(body: list[cst.BaseStatement], self_name: str, fields: dict[str, tuple[str, bool]],
                  set_before: set[str]) -> frozenset[str]:
    """Nullable fields whose one write in a wrap's body can become ``if v is not None: p.f = v``.

    The attribute must be absent there (no earlier wrap sets the field; the body writes it
    once, as a statement of its own) and ``v`` a plain name (evaluated twice, harmlessly).
    """
    out = set()
    for fld, (_, none_deletes) in fields.items():
        if not none_deletes or fld in set_before:
            continue
        target = m.Attribute(value=m.Name(self_name), attr=m.Name(fld))
        writes = [*m.findall(_module_of(body), m.AssignTarget(target=target)),
                  *m.findall(_module_of(body), m.AugAssign(target=target))]
        tops = [s for s in body if m.matches(s, m.SimpleStatementLine(body=[m.Assign(
            targets=[m.AssignTarget(target=target)], value=m.Name())]))]
        if len(writes) == 1 and len(tops) == 1 and \
                tops[0].body[0].value.value != "None":  # type: ignore[attr-defined]
            out.add(fld)
    return frozenset(out)


def _module_of(statements: Sequence[cst.BaseStatement]) -> cst.Module:
    """A module of ``statements``, to search or visit them together (every LibCST
    statement is a ``SimpleStatementLine`` or a ``BaseCompoundStatement``)."""
    lines = cast("list[cst.SimpleStatementLine | cst.BaseCompoundStatement]", list(statements))
    return cst.Module(body=lines)


def is_plain_docstring(stmt: cst.CSTNode) -> TypeGuard[cst.SimpleStatementLine]:
    """A statement that is one plain string literal (the docstrings ``apply`` re-indents)."""
    return m.matches(stmt, m.SimpleStatementLine(body=[m.Expr(value=m.SimpleString())]))


def names_used(nodes: list[cst.BaseStatement]) -> set[str]:
    """Every identifier in ``nodes`` (variables, attributes, keywords alike)."""
    found: set[str] = set()

    class Names(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            found.add(node.value)

    _module_of(nodes).visit(Names())
    return found


def split_at_super(body: list[cst.BaseStatement]) -> tuple[
    list[cst.BaseStatement], cst.SimpleStatementLine | None, list[cst.BaseStatement]
]:
    """(statements before, the ``super().__init__(...)`` statement, statements after)."""
    for i, stmt in enumerate(body):
        if m.matches(stmt, m.SimpleStatementLine(body=[m.Expr(value=m.Call(func=m.Attribute(
                value=m.Call(func=m.Name("super"), args=[]), attr=m.Name("__init__"))))])):
            return body[:i], stmt, body[i + 1:]  # type: ignore[return-value]
    return [], None, body


def without_pass(stmts: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
    """``stmts`` without ``pass`` lines (a body that has other statements needs none)."""
    return [s for s in stmts if not m.matches(s, m.SimpleStatementLine(body=[m.Pass()]))]


def after_creation(post: list[tuple[str, tuple[cst.BaseStatement, ...]]],
                    local: str) -> list[cst.BaseStatement]:
    """What ``__new__`` did to the new tensor (``self.orig_shape = ...``), now done to the
    factory's ``local`` in the same order, before any ``__init__`` body (the wraps) runs.
    An unknown keyword still raises only after these ran, as ``__init__`` raised it."""
    out: list[cst.BaseStatement] = []
    for instance, stmts in post:
        out += [stmt.visit(Rename(instance, local)) for stmt in stmts]  # type: ignore[misc]
    return out
