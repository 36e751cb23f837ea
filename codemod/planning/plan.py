"""One ``ClassPlan`` per Parameter class: convert it, or refuse it with a reason.

The planner checks every condition under which the generated factory + wraps behave
exactly like the class did; when one does not hold, the class is
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

Where each part lives. The shapes of members (``__init__``, properties,
``__torch_function__``, uses of ``self``) are read in ``codemod.analysis.init_shapes``;
this module decides per class (``Planner._check_own``) and tree-wide (generated names,
the runtime's module); ``hierarchy_checks`` and ``relays`` check a class against its MRO
and subclasses; ``settle`` keeps hierarchies whole; ``model`` holds the resulting values.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import libcst as cst

from codemod.analysis.classes import PropertyFacts
from codemod.analysis.earlier_shadows import earlier_shadow_parts
from codemod.analysis.index import ClassIndex
from codemod.analysis.init_shapes import (
    InitFacts,
    SelfUse,
    UnsupportedShape,
    first_param,
    forwards_torch_function,
    read_init_facts,
    read_property_field,
)
from codemod.analysis.tensor_members import TENSOR_MEMBERS
from codemod.planning import naming
from codemod.planning.class_rules import CLASS_RULES
from codemod.planning.hierarchy_checks import HierarchyChecks
from codemod.planning.model import (
    ClassPlan,
    NewFacts,
    Plan,
    RelayLink,
    feature_member,
    wrap_does_nothing,
)
from codemod.planning.refuse import Refuse
from codemod.planning.rule_inputs import RuleInputs
from codemod.planning.settle import Settling
from codemod.runtime.emit import (
    FEATURES_NAME,
    RuntimeModule,
    gained_by_rewrites,
    runtime_module_for,
    written_members,
)
from codemod.types import BlockingUse, Refusal

__all__ = ["FEATURES_NAME", "ClassPlan", "InitFacts", "NewFacts",
           "Plan", "Planner", "RelayLink", "build_plan"]



class Planner(HierarchyChecks, Settling):
    """Builds a ``Plan`` from a ``ClassIndex``."""

    def __init__(self, index: ClassIndex, allow_classes: tuple[str, ...] = (),
                 forced: dict[str, BlockingUse] | None = None, check_names: bool = True,
                 feature_prefix: str = "",
                 star_held: Callable[[str, Callable[[str], frozenset[str]]], dict[str, str]] | None = None) -> None:
        self.index = index
        #: ``Plan.star_held``: the names star imports connect with a module.
        self.star_held = star_held
        self.feature_prefix = feature_prefix
        #: Whether a name clash refuses its classes here; else it is only recorded
        #: (``Plan.name_clashes``), for a planning round that looks for other reasons first.
        self.check_names = check_names
        self.allow = set(allow_classes)
        #: Qualname -> the use no rewrite covers (found by a transform or the safety net).
        self.forced = dict(forced or {})
        self.rule_inputs = RuleInputs(index, frozenset(self.allow), self.forced, feature_prefix)
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
            except Refuse as exc:
                plan.refusal = Refusal(plan.facts.path, exc.line or plan.facts.line,
                                       plan.facts.name, exc.reason, exc.kind, use=exc.use)
        for plan in plans.values():
            if plan.refusal is None:
                try:
                    self._check_hierarchy(plan, plans)
                except Refuse as exc:
                    plan.refusal = Refusal(plan.facts.path, exc.line or plan.facts.line,
                                           plan.facts.name, exc.reason, exc.kind, use=exc.use)
        fields = self._fields(plans)
        #: Every backing field of a property of the tree (a shadow's functions must touch
        #: them only in ways a rewrite carries to both kinds).
        self._backing_fields = frozenset(f for p in plans.values() for f in p.properties.values())
        self._settle(plans)
        runtimes = self._assign_runtime(plans)
        earlier = self._earlier_shadows(plans)
        clashes = self._name_clashes(plans, runtimes, earlier)
        if clashes and self.check_names:
            for qualname, refusal in clashes.items():
                plans[qualname].refusal = refusal
            # A name clash refused more classes: settle their hierarchies again. Without
            # one, settling again gives the same plan (same refusals in, same out).
            self._settle(plans)
            runtimes = self._assign_runtime(plans)
            clashes = {}
        _mark_written_wraps(plans, earlier)
        return Plan(idx, plans, {f: p for f, p in fields.items()
                                 if any((pl.converted or pl.shadow) and p in pl.properties
                                        for pl in plans.values())}, set(runtimes),
                    runtimes=runtimes, name_clashes=clashes)

    # -- per-class checks ----------------------------------------------------------------

    def _check_own(self, plan: ClassPlan) -> None:
        """The rules that read the class alone (``class_rules.CLASS_RULES``, first verdict
        wins), then its members: what it drops, the names its functions get, the shapes
        of its properties and ``__init__``."""
        facts = plan.facts
        for rule in CLASS_RULES:
            verdict = rule(facts, self.rule_inputs)
            if verdict is not None:
                raise verdict
        for name, fn in facts.classmethods.items():
            if name == "__torch_function__" and forwards_torch_function(fn):
                plan.dropped.append(name)
            elif name == "__torch_function__":
                raise Refuse(
                    "defines __torch_function__ that does more than forward to super(); "
                    "a plain Parameter would compute different results"
                )
            else:
                raise Refuse(f"has classmethod {name!r}; a factory function has no class to pass")
        for name in facts.staticmethods:
            if name.startswith("__") and name.endswith("__"):
                raise Refuse(f"defines {name}, a special method a plain Parameter cannot carry")
            plan.static_funcs[name] = naming.method_function_name(facts.name, name)
        for name, prop in facts.properties.items():
            plan.properties[name], nullable = self._property_field(prop)
            if nullable:
                if name in TENSOR_MEMBERS:
                    # Deleted when its field is set to None, the attribute would fall back
                    # to the tensor's member (``p.dim`` the method) where the getter raised.
                    raise Refuse(f"property {name!r} is absent while its field is None, and "
                                 f"`{name}` is also an attribute of torch's Parameter, which a "
                                 "converted parameter would show instead")
                plan.nullable.add(name)
        for name in facts.methods:
            plan.method_funcs[name] = naming.method_function_name(facts.name, name)
        for name, _ in facts.class_attrs:
            plan.constants[name] = naming.constant_name(facts.name, name)
        if facts.init is not None:
            plan.init = self._init_facts(facts.init)
        for fn in facts.methods.values():
            self._check_method(fn)

    def _property_field(self, prop: PropertyFacts) -> tuple[str, bool]:
        """The backing field of a property that behaves as a plain attribute, and whether
        it can be None (``init_shapes.read_property_field``); else ``Refuse``."""
        try:
            return read_property_field(prop)
        except UnsupportedShape as exc:
            raise Refuse(exc.reason, exc.line) from None

    def _init_facts(self, fn: cst.FunctionDef) -> InitFacts:
        """The shape of the class's ``__init__`` (``init_shapes.read_init_facts``); else ``Refuse``."""
        try:
            return read_init_facts(fn)
        except UnsupportedShape as exc:
            raise Refuse(exc.reason, exc.line) from None

    def _check_method(self, fn: cst.FunctionDef) -> None:
        params = fn.params
        if not params.params and not params.posonly_params:
            raise Refuse(f"method {fn.name.value!r} has no self parameter")
        use = SelfUse(first_param(fn))
        fn.body.visit(use)
        if use.bad:
            raise Refuse(f"method {fn.name.value!r} {use.bad[0]}")

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

    def _assign_runtime(self, plans: dict[str, ClassPlan]) -> dict[str, RuntimeModule]:
        """One runtime module per module defining a family's root (``runtime_module_for``),
        with a ``Features`` member per converted or shadow class of the families it serves."""
        runtimes: dict[str, RuntimeModule] = {}
        for group in sorted(self.components(plans), key=sorted):
            live = [plans[q] for q in group if plans[q].converted or plans[q].shadow]
            if not live:
                continue
            roots = [p for p in live if not self.index.param_bases(p.facts.qualname)]
            root = min(roots or live, key=lambda p: (p.facts.module, p.facts.line))
            module, path = runtime_module_for(root.facts.module, root.facts.path)
            runtime = runtimes.get(module)
            if runtime is None:
                runtime = runtimes[module] = RuntimeModule(module, path, root.facts.module,
                                                           root.facts.path)
                written = _written_members(path)
                runtime.written, runtime.foreign = written or {}, written is None
            for p in live:
                p.runtime_module = module
        for p in sorted(plans.values(), key=lambda p: (p.facts.module, p.facts.line)):
            runtime = runtimes.get(p.runtime_module)
            if runtime is not None and (p.converted or p.shadow):
                runtime.members.setdefault(p.name, p.feature_value)
        for runtime in runtimes.values():  # the root module's classes first
            root_first = sorted(runtime.members.items(), key=lambda item: not item[1].startswith(
                f"{runtime.root_module}."))
            runtime.members = dict(root_first)
        return runtimes

    def _earlier_shadows(self, plans: dict[str, ClassPlan]) -> set[str]:
        """The classes, converted or kept as shadows by this plan, beside which an earlier
        ``apply`` wrote a shadow's wrap and registrations (``earlier_shadow_parts``): the
        transform puts this plan's output in their place."""
        by_module: dict[str, dict[str, str]] = {}
        for qualname, p in plans.items():
            if p.converted or p.shadow:
                by_module.setdefault(p.facts.module, {})[p.wrap_name] = qualname
        earlier: set[str] = set()
        for module, wraps in by_module.items():
            members = {wrap: feature_member(self.feature_prefix, plans[q].name) for wrap, q in wraps.items()}
            parts = earlier_shadow_parts(self.index.files[module].module.body, members)
            earlier.update(wraps[wrap] for wrap in parts)
        return earlier

    def _name_clashes(self, plans: dict[str, ClassPlan], runtimes: dict[str, RuntimeModule],
                      earlier: set[str]) -> dict[str, Refusal]:
        """The classes a name clash refuses, with why: generated names must not collide
        with names the module already defines (a wrap an earlier run wrote for the same
        class aside: ``earlier``); a runtime module must not replace a file ``apply`` did
        not write, and its ``Features`` members (named after the classes) must be
        unique, nor its name one a star import of its package connects with a module."""
        clashes: dict[str, Refusal] = {}
        by_runtime: dict[str, list[tuple[str, ClassPlan]]] = {}
        for qualname, p in plans.items():
            if (p.converted or p.shadow) and p.runtime_module in runtimes:
                by_runtime.setdefault(p.runtime_module, []).append((qualname, p))
        helpers = gained_by_rewrites(len(runtimes))
        for module, family in by_runtime.items():
            reason = _runtime_clash(runtimes[module], [p for _, p in family])
            package, _, last = module.rpartition(".")
            if reason is None and package and self.star_held is not None:
                # Importing the runtime module makes it an attribute of its package, which
                # a star import of the package then gives.
                held = self.star_held(package, lambda _: helpers)
                if last in held:
                    reason = f"the runtime module's name {last!r} is already used in {held[last]}"
            if reason is not None:
                for qualname, p in family:
                    clashes[qualname] = Refusal(p.facts.path, p.facts.line, p.name, reason)
        by_module: dict[str, list[tuple[str, ClassPlan, bool]]] = {}
        for qualname, p in plans.items():
            converted = p.converted and qualname not in clashes
            if converted or p.shadow:
                by_module.setdefault(p.facts.module, []).append((qualname, p, converted))
        generated_in = {module: frozenset(_generated_names(group)) for module, group in by_module.items()}

        def gained(importer: str) -> frozenset[str]:
            return helpers | generated_in.get(importer, frozenset())
        for module, group in by_module.items():
            ff = self.index.files[module]
            star_held = {} if self.star_held is None else self.star_held(module, gained)
            taken = set(ff.globals) | set(ff.bindings) | set(star_held)
            taken -= {p.name for _, p, converted in group if converted}
            taken -= {p.wrap_name for qualname, p, _ in group if qualname in earlier}
            generated = _generated_names(group)
            seen: set[str] = set()
            for name in generated:
                if name in taken or name in seen:
                    where = module if name not in star_held or name in ff.globals or name in ff.bindings \
                        else star_held[name]
                    for qualname, p, _ in group:
                        clashes[qualname] = Refusal(
                            p.facts.path, p.facts.line, p.name,
                            f"the generated name {name!r} is already used in {where}",
                        )
                    break
                seen.add(name)
        return clashes


