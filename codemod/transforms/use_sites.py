"""Rewrite every use of a converted class as a class, anywhere in the tree.

What it does
    ``isinstance(p, X)`` -> ``has_param_feature(p, Features.X)``; tuples of converted
    classes -> one call with several features; ``type(p) is X`` / ``==`` / ``in (A, B)`` /
    ``p.__class__ is X`` -> ``param_kind_is(p, ...)`` (negated for ``is not``/``!=``/``not
    in``); ``issubclass(A, B)`` between two converted names -> its constant answer;
    ``X.method`` -> the function implementing it per ``X``'s MRO; ``X.CONST`` -> the shared
    constant; annotations naming ``X`` -> ``Parameter``; accesses of a property's backing
    field outside the former class (``p._f = v``, ``p._f``, ``getattr``/``hasattr``/``setattr``
    with ``"_f"``) -> ``set_param_field`` / ``param_field`` / ``has_param_field``.
Why
    After conversion ``X`` is a function: ``isinstance(p, X)`` would raise ``TypeError``.
Example
    ``if isinstance(param, (PackedColumnParameter, PackedvLLMParameter)):`` becomes
    ``if has_param_feature(param, Features.PackedColumnParameter, Features.PackedvLLMParameter):``.
Fix safety
    ``p`` is evaluated once, as before. A mixed tuple ``isinstance(p, (X, torch.Tensor))``
    becomes ``has_param_feature(p, Features.X) or isinstance(p, torch.Tensor)`` when
    ``p`` is a plain name (or a short attribute chain checked against a Parameter class
    the run keeps, which a later run merges into one feature check) and every other
    member a name or an attribute of an imported name (reading them later, or not at
    all, changes nothing), and
    ``isinstance_or_param_feature(p, torch.Tensor, Features.X)`` otherwise, which
    evaluates ``p`` once and every member, in their order, as the tuple did (an attribute
    chain may be a property, a member ``kinds[k]`` may raise); such an ``or`` is
    parenthesised wherever an operator binds to it (``not``, ``and``), as the call or
    comparison it replaces was one operand. ``type(p) in (X, C)`` is rewritten for a
    plain name ``p`` only (it is read on both sides of the ``or``). A use no
    rule covers is left alone and reported by ``unconverted_uses``, which makes the
    planner refuse the hierarchy (a class-style use that stays would break at run time).
    A converted parameter holds the attribute that replaced the property, not its field;
    the helpers write and read that attribute for such parameters and the field itself for
    every other object, so code such as ``permute_param_layout_`` still changes what the
    loaders read.
"""

from __future__ import annotations

import ast
import functools
import re
from collections import Counter

import libcst as cst
import libcst.matchers as m

from codemod.analysis import python_trees
from codemod.analysis.class_specs import class_spec_members
from codemod.analysis.classes import FileFacts
from codemod.analysis.dispatch_registrations import NONE, registrations
from codemod.analysis.names import dotted
from codemod.analysis.use_rules import SAME_ON_FUNCTIONS
from codemod.planning.plan import Plan
from codemod.runtime.helpers import (
    HAS_PARAM_FEATURE,
    HAS_PARAM_FIELD,
    ISINSTANCE_OR_PARAM_FEATURE,
    PARAM_FIELD,
    PARAM_KIND_IS,
    SET_PARAM_FIELD,
)
from codemod.transforms.builtin_scopes import BuiltinScopes
from codemod.transforms.held_type_uses import EQUALITY, HeldTypeUses, type_subject
from codemod.transforms.operand_groups import OperandGroups
from codemod.transforms.refs import FileRefs, FStringQuotes
from codemod.transforms.store_targets import WrittenTargets

_SIMPLE = m.Name() | m.Attribute(value=m.Name()) | m.Attribute(value=m.Attribute(value=m.Name()))


def is_simple(expr: cst.BaseExpression) -> bool:
    """A plain name or short attribute chain: evaluating it twice has no side effect."""
    return m.matches(expr, _SIMPLE)


def read_twice_alike(expr: cst.BaseExpression) -> bool:
    """A plain name: read again, it gives the same object and runs no code (an attribute
    chain may be a property: ``stream.next_item``)."""
    return isinstance(expr, cst.Name)


