"""Replace each converted Parameter class with a factory, a wrap function and method functions.

What it does
    ``class X(Base): ...`` becomes ``def X(<__new__'s parameters>) -> Parameter`` (the
    class docstring moves onto it), ``def wrap_x(param, <__init__'s parameters>, **kwargs)``
    (feature tag, methods, class constants, the ``__init__`` body, properties as
    attributes) and one module-level function per method. ``Features`` and the runtime
    helpers are imported from the family's runtime module (``codemod.runtime.emit``).
Why
    Parameter subclasses break ``torch.compile`` and clash with other tensor subclasses;
    a plain ``nn.Parameter`` with attributes and per-instance methods does not.
Example
    ``PackedvLLMParameter(data=w, packed_dim=0, ...)`` still builds the parameter, now a
    plain ``Parameter`` built by ``Parameter(data=data, requires_grad=False)`` and passed
    through ``wrap_base_vllm_parameter`` ... ``wrap_packed_vllm_parameter``.
Fix safety
    The factory accepts exactly what ``__new__`` accepted and builds the tensor as it did.
    Wraps run base first (reverse MRO), so the last binding of a name is the one the MRO
    picked before; a relay's wrap (its ``super().__init__`` passed other arguments) calls
    the wraps after it where it called ``super().__init__``, with what it passed, and
    binds its own members after them. ``super().m()`` inside a method calls the
    implementation the planner proved is next in every subclass's MRO. All preconditions
    are the planner's (``codemod.planning.plan``); this module only carries the plan out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeGuard, cast

import libcst as cst
import libcst.matchers as m
from libcst.codemod import CodemodContext

from codemod.analysis.classes import FileFacts, docstring_and_body
from codemod.analysis.names import dotted, is_name_or_literal, variables_used
from codemod.planning.plan import ClassPlan, Plan
from codemod.transforms.refs import FileRefs, FStringQuotes, StoreTargets


def _is_import_line(stmt: cst.BaseStatement) -> bool:
    """Whether ``stmt`` is a line of ``import`` / ``from ... import`` statements."""
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in stmt.body)


def _two_blank_lines(stmt: cst.BaseStatement) -> cst.BaseStatement:
    """PEP 8 spacing before a top-level definition, keeping its own comments."""
    comments = [line for line in stmt.leading_lines if line.comment is not None]  # type: ignore[attr-defined]
    return stmt.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine(), *comments])


class _Rename(cst.CSTTransformer):
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


class _SuperCalls(cst.CSTTransformer):
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


class _FieldsAsAttributes(StoreTargets, FStringQuotes):
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


def _first_writes(body: list[cst.BaseStatement], self_name: str, fields: dict[str, tuple[str, bool]],
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


def _is_docstring(stmt: cst.CSTNode) -> TypeGuard[cst.SimpleStatementLine]:
    return m.matches(stmt, m.SimpleStatementLine(body=[m.Expr(value=m.SimpleString())]))


def _names_used(nodes: list[cst.BaseStatement]) -> set[str]:
    found: set[str] = set()

    class Names(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            found.add(node.value)

    _module_of(nodes).visit(Names())
    return found


def _receives(link: ClassPlan, name: str) -> bool:
    """Whether ``link``'s wrap is given the argument ``name`` by the call that runs it: when
    its ``__init__`` declares it, or when it is a relay that passes on its ``**kwargs``
    (the name was in them)."""
    init = link.init
    if init is None:
        return False
    return name in init.param_names or (init.relays and init.forwards_rest)


def _split_at_super(body: list[cst.BaseStatement]) -> tuple[
    list[cst.BaseStatement], cst.SimpleStatementLine | None, list[cst.BaseStatement]
]:
    """(statements before, the ``super().__init__(...)`` statement, statements after)."""
    for i, stmt in enumerate(body):
        if m.matches(stmt, m.SimpleStatementLine(body=[m.Expr(value=m.Call(func=m.Attribute(
                value=m.Call(func=m.Name("super"), args=[]), attr=m.Name("__init__"))))])):
            return body[:i], stmt, body[i + 1:]  # type: ignore[return-value]
    return [], None, body


def _wrap_docstring(plan: ClassPlan) -> list[cst.BaseStatement]:
    """The wrap's docstring: the one of the ``__init__`` it was made from, if any.

    A converted class's wrap without one gets none: its name and its body say what it
    does, and the class docstring is on the factory. A kept class's wrap sits next to the
    class it serves, so it says which parameters it is for.
    """
    if plan.init is not None and plan.init.docstring is not None:
        return [plan.init.docstring]
    if not plan.shadow:
        return []
    return [cst.parse_statement(
        f'"""``{plan.name}``\'s attributes, for its converted subclasses."""'
    )]


