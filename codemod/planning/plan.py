"""One ``ClassPlan`` per Parameter class: convert it, or refuse it with a reason.

The planner checks every condition under which the generated factory + wraps behave
exactly like the class did (docs/ARCHITECTURE.md, "The contract"); when one does not hold, the class is
refused, and so is every class in its hierarchy (a base whose subclass stays a class
must stay a class too, and a subclass of a refused base cannot be converted), so a
hierarchy is converted whole or not at all.

Construction order. The old constructor ran ``__new__`` of the first class in the MRO
that defines it (reaching the next ``__new__`` through ``super().__new__``; the factory
repeats that chain's steps, ``codemod.planning.new_chain``), then the cooperative
``__init__`` chain. The factory calls the wrap
functions in *reverse* MRO order (base first), so that:

* methods and class attributes bound by later wraps win, as the first class in the MRO
  that defines a name won before;
* statements after ``super().__init__()`` see what the bases set.

Statements *before* ``super().__init__()`` then run after the bases' bodies; the planner
accepts them only when no other ``__init__`` of the hierarchy reads or writes what they set.

Relays. A class whose ``super().__init__(...)`` passes anything but its own arguments
unchanged (``name=name``, ``**kwargs``) is a relay: the factory calls the wraps only up to
the first relay in the MRO, and the relay's wrap calls the wraps of the classes after it
(base first, up to the next relay) at the place of its super call, with exactly what it
passed. That chain must be the same in every subclass (``RelayLink``), and the keywords
the old constructor accepted are traced link by link (``accepted_keywords``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst
import libcst.matchers as m

from codemod.analysis.class_values import ClassValues
from codemod.analysis.classes import ClassFacts, docstring_and_body
from codemod.analysis.index import ClassIndex
from codemod.analysis.names import is_name_or_literal
from codemod.planning import naming
from codemod.planning.new_chain import NewRefusal, compose, names_bound, read_link
from codemod.types import TENSOR_DATA_DESCRIPTORS, UNINITIALIZED_QUALNAMES, Refusal

#: Names that the runtime defines in the module that carries it.
RUNTIME_NAMES = (
    "BoundParamMethod",
    "bind_param_method",
    "bind_param_methods",
    "add_param_feature",
    "has_param_feature",
    "isinstance_or_param_feature",
    "set_param_field",
    "check_param_kwargs",
    "param_kind_is",
    "_install_copy_hooks",
    "_deepcopy_param",
    "_reduce_param",
    "_rebuild_param",
    "rebind_param_methods",
    "param_attr_dict",
    "PARAM_FIELDS",
    "register_param_fields",
    "_fields_of",
    "param_field",
    "has_param_field",
)
#: Modules the runtime imports by their own name (``import copy``): a module that binds
#: one of these names to something else cannot hold the runtime.
RUNTIME_IMPORTS = ("copy", "weakref", "torch")
FEATURES_NAME = "Features"


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


@dataclass
class RelayLink:
    """Where a relay's ``super().__init__(...)`` leads, the same in every subclass."""

    #: Per argument of the super call: the parameter of the next ``__init__`` it fills
    #: (positional ones bound statically), None for ``**kwargs``.
    arg_names: tuple[str | None, ...]
    #: Qualnames whose wraps the relay's wrap calls at its super call, base first: the
    #: classes after it in the MRO, up to and including the next relay.
    chain: tuple[str, ...]

    @property
    def explicit(self) -> frozenset[str]:
        """Names the super call passes explicitly (positionally or by keyword)."""
        return frozenset(n for n in self.arg_names if n is not None)


@dataclass
class NewFacts:
    """The factory's signature and the ``Parameter(...)`` call, from ``__new__``."""

    params: cst.Parameters
    call_args: tuple[cst.Arg, ...]
    docstring: cst.SimpleStatementLine | None = None
    #: Statements before the return that build the data (e.g. a sentinel tensor).
    prelude: tuple[cst.BaseStatement, ...] = ()
    #: Statements after the tensor's creation, with the name each body gave it
    #: (``self.orig_shape = ...``), in the order they ran.
    post: tuple[tuple[str, tuple[cst.BaseStatement, ...]], ...] = ()


@dataclass
class ClassPlan:
    """Everything the transforms need to convert one class (or why it is refused)."""

    facts: ClassFacts
    mro: list[str]
    refusal: Refusal | None = None
    snake: str = ""
    wrap_name: str = ""
    #: Method name -> name of the module-level function implementing it.
    method_funcs: dict[str, str] = field(default_factory=dict)
    #: Public property name -> backing field (read-only property over a field).
    properties: dict[str, str] = field(default_factory=dict)
    #: Class attribute -> module-level constant holding its one shared value.
    constants: dict[str, str] = field(default_factory=dict)
    #: Static method -> module-level function, stored on the param unbound.
    static_funcs: dict[str, str] = field(default_factory=dict)
    #: Properties whose getter treats a None field as "deleted" (AttributeError).
    nullable: set[str] = field(default_factory=set)
    #: Members dropped because a plain Parameter already behaves so.
    dropped: list[str] = field(default_factory=list)
    #: (method, called name) -> qualname of the class whose ``called`` ``super()`` reaches.
    super_targets: dict[tuple[str, str], str] = field(default_factory=dict)
    init: InitFacts | None = None
    new: NewFacts | None = None
    #: Qualnames whose wraps the factory calls, base first (reverse MRO).
    wrap_chain: list[str] = field(default_factory=list)
    #: Module carrying the runtime for this class's hierarchy.
    runtime_module: str = ""
    #: Kept as a class (a subclass is refused) but also given a wrap function, so its
    #: converted subclasses still get its attributes and methods.
    shadow: bool = False
    #: For a class whose ``__init__`` relays (see ``InitFacts.relays``): its chain.
    relay: RelayLink | None = None
    #: Keywords the old constructor accepted beyond ``__new__``'s own names, in MRO order;
    #: None when it accepted any keyword.
    accepted_keywords: tuple[str, ...] | None = None

    @property
    def converted(self) -> bool:
        """Whether this class is converted."""
        return self.refusal is None

    @property
    def name(self) -> str:
        """The class name (the factory keeps it)."""
        return self.facts.name

    @property
    def feature_value(self) -> str:
        """The feature tag's value: the class's qualified name, unique across the tree."""
        return self.facts.qualname


