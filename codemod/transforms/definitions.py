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

import ast
import builtins
import io
import tokenize
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import libcst as cst
import libcst.matchers as m
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor

from codemod.analysis.classes import FileFacts, docstring_and_body
from codemod.analysis.earlier_shadows import earlier_shadow_parts
from codemod.analysis.names import dotted, variables_used
from codemod.planning.plan import ClassPlan, Plan
from codemod.runtime.helpers import CHECK_PARAM_KWARGS, INIT_PARAM_KIND, SET_PARAM_FIELD
from codemod.transforms.class_code import (
    FieldsAsAttributes,
    Rename,
    SuperCalls,
    after_creation,
    first_writes,
    is_plain_docstring,
    names_used,
    split_at_super,
    without_pass,
)
from codemod.transforms.code_layout import (
    is_import_line,
    kwargs_check_call,
    laid_out,
    two_blank_lines,
)
from codemod.transforms.refs import FileRefs
from codemod.transforms.registrations import fields_registration, kind_registration
from codemod.transforms.wrap_calls import receives, relay_calls


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
        #: (class, wrap name) of each class beside which an earlier run's shadow output
        #: no longer reads as ``apply`` writes it (edited by hand, or the class since):
        #: converting the file would drop that code (``edited_output_error``).
        self.edited: list[tuple[ClassPlan, str]] = []
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
        replaced = self._earlier_output(updated_node.body)
        for index, stmt in enumerate(updated_node.body):
            if index in replaced:
                continue
            name = stmt.name.value if isinstance(stmt, cst.ClassDef) else None
            if name in self.mine or name in self.shadows:
                if not inserted:
                    body.extend(self._preamble())
                    inserted = True
            if name in self.mine:
                converted = self._convert(stmt, self.mine[name])  # type: ignore[arg-type]
                if body and is_import_line(body[-1]) and not isinstance(
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
                fields = fields_registration(self.plan, self.shadows[name], self.refs)
                body.extend(fields)
                body.extend(kind_registration(self.plan, self.shadows[name], self.refs, next_to_fields=bool(fields)))
            else:
                body.append(stmt)
        return updated_node.with_changes(body=body)

    def _earlier_output(self, body: Sequence[cst.BaseStatement]) -> set[int]:
        """The statements an earlier run wrote beside a class it kept as a shadow
        (``earlier_shadow_parts``), which give way to what this run writes for the class;
        only where they are still what ``apply`` writes for it as a shadow (code and
        comments), else the class goes to ``edited`` and they stay."""
        mine = {p.wrap_name: p for p in (*self.mine.values(), *self.shadows.values())}
        members = {wrap: self.plan.feature_name(p.facts.qualname) for wrap, p in mine.items()}
        classes = {stmt.name.value: stmt for stmt in body if isinstance(stmt, cst.ClassDef)}
        replaced: set[int] = set()
        for wrap, parts in earlier_shadow_parts(body, members).items():
            plan = mine[wrap]
            node = classes.get(plan.name)
            if node is not None and _as_written([body[i] for i in parts], self._as_shadow(node, plan)):
                replaced.update(parts)
            else:
                self.edited.append((plan, wrap))
        return replaced

    def _as_shadow(self, node: cst.ClassDef, plan: ClassPlan) -> list[list[cst.BaseStatement]]:
        """What ``apply`` writes beside ``node`` kept as a shadow: its wrap and registrations,
        the methods named through the class (``X.m``, as written) or as this run's method
        functions (``m_of_x``, as the use-site rewrite leaves ``X.m`` of a class it
        converts)."""
        shadow = replace(plan, shadow=True)
        wrap = self._wrap(node, shadow)
        fields = fields_registration(self.plan, shadow, self.refs)
        methods = [{m: f"{plan.name}.{m}" for m in plan.method_funcs}, dict(plan.method_funcs)]
        return [[wrap, *fields, *kind_registration(self.plan, replace(shadow, method_funcs=funcs),
                                                   self.refs, next_to_fields=bool(fields))]
                for funcs in methods]

    def _preamble(self) -> list[cst.BaseStatement]:
        """Nothing: ``Features`` and the helpers live in the family's runtime module
        (``codemod.runtime.emit``), which ``apply`` writes as a file of its own."""
        return []

    def _dedent(self, stmt: cst.BaseStatement) -> cst.BaseStatement:
        """A docstring moved out of a class body loses one level of indentation.

        Only docstrings are touched (their value is read through ``inspect.cleandoc``);
        other multi-line strings keep their exact value.
        """
        if not is_plain_docstring(stmt):
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
        # A wrap that would do nothing is not written, nor called (``wrap_does_nothing``).
        wrap = [self._wrap(node, plan)] if plan.writes_wrap else []
        comments = [line for line in node.leading_lines if line.comment is not None]
        factory = factory.with_changes(
            leading_lines=[cst.EmptyLine(), cst.EmptyLine(), *comments]
        )
        fields = fields_registration(self.plan, plan, self.refs)
        kind = kind_registration(self.plan, plan, self.refs, next_to_fields=bool(fields) and not methods)
        return [*constants, factory, *wrap, *fields, *methods, *kind]

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
                stmt = stmt.visit(SuperCalls(stmt.name.value, plan, self.refs, self_name))  # type: ignore[assignment]
            members.append(stmt)
        return node.with_changes(body=node.body.with_changes(body=members))

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
            return two_blank_lines(stmt)
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
                fn = fn.visit(SuperCalls(name, plan, self.refs, self_name))  # type: ignore[assignment]
                fields = self.plan.property_fields(plan.facts.qualname)
                if fields:
                    fn = fn.with_changes(body=fn.body.visit(FieldsAsAttributes(
                        self_name, fields,
                        lambda: self.refs.helper(SET_PARAM_FIELD, plan.facts.qualname))))
            returns = (cst.Module(body=[]).code_for_node(fn.returns.annotation)
                       if fn.returns is not None else None)
            fn = fn.with_changes(name=cst.Name(func_name), decorators=[],
                                 **laid_out(fn.params, func_name, returns))
            body = list(fn.body.body)
            if body and is_plain_docstring(body[0]):
                body[0] = self._dedent(body[0])
                fn = fn.with_changes(body=fn.body.with_changes(body=body))
            out.append(two_blank_lines(fn))
        return out

    def _factory(self, node: cst.ClassDef, plan: ClassPlan) -> cst.FunctionDef:
        refs = self.refs
        parameter = refs.parameter_code()
        if plan.new is not None:
            call_args = list(plan.new.call_args)
        else:
            call_args = [cst.Arg(cst.Name("data")), cst.Arg(cst.Name("requires_grad"))]
        params = self._annotations_here(plan, plan.factory_params)
        named = [p.name.value for p in [*params.params, *params.kwonly_params]]
        star_kwarg = params.star_kwarg.name.value if isinstance(params.star_kwarg, cst.Param) else None
        prelude = list(plan.new.prelude) if plan.new is not None else []
        post = list(plan.new.post) if plan.new is not None else []
        post_stmts = [s for _, stmts in post for s in stmts]
        local = "param"
        taken = names_used(prelude + post_stmts) | names_used(
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
        init_kind = refs.helper(INIT_PARAM_KIND, plan.facts.qualname).value
        feature = cst.Module(body=[]).code_for_node(refs.feature(plan.facts.qualname))
        body.append(cst.parse_statement(f"{init_kind}({local}, {feature})"))
        body.extend(after_creation(post, local))
        if post:
            body.extend(kwargs_check)
        for qualname in plan.wrap_chain:
            link = self.plan.classes[qualname]
            if not link.writes_wrap:
                continue
            args = [
                cst.Arg(keyword=cst.Name(n), value=cst.Name(n),
                        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
                for n in named if receives(link, n)
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
            **laid_out(params, plan.name, parameter),  # type: ignore[arg-type]
        )

    def _annotations_here(self, plan: ClassPlan, params: cst.Parameters) -> cst.Parameters:
        """``__new__``'s parameters, when another module defines that ``__new__``, with
        annotations this module can evaluate: each name an annotation uses is imported as
        that module bound it (``import torch``, ``from typing import Optional``, a name it
        defines); an annotation with a name that cannot be (bound here to something else,
        or imported under another name there) is left out. A name the module cannot
        resolve would raise ``NameError`` when the factory is defined."""
        owner = next((self.plan.classes[q] for q in plan.mro if q in self.plan.classes
                      and self.plan.classes[q].facts.new is not None), None)
        if owner is None or owner.facts.module == self.ff.module_name:
            return params
        there = self.plan.index.files.get(owner.facts.module)
        if there is None:
            return params

        def placed(param: cst.Param) -> cst.Param:
            if param.annotation is None:
                return param
            names = variables_used([param.annotation]) - set(dir(builtins))
            sources = {name: self._source_of(name, there) for name in names}
            if any(source is None for source in sources.values()):
                return param.with_changes(annotation=None, equal=cst.AssignEqual(
                    cst.SimpleWhitespace(""), cst.SimpleWhitespace(""),
                ) if param.default is not None else cst.MaybeSentinel.DEFAULT)
            for name, source in sources.items():
                if name not in self.ff.bindings and source is not None:
                    module, _, imported = source.rpartition(".")
                    if module:
                        AddImportsVisitor.add_needed_import(self.context, module, imported)
                    else:
                        AddImportsVisitor.add_needed_import(self.context, imported)
            return param

        return params.with_changes(
            params=[placed(p) for p in params.params],
            kwonly_params=[placed(p) for p in params.kwonly_params],
        )

    def _source_of(self, name: str, there: FileFacts) -> str | None:
        """What ``name`` is in the module ``there`` (its qualified name), if this module
        can write it with the same name: it binds it to the same object already, or can
        import it as ``import name`` / ``from module import name``."""
        source = there.bindings.get(name) or (
            f"{there.module_name}.{name}" if name in there.globals else None)
        if source is None:
            return None
        here = self.ff.bindings.get(name)
        if here is not None or name in self.ff.globals:
            return source if here == source else None
        return source if source == name or source.endswith(f".{name}") else None

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
        check = self.refs.helper(CHECK_PARAM_KWARGS, plan.facts.qualname).value
        return [cst.parse_statement(kwargs_check_call(check, plan.name, star_kwarg, accepted))]

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
            as_attributes = FieldsAsAttributes(
                self_name, fields, lambda: self.refs.helper(SET_PARAM_FIELD, plan.facts.qualname),
                first_writes(body_stmts, self_name, fields, set_before),
            )
            body_stmts = [s.visit(as_attributes) for s in body_stmts]  # type: ignore[misc]
        name = "param"
        if self_name != name and name in names_used(body_stmts):
            name = self_name
        if self_name != name:
            body_stmts = [s.visit(Rename(self_name, name)) for s in body_stmts]  # type: ignore[misc]
        pre, super_stmt, post = split_at_super(body_stmts) if init is not None else ([], None, [])
        lines: list[cst.BaseStatement] = []
        if plan.relay is not None and super_stmt is not None:
            # A relay: its pre-statements, then the wraps after it with what it passed,
            # then its own feature and members, then its statements after the call.
            lines.extend(without_pass(pre))
            calls = relay_calls(self.plan, plan, self.refs, super_stmt.body[0].value,  # type: ignore[attr-defined]
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
        lines.extend(without_pass([*pre, *post]))
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
        signature = laid_out(params, plan.wrap_name, None)
        signature.setdefault("whitespace_before_params", (
            self._member(node, "__init__").whitespace_before_params
            if init is not None else cst.SimpleWhitespace("")
        ))
        fn = cst.FunctionDef(
            name=cst.Name(plan.wrap_name),
            body=cst.IndentedBlock(body=[*docstring, *lines]),
            **signature,  # type: ignore[arg-type]
        )
        return two_blank_lines(fn)  # type: ignore[return-value]


def _as_written(found: list[cst.BaseStatement], variants: list[list[cst.BaseStatement]]) -> bool:
    """Whether the statements ``found`` hold the same code and comments as one of
    ``variants`` (layout aside: CPython's tree, and the comments in order)."""
    seen = _code_and_comments(found)
    return seen is not None and any(_code_and_comments(variant) == seen for variant in variants)


def _code_and_comments(statements: list[cst.BaseStatement]) -> tuple[str, list[str]] | None:
    code = cst.Module(body=statements).code  # type: ignore[arg-type]
    try:
        tree = ast.dump(ast.parse(code))
        comments = [tok.string for tok in tokenize.generate_tokens(io.StringIO(code).readline)
                    if tok.type == tokenize.COMMENT]
    except (SyntaxError, ValueError, tokenize.TokenError):
        return None
    return tree, comments


def edited_output_error(path: Path, edited: list[tuple[ClassPlan, str]]) -> str:
    """The error of a file beside whose classes an earlier run's output was edited."""
    plan, wrap = edited[0]
    return (f"{path}:{plan.facts.line}: {plan.name}: the wrap `{wrap}` and the registrations an "
            "earlier `codemod apply` wrote beside this class no longer read as it writes them "
            "(edited by hand, or the class was): writing them anew would drop that change; "
            "move the added code elsewhere, or delete those statements to have them written "
            "anew, then run again")