class UseSiteTransformer(WrittenTargets, FStringQuotes, OperandGroups, HeldTypeUses, BuiltinScopes):
    """Rewrites class-style uses of converted classes in one file."""

    def __init__(self, ff: FileFacts, plan: Plan, refs: FileRefs) -> None:
        super().__init__()
        self.ff = ff
        self.plan = plan
        self.refs = refs
        self.counts: Counter[str] = Counter()
        #: ids of original nodes naming a converted class that a rewrite consumed.
        self.handled: set[int] = set()
        #: First names of those nodes: their imports may have become unused.
        self.handled_heads: set[str] = set()
        self._class_stack: list[str] = []
        #: Per enclosing scope: None for a class body, the ``self`` name for a method.
        self._method_self: list[str | None] = []
        #: Assignments left with their other targets -> the field writes to put after them.
        self._split_writes: dict[int, list[cst.Call]] = {}
        #: Per enclosing class: the name of the undecorated function visited directly in it.
        self._method_names: list[str] = []
        self._annotation_depth = 0
        self.track_builtins(ff.text, {*ff.globals, *ff.bindings})
        self.init_held_types(ff.text or ff.module.code)
        #: ids of ``isinstance`` calls an earlier run of this rewrite wrote.
        self._own_checks: set[int] = set()
        #: ids of the parameter annotations of ``@f.register`` functions (dispatch keys).
        self._dispatch_annotations: set[int] = set()
        self._registrations = registrations(ff.text) if ff.text else NONE
        #: ids of expressions whose attribute is read (``X.m`` of ``X.m.__name__``) and of
        #: the values of ``case`` value patterns (``case X.CONST:``).
        self._attribute_objects: set[int] = set()
        self._pattern_values: set[int] = set()

    # -- resolution ----------------------------------------------------------------------
    def _named(self, expr: cst.BaseExpression) -> str | None:
        """Qualified name (re-exports followed) of what the name or attribute chain
        ``expr`` names, else None."""
        if not isinstance(expr, (cst.Name, cst.Attribute)):
            return None
        return self.plan.index.canonical(self.ff.resolve(expr))

    def converted(self, expr: cst.BaseExpression) -> str | None:
        """Qualified name of the converted class ``expr`` names, else None."""
        qual = self._named(expr)
        return qual if self.plan.is_converted(qual) else None

    def shadow(self, expr: cst.BaseExpression) -> str | None:
        """Qualified name of the kept-with-wrap class ``expr`` names, else None."""
        qual = self._named(expr)
        return qual if self.plan.is_shadow(qual) else None

    def _elements(self, expr: cst.BaseExpression) -> list[cst.BaseExpression] | None:
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
            out = []
            for el in expr.elements:
                if isinstance(el, cst.StarredElement):
                    return None
                out.append(el.value)
            return out
        return [expr]

    # -- context ---------------------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._class_stack.append(f"{self.ff.module_name}.{node.name.value}")
        self._method_self.append(None)
        self._method_names.append("")
        self.enter_held_scope(node.name.value, function=False)

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self._class_stack.pop()
        self._method_self.pop()
        self._method_names.pop()
        self.leave_held_scope()
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        # ``self`` of a method of an ordinary class is never a converted parameter.
        params = [*node.params.posonly_params, *node.params.params]
        directly_in_class = bool(self._method_self) and self._method_self[-1] is None and \
            len(self._method_self) == len(self._class_stack)
        is_static = any(m.matches(d.decorator, m.Name("staticmethod")) for d in node.decorators)
        self._method_self.append(params[0].name.value if directly_in_class and params
                                 and not is_static else "")
        if directly_in_class:
            self._method_names[-1] = "" if node.decorators else node.name.value
        self.enter_function(node)
        self.enter_held_scope(node.name.value, function=True)
        if any(m.matches(d.decorator, m.Attribute(attr=m.Name("register"))) for d in node.decorators) \
                or self._registrations.registers(node.name.value, [
                    d.decorator.value if isinstance(d.decorator, cst.Name) else None
                    for d in node.decorators]):
            # ``@dispatch.register`` (``functools.singledispatch``; also ``dispatch.register(f)``
            # and ``on = dispatch.register`` then ``@on``) reads a parameter's annotation
            # as the class to dispatch on: ``Parameter`` there would take every
            # parameter. Left as it is, ``unconverted_uses`` reports it and the hierarchy
            # is refused.
            signature = node.params
            self._dispatch_annotations.update(
                id(p.annotation) for p in [*signature.posonly_params, *signature.params,
                                           *signature.kwonly_params]
                if p.annotation is not None)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        self._method_self.pop()
        self.leave_scope()
        self.leave_held_scope()
        return updated_node

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    # -- isinstance / issubclass -------------------------------------------------------------
    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        field_access = self._field_call(original_node, updated_node)
        if field_access is not None:
            return field_access
        func = original_node.func
        if not isinstance(func, cst.Name) or self.shadowed(func.value):
            return updated_node
        args = original_node.args
        if len(args) != 2 or any(a.keyword or a.star for a in args):
            return updated_node
        if func.value == "isinstance":
            return self._isinstance(original_node, updated_node)
        if func.value == "issubclass":
            return self._issubclass(original_node, updated_node)
        return updated_node

    def _isinstance(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if id(original) in self._own_checks:
            return updated
        members = class_spec_members(original.args[1].value)
        updated_members = class_spec_members(updated.args[1].value)
        if members is None or updated_members is None or len(members) != len(updated_members):
            return updated
        elements = [member for member, _ in members]
        kinds = [self.converted(e) for e in elements]
        shadows = [self.shadow(e) for e in elements]
        if not any(kinds) and not any(shadows):
            return updated
        obj = updated.args[0].value
        features = [self.refs.feature(k or s) for k, s in zip(kinds, shadows) if k or s]  # type: ignore[arg-type]
        first = next(k or s for k, s in zip(kinds, shadows) if k or s)
        # A kept class still answers for its own instances: it stays, in a flat tuple
        # (``None`` of a union ``X | None`` is spelled ``type(None)`` there).
        rest = [cst.Element(_tuple_member(member, in_union))
                for (member, in_union), kind in zip(updated_members, kinds) if not kind]
        if rest and not self._readable_or(original.args[0].value,
                                          [e for e, kind in zip(elements, kinds) if not kind]):
            # The subject or another member may run code when read (or raise): evaluate
            # each once, in their order, inside one helper call.
            self._mark(elements, kinds)
            self.counts["isinstance"] += 1
            return cst.Call(
                func=self.refs.helper(ISINSTANCE_OR_PARAM_FEATURE, first),
                args=[cst.Arg(obj), cst.Arg(_class_spec(rest))] + [cst.Arg(f) for f in features],
            )
        # The helper is asked for (and imported) only where it is called.
        check: cst.BaseExpression = cst.Call(
            func=self.refs.helper(HAS_PARAM_FEATURE, first),
            args=[cst.Arg(obj)] + [cst.Arg(f) for f in features],
        )
        if rest:
            check = self._grouped(cst.BooleanOperation(
                left=check,
                operator=cst.Or(),
                right=updated.with_changes(args=[updated.args[0], cst.Arg(_class_spec(rest))]),
            ))
        self._mark(elements, kinds)
        self.counts["isinstance"] += 1
        return check

    def _readable_or(self, subject: cst.BaseExpression, others: list[cst.BaseExpression]) -> bool:
        """Whether ``isinstance(subject, (X, *others))`` may become ``has_param_feature(
        subject, ...) or isinstance(subject, others)``: every other member is read as
        the tuple read it (``_inert_class``), and the subject is a plain name, or a short
        attribute chain checked against a Parameter class this run keeps (a later run
        that converts it merges the ``or`` into one feature check; the helper call would
        hold the class as a value and keep it a class; the chain is read twice, as an
        ``nn.Module``'s ``self.proj.weight`` may be)."""
        if not all(self._inert_class(member) for member in others):
            return False
        if read_twice_alike(subject):
            return True
        return is_simple(subject) and any(self._named(member) in self.plan.classes
                                          for member in others)

    def _inert_class(self, member: cst.BaseExpression) -> bool:
        """Whether reading ``member`` (a member of a class spec) later, or not at all, is
        as reading it where the spec stood: a name, or an attribute chain on a module the
        file imports with ``import`` (``torch.Tensor``, after ``import torch``); not a
        subscript, a call, an attribute of a local object (``config.param_cls``: a
        property, or missing) or of an object imported by ``from`` (``REG.kind``)."""
        if isinstance(member, cst.Name):
            return True
        head = member
        while isinstance(head, cst.Attribute):
            head = head.value
        return isinstance(head, cst.Name) and head.value in self._imported_modules

    @functools.cached_property
    def _imported_modules(self) -> frozenset[str]:
        """The names ``import m`` and ``import m.n as x`` bind in the file: modules."""
        try:
            tree = python_trees.parse(self.ff.text or self.ff.module.code)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return frozenset()
        return frozenset(alias.asname or alias.name.partition(".")[0]
                         for node in python_trees.nodes(tree) if isinstance(node, ast.Import)
                         for alias in node.names)

    def leave_BooleanOperation(self, original_node: cst.BooleanOperation,
                               updated_node: cst.BooleanOperation) -> cst.BaseExpression:
        """``has_param_feature(p, Features.A) or isinstance(p, B)``, an earlier run's check
        for a class ``B`` it kept, ``B`` converted now: one call,
        ``has_param_feature(p, Features.A, Features.B)``, as one run writes for
        ``isinstance(p, (A, B))`` (the same answer; ``p`` a name or short attribute chain,
        now read once)."""
        left, right, was = updated_node.left, updated_node.right, original_node.right
        if not (isinstance(updated_node.operator, cst.Or) and isinstance(left, cst.Call)
                and isinstance(right, cst.Call) and isinstance(was, cst.Call)
                and m.matches(was.func, m.Name("isinstance")) and left.deep_equals(original_node.left)
                # The helper this rewrite wrote on the right, by the same name on the left
                # (not a method or another module's function of that name).
                and isinstance(right.func, cst.Name) and right.func.value.startswith(HAS_PARAM_FEATURE)
                and isinstance(left.func, cst.Name) and left.func.value == right.func.value
                and _positional(left) and _positional(right) and len(left.args) > 1
                and all(is_simple(arg.value) for arg in (*left.args, *right.args))
                and _same_code(left.args[0].value, right.args[0].value)
                and not m.findall(original_node, m.Comment())):
            return updated_node
        features: dict[str, cst.BaseExpression] = {}
        for arg in (*left.args[1:], *right.args[1:]):
            features.setdefault(_code(arg.value), arg.value)
        return cst.Call(func=left.func,
                        args=[cst.Arg(left.args[0].value), *(cst.Arg(f) for f in features.values())])

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        """Remember the checks this rewrite wrote on an earlier run, to leave them alone.

        ``has_param_feature(p, Features.K) or isinstance(p, (K,))`` is the rewrite of
        ``isinstance(p, K)`` for a kept class ``K``: the ``isinstance`` is recognised when
        it tests the same subject and every kept class it names has its feature in the
        ``has_param_feature`` call (a resumed or repeated run then changes nothing).
        """
        if not isinstance(node.operator, cst.Or) or not isinstance(node.right, cst.Call):
            return
        feature_call, check = node.left, node.right
        if not (isinstance(feature_call, cst.Call) and _callee_name(feature_call) == HAS_PARAM_FEATURE
                and m.matches(check.func, m.Name("isinstance")) and len(check.args) == 2
                and feature_call.args and _same_code(feature_call.args[0].value, check.args[0].value)):
            return
        members = class_spec_members(check.args[1].value)
        if members is None:
            return
        named = {_code(arg.value) for arg in feature_call.args[1:]}
        for member, _ in members:
            if self.converted(member):
                return
            kept = self.shadow(member)
            if kept and _code(self.refs.feature(kept)) not in named:
                return
        self._own_checks.add(id(check))

    def _issubclass(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        sub = self.converted(original.args[0].value)
        members = class_spec_members(original.args[1].value)
        if sub is None or members is None:
            return updated
        elements = [member for member, _ in members]
        kinds = [self.converted(e) or self.shadow(e) for e in elements]
        if not all(kinds):
            return updated
        answer = any(k in self.plan.classes[sub].mro for k in kinds)
        self._mark([original.args[0].value, *elements], [sub, *kinds])
        self.counts["issubclass"] += 1
        return cst.Name("True" if answer else "False")

    def _mark(self, exprs: list[cst.BaseExpression], kinds: list[str | None]) -> None:
        for expr, kind in zip(exprs, kinds):
            if kind:
                self._handle(expr)

    def _handle(self, expr: cst.BaseExpression) -> None:
        self.handled.add(id(expr))
        text = dotted(expr)
        if text is not None:
            self.handled_heads.add(text.split(".")[0])

    # -- type(p) is X ---------------------------------------------------------------------------
    def _type_subject(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        return type_subject(expr, lambda: self.shadowed("type"))

    def leave_single_comparison(
        self, original_node: cst.Comparison, updated_node: cst.Comparison
    ) -> cst.BaseExpression:
        target = original_node.comparisons[0]
        op = target.operator
        left, right = original_node.left, target.comparator
        subject = self._type_subject(left)
        new_subject_index = 0
        if subject is None and isinstance(op, EQUALITY):
            subject = self._type_subject(right)
            left, right = right, left
            new_subject_index = 1
        if subject is None:
            return updated_node
        if isinstance(op, (cst.In, cst.NotIn)):
            elements = self._elements(right)
        elif isinstance(op, EQUALITY):
            elements = [right]
        else:
            return updated_node
        if elements is None:
            return updated_node
        kinds = [self.converted(e) for e in elements]
        if not any(kinds):
            return updated_node
        kept = [e for e, k in zip(elements, kinds) if not k]
        if kept and not (isinstance(op, (cst.In, cst.NotIn))
                         and all(self.shadow(e) or not self.converted(e) for e in kept)
                         and read_twice_alike(self._type_subject(left))):  # type: ignore[arg-type]
            return updated_node  # reported by unconverted_uses
        updated_subject = (
            updated_node.left if new_subject_index == 0 else updated_node.comparisons[0].comparator
        )
        inner = self._type_subject(updated_subject)
        first = next(k for k in kinds if k)
        call: cst.BaseExpression = cst.Call(
            func=self.refs.helper(PARAM_KIND_IS, first),
            args=[cst.Arg(inner)] + [cst.Arg(self.refs.feature(k)) for k in kinds if k],  # type: ignore[arg-type]
        )
        if kept:
            # Classes that stay classes keep their exact-type test; no converted
            # parameter has their exact kind.
            rest = updated_node.comparisons[0].comparator if new_subject_index == 0 else updated_node.left
            kept_updated = [el.with_changes(comma=cst.MaybeSentinel.DEFAULT)
                            for el, k in zip(rest.elements, kinds) if not k]  # type: ignore[attr-defined]
            classic = cst.Comparison(
                left=updated_subject,
                comparisons=[
                    cst.ComparisonTarget(operator=cst.Is(), comparator=kept_updated[0].value)
                    if len(kept_updated) == 1
                    else cst.ComparisonTarget(operator=cst.In(), comparator=cst.Tuple(kept_updated))
                ],
            )
            call = cst.BooleanOperation(left=classic, operator=cst.Or(), right=call)
        if isinstance(op, (cst.IsNot, cst.NotEqual, cst.NotIn)):
            call = cst.UnaryOperation(
                operator=cst.Not(),
                expression=call.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
                if kept else call,
            )
        self._mark(elements, kinds)
        self.counts["type-check"] += 1
        if updated_node.lpar or not isinstance(call, cst.BooleanOperation):
            return call.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar)
        return self._grouped(call)

    def leave_AnnAssign(
        self, original_node: cst.AnnAssign, updated_node: cst.AnnAssign
    ) -> cst.BaseSmallStatement:
        """``x._f: T = v`` writes the field as ``x._f = v`` does: ``set_param_field`` (the
        annotation of an attribute target is never stored)."""
        if updated_node.value is None:
            return updated_node
        value = self._ungrouped(updated_node.value)
        target = updated_node.target
        if isinstance(target, cst.Attribute) and target.attr.value in self.plan.fields \
                and self._may_hold_param_field(target.value):
            return cst.Expr(self._field_writer(target.value, target.attr.value, value))
        return updated_node.with_changes(value=value)

    # -- X.method / X.CONST ----------------------------------------------------------------------
    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._attribute_objects.add(id(node.value))

    def visit_MatchValue(self, node: cst.MatchValue) -> None:
        self._pattern_values.add(id(node.value))

    def leave_Attribute(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ) -> cst.BaseExpression:
        if self._annotation_depth:
            return updated_node
        if id(original_node) not in self._stores and self._field_read(original_node):
            return self._field_reader(updated_node.value, original_node.attr.value)
        owner = self.converted(original_node.value)
        if owner is None or id(original_node) in self._written:
            # ``X.CONST = v``, ``X.CONST += 1``, ``del X.m``: that changed the class, which
            # every instance saw; each converted parameter holds its own copy. Left as it
            # is, ``unconverted_uses`` reports it and the hierarchy is refused.
            return updated_node
        if original_node.attr.value in SAME_ON_FUNCTIONS:
            # ``X.__name__``: the factory has the class's name, qualified name and module.
            self.handled.add(id(original_node.value))
            return updated_node
        member = self.plan.class_member(owner, original_node.attr.value)
        if member is None or id(original_node) in self._pattern_values \
                or (member.function and id(original_node) in self._attribute_objects):
            # ``case X.CONST:`` would become a capture pattern (``case _X_CONST:`` matches
            # anything); ``X.m.__name__`` would read the generated function's name. Left,
            # each needs the class.
            return updated_node
        self._handle(original_node.value)
        self.counts["unbound-member"] += 1
        return self.refs.name_in(member.module, member.name)

    # -- annotations -----------------------------------------------------------------------------
    def visit_Annotation(self, node: cst.Annotation) -> None:
        self._annotation_depth += 1

    def leave_Annotation(
        self, original_node: cst.Annotation, updated_node: cst.Annotation
    ) -> cst.Annotation:
        self._annotation_depth -= 1
        if id(original_node) in self._dispatch_annotations:
            return updated_node
        marker = self

        class Replace(cst.CSTTransformer):
            def visit_Attribute(self, node: cst.Attribute) -> bool:
                return False  # the chain is resolved whole in leave_Attribute

            def leave_Name(self, o: cst.Name, u: cst.Name) -> cst.BaseExpression:
                return marker._annotation_name(o, u)

            def leave_Attribute(self, o: cst.Attribute, u: cst.Attribute) -> cst.BaseExpression:
                return marker._annotation_name(o, u)

            def leave_SimpleString(self, o: cst.SimpleString, u: cst.SimpleString) -> cst.BaseExpression:
                return marker._annotation_string(u)

        new_annotation = original_node.annotation.visit(Replace())
        assert isinstance(new_annotation, cst.BaseExpression)  # Replace swaps expressions for expressions
        if new_annotation.deep_equals(original_node.annotation):
            return updated_node
        # ``X | Parameter`` became ``Parameter | Parameter``: say it once.
        once = _SameMembersOnce()
        new_annotation = new_annotation.visit(once)
        self.handled_heads |= once.dropped_heads  # ``Union`` may be unused now
        return updated_node.with_changes(annotation=new_annotation)

    def _annotation_name(self, original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression:
        if self.converted(original):
            self._handle(original)
            self.counts["annotation"] += 1
            return self.refs.parameter()
        return updated

    def _annotation_string(self, node: cst.SimpleString) -> cst.BaseExpression:
        text = node.evaluated_value
        if not isinstance(text, str):
            return node
        changed = False

        def swap(match: re.Match[str]) -> str:
            nonlocal changed
            try:
                expr = cst.parse_expression(match.group(0))
            except cst.ParserSyntaxError:
                return match.group(0)
            if self.converted(expr):
                changed = True
                return self.refs.parameter_code()
            return match.group(0)

        new = re.sub(r"[A-Za-z_][\w.]*", swap, text)
        if not changed:
            return node
        self.counts["annotation"] += 1
        quote = node.quote
        return cst.SimpleString(f"{node.prefix}{quote}{new}{quote}")

    # -- backing fields -------------------------------------------------------------------------
    # A converted parameter holds a former property as its attribute alone (no field). The
    # former class's own ``self._f`` is rewritten with the class (``definitions``); any
    # other access to a backing field goes through a runtime helper that answers as the
    # field did for converted parameters and touches the field of every other object.

    def _may_hold_param_field(self, obj: cst.BaseExpression) -> bool:
        """Whether ``obj._f`` here may be a converted parameter's field: not inside a
        Parameter class kept as a class only for its own instances, not ``self`` of a
        class's method (an ordinary object's own field, or the former class's own code,
        which ``definitions`` rewrites). A shadow's plain methods are bound onto converted
        parameters too, so there ``self`` may be one; its ``__init__`` and property
        functions serve only its own instances (the wrap made from ``__init__`` is
        ``definitions``')."""
        cls = self.plan.classes.get(self._class_stack[-1]) if self._class_stack else None
        if cls is not None and not cls.converted and not cls.shadow:
            return False
        own_self = next((n for n in reversed(self._method_self) if n), None)
        is_self = bool(own_self and self._class_stack and m.matches(obj, m.Name(own_self)))
        if is_self and cls is not None and cls.shadow:
            return self._method_names[len(self._class_stack) - 1] in cls.facts.methods
        return not is_self

    def _converted_self(self, obj: cst.BaseExpression) -> bool:
        """Whether ``obj`` is ``self`` in a method of a class being converted. Its
        ``self._f`` becomes ``self.f`` with the class (``definitions``); a ``getattr``/
        ``hasattr``/``setattr`` naming ``"_f"`` there goes through the helpers here, so it
        reads and writes what ``self._f`` did (a converted parameter holds no field)."""
        cls = self.plan.classes.get(self._class_stack[-1]) if self._class_stack else None
        own_self = next((n for n in reversed(self._method_self) if n), None)
        return bool(cls is not None and cls.converted and own_self and m.matches(obj, m.Name(own_self)))

    def _field_read(self, node: cst.Attribute) -> bool:
        return node.attr.value in self.plan.fields and self._may_hold_param_field(node.value)

    def _field_owner(self, fld: str) -> tuple[str, str, bool]:
        """(a class owning the property over ``fld``, the property, None meant "deleted")."""
        prop = self.plan.fields[fld]
        owner = next(q for q, p in self.plan.classes.items()
                     if prop in p.properties and (p.converted or p.shadow))
        return owner, prop, prop in self.plan.classes[owner].nullable

    def _field_reader(self, obj: cst.BaseExpression, fld: str, *default: cst.Arg,
                      helper: str = PARAM_FIELD) -> cst.Call:
        """``param_field(obj, "_f"[, default])`` (or ``has_param_field``)."""
        owner, _, _ = self._field_owner(fld)
        self.counts["backing-field"] += 1
        return cst.Call(func=self.refs.helper(helper, owner), args=[
            cst.Arg(obj), cst.Arg(self.literal(fld)), *default])

    def _field_call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression | None:
        """``getattr``/``hasattr``/``setattr`` with a literal backing-field name."""
        func = original.func
        if not isinstance(func, cst.Name) or func.value not in ("getattr", "hasattr", "setattr") \
                or self.shadowed(func.value):
            return None
        args = updated.args
        if len(args) < 2 or any(a.keyword or a.star for a in args) or \
                not isinstance(args[1].value, cst.SimpleString):
            return None
        fld = args[1].value.evaluated_value
        if fld not in self.plan.fields or not (self._may_hold_param_field(original.args[0].value)
                                               or self._converted_self(original.args[0].value)):
            return None
        obj = args[0].value
        if func.value == "hasattr" and len(args) == 2:
            return self._field_reader(obj, fld, helper=HAS_PARAM_FIELD)
        if func.value == "getattr" and len(args) in (2, 3):
            return self._field_reader(obj, fld, *[a.with_changes(comma=cst.MaybeSentinel.DEFAULT)
                                                  for a in args[2:]])
        if func.value == "setattr" and len(args) == 3:
            return self._field_writer(obj, fld, args[2].value)
        return None

    def _field_writer(self, obj: cst.BaseExpression, fld: str, value: cst.BaseExpression) -> cst.Call:
        """``set_param_field(obj, "_f", "f", value[, none_deletes=True])``."""
        owner, prop, none_deletes = self._field_owner(fld)
        args = [
            cst.Arg(obj),
            cst.Arg(self.literal(fld)),
            cst.Arg(self.literal(prop)),
            cst.Arg(value),
        ]
        if none_deletes:
            args.append(cst.Arg(cst.Name("True"), keyword=cst.Name("none_deletes"),
                                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
        self.counts["backing-field"] += 1
        return cst.Call(func=self.refs.helper(SET_PARAM_FIELD, owner), args=args)

    def leave_Assign(
        self, original_node: cst.Assign, updated_node: cst.Assign
    ) -> cst.BaseSmallStatement:
        updated_node = updated_node.with_changes(value=self._ungrouped(updated_node.value))
        binding = self.held_binding(updated_node)
        if binding is not None:
            return binding
        if len(updated_node.targets) != 1:
            return self._chain_fields(updated_node)
        target = updated_node.targets[0].target
        if not isinstance(target, cst.Attribute) or target.attr.value not in self.plan.fields \
                or not self._may_hold_param_field(target.value):
            return updated_node
        return cst.Expr(self._field_writer(target.value, target.attr.value, updated_node.value))

    def _chain_fields(self, updated_node: cst.Assign) -> cst.Assign:
        """``a = x._f = v`` (several targets): ``a = v`` then ``set_param_field(x, "_f",
        "f", a)`` (``leave_SimpleStatementLine`` splits the line), so each kind gets what it
        reads: a class instance its field (its property reads it, even a read-only one),
        a converted parameter the attribute. ``a`` is the first plain name among the other
        targets and ``x`` a plain name or attribute chain; the field is now written after
        the other targets. Without such a name: ``x._f = x.f = v``, field and attribute.
        """
        kept: list[cst.AssignTarget] = []
        writes: list[cst.Attribute] = []
        for target in updated_node.targets:
            expr = target.target
            if isinstance(expr, cst.Attribute) and is_simple(expr.value) and \
                    expr.attr.value in self.plan.fields and self._may_hold_param_field(expr.value):
                writes.append(expr)
            else:
                kept.append(target)
        if not writes:
            return updated_node
        holder = next((t.target for t in kept if isinstance(t.target, cst.Name)), None)
        if holder is None:
            self.counts["backing-field"] += 1
            targets: list[cst.AssignTarget] = []
            for target in updated_node.targets:
                targets.append(target)
                expr = target.target
                if any(expr is w for w in writes):
                    prop = self.plan.fields[expr.attr.value]  # type: ignore[attr-defined]
                    targets.append(cst.AssignTarget(target=expr.with_changes(attr=cst.Name(prop))))
            return updated_node.with_changes(targets=targets)
        split = updated_node.with_changes(targets=kept)
        self._split_writes[id(split)] = [
            self._field_writer(w.value, w.attr.value, holder) for w in writes]
        return split

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        """The field writes ``_chain_fields`` split off, each a statement right after the
        assignment they came from (a line ``a; b`` is split around it)."""
        if not any(id(small) in self._split_writes for small in updated_node.body):
            return updated_node
        lines: list[cst.BaseStatement] = []
        pending: list[cst.BaseSmallStatement] = []
        for small in updated_node.body:
            pending.append(small.with_changes(semicolon=cst.MaybeSentinel.DEFAULT))
            writes = self._split_writes.pop(id(small), None)
            if writes is None:
                continue
            lines.append(updated_node.with_changes(body=pending) if not lines
                         else cst.SimpleStatementLine(body=pending))
            lines.extend(cst.SimpleStatementLine(body=[cst.Expr(w)]) for w in writes)
            pending = []
        if pending:
            lines.append(cst.SimpleStatementLine(body=pending))
        return cst.FlattenSentinel(lines)

    def leave_SimpleStatementSuite(
        self, original_node: cst.SimpleStatementSuite, updated_node: cst.SimpleStatementSuite
    ) -> cst.BaseSuite:
        """``if c: a = x._f = v``: the body becomes an indented block, split as above."""
        if not any(id(small) in self._split_writes for small in updated_node.body):
            return updated_node
        line = self.leave_SimpleStatementLine(
            cst.SimpleStatementLine(body=[]), cst.SimpleStatementLine(body=updated_node.body))
        lines = list(line.nodes) if isinstance(line, cst.FlattenSentinel) else [line]
        return cst.IndentedBlock(body=lines)


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node).strip()


def _same_code(one: cst.CSTNode, other: cst.CSTNode) -> bool:
    return _code(one) == _code(other)


def _positional(call: cst.Call) -> bool:
    """Whether every argument of ``call`` is positional (no keyword, no star)."""
    return all(arg.keyword is None and not arg.star for arg in call.args)


def _callee_name(call: cst.Call) -> str | None:
    """``f`` for ``f(...)`` and ``m.f(...)``."""
    if isinstance(call.func, cst.Name):
        return call.func.value
    if isinstance(call.func, cst.Attribute):
        return call.func.attr.value
    return None


def _class_spec(elements: list[cst.Element]) -> cst.BaseExpression:
    """The second argument of ``isinstance`` for the classes ``elements``: the class
    itself when there is one, else a tuple of them."""
    if len(elements) == 1:
        return elements[0].value
    return cst.Tuple(elements=elements)


def _tuple_member(member: cst.BaseExpression, in_union: bool) -> cst.BaseExpression:
    """``member`` as an element of an ``isinstance`` tuple: ``None`` in a union means
    ``type(None)`` (a bare ``None`` in a tuple raises ``TypeError``)."""
    if in_union and m.matches(member, m.Name("None")):
        return cst.Call(func=cst.Name("type"), args=[cst.Arg(cst.Name("None"))])
    return member


class _SameMembersOnce(cst.CSTTransformer):
    """``A | A | B`` -> ``A | B`` and ``Union[A, A]`` -> ``A``: the same type, written once
    (members compared by their code; the first spelling, with its comments, is kept)."""

    def __init__(self) -> None:
        super().__init__()
        #: First names of the ``Union`` subscripts removed (their import may be unused).
        self.dropped_heads: set[str] = set()

    def leave_BinaryOperation(
        self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation
    ) -> cst.BaseExpression:
        if not isinstance(updated_node.operator, cst.BitOr):
            return updated_node
        members: list[cst.BaseExpression] = []
        stack: list[cst.BaseExpression] = [updated_node]
        while stack:  # the left-associated chain, in order
            node = stack.pop()
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr) \
                    and not node.lpar:
                stack.extend([node.right, node.left])
            else:
                members.append(node)
        kept = _first_of_each(members)
        if len(kept) == len(members):
            return updated_node
        out = kept[0]
        for member in kept[1:]:
            out = cst.BinaryOperation(left=out, operator=updated_node.operator, right=member)
        return out.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar)

    def leave_Subscript(self, original_node: cst.Subscript, updated_node: cst.Subscript) -> cst.BaseExpression:
        head = dotted(updated_node.value)
        if head is None or head.rsplit(".", 1)[-1] != "Union":
            return updated_node
        indexes = [el.slice for el in updated_node.slice]
        if not all(isinstance(i, cst.Index) for i in indexes):
            return updated_node
        members = [i.value for i in indexes]  # type: ignore[attr-defined]
        kept = _first_of_each(members)
        if len(kept) == len(members):
            return updated_node
        if len(kept) == 1:
            self.dropped_heads.add(head.split(".")[0])
            return kept[0]
        elements = [cst.SubscriptElement(cst.Index(m)) for m in kept]
        return updated_node.with_changes(slice=elements)


def _first_of_each(members: list[cst.BaseExpression]) -> list[cst.BaseExpression]:
    seen: set[str] = set()
    kept = []
    for member in members:
        code = cst.Module(body=[]).code_for_node(member).strip()
        if code not in seen:
            seen.add(code)
            kept.append(member)
    return kept