@dataclass
class Plan:
    """The decisions for a whole tree."""

    index: ClassIndex
    classes: dict[str, ClassPlan]
    #: Backing field -> public property name, over all converted classes.
    fields: dict[str, str]
    #: Modules that carry the runtime.
    runtime_modules: set[str]
    #: Accept every value use of a converted class (it then holds the factory).
    allow_value_uses: bool = False
    #: Prefix of the ``Features`` member names.
    feature_prefix: str = ""
    #: Which value uses of a class are proven harmless (``class_values``); none without.
    values: ClassValues = field(default_factory=ClassValues)

    def value_use_kept(self, path: Path, line: int, column: int) -> bool:
        """Whether the value use at ``path:line:column`` of a converted class stays valid:
        proven (``class_values``) or accepted by ``allow-value-uses``."""
        return self.allow_value_uses or self.values.proven(path, line, column)

    def feature_name(self, qualname: str) -> str:
        """The ``Features`` member of a class: its name, after the configured prefix."""
        return f"{self.feature_prefix}{self.classes[qualname].name}"

    def converted(self) -> dict[str, ClassPlan]:
        """The plans of converted classes."""
        return {q: p for q, p in self.classes.items() if p.converted}

    def refusals(self) -> list[Refusal]:
        """Every refusal, in file order."""
        found = [p.refusal for p in self.classes.values() if p.refusal is not None]
        return sorted(found, key=lambda r: (str(r.path), r.line, r.subject))

    def is_converted(self, qualname: str | None) -> bool:
        """Whether ``qualname`` names a converted class."""
        plan = self.classes.get(qualname) if qualname else None
        return plan is not None and plan.converted

    def property_fields(self, qualname: str) -> dict[str, tuple[str, bool]]:
        """Backing field -> (attribute, None meant "deleted") for every property a converted
        parameter of kind ``qualname`` holds as an attribute (its MRO's, converted or shadow)."""
        out: dict[str, tuple[str, bool]] = {}
        for q in reversed(self.classes[qualname].mro):
            p = self.classes[q]
            if p.converted or p.shadow:
                for prop, fld in p.properties.items():
                    out[fld] = (prop, prop in p.nullable)
        return out

    def is_shadow(self, qualname: str | None) -> bool:
        """Whether ``qualname`` names a class kept as a class that also has a wrap."""
        plan = self.classes.get(qualname) if qualname else None
        return plan is not None and plan.shadow