def _without_pass(stmts: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
    return [s for s in stmts if not m.matches(s, m.SimpleStatementLine(body=[m.Pass()]))]


def _kwargs_check_call(check: str, kind: str, star_kwarg: str, accepted: list[str]) -> str:
    """``check("Kind", kwargs, ("a", "b"))`` laid out as one call: on one line (inside a
    function body, 88 columns) when it fits, else its arguments on one indented line,
    else the keyword names filled onto as few lines as fit after the call's first line."""
    quoted = [f'"{n}"' for n in accepted]
    names = ", ".join(quoted) + ("," if len(quoted) == 1 else "")
    head = f'"{kind}", {star_kwarg}'
    one_line = f"{check}({head}, ({names}))"
    if len(one_line) + 4 <= 88:
        return one_line
    if len(head) + len(names) + 12 <= 88:
        return f"{check}(\n    {head}, ({names})\n)"
    lines: list[str] = []
    for name in quoted:
        if lines and len(lines[-1]) + len(name) + 2 + 8 <= 88:
            lines[-1] += f" {name},"
        else:
            lines.append(f"{name},")
    inner = "".join(f"    {line}\n" for line in lines)
    return f"{check}({head}, (\n{inner}))"


def _display(opening: str, items: list[str], closing: str) -> str:
    """A tuple or dict display on one line (a one-item tuple keeps its comma)."""
    comma = "," if opening == "(" and len(items) == 1 else ""
    return f"{opening}{', '.join(items)}{comma}{closing}"


def _layout_call(func: str, args: list[tuple[str, str, list[str], str]]) -> str:
    """``func(...)`` laid out as by hand: on one line when it fits in 88 columns, else its
    arguments on one line of their own, else one argument a line, and a display too long
    for its line one item a line.

    Each argument is ``(prefix, opening, items, closing)``: a display argument is
    ``prefix`` (``"bases="``) and the display; a plain one is ``prefix`` alone.
    """
    flat = [prefix + (_display(opening, items, closing) if opening else "")
            for prefix, opening, items, closing in args]
    line = f"{func}({', '.join(flat)})"
    if len(line) <= 88:
        return line
    if len(", ".join(flat)) + 4 <= 88:
        return f"{func}(\n    {', '.join(flat)}\n)"
    out = [f"{func}("]
    for (prefix, opening, items, closing), text in zip(args, flat):
        if not opening or len(text) + 5 <= 88:
            out.append(f"    {text},")
        else:
            out.append(f"    {prefix}{opening}")
            out.extend(f"        {item}," for item in items)
            out.append(f"    {closing},")
    return "\n".join([*out, ")"])


def _call_line(func: str, first: str, args: list[str]) -> cst.BaseStatement:
    """``func(first, a, b)``, one argument a line when that is too long."""
    line = f"{func}({', '.join([first, *args])})"
    if len(line) + 4 > 88:
        inner = "".join(f"    {a},\n" for a in [first, *args])
        line = f"{func}(\n{inner})"
    return cst.parse_statement(line)


def _laid_out(params: cst.Parameters, name: str, returns: str | None) -> dict[str, cst.CSTNode]:
    """A method's parameters (``__new__``, ``__init__`` or another method, now the module-
    level ``def name(...)``) as a hand-written signature would lay them out: continuation
    lines were aligned under the old ``def method(``, so a signature that spanned lines is
    put on one line when it fits in 88 columns, else one parameter per line. ``returns``
    is the return annotation's code, if any."""
    code = cst.Module(body=[]).code_for_node
    if "\n" not in code(params) or params.posonly_params:
        return {"params": params}
    pieces: list[str] = [code(p.with_changes(comma=cst.MaybeSentinel.DEFAULT,
                                             whitespace_after_param=cst.SimpleWhitespace("")))
                         for p in params.params]
    if isinstance(params.star_arg, cst.Param):
        pieces.append(code(params.star_arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)))
    elif params.kwonly_params:
        pieces.append("*")
    pieces += [code(p.with_changes(comma=cst.MaybeSentinel.DEFAULT,
                                   whitespace_after_param=cst.SimpleWhitespace("")))
               for p in params.kwonly_params]
    if isinstance(params.star_kwarg, cst.Param):
        pieces.append(code(params.star_kwarg.with_changes(comma=cst.MaybeSentinel.DEFAULT)))
    if any("#" in piece or '"""' in piece or "'''" in piece for piece in pieces):
        return {"params": params}  # a comment or a long string: left as written
    pieces = [" ".join(piece.split()) if "\n" in piece else piece for piece in pieces]
    arrow = f" -> {returns}" if returns is not None else ""
    line = f"def {name}({', '.join(pieces)}){arrow}: pass"
    if len(line) - len(" pass") > 88:
        inner = "".join(f"    {piece},\n" for piece in pieces)
        line = f"def {name}(\n{inner}){arrow}: pass"
    parsed = cst.ensure_type(cst.parse_statement(line), cst.FunctionDef)
    return {"params": parsed.params, "whitespace_before_params": parsed.whitespace_before_params}