def _generated_names(group: list[tuple[str, ClassPlan, bool]]) -> list[str]:
    """The functions a module's rewrite defines for its classes ``group`` (qualname, plan,
    converted): each one's wrap, and a converted one's methods, constants and static
    methods."""
    generated: list[str] = []
    for _, p, converted in group:
        generated.append(p.wrap_name)
        if converted:
            generated += [*p.method_funcs.values(), *p.constants.values(), *p.static_funcs.values()]
    return generated


def _mark_written_wraps(plans: dict[str, ClassPlan], earlier: set[str]) -> None:
    """A converted class whose wrap would do nothing (``wrap_does_nothing``) gets none, and
    no factory calls it, unless a relay's wrap calls it (a relay may give it arguments,
    which must still be evaluated where the relay passed them), or an earlier run wrote
    it for the class as a shadow (``earlier``: factories of other modules call it)."""
    relayed = {q for p in plans.values() if p.converted and p.relay is not None
               for q in p.relay.chain}
    for qualname, plan in plans.items():
        plan.writes_wrap = not (plan.converted and qualname not in relayed
                                and qualname not in earlier and wrap_does_nothing(plan))


def _written_members(path: Path) -> dict[str, str] | None:
    """The ``Features`` members of the runtime module ``apply`` wrote at ``path`` earlier
    ({} when there is no file; None when a file there is not ``apply``'s, or an extension
    module of that name, which Python would import instead, is there)."""
    if any(path.with_suffix(suffix).exists() for suffix in EXTENSION_SUFFIXES):
        return None
    if not path.exists() and not path.with_suffix("").exists():
        return {}
    try:
        return written_members(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError):
        return None