class _Refuse(Exception):
    def __init__(self, reason: str, line: int = 0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


def _is_super_call(node: cst.CSTNode, method: str | None = None) -> bool:
    """``super().<method>(...)`` (any method when ``method`` is None)."""
    attr = m.Attribute(value=m.Call(func=m.Name("super"), args=[]))
    if method is not None:
        attr = m.Attribute(value=m.Call(func=m.Name("super"), args=[]), attr=m.Name(method))
    return m.matches(node, m.Call(func=attr))


def _property_fields(mro: list[str], plans: dict[str, ClassPlan]) -> set[str]:
    """Backing fields of the properties a class with MRO ``mro`` has."""
    return {fld for q in mro for fld in plans[q].properties.values()}


def _self_attrs_used(plan: ClassPlan) -> frozenset[str]:
    """Attributes of ``self`` that the class's own ``__init__`` and methods read or write.

    Kept on the class's facts: they outlive a planning round, and each round asks again."""
    cached = plan.facts.__dict__.get("_self_attrs_used")
    if cached is None:
        cached = plan.facts.__dict__["_self_attrs_used"] = frozenset(_scan_self_attrs(plan))
    return cached


def _scan_self_attrs(plan: ClassPlan) -> set[str]:
    used: set[str] = set()
    functions = list(plan.facts.methods.values())
    if plan.facts.init is not None:
        functions.append(plan.facts.init)
    for fn in functions:
        use = _SelfUse(_first_param(fn))
        fn.body.visit(use)
        used |= use.reads | use.writes
    return used


class _SelfUse(cst.CSTVisitor):
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
        if _is_super_call(node):
            name = node.func.attr.value  # type: ignore[attr-defined]
            self.super_calls.append((name, node))
            self._super_ok.add(id(node.func.value))  # type: ignore[attr-defined]
        elif m.matches(node, m.Call(func=m.Name("type"), args=[m.Arg(m.Name(self.self_name))])):
            self.bad.append("reads type(self)")

    def _record_by_name(self, node: cst.Call) -> None:
        """``getattr``/``hasattr(self, "x")`` read ``x``, ``setattr(self, "x", v)`` writes it;
        ``vars(self)`` and a computed name read ``__dict__`` (any attribute)."""
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


class _OddFieldStores(cst.CSTVisitor):
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


class Planner:
    """Builds a ``Plan`` from a ``ClassIndex``."""

    def __init__(self, index: ClassIndex, allow_classes: tuple[str, ...] = (),
                 forced: dict[str, str] | None = None) -> None:
        self.index = index
        self.allow = set(allow_classes)
        #: Qualname -> reason, from use sites found unconvertible by a transform.
        self.forced = dict(forced or {})
        #: Qualname of a relaying class -> its chain, or why it has none (static facts only).
        self._relay_links: dict[str, RelayLink | str] = {}
        self._backing_fields: frozenset[str] = frozenset()

    # -- entry point -------------------------------------------------------------------
    def plan(self) -> Plan:
        """Decide every Parameter class of the index."""
        idx = self.index
        plans: dict[str, ClassPlan] = {}
        for qualname in sorted(idx.param_classes):
            facts = idx.classes[qualname]
            plan = ClassPlan(facts=facts, mro=idx.mros.get(qualname, [qualname]))
            plan.snake = naming.snake_case(facts.name)
            plan.wrap_name = naming.wrap_name(facts.name)
            plans[qualname] = plan
        for plan in plans.values():
            try:
                self._check_own(plan)
            except _Refuse as exc:
                plan.refusal = Refusal(plan.facts.path, exc.line or plan.facts.line,
                                       plan.facts.name, exc.reason)
        for plan in plans.values():
            if plan.refusal is None:
                try:
                    self._check_hierarchy(plan, plans)
                except _Refuse as exc:
                    plan.refusal = Refusal(plan.facts.path, exc.line or plan.facts.line,
                                           plan.facts.name, exc.reason)
        fields = self._fields(plans)
        #: Every backing field of a property of the tree (a shadow's functions must touch
        #: them only in ways a rewrite carries to both kinds).
        self._backing_fields = frozenset(f for p in plans.values() for f in p.properties.values())
        self._settle(plans)
        runtime_modules = self._assign_runtime(plans)
        self._check_names(plans, runtime_modules)
        self._settle(plans)
        runtime_modules = self._assign_runtime(plans)
        return Plan(idx, plans, {f: p for f, p in fields.items()
                                 if any((pl.converted or pl.shadow) and p in pl.properties
                                        for pl in plans.values())}, runtime_modules)

    # -- per-class checks ----------------------------------------------------------------
    def _check_own(self, plan: ClassPlan) -> None:
        facts = plan.facts
        idx = self.index
        if facts.qualname in self.forced:
            raise _Refuse(self.forced[facts.qualname])
        if facts.name in self.allow or facts.qualname in self.allow:
            raise _Refuse("allowed to stay a Parameter subclass by [tool.codemod] allow-classes")
        if facts.qualname in idx.mro_errors:
            raise _Refuse(f"its MRO cannot be computed: {idx.mro_errors[facts.qualname]}")
        for base in idx.base_qualnames(facts.qualname):
            if base is None:
                raise _Refuse("has a dynamic base (not a name the tool can resolve statically)")
            if base in UNINITIALIZED_QUALNAMES:
                raise _Refuse(f"derives from {base}, whose lazy shape a plain Parameter cannot hold")
            if base not in idx.param_classes and not idx.is_param_root_base(base):
                raise _Refuse(f"mixes in {base}, which is not a Parameter class")
        if facts.keywords:
            raise _Refuse(f"has class keywords ({', '.join(facts.keywords)}), e.g. a metaclass")
        if facts.has_decorators:
            raise _Refuse("is decorated; a decorator may depend on it being a class")
        members = [*facts.methods, *facts.properties, *facts.staticmethods, *facts.classmethods,
                   *facts.decorated, *(name for name, _ in facts.class_attrs)]
        overridden = next((n for n in members if n in TENSOR_DATA_DESCRIPTORS), None)
        if overridden is not None:
            raise _Refuse(f"overrides `{overridden}`, the tensor's C-level attribute; "
                          "a plain Parameter cannot")
        for stmt, what in facts.unsupported:
            line = facts.file.line_of(stmt) if facts.file is not None else 0
            raise _Refuse(f"has {what}, which the converter has no rule for", line)
        for name in facts.methods:
            if name.startswith("__") and name.endswith("__"):
                raise _Refuse(f"defines {name}, a special method a plain Parameter cannot carry")
        for name, fn in facts.classmethods.items():
            if name == "__torch_function__" and _forwards_torch_function(fn):
                plan.dropped.append(name)
            elif name == "__torch_function__":
                raise _Refuse(
                    "defines __torch_function__ that does more than forward to super(); "
                    "a plain Parameter would compute different results"
                )
            else:
                raise _Refuse(f"has classmethod {name!r}; a factory function has no class to pass")
        for name in facts.staticmethods:
            if name.startswith("__") and name.endswith("__"):
                raise _Refuse(f"defines {name}, a special method a plain Parameter cannot carry")
            plan.static_funcs[name] = naming.method_function_name(facts.name, name)
        for name, prop in facts.properties.items():
            plan.properties[name], nullable = self._property_field(prop)
            if nullable:
                plan.nullable.add(name)
        for name in facts.methods:
            plan.method_funcs[name] = naming.method_function_name(facts.name, name)
        for name, _ in facts.class_attrs:
            plan.constants[name] = naming.constant_name(facts.name, name)
        if facts.init is not None:
            plan.init = self._init_facts(facts.init)
        for fn in facts.methods.values():
            self._check_method(fn)

    def _property_field(self, prop) -> tuple[str, bool]:
        """The backing field of a property that behaves as a plain attribute.

        Accepted: a getter ``return self._f`` (optionally preceded by ``if self._f is None:
        raise AttributeError(...)``, the "deleted" state), a setter ``self._f = value`` and
        a deleter ``self._f = None`` / ``del self._f``. Returns (field, nullable).
        """
        getter = prop.getter
        if getter is None:
            raise _Refuse(f"property {prop.name!r} has no getter")
        self_name = _first_param(getter)
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
            raise _Refuse(
                f"property {prop.name!r} computes its value; only a plain read of a backing "
                "field becomes an attribute"
            )
        fld = body[0].body[0].value.attr.value  # type: ignore[attr-defined]
        if nullable_field is not None and nullable_field != fld:
            raise _Refuse(f"property {prop.name!r} checks one field and returns another")
        if prop.setter is not None:
            s_self = _first_param(prop.setter)
            params = [*prop.setter.params.posonly_params, *prop.setter.params.params]
            value = params[1].name.value if len(params) == 2 else None
            _, sbody = docstring_and_body(prop.setter)
            if value is None or len(sbody) != 1 or not m.matches(sbody[0], m.SimpleStatementLine(
                body=[m.Assign(targets=[m.AssignTarget(m.Attribute(
                    value=m.Name(s_self), attr=m.Name(fld)))], value=m.Name(value))]
            )):
                raise _Refuse(
                    f"property {prop.name!r} has a setter that does more than store the value"
                )
        if prop.deleter is not None:
            d_self = _first_param(prop.deleter)
            _, dbody = docstring_and_body(prop.deleter)
            target = m.Attribute(value=m.Name(d_self), attr=m.Name(fld))
            clears = len(dbody) == 1 and (
                m.matches(dbody[0], m.SimpleStatementLine(body=[m.Del(target=target)]))
                or (nullable and m.matches(dbody[0], m.SimpleStatementLine(body=[m.Assign(
                    targets=[m.AssignTarget(target)], value=m.Name("None"))])))
            )
            if not clears:
                raise _Refuse(
                    f"property {prop.name!r} has a deleter that does more than clear the field"
                )
        return fld, nullable

    def _init_facts(self, fn: cst.FunctionDef) -> InitFacts:
        params = fn.params
        if params.posonly_params or isinstance(params.star_arg, cst.Param):
            raise _Refuse("__init__ takes positional-only or *args parameters")
        if not params.params:
            raise _Refuse("__init__ has no self parameter")
        self_name = params.params[0].name.value
        names = tuple(p.name.value for p in params.params[1:]) + tuple(
            p.name.value for p in params.kwonly_params
        )
        star_kwarg = params.star_kwarg.name.value if params.star_kwarg else None
        docstring, body = docstring_and_body(fn)
        super_index = None
        for i, stmt in enumerate(body):
            if m.matches(stmt, m.SimpleStatementLine(body=[m.Expr(value=m.Call())])) and \
                    _is_super_call(stmt.body[0].value, "__init__"):  # type: ignore[attr-defined]
                if super_index is not None:
                    raise _Refuse("__init__ calls super().__init__() twice")
                super_index = i
        use = _SelfUse(self_name)
        use.read_statements(body)
        if use.bad:
            raise _Refuse(f"__init__ {use.bad[0]}")
        inits = [c for c, _ in use.super_calls if c == "__init__"]
        if len(inits) != (0 if super_index is None else 1) or len(use.super_calls) != len(inits):
            raise _Refuse("__init__ calls super() other than as one top-level super().__init__(...)")
        forwarded: set[str] = set()
        forwards_rest = False
        relays = False
        super_args: tuple[cst.Arg, ...] = ()
        if super_index is not None:
            call = body[super_index].body[0].value  # type: ignore[attr-defined]
            super_args = tuple(call.args)
            for arg in call.args:
                if arg.star == "**" and m.matches(arg.value, m.Name(star_kwarg or "")):
                    forwards_rest = True
                elif arg.star:
                    raise _Refuse(
                        f"super().__init__() is passed {arg.star}{_code(arg.value)}, whose "
                        "names are known only at run time"
                    )
                elif arg.keyword is not None and m.matches(arg.value, m.Name(arg.keyword.value)) \
                        and arg.keyword.value in names:
                    forwarded.add(arg.keyword.value)
                else:
                    relays = True
            if relays:
                forwarded = {a.keyword.value for a in call.args if a.keyword is not None}
        pre = body[:super_index] if super_index is not None else ()
        post = body[super_index + 1:] if super_index is not None else body
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
        )

    def _check_method(self, fn: cst.FunctionDef) -> None:
        params = fn.params
        if not params.params and not params.posonly_params:
            raise _Refuse(f"method {fn.name.value!r} has no self parameter")
        use = _SelfUse(_first_param(fn))
        fn.body.visit(use)
        if use.bad:
            raise _Refuse(f"method {fn.name.value!r} {use.bad[0]}")

    # -- checks across the hierarchy ------------------------------------------------------
    def _descendants(self, qualname: str) -> set[str]:
        out: set[str] = set()
        todo = [qualname]
        while todo:
            for sub in self.index.subclasses.get(todo.pop(), ()):
                if sub not in out:
                    out.add(sub)
                    todo.append(sub)
        return out

    def _check_hierarchy(self, plan: ClassPlan, plans: dict[str, ClassPlan]) -> None:
        facts = plan.facts
        mro = plan.mro
        chain = [plans[q] for q in mro]
        relays = [p for p in chain if p.init is not None and p.init.relays]
        # The factory calls the wraps up to the first relay; each relay's wrap calls the rest.
        top = mro.index(relays[0].facts.qualname) + 1 if relays else len(mro)
        plan.wrap_chain = list(reversed(mro[:top]))
        # __new__: the first class in the MRO that defines it, reaching the next by super().
        news = [p for p in chain if p.facts.new is not None]
        if news:
            plan.new = self._new_facts(plan, news, plans)
        # The cooperative __init__ chain must reach every __init__ of the MRO.
        with_init = [p for p in chain if p.init is not None]
        # Relays first, the base-most first: a subclass waits for its base relay's verdict.
        for relay in reversed(relays):
            try:
                plans[relay.facts.qualname].relay = self._relay_link(relay, plans)
            except _Refuse:
                if relay is plan:
                    raise
                return  # that relay is refused on its own; this class stays with it
        for i, p in enumerate(with_init[:-1]):
            if p.init.super_stmt is None:  # type: ignore[union-attr]
                raise _Refuse(
                    f"{p.name}.__init__ does not call super().__init__(), so "
                    f"{with_init[i + 1].name}.__init__ would be skipped"
                )
            if p.init.relays:  # type: ignore[union-attr]
                continue  # its wrap passes on exactly what it passed
            self._check_forwarder_before_relay(p, with_init[i + 1:], plans)
            for later in with_init[i + 1:]:
                for name in later.init.param_names:  # type: ignore[union-attr]
                    passes = name in p.init.forwarded or (  # type: ignore[union-attr]
                        p.init.forwards_rest and name not in p.init.param_names  # type: ignore[union-attr]
                    )
                    if not passes:
                        raise _Refuse(
                            f"{p.name}.__init__ does not pass {name!r} on to "
                            f"{later.name}.__init__; the wraps could not tell"
                        )
        plan.accepted_keywords = self._accepted_keywords(with_init, plans)
        # Statements before super().__init__() run after the bases' bodies now (except in
        # a relay, whose wrap calls the bases' wraps where it called super().__init__()).
        for p in with_init:
            pre = p.init.pre  # type: ignore[union-attr]
            if not pre or p.init.relays:  # type: ignore[union-attr]
                continue
            pre_use = _SelfUse(p.init.self_name)  # type: ignore[union-attr]
            pre_use.read_statements(pre)
            for other in with_init:
                if other is p:
                    continue
                touched = other.init.writes | other.init.reads  # type: ignore[union-attr]
                clash = pre_use.writes & touched
                if clash or pre_use.reads - pre_use.writes:
                    raise _Refuse(
                        f"{p.name}.__init__ sets or reads {sorted(clash or pre_use.reads)[0]!r} "
                        "before super().__init__() in a way the base order would change"
                    )
        # An __init__ must not call methods of self: their target depends on the subclass.
        all_methods = {n for p in chain for n in p.facts.methods}
        for p in with_init:
            use = _SelfUse(p.init.self_name)  # type: ignore[union-attr]
            use.read_statements(p.init.pre + p.init.post)  # type: ignore[union-attr]
            own_calls = use.calls & all_methods
            if own_calls:
                raise _Refuse(f"{p.name}.__init__ calls self.{sorted(own_calls)[0]}() while constructing")
        # Instance attributes set by an __init__ must not collide with methods/constants.
        instance_attrs = {a for p in with_init for a in p.init.writes}  # type: ignore[union-attr]
        class_names = {n for p in chain
                       for n in list(p.facts.methods) + list(p.constants) + list(p.static_funcs)}
        clash = instance_attrs & class_names
        if clash:
            raise _Refuse(f"{sorted(clash)[0]!r} is both an instance attribute and a class member")
        # Properties: where their field is set. A converted parameter stores the attribute
        # alone, so every class of the MRO that touches the field must know the property.
        for prop, fld in plan.properties.items():
            if not any(p.init is not None and fld in p.init.writes for p in chain):
                raise _Refuse(f"property {prop!r} reads {fld!r}, which no __init__ of its bases sets")
            for other in chain[1:]:
                if fld in _property_fields(other.mro, plans):
                    continue
                if fld in _self_attrs_used(other):
                    raise _Refuse(
                        f"{other.name} uses {fld!r} as a plain field, which backs the property "
                        f"{prop!r} of {plan.name}; a converted parameter holds only the attribute"
                    )
        # super().m() inside methods: one target for every concrete subclass.
        for name, fn in facts.methods.items():
            use = _SelfUse(_first_param(fn))
            fn.body.visit(use)
            for called, _ in use.super_calls:
                targets: set[str] = set()
                for concrete in {facts.qualname} | self._descendants(facts.qualname):
                    kmro = self.index.mros.get(concrete, [])
                    after = kmro[kmro.index(facts.qualname) + 1:] if facts.qualname in kmro else []
                    target = next((q for q in after if called in plans[q].facts.methods), None)
                    if target is None:
                        raise _Refuse(
                            f"method {name!r} calls super().{called}(), which reaches torch's "
                            "own Parameter/Tensor; the converter has no rule for that"
                        )
                    targets.add(target)
                if len(targets) > 1:
                    raise _Refuse(
                        f"method {name!r} calls super().{called}(), whose target depends on "
                        "the subclass"
                    )
                plan.super_targets[(name, called)] = targets.pop()

    # -- relays: super().__init__() passed other arguments ---------------------------------
    def _relay_link(self, relay: ClassPlan, plans: dict[str, ClassPlan]) -> RelayLink:
        """Where ``relay``'s ``super().__init__(...)`` leads, or ``_Refuse`` saying why it
        cannot be followed statically.

        The relay's wrap calls the wraps of the classes after it in the MRO at the place of
        its super call, with exactly what it passed; so that MRO tail must be the same in
        every subclass, and each positional argument must fill a known parameter.
        """
        qualname = relay.facts.qualname
        known = self._relay_links.get(qualname)
        if known is None:
            try:
                known = self._follow_relay(relay, plans)
            except _Refuse as exc:
                known = exc.reason
            self._relay_links[qualname] = known
        if isinstance(known, str):
            raise _Refuse(known)
        return known

    def _follow_relay(self, relay: ClassPlan, plans: dict[str, ClassPlan]) -> RelayLink:
        init = relay.init
        assert init is not None
        qualname = relay.facts.qualname
        tails: dict[tuple[str, ...], str] = {}
        for sub in [qualname, *sorted(self._descendants(qualname))]:
            sub_mro = self.index.mros.get(sub, [])
            if qualname in sub_mro:
                tails.setdefault(tuple(sub_mro[sub_mro.index(qualname) + 1:]), sub)
        if len(tails) > 1:
            (tail_a, sub_a), (tail_b, sub_b) = list(tails.items())[:2]

            def names(tail: tuple[str, ...]) -> str:
                return ", ".join(plans[q].name for q in tail if q in plans) or "nothing"

            raise _Refuse(
                f"{relay.name}.__init__ passes super().__init__() other arguments than its "
                f"own, and the classes it reaches depend on the subclass: after {relay.name} "
                f"come {names(tail_a)} in {plans[sub_a].name} but {names(tail_b)} in "
                f"{plans[sub_b].name}"
            )
        tail = relay.mro[1:]
        after = [plans[q] for q in tail if plans[q].facts.init is not None]
        if not after:
            raise _Refuse(
                f"{relay.name}.__init__ passes arguments to torch's own Parameter.__init__, "
                "which takes none"
            )
        following = after[0]
        if following.init is None or any(p.init is None for p in after):
            raise _Refuse(f"{following.name}.__init__ cannot be followed")
        positional = [p.name.value for p in following.init.params.params[1:]]
        arg_names: list[str | None] = []
        for arg in init.super_args:  # positional arguments come first (Python's syntax)
            if arg.star == "**":
                arg_names.append(None)
            elif None in arg_names and not is_name_or_literal(arg.value):
                # Python spreads ``**kwargs`` before it evaluates a keyword written after
                # it; the wraps spread it last, after every named argument.
                keyword = arg.keyword.value if arg.keyword is not None else "?"
                raise _Refuse(
                    f"{relay.name}.__init__ passes {keyword!r} after **kwargs to "
                    "super().__init__(), computed after the spread; the wraps would compute "
                    "it first"
                )
            elif arg.keyword is not None:
                arg_names.append(arg.keyword.value)
            elif len(arg_names) < len(positional):
                arg_names.append(positional[len(arg_names)])
            else:
                raise _Refuse(
                    f"{relay.name}.__init__ passes more positional arguments to "
                    f"{following.name}.__init__ than it takes"
                )
        explicit = [n for n in arg_names if n is not None]
        if len(set(explicit)) != len(explicit):
            raise _Refuse(f"{relay.name}.__init__ passes one argument of super().__init__() twice")
        for name in explicit:
            if not self._keyword_taken(name, after, plans):
                raise _Refuse(
                    f"{relay.name}.__init__ passes {name!r} to super().__init__(), which no "
                    f"__init__ after it takes"
                )
        self._check_relay_reads(relay, plans)
        stop = next((i for i, p in enumerate(plans[q] for q in tail)
                     if p.init is not None and p.init.relays), len(tail) - 1)
        return RelayLink(tuple(arg_names), tuple(reversed(tail[:stop + 1])))

    def _check_relay_reads(self, relay: ClassPlan, plans: dict[str, ClassPlan]) -> None:
        """What a relay reads of ``self`` before its super call (and in its arguments) must
        be there when its wrap runs: the tensor's own attributes and what it set itself.

        Its wrap runs that code before any class's attributes and methods are bound and
        before its subclasses' ``__init__`` bodies; a read of a class member, or of an
        attribute another ``__init__`` sets, would see something else.
        """
        init = relay.init
        assert init is not None and init.super_stmt is not None
        pre_use = _SelfUse(init.self_name)
        pre_use.read_statements(init.pre)
        use = _SelfUse(init.self_name)
        use.read_statements([*init.pre, init.super_stmt])
        qualname = relay.facts.qualname
        family = {*relay.mro, *self._descendants(qualname)}
        members: set[str] = set()
        for q in family:
            if q not in plans:
                continue
            facts = plans[q].facts
            members |= {*facts.methods, *facts.properties, *facts.staticmethods}
            members |= {name for name, _ in facts.class_attrs}
            members |= set(plans[q].properties.values())
            if q != qualname and plans[q].init is not None:
                members |= plans[q].init.writes  # type: ignore[union-attr]
        if "__dict__" in use.reads:
            members.add("__dict__")  # every attribute: what another __init__ set included
        read = sorted((use.reads - pre_use.writes) & members)
        if read:
            raise _Refuse(
                f"{relay.name}.__init__ reads self.{read[0]} before or in its "
                "super().__init__() call, where a converted parameter does not have it yet"
            )

    def _check_forwarder_before_relay(self, forwarder: ClassPlan, later: list[ClassPlan],
                                      plans: dict[str, ClassPlan]) -> None:
        """A forwarder's wrap gets every keyword, also those it kept to itself; the next
        relay's wrap gets them too, through ``**kwargs``. One it passes by name as well
        would then arrive twice."""
        relay = next((p for p in later if p.init is not None and p.init.relays), None)
        if relay is None or not relay.init.forwards_rest:  # type: ignore[union-attr]
            return
        kept = set(forwarder.init.param_names) - forwarder.init.forwarded  # type: ignore[union-attr]
        clash = sorted(kept & self._relay_link(relay, plans).explicit)
        if clash:
            raise _Refuse(
                f"{forwarder.name}.__init__ keeps {clash[0]!r} to itself, and "
                f"{relay.name}.__init__ passes its own {clash[0]!r} with **kwargs; its wrap "
                "would receive both"
            )

    def _keyword_taken(self, name: str, links: list[ClassPlan], plans: dict[str, ClassPlan]) -> bool:
        """Whether keyword ``name``, passed to the first ``__init__`` of ``links`` (the
        ``__init__`` chain in MRO order), is taken without ``TypeError``: some ``__init__``
        declares it, or a ``**kwargs`` keeps it; not when one passes it twice, or when it
        reaches torch's own ``__init__``."""
        for link in links:
            init = link.init
            assert init is not None
            if name in init.param_names:
                return True
            if init.star_kwarg is None:
                return False
            if not init.forwards_rest:
                return True
            if init.relays and name in self._relay_link(link, plans).explicit:
                return False
        return False

    def _accepted_keywords(self, with_init: list[ClassPlan],
                           plans: dict[str, ClassPlan]) -> tuple[str, ...] | None:
        """The keywords the old constructor took without ``TypeError`` (in MRO order), or
        None when it took any keyword."""
        if not with_init or self._keyword_taken(" any other", with_init, plans):
            return None
        names: list[str] = []
        for link in with_init:
            names += [n for n in link.init.param_names if n not in names]  # type: ignore[union-attr]
        return tuple(n for n in names if self._keyword_taken(n, with_init, plans))

    def _new_facts(self, plan: ClassPlan, news: list[ClassPlan],
                   plans: dict[str, ClassPlan]) -> NewFacts:
        """The ``__new__`` chain ``news`` (MRO order) as steps on a plain ``Parameter``
        (``codemod.planning.new_chain``): the factory builds the data, creates the tensor
        and sets its attributes as the chain did, before any ``__init__`` runs."""
        try:
            links = [read_link(p.facts.new, p.name, p.facts.module) for p in news]  # type: ignore[arg-type]
            composed = compose(links, plan.facts.module, {p.name for p in plans.values()})
        except NewRefusal as refusal:
            raise _Refuse(refusal.reason) from None
        members = {n for q in plan.mro for n in [
            *plans[q].facts.methods, *plans[q].constants, *plans[q].static_funcs,
            *plans[q].properties]} | _property_fields(plan.mro, plans)
        for instance, stmts in composed.post:
            use = _SelfUse(instance)
            use.read_statements(stmts)
            touched = sorted((use.reads | use.writes | use.calls) & members)
            if touched:
                raise _Refuse(f"__new__ uses self.{touched[0]} before the wraps give a plain "
                              "Parameter the class's members")
        passed_on = {n for q in plan.mro if plans[q].init is not None
                     for n in plans[q].init.param_names}  # type: ignore[union-attr]
        star_kwarg = composed.params.star_kwarg
        factory_params = {p.name.value for p in [*composed.params.params,
                                                 *composed.params.kwonly_params]}
        if isinstance(star_kwarg, cst.Param):
            factory_params.add(star_kwarg.name.value)
            passed_on |= factory_params
        steps = [*composed.prelude, *(s for _, stmts in composed.post for s in stmts)]
        rebound = sorted(names_bound(steps) & factory_params & passed_on)
        if rebound:
            binder = next((link for link in links
                           if rebound[0] in names_bound([*link.prelude, *link.post])), links[0])
            if binder is links[0]:
                raise _Refuse(f"__new__ rebinds its parameter {rebound[0]!r}, which __init__ "
                              "received unchanged; the factory passes one name to both")
            raise _Refuse(f"{binder.owner}.__new__ assigns {rebound[0]!r}, also a parameter of "
                          f"{links[0].owner}.__new__ that __init__ received unchanged; the "
                          "factory passes one name to both")
        return NewFacts(params=composed.params, call_args=composed.call_args,
                        docstring=composed.docstring, prelude=composed.prelude,
                        post=composed.post)

    # -- tree-wide ---------------------------------------------------------------------
    def _fields(self, plans: dict[str, ClassPlan]) -> dict[str, str]:
        fields: dict[str, str] = {}
        owners: dict[str, str] = {}
        for qualname, plan in plans.items():
            for prop, fld in plan.properties.items():
                if fld in fields and fields[fld] != prop:
                    for q in (qualname, owners[fld]):
                        if plans[q].refusal is None:
                            plans[q].refusal = Refusal(
                                plans[q].facts.path, plans[q].facts.line, plans[q].name,
                                f"field {fld!r} backs both {fields[fld]!r} and {prop!r}",
                            )
                fields.setdefault(fld, prop)
                owners.setdefault(fld, qualname)
        return fields

    def components(self, plans: dict[str, ClassPlan]) -> list[set[str]]:
        """Hierarchies: classes connected through base/subclass edges."""
        parent: dict[str, str] = {q: q for q in plans}

        def find(q: str) -> str:
            while parent[q] != q:
                parent[q] = parent[parent[q]]
                q = parent[q]
            return q

        for q in plans:
            for base in self.index.param_bases(q):
                if base in parent:
                    parent[find(q)] = find(base)
        groups: dict[str, set[str]] = {}
        for q in plans:
            groups.setdefault(find(q), set()).add(q)
        return list(groups.values())

    def _ancestors(self, qualname: str) -> set[str]:
        return set(self.index.mros.get(qualname, [qualname])[1:])

    def _settle(self, plans: dict[str, ClassPlan]) -> None:
        """Decide what a refusal keeps as a class, and what can still be converted.

        A refused class stays a class, and so must every class it derives from and every
        class deriving from it. Its other relatives can still be converted when each kept
        class in their MRO can also act as a *shadow*: it stays a class for its own
        instances and gains a wrap function that gives converted parameters its
        attributes and methods (the class's own functions, bound per parameter).
        ``isinstance(p, Kept)`` then answers for both kinds; ``type(p) is Kept`` needs no
        change (no converted parameter has that exact kind).
        """
        for plan in plans.values():
            plan.shadow = False
        for group in self.components(plans):
            refused = {q for q in group if (refusal := plans[q].refusal) is not None
                       and not refusal.reason.startswith("kept as a class")}
            if not refused:
                continue
            below = set(refused)
            for q in refused:
                below |= self._descendants(q)
            kept = set(below)
            for q in list(kept):
                kept |= self._ancestors(q)
            blockers: dict[str, str] = {}
            #: Class kept because a base of it cannot be a shadow -> that base.
            kept_for_base: dict[str, str] = {}
            changed = True
            while changed:
                changed = False
                for q in sorted(group - kept):
                    for base in self._ancestors_in_order(q):
                        if base not in kept:
                            continue
                        reason: str | None
                        if base in below:
                            reason = f"{plans[base].name} is refused"
                        else:
                            reason = blockers.get(base) or self._shadow_blocker(plans[base])
                        if reason is not None:
                            blockers.setdefault(base, reason)
                            kept_for_base[q] = base
                            kept.add(q)
                            kept |= self._ancestors(q)
                            changed = True
                            break
            converted = group - kept
            for q in kept:
                plan = plans[q]
                plan.shadow = q not in below and any(q in plans[c].mro for c in converted)
                if plan.refusal is not None and q in refused:
                    continue
                why = self._kept_reason(q, plans, refused, kept, blockers, kept_for_base)
                plan.refusal = Refusal(plan.facts.path, plan.facts.line, plan.name, why)
            for q in kept:
                if plans[q].shadow:
                    self._as_shadow(plans[q])

    def _ancestors_in_order(self, qualname: str) -> list[str]:
        """The bases ``_ancestors`` gives, in MRO order (a decision made on the first
        one found must not depend on set order)."""
        return self.index.mros.get(qualname, [qualname])[1:]

    def _kept_reason(self, q: str, plans: dict[str, ClassPlan], refused: set[str],
                     kept: set[str], blockers: dict[str, str], kept_for_base: dict[str, str]) -> str:
        """Why ``q`` stays a class, naming its true relation to the class that caused it:
        a refused base it derives from, a base that cannot be a shadow, or a subclass
        that is refused or stays a class. Among several, the first by path and line."""
        def first(candidates: set[str]) -> ClassPlan:
            return plans[min(candidates, key=lambda c: (str(plans[c].facts.path), plans[c].facts.line, c))]

        plan = plans[q]
        refused_bases = refused & self._ancestors(q)
        if refused_bases:
            base = first(refused_bases)
            return (f"kept as a class because it derives from {base.name}, which is refused: "
                    f"{base.refusal.reason}")  # type: ignore[union-attr]
        if q in kept_for_base:
            base = plans[kept_for_base[q]]
            return (f"kept as a class because it derives from {base.name}, which stays a class "
                    f"and cannot also serve converted subclasses: {blockers[kept_for_base[q]]}")
        descendants = self._descendants(q)
        if refused & descendants:
            sub = first(refused & descendants)
            cause = f"its subclass {sub.name} is refused ({sub.refusal.reason})"  # type: ignore[union-attr]
        elif kept & descendants:
            cause = f"its subclass {first(kept & descendants).name} stays a class"
        else:
            related = first(refused)
            cause = f"{related.name} of its hierarchy is refused ({related.refusal.reason})"  # type: ignore[union-attr]
        if plan.shadow:
            return (f"kept as a class because {cause}; its converted subclasses get its "
                    f"attributes and methods through {plan.wrap_name}")
        if q in blockers:
            return f"kept as a class because {cause}; it cannot also serve converted subclasses: {blockers[q]}"
        return f"kept as a class because {cause}"

    def _shadow_blocker(self, plan: ClassPlan) -> str | None:
        """Why a kept class cannot also serve converted subclasses, or None if it can.

        Its functions are bound onto converted parameters as they are, after two rewrites
        that make them work on both kinds: ``super().m(...)`` becomes a call of the one
        implementation the planner proved is next for every subclass, and each read or
        write of a backing field goes through the runtime helper that answers for both
        kinds (``param_field`` / ``set_param_field``). A read-only property needs
        nothing more: each kind reads what the write helper updates for it.
        """
        facts = plan.facts
        if plan.init is None and facts.init is not None:
            return f"{facts.name}.__init__ cannot be turned into a wrap"
        fields = self._backing_fields
        for name, fn in facts.methods.items():
            use = _SelfUse(_first_param(fn))
            fn.body.visit(use)
            for called, _ in use.super_calls:
                if (name, called) not in plan.super_targets:
                    return (f"{facts.name}.{name} calls super().{called}(), and no one class "
                            "is next in the MRO of every subclass to call instead")
            odd = _OddFieldStores(_first_param(fn), fields)
            fn.body.visit(odd)
            if odd.found:
                fld, how = odd.found[0]
                return (f"{facts.name}.{name} {how} the property field {fld!r}; only a plain "
                        "read or `=` of it can serve both kinds (a converted parameter holds "
                        "the attribute)")
        return None

    @staticmethod
    def _as_shadow(plan: ClassPlan) -> None:
        """A shadow's wrap binds the class's own functions and shares its constants."""
        name = plan.facts.name
        plan.method_funcs = {m: f"{name}.{m}" for m in plan.facts.methods}
        plan.static_funcs = {m: f"{name}.{m}" for m in plan.facts.staticmethods}
        plan.constants = {c: f"{name}.{c}" for c, _ in plan.facts.class_attrs}

    def _assign_runtime(self, plans: dict[str, ClassPlan]) -> set[str]:
        modules: set[str] = set()
        for group in self.components(plans):
            live = [plans[q] for q in group if plans[q].converted or plans[q].shadow]
            if not live:
                continue
            roots = [p for p in live if not self.index.param_bases(p.facts.qualname)]
            root = min(roots or live, key=lambda p: (p.facts.module, p.facts.line))
            for p in live:
                p.runtime_module = root.facts.module
            modules.add(root.facts.module)
        return modules

    def _check_names(self, plans: dict[str, ClassPlan], runtime_modules: set[str]) -> None:
        """Generated names must not collide with names the module already defines."""
        by_module: dict[str, list[ClassPlan]] = {}
        for p in plans.values():
            if p.converted or p.shadow:
                by_module.setdefault(p.facts.module, []).append(p)
        for module, group in by_module.items():
            ff = self.index.files[module]
            taken = set(ff.globals) | set(ff.bindings)
            taken -= {p.name for p in group if p.converted}
            generated = [FEATURES_NAME]
            if module in runtime_modules:
                generated += list(RUNTIME_NAMES)
                clash = next((n for n in RUNTIME_IMPORTS if n in taken and ff.bindings.get(n) != n), None)
                if clash is not None:
                    for p in group:
                        p.refusal = Refusal(
                            p.facts.path, p.facts.line, p.name,
                            f"{module} binds {clash!r} to something other than the module "
                            f"`import {clash}` gives, which the generated runtime needs",
                        )
                    continue
            for p in group:
                generated.append(p.wrap_name)
                if p.converted:
                    generated += [*p.method_funcs.values(), *p.constants.values(),
                                  *p.static_funcs.values()]
            seen: set[str] = set()
            for name in generated:
                if name in taken or name in seen:
                    for p in group:
                        p.refusal = Refusal(
                            p.facts.path, p.facts.line, p.name,
                            f"the generated name {name!r} is already used in {module}",
                        )
                    break
                seen.add(name)


def _forwards_torch_function(fn: cst.FunctionDef) -> bool:
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


def _code(node: cst.CSTNode) -> str:
    """The source text of an expression (for messages)."""
    return cst.Module(body=[]).code_for_node(node)


def _first_param(fn: cst.FunctionDef) -> str:
    params = list(fn.params.posonly_params) + list(fn.params.params)
    return params[0].name.value if params else "self"


def build_plan(index: ClassIndex, allow_classes: tuple[str, ...] = (),
               forced: dict[str, str] | None = None, allow_value_uses: bool = False,
               feature_prefix: str = "") -> Plan:
    """Plan every Parameter class of ``index``."""
    plan = Planner(index, allow_classes, forced).plan()
    plan.allow_value_uses = allow_value_uses
    plan.feature_prefix = feature_prefix
    return plan