def _after_creation(post: list[tuple[str, tuple[cst.BaseStatement, ...]]],
                    local: str) -> list[cst.BaseStatement]:
    """What ``__new__`` did to the new tensor (``self.orig_shape = ...``), now done to the
    factory's ``local`` in the same order, before any ``__init__`` body (the wraps) runs.
    An unknown keyword still raises only after these ran, as ``__init__`` raised it."""
    out: list[cst.BaseStatement] = []
    for instance, stmts in post:
        out += [stmt.visit(_Rename(instance, local)) for stmt in stmts]  # type: ignore[misc]
    return out


class DefinitionsTransformer(cst.CSTTransformer):
    """Carries out the plans of the converted classes defined in one module."""

    def __init__(self, ff: FileFacts, plan: Plan, refs: FileRefs, context: CodemodContext) -> None:
        super().__init__()
        self.ff = ff
        self.plan = plan
        self.refs = refs
        self.context = context
        self.mine = {
            p.name: p for p in plan.classes.values()
            if p.converted and p.facts.module == ff.module_name
        }
        #: Classes kept as classes that also get a wrap (see ``Planner._settle``).
        self.shadows = {
            p.name: p for p in plan.classes.values()
            if p.shadow and p.facts.module == ff.module_name
        }
        self.count = 0
        self.shadow_count = 0
        #: First names of the converted classes' bases (their imports may become unused).
        self.base_heads: set[str] = set()
        for p in self.mine.values():
            for expr in p.facts.base_exprs:
                text = dotted(expr)
                if text is not None:
                    self.base_heads.add(text.split(".")[0])

    # -- module ---------------------------------------------------------------------------
    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if not self.mine and not self.shadows:
            return updated_node
        body: list[cst.BaseStatement] = []
        inserted = False
        for stmt in updated_node.body:
            name = stmt.name.value if isinstance(stmt, cst.ClassDef) else None
            if name in self.mine or name in self.shadows:
                if not inserted:
                    body.extend(self._preamble())
                    inserted = True
            if name in self.mine:
                converted = self._convert(stmt, self.mine[name])  # type: ignore[arg-type]
                if body and _is_import_line(body[-1]) and not isinstance(
                        converted[0], (cst.FunctionDef, cst.ClassDef)):
                    # One blank line between the imports and a constant (isort's layout).
                    converted[0] = converted[0].with_changes(leading_lines=[
                        cst.EmptyLine(), *[line for line in converted[0].leading_lines  # type: ignore[attr-defined]
                                           if line.comment is not None]])
                body.extend(converted)
                self.count += 1
            elif name in self.shadows:
                self.shadow_count += 1
                body.append(self._shadow_class(stmt, self.shadows[name]))  # type: ignore[arg-type]
                body.append(self._wrap(stmt, self.shadows[name]))  # type: ignore[arg-type]
                # Its fields and its kind: converted subclasses inherit its methods.
                fields = self._registration(self.shadows[name])
                body.extend(fields)
                body.extend(self._kind_registration(self.shadows[name], next_to_fields=bool(fields)))
            else:
                body.append(stmt)
        return updated_node.with_changes(body=body)

    def _preamble(self) -> list[cst.BaseStatement]:
        """Nothing: ``Features`` and the helpers live in the family's runtime module
        (``codemod.runtime.emit``), which ``apply`` writes as a file of its own."""
        return []

    def _dedent(self, stmt: cst.BaseStatement) -> cst.BaseStatement:
        """A docstring moved out of a class body loses one level of indentation.

        Only docstrings are touched (their value is read through ``inspect.cleandoc``);
        other multi-line strings keep their exact value.
        """
        if not _is_docstring(stmt):
            return stmt
        expr = cst.ensure_type(stmt.body[0], cst.Expr)
        string = expr.value
        if not isinstance(string, cst.SimpleString) or "\n" not in string.value:
            return stmt
        indent = self.ff.module.default_indent
        lines = string.value.split("\n")
        lines = [lines[0]] + [ln[len(indent):] if ln.startswith(indent) else ln for ln in lines[1:]]
        new = string.with_changes(value="\n".join(lines))
        return stmt.with_changes(body=[expr.with_changes(value=new)])

    # -- one class ------------------------------------------------------------------------
    def _convert(self, node: cst.ClassDef, plan: ClassPlan) -> list[cst.BaseStatement]:
        methods = self._methods(node, plan)
        constants = self._constants(node, plan)
        factory = self._factory(node, plan)
        wrap = self._wrap(node, plan)
        comments = [line for line in node.leading_lines if line.comment is not None]
        factory = factory.with_changes(
            leading_lines=[cst.EmptyLine(), cst.EmptyLine(), *comments]
        )
        fields = self._registration(plan)
        kind = self._kind_registration(plan, next_to_fields=bool(fields) and not methods)
        return [*constants, factory, wrap, *fields, *methods, *kind]

    def _shadow_class(self, node: cst.ClassDef, plan: ClassPlan) -> cst.ClassDef:
        """A kept class whose functions converted parameters also carry: each
        ``super().m(...)`` of a method becomes ``Next.m(self, ...)``, the implementation the
        planner proved is next in the MRO of every subclass (so the same for its own
        instances), since ``super()`` needs an instance of the class. ``__init__`` serves
        only the class's own instances and is left as it is."""
        if not plan.super_targets:
            return node
        members: list[cst.BaseStatement | cst.BaseSmallStatement] = []
        for stmt in node.body.body:
            if isinstance(stmt, cst.FunctionDef) and not stmt.decorators and \
                    stmt.name.value in plan.facts.methods:
                self_name = [*stmt.params.posonly_params, *stmt.params.params][0].name.value
                stmt = stmt.visit(_SuperCalls(stmt.name.value, plan, self.refs, self_name))  # type: ignore[assignment]
            members.append(stmt)
        return node.with_changes(body=node.body.with_changes(body=members))

    def _registration(self, plan: ClassPlan) -> list[cst.BaseStatement]:
        """``register_param_fields(Features.X, {...})``: the runtime's record of which
        attributes replaced which fields for kind ``X`` (read by ``param_attr_dict``,
        ``param_field`` and ``set_param_field``), once per kind."""
        fields = self.plan.property_fields(plan.facts.qualname)
        if not fields:
            return []
        register = self.refs.helper("register_param_fields", plan.facts.qualname).value
        feature = cst.Module(body=[]).code_for_node(self.refs.feature(plan.facts.qualname))
        pairs = [f'"{fld}": "{name}"' for fld, (name, _) in fields.items()]
        nullable = [f'"{name}"' for name, none_deletes in fields.values() if none_deletes]
        tail = f", none_deletes=({', '.join(nullable)},)" if nullable else ""
        args = f"{feature}, {{{', '.join(pairs)}}}{tail}"
        line = f"{register}({args})"
        if len(line) > 88 and len(args) <= 84:
            line = f"{register}(\n    {args}\n)"
        elif len(line) > 88:
            inner = "".join(f"        {pair},\n" for pair in pairs)
            tail = f"    none_deletes=({', '.join(nullable)},),\n" if nullable else ""
            line = f"{register}(\n    {feature},\n    {{\n{inner}    }},\n{tail})"
        return [_two_blank_lines(cst.parse_statement(line))]

    def _kind_registration(self, plan: ClassPlan, next_to_fields: bool) -> list[cst.BaseStatement]:
        """``register_param_kind(Features.X, bases=(...), methods={...})``: what the class
        gave its instances, recorded once per kind (``init_param_kind`` gives it to each new
        parameter): the kinds of its bases, in order, and the methods it defined. Placed
        after its method functions, which it names; right under the kind's
        ``register_param_fields`` when no function stands between them."""
        register = self.refs.helper("register_param_kind", plan.facts.qualname).value
        feature = cst.Module(body=[]).code_for_node(self.refs.feature(plan.facts.qualname))
        args: list[tuple[str, str, list[str], str]] = [(feature, "", [], "")]
        bases = [cst.Module(body=[]).code_for_node(self.refs.feature(q))
                 for q in self.plan.index.param_bases(plan.facts.qualname)]
        if bases:
            args.append(("bases=", "(", bases, ")"))
        if plan.method_funcs:
            pairs = [f'"{method}": {func}' for method, func in plan.method_funcs.items()]
            args.append(("methods=", "{", pairs, "}"))
        statement = cst.parse_statement(_layout_call(register, args))
        return [statement if next_to_fields else _two_blank_lines(statement)]

    def _member(self, node: cst.ClassDef, name: str, decorated: bool = False) -> cst.FunctionDef:
        for stmt in node.body.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name and \
                    bool(stmt.decorators) == decorated:
                return stmt
        raise LookupError(name)

    def _constants(self, node: cst.ClassDef, plan: ClassPlan) -> list[cst.BaseStatement]:
        out: list[cst.BaseStatement] = []
        for stmt in node.body.body:
            if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
                continue
            small = stmt.body[0]
            if isinstance(small, cst.Assign) and m.matches(small.targets[0].target, m.Name()):
                name = small.targets[0].target.value  # type: ignore[attr-defined]
                if name in plan.constants:
                    new = small.with_changes(
                        targets=[small.targets[0].with_changes(target=cst.Name(plan.constants[name]))]
                    )
                    out.append(self._constant_spacing(stmt.with_changes(body=[new]), out))
            elif isinstance(small, cst.AnnAssign) and m.matches(small.target, m.Name()):
                name = small.target.value  # type: ignore[attr-defined]
                if name in plan.constants and small.value is not None:
                    renamed = small.with_changes(target=cst.Name(plan.constants[name]))
                    out.append(self._constant_spacing(stmt.with_changes(body=[renamed]), out))
        return out

    @staticmethod
    def _constant_spacing(stmt: cst.SimpleStatementLine, before: list[cst.BaseStatement]) -> cst.BaseStatement:
        """Constants of one class stay together; two blank lines before the group."""
        if not before:
            return _two_blank_lines(stmt)
        comments = [line for line in stmt.leading_lines if line.comment is not None]
        return stmt.with_changes(leading_lines=comments)

    def _methods(self, node: cst.ClassDef, plan: ClassPlan) -> list[cst.BaseStatement]:
        out: list[cst.BaseStatement] = []
        members = [(n, f, False) for n, f in plan.method_funcs.items()]
        members += [(n, f, True) for n, f in plan.static_funcs.items()]
        for name, func_name, static in members:
            fn = self._member(node, name, decorated=static)
            if not static:
                params = [*fn.params.posonly_params, *fn.params.params]
                self_name = params[0].name.value
                fn = fn.visit(_SuperCalls(name, plan, self.refs, self_name))  # type: ignore[assignment]
                fields = self.plan.property_fields(plan.facts.qualname)
                if fields:
                    fn = fn.with_changes(body=fn.body.visit(_FieldsAsAttributes(
                        self_name, fields,
                        lambda: self.refs.helper("set_param_field", plan.facts.qualname))))
            returns = (cst.Module(body=[]).code_for_node(fn.returns.annotation)
                       if fn.returns is not None else None)
            fn = fn.with_changes(name=cst.Name(func_name), decorators=[],
                                 **_laid_out(fn.params, func_name, returns))
            body = list(fn.body.body)
            if body and _is_docstring(body[0]):
                body[0] = self._dedent(body[0])
                fn = fn.with_changes(body=fn.body.with_changes(body=body))
            out.append(_two_blank_lines(fn))
        return out

    def _factory(self, node: cst.ClassDef, plan: ClassPlan) -> cst.FunctionDef:
        refs = self.refs
        parameter = refs.parameter_code()
        if plan.new is not None:
            params = plan.new.params
            call_args = list(plan.new.call_args)
        else:
            params = cst.ensure_type(cst.parse_statement(
                "def f(data=None, requires_grad=True): pass"
            ), cst.FunctionDef).params
            call_args = [cst.Arg(cst.Name("data")), cst.Arg(cst.Name("requires_grad"))]
        named = [p.name.value for p in [*params.params, *params.kwonly_params]]
        star_kwarg = params.star_kwarg.name.value if isinstance(params.star_kwarg, cst.Param) else None
        prelude = list(plan.new.prelude) if plan.new is not None else []
        post = list(plan.new.post) if plan.new is not None else []
        post_stmts = [s for _, stmts in post for s in stmts]
        local = "param"
        taken = _names_used(prelude + post_stmts) | _names_used(
            [cst.SimpleStatementLine(body=[cst.Expr(a.value)]) for a in call_args])
        while local in named or local == star_kwarg or local in taken:
            local += "_"
        docstring = plan.facts.docstring
        body: list[cst.BaseStatement] = [docstring] if docstring is not None else []
        body.extend(prelude)
        kwargs_check = self._kwargs_check(plan, star_kwarg, named) if star_kwarg else []
        if not post:
            body.extend(kwargs_check)
        build = cst.Call(func=cst.parse_expression(parameter), args=[
            a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in call_args
        ])
        body.append(cst.SimpleStatementLine(body=[cst.Assign(
            targets=[cst.AssignTarget(cst.Name(local))], value=build)]))
        init_kind = refs.helper("init_param_kind", plan.facts.qualname).value
        feature = cst.Module(body=[]).code_for_node(refs.feature(plan.facts.qualname))
        body.append(cst.parse_statement(f"{init_kind}({local}, {feature})"))
        body.extend(_after_creation(post, local))
        if post:
            body.extend(kwargs_check)
        for qualname in plan.wrap_chain:
            link = self.plan.classes[qualname]
            args = [
                cst.Arg(keyword=cst.Name(n), value=cst.Name(n),
                        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
                for n in named if _receives(link, n)
            ]
            if star_kwarg:
                args.append(cst.Arg(cst.Name(star_kwarg), star="**"))
            call = cst.Call(
                func=refs.name_in(link.facts.module, link.wrap_name),
                args=[cst.Arg(cst.Name(local)), *args],
            )
            body.append(cst.SimpleStatementLine(body=[cst.Expr(call)]))
        body.append(cst.SimpleStatementLine(body=[cst.Return(cst.Name(local))]))
        return cst.FunctionDef(
            name=cst.Name(plan.name),
            body=cst.IndentedBlock(body=body),
            returns=cst.Annotation(cst.parse_expression(parameter)),
            **_laid_out(params, plan.name, parameter),  # type: ignore[arg-type]
        )

    def _kwargs_check(self, plan: ClassPlan, star_kwarg: str, named: list[str]) -> list[cst.BaseStatement]:
        """Keywords the old ``__init__`` chain rejected raised ``TypeError`` there.

        Every wrap takes ``**kwargs`` (each picks its own), so the factory checks the
        keywords once, against what the whole chain accepted (the planner's
        ``accepted_keywords``: not one that no ``__init__`` takes, nor one that a relay
        also passes by name), unless some ``__init__`` kept any keyword.
        """
        if plan.accepted_keywords is None:
            return []
        accepted = [n for n in plan.accepted_keywords if n not in named]
        check = self.refs.helper("check_param_kwargs", plan.facts.qualname).value
        return [cst.parse_statement(_kwargs_check_call(check, plan.name, star_kwarg, accepted))]

    def _relay_calls(self, plan: ClassPlan, call: cst.Call, name: str,
                     own: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        """What ``super().__init__(...)`` did in a relay: the wraps of the classes after it
        (base first), each given the arguments the relay passed that it takes.

        An argument that more than one wrap takes, or that a later call takes, is first
        stored in a local (all of them then, in order), so each is evaluated once and
        before any of those wraps runs, as the call's arguments were.
        """
        assert plan.relay is not None and plan.init is not None
        run = [self.plan.classes[q] for q in plan.relay.chain]
        funcs = [cst.Module(body=[]).code_for_node(self.refs.name_in(w.facts.module, w.wrap_name))
                 for w in run]
        passed = [(arg, arg_name) for arg, arg_name in zip(call.args, plan.relay.arg_names)]
        takers: dict[str, list[int]] = {}
        for _, arg_name in passed:
            if arg_name is not None:
                takers[arg_name] = [i for i, w in enumerate(run) if _receives(w, arg_name)] or [len(run) - 1]
        hoist = any(not is_name_or_literal(arg.value) and takers[n] != [0] for arg, n in passed if n is not None)
        out: list[cst.BaseStatement] = []
        values: dict[str, str] = {}
        taken = variables_used([*own, *(cst.parse_statement(f) for f in funcs)]) | \
            set(plan.init.param_names) | {name, "kwargs"}
        for arg, arg_name in passed:
            if arg_name is None:
                continue
            code = cst.Module(body=[]).code_for_node(arg.value)
            if hoist and not is_name_or_literal(arg.value):
                local = arg_name
                while local in taken:
                    local += "_"
                taken.add(local)
                out.append(cst.parse_statement(f"{local} = {code}"))
                code = local
            values[arg_name] = code
        star = next((arg for arg, n in passed if n is None), None)
        for i, func in enumerate(funcs):
            args = [f"{n}={values[n]}" for _, n in passed if n is not None and i in takers[n]]
            if star is not None:
                args.append(f"**{cst.Module(body=[]).code_for_node(star.value)}")
            out.append(_call_line(func, name, args))
        return out

    def _wrap(self, node: cst.ClassDef, plan: ClassPlan) -> cst.FunctionDef:
        init = plan.init
        body_stmts: list[cst.BaseStatement] = []
        if init is not None:
            init_node = self._member(node, "__init__")
            # Re-read the (use-site rewritten) body in the same shape the planner saw
            # (a one-line ``def __init__(self, x): self.x = x`` is one statement line).
            body_stmts = list(docstring_and_body(init_node)[1])
            self_name = init.self_name
        else:
            self_name = "self"
        fields = self.plan.property_fields(plan.facts.qualname)
        if fields:
            set_before = {fld for q in plan.mro[1:] if self.plan.classes[q].init is not None
                          for fld in self.plan.classes[q].init.writes}  # type: ignore[union-attr]
            as_attributes = _FieldsAsAttributes(
                self_name, fields, lambda: self.refs.helper("set_param_field", plan.facts.qualname),
                _first_writes(body_stmts, self_name, fields, set_before),
            )
            body_stmts = [s.visit(as_attributes) for s in body_stmts]  # type: ignore[misc]
        name = "param"
        if self_name != name and name in _names_used(body_stmts):
            name = self_name
        if self_name != name:
            body_stmts = [s.visit(_Rename(self_name, name)) for s in body_stmts]  # type: ignore[misc]
        pre, super_stmt, post = _split_at_super(body_stmts) if init is not None else ([], None, [])
        lines: list[cst.BaseStatement] = []
        if plan.relay is not None and super_stmt is not None:
            # A relay: its pre-statements, then the wraps after it with what it passed,
            # then its own feature and members, then its statements after the call.
            lines.extend(_without_pass(pre))
            calls = self._relay_calls(plan, super_stmt.body[0].value,  # type: ignore[attr-defined]
                                      name, [*pre, *post])
            comments = [ln for ln in super_stmt.leading_lines if ln.comment is not None]
            lines.append(calls[0].with_changes(leading_lines=comments))
            lines.extend(calls[1:])
            pre = []
        for attr, const in plan.constants.items():
            lines.append(cst.parse_statement(f"{name}.{attr} = {const}"))
        for attr, func in plan.static_funcs.items():
            # A static method is a plain function attribute: no binding, instances may shadow it.
            lines.append(cst.parse_statement(f"{name}.{attr} = {func}"))
        # A body that was only ``pass`` needs no statement once the wrap has others.
        lines.extend(_without_pass([*pre, *post]))
        docstring = _wrap_docstring(plan)
        if not lines and not docstring:
            lines.append(cst.parse_statement("pass"))
        if init is not None:
            params = init.params
            first = params.params[0].with_changes(name=cst.Name(name), annotation=None,
                                                  default=None, equal=cst.MaybeSentinel.DEFAULT)
            params = params.with_changes(params=[first, *params.params[1:]])
            if params.star_kwarg is None:
                taken = set(init.param_names) | {name}
                kw = "kwargs"
                while kw in taken:
                    kw = "_" + kw
                params = params.with_changes(star_kwarg=cst.Param(cst.Name(kw)))
        else:
            stub = cst.ensure_type(cst.parse_statement(f"def f({name}, **kwargs): pass"), cst.FunctionDef)
            params = stub.params
        docstring = [self._dedent(d) for d in docstring]
        laid_out = _laid_out(params, plan.wrap_name, None)
        laid_out.setdefault("whitespace_before_params", (
            self._member(node, "__init__").whitespace_before_params
            if init is not None else cst.SimpleWhitespace("")
        ))
        fn = cst.FunctionDef(
            name=cst.Name(plan.wrap_name),
            body=cst.IndentedBlock(body=[*docstring, *lines]),
            **laid_out,  # type: ignore[arg-type]
        )
        return _two_blank_lines(fn)  # type: ignore[return-value]