def _runtime_clash(runtime: RuntimeModule, family: list[ClassPlan]) -> str | None:
    """Why ``runtime``'s module cannot be written for ``family`` (None when it can)."""
    if runtime.foreign:
        where = next((found for found in [runtime.path, runtime.path.with_suffix(""),
                                          *(runtime.path.with_suffix(s) for s in EXTENSION_SUFFIXES)]
                      if found.exists()), runtime.path)
        return (f"{where}:1: already exists and was not written by codemod; the family's "
                f"runtime module {runtime.module} would replace it (rename or move it)")
    owners: dict[str, str] = dict(runtime.written)
    for p in sorted(family, key=lambda p: (p.facts.module, p.facts.line)):
        other = owners.setdefault(p.name, p.feature_value)
        if other != p.feature_value:
            return (f"{p.facts.path}:{p.facts.line}: {p.feature_value} and {other} would "
                    f"both be Features.{p.name} in the runtime module {runtime.module}")
    return None


def build_plan(index: ClassIndex, allow_classes: tuple[str, ...] = (),
               forced: dict[str, BlockingUse] | None = None, allow_value_uses: bool = False,
               feature_prefix: str = "", check_names: bool = True,
               star_held: Callable[[str, Callable[[str], frozenset[str]]], dict[str, str]] | None = None) -> Plan:
    """Plan every Parameter class of ``index``. With ``check_names`` False, a class whose
    generated names clash stays converted and the clash is only recorded
    (``Plan.name_clashes``): such a plan is never carried out. ``star_held``: see
    ``Plan.star_held``."""
    plan = Planner(index, allow_classes, forced, check_names, feature_prefix, star_held).plan()
    plan.star_held = star_held
    plan.allow_value_uses = allow_value_uses
    plan.feature_prefix = feature_prefix
    for runtime in plan.runtimes.values():
        runtime.members = {feature_member(feature_prefix, name): value
                           for name, value in runtime.members.items()}
    return plan
