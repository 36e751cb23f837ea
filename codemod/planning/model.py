"""What the planner decides, as values the transforms read: one ``ClassPlan`` per
Parameter class (convert it, or the refusal saying why not) inside a ``Plan``, and the
facts a conversion needs (``RelayLink``, ``NewFacts``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import libcst as cst

from codemod.analysis import cst_patterns as m
from codemod.analysis.class_values import ClassValues
from codemod.analysis.classes import ClassFacts
from codemod.analysis.index import ClassIndex
from codemod.analysis.init_shapes import InitFacts, SelfUse, first_param
from codemod.runtime.emit import RuntimeModule
from codemod.types import Refusal


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


#: ``Parameter.__new__``'s parameters: a factory's when no class of the MRO has ``__new__``.
PARAMETER_NEW_PARAMS = cst.ensure_type(
    cst.parse_statement("def f(data=None, requires_grad=True): pass"), cst.FunctionDef).params


def feature_member(prefix: str, name: str) -> str:
    """The ``Features`` member of the class ``name`` under the configured ``feature-prefix``."""
    return f"{prefix}{name}"


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
    #: The runtime module of this class's family (``Features``, the helpers).
    runtime_module: str = ""
    #: Kept as a class (a subclass is refused) but also given a wrap function, so its
    #: converted subclasses still get its attributes and methods.
    shadow: bool = False
    #: For a class whose ``__init__`` relays (see ``InitFacts.relays``): its chain.
    relay: RelayLink | None = None
    #: Keywords the old constructor accepted beyond ``__new__``'s own names, in MRO order;
    #: None when it accepted any keyword.
    accepted_keywords: tuple[str, ...] | None = None
    #: Whether ``apply`` writes the wrap function (and the calls to it): False for a class
    #: whose wrap would do nothing (``wrap_does_nothing``) and that no relay calls.
    writes_wrap: bool = True

    @property
    def converted(self) -> bool:
        """Whether this class is converted."""
        return self.refusal is None

    @property
    def name(self) -> str:
        """The class name (the factory keeps it)."""
        return self.facts.name

    @property
    def factory_params(self) -> cst.Parameters:
        """The factory's signature: ``__new__``'s (its MRO's first), else ``Parameter``'s."""
        return self.new.params if self.new is not None else PARAMETER_NEW_PARAMS

    @property
    def feature_value(self) -> str:
        """The feature tag's value: the class's qualified name, unique across the tree."""
        return self.facts.qualname


class ClassMember(NamedTuple):
    """What ``X.attr`` of a converted class becomes: a module-level name of ``module``."""

    module: str
    name: str
    #: A function (a method or static method, whose ``__name__`` and ``__qualname__``
    #: are the generated name's, not the member's); else a constant (the same object).
    function: bool


@dataclass
class Plan:
    """The decisions for a whole tree."""

    index: ClassIndex
    classes: dict[str, ClassPlan]
    #: Backing field -> public property name, over all converted classes.
    fields: dict[str, str]
    #: The runtime modules ``apply`` writes (dotted names), one per family root module.
    runtime_modules: set[str]
    #: Accept every value use of a converted class (it then holds the factory).
    allow_value_uses: bool = False
    #: Prefix of the ``Features`` member names.
    feature_prefix: str = ""
    #: Which value uses of a class are proven harmless (``class_values``); none without.
    values: ClassValues = field(default_factory=ClassValues)
    #: Each runtime module of ``runtime_modules``: its path and ``Features`` members.
    runtimes: dict[str, RuntimeModule] = field(default_factory=dict)
    #: The classes a name clash would refuse, with why, in a plan built without refusing
    #: them (``build_plan(check_names=False)``); empty in a plan that may be carried out.
    name_clashes: dict[str, Refusal] = field(default_factory=dict)
    #: ``(path, module, name)`` -> whether another file imports ``name`` from that module
    #: (``pipeline.imported_names``): its import stays even when the file no longer uses
    #: it. None: every such import stays.
    imported_elsewhere: Callable[[Path, str, str], bool] | None = None
    #: Module -> each name a module that star imports connect with it holds -> where, in
    #: words (``ImportedNames.star_held``): a name the rewrites add to the module must be
    #: none of them. None: not known (a plan made without the tree's texts).
    star_held: Callable[[str, Callable[[str], frozenset[str]]], dict[str, str]] | None = None

    def value_use_kept(self, path: Path, line: int, column: int) -> bool:
        """Whether the value use at ``path:line:column`` of a converted class stays valid:
        proven (``class_values``) or accepted by ``allow-value-uses``."""
        return self.allow_value_uses or self.values.proven(path, line, column)

    def feature_name(self, qualname: str) -> str:
        """The ``Features`` member of a class: its name, after the configured prefix."""
        return feature_member(self.feature_prefix, self.classes[qualname].name)

    def converted(self) -> dict[str, ClassPlan]:
        """The plans of converted classes."""
        return {q: p for q, p in self.classes.items() if p.converted}

    def refusals(self) -> list[Refusal]:
        """Every refusal, in file order."""
        found = [p.refusal for p in self.classes.values() if p.refusal is not None]
        return sorted(found, key=lambda r: (str(r.path), r.line, r.subject))

    def member_owners(self) -> dict[str, list[str]]:
        """Each member name of a converted or shadow class (a method, class constant,
        static method or property; not a dunder) -> the classes that define it, in
        qualname order: what a converted parameter's type (``Parameter``) lacks and its
        attribute dict holds instead."""
        owners: dict[str, list[str]] = {}
        for qual, cls in sorted(self.classes.items()):
            if cls.converted or cls.shadow:
                for name in {*cls.facts.methods, *cls.constants, *cls.static_funcs, *cls.properties}:
                    if not (name.startswith("__") and name.endswith("__")):
                        owners.setdefault(name, []).append(qual)
        return owners

    def class_member(self, qualname: str, attr: str) -> ClassMember | None:
        """The method, class constant or static method ``X.attr`` reads on converted class
        ``qualname``, as its MRO finds it: the function or constant ``X.attr`` becomes
        (``use_sites``). None where nothing replaces it (a property, a name no class of
        the MRO defines): ``X.attr`` then needs the class."""
        for q in self.classes[qualname].mro:
            p = self.classes[q]
            if attr in p.method_funcs:
                return ClassMember(p.facts.module, p.method_funcs[attr], function=True)
            if attr in p.constants:
                return ClassMember(p.facts.module, p.constants[attr], function=False)
            if attr in p.static_funcs:
                return ClassMember(p.facts.module, p.static_funcs[attr], function=True)
            if attr in p.properties or attr in p.facts.properties:
                return None
        return None

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


def wrap_does_nothing(plan: ClassPlan) -> bool:
    """Whether the wrap of ``plan`` would be ``def wrap_x(param, **kwargs): pass``: the class
    is converted (a kept class's wrap says whom it serves), has no constants or static
    methods to store, and no ``__init__`` of its own, or one that takes no argument by
    name, has no docstring, does nothing but ``pass`` and passes everything on unchanged
    to ``super().__init__`` (not a relay). Calling such a wrap cannot raise (it takes any
    keyword) and changes nothing, so the factory need not call it."""
    if plan.shadow or plan.constants or plan.static_funcs:
        return False
    init = plan.init
    if init is None:
        return True
    if init.relays or init.param_names or init.docstring is not None:
        return False
    return all(m.matches(stmt, m.SimpleStatementLine(body=[m.Pass()]))
               for stmt in (*init.pre, *init.post))


def property_fields_of(mro: list[str], plans: dict[str, ClassPlan]) -> set[str]:
    """Backing fields of the properties a class with MRO ``mro`` has."""
    return {fld for q in mro for fld in plans[q].properties.values()}


def self_attrs_used(plan: ClassPlan) -> frozenset[str]:
    """Attributes of ``self`` that the class's own ``__init__`` and methods read or write.

    Kept on the class's facts: they outlive a planning round, and each round asks again."""
    cached = plan.facts.__dict__.get("_self_attrs_used")
    if cached is None:
        cached = plan.facts.__dict__["_self_attrs_used"] = frozenset(_scan_self_attrs(plan))
    return cached


def _scan_self_attrs(plan: ClassPlan) -> set[str]:
    """Attributes of ``self`` read or written in the class's ``__init__`` and methods."""
    used: set[str] = set()
    functions = list(plan.facts.methods.values())
    if plan.facts.init is not None:
        functions.append(plan.facts.init)
    for fn in functions:
        use = SelfUse(first_param(fn))
        fn.body.visit(use)
        used |= use.reads | use.writes
    return used
