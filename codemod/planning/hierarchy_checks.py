"""Checks across a class's hierarchy: what its MRO's ``__init__`` chain, ``__new__``
chain, relays, properties and ``super()`` calls allow its factory and wraps to repeat."""

from __future__ import annotations

import ast

import libcst as cst

from codemod.analysis.ast_uses import literal_key_read
from codemod.analysis.bound_names import names_bound
from codemod.analysis.init_shapes import SelfUse, code_of, first_param
from codemod.planning.model import ClassPlan, NewFacts, property_fields_of, self_attrs_used
from codemod.planning.new_chain import NewRefusal, compose, read_link
from codemod.planning.refuse import Refuse
from codemod.planning.relays import Relays
from codemod.runtime.helpers import RESERVED_ATTRIBUTES


class HierarchyChecks(Relays):
    """The planner's checks of a class against its MRO and its subclasses."""

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
            except Refuse:
                if relay is plan:
                    raise
                return  # that relay is refused on its own; this class stays with it
        for i, p in enumerate(with_init[:-1]):
            if p.init.super_stmt is None:  # type: ignore[union-attr]
                raise Refuse(
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
                        raise Refuse(
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
            pre_use = SelfUse(p.init.self_name)  # type: ignore[union-attr]
            pre_use.read_statements(pre)
            for other in with_init:
                if other is p:
                    continue
                touched = other.init.writes | other.init.reads  # type: ignore[union-attr]
                # ``__dict__``: the other body reads attributes by computed names, or hands
                # ``self`` to a call that may read any (``describe(self)``).
                clash = pre_use.writes if "__dict__" in touched else pre_use.writes & touched
                if clash or pre_use.reads - pre_use.writes:
                    raise Refuse(
                        f"{p.name}.__init__ sets or reads {sorted(clash or pre_use.reads)[0]!r} "
                        "before super().__init__() in a way the base order would change"
                    )
        # An __init__ must not call methods of self: their target depends on the subclass.
        all_methods = {n for p in chain for n in p.facts.methods}
        for p in with_init:
            use = SelfUse(p.init.self_name)  # type: ignore[union-attr]
            use.read_statements(p.init.pre + p.init.post)  # type: ignore[union-attr]
            called = use.calls & all_methods
            if called:
                raise Refuse(f"{p.name}.__init__ calls self.{sorted(called)[0]}() while constructing")
        # Instance attributes set by an __init__ must not collide with methods/constants.
        instance_attrs = {a for p in with_init for a in p.init.writes}  # type: ignore[union-attr]
        class_names = {n for p in chain
                       for n in list(p.facts.methods) + list(p.constants) + list(p.static_funcs)}
        clash = instance_attrs & class_names
        if clash:
            raise Refuse(f"{sorted(clash)[0]!r} is both an instance attribute and a class member")
        reserved = sorted((instance_attrs | class_names | set(plan.properties)) & RESERVED_ATTRIBUTES)
        if reserved:
            raise Refuse(f"uses the name {reserved[0]!r}, which a converted parameter holds "
                         "its kind in")
        self._check_class_attributes(chain)
        self._check_property_overrides(chain)
        self._check_defaults(plan, with_init)
        # Properties: where their field is set. A converted parameter stores the attribute
        # alone, so every class of the MRO that touches the field must know the property.
        for prop, fld in plan.properties.items():
            if not any(p.init is not None and fld in p.init.writes for p in chain):
                raise Refuse(f"property {prop!r} reads {fld!r}, which no __init__ of its bases sets")
            for other in chain[1:]:
                if fld in property_fields_of(other.mro, plans):
                    continue
                if fld in self_attrs_used(other):
                    raise Refuse(
                        f"{other.name} uses {fld!r} as a plain field, which backs the property "
                        f"{prop!r} of {plan.name}; a converted parameter holds only the attribute"
                    )
        # super().m() inside methods: one target for every concrete subclass.
        for name, fn in facts.methods.items():
            use = SelfUse(first_param(fn))
            fn.body.visit(use)
            for callee, _ in use.super_calls:
                targets: set[str] = set()
                for concrete in {facts.qualname} | self._descendants(facts.qualname):
                    kmro = self.index.mros.get(concrete, [])
                    after = kmro[kmro.index(facts.qualname) + 1:] if facts.qualname in kmro else []
                    target = next((q for q in after if callee in plans[q].facts.methods), None)
                    if target is None:
                        raise Refuse(
                            f"method {name!r} calls super().{callee}(), which reaches torch's "
                            "own Parameter/Tensor; the converter has no rule for that"
                        )
                    targets.add(target)
                if len(targets) > 1:
                    raise Refuse(
                        f"method {name!r} calls super().{callee}(), whose target depends on "
                        "the subclass"
                    )
                plan.super_targets[(name, callee)] = targets.pop()

    @staticmethod
    def _check_class_attributes(chain: list[ClassPlan]) -> None:
        """The class attributes (constants, static methods) a converted parameter has are
        set by the wraps, base first, and its methods before any wrap runs: an
        ``__init__`` body that reads a class attribute a subclass defines sees the base's
        value (or none) while it runs, and a method that overrides a base's class
        attribute would be replaced by that attribute."""
        for i, p in enumerate(chain):
            earlier = {n: q.name for q in reversed(chain[:i]) for n in [*q.constants, *q.static_funcs]}
            if p.init is not None:
                use = SelfUse(p.init.self_name)
                use.read_statements(p.init.pre + p.init.post)
                read = sorted((use.reads | use.calls) & set(earlier))
                if read:
                    raise Refuse(f"{p.name}.__init__ reads self.{read[0]}, which {earlier[read[0]]} "
                                 f"defines; while {p.name}'s body runs, a converted parameter does "
                                 f"not have {earlier[read[0]]}'s yet")
                if "__dict__" in use.reads and earlier:
                    # ``setattr(self, name, v)``, ``self.__dict__.update(...)``: any name,
                    # a subclass's class attribute too, which its wrap stores afterwards.
                    first = sorted(earlier)[0]
                    raise Refuse(f"{p.name}.__init__ reads or sets attributes by computed names "
                                 f"while {earlier[first]} defines class attribute {first!r}; a "
                                 f"converted parameter gets {earlier[first]}'s after {p.name}'s "
                                 "body ran, over what the body set")
            later = {n: q.name for q in chain[i + 1:] for n in [*q.constants, *q.static_funcs]}
            hidden = sorted(set(p.facts.methods) & set(later))
            if hidden:
                raise Refuse(f"method {p.name}.{hidden[0]} overrides a class attribute of "
                             f"{later[hidden[0]]}; a converted parameter would get the attribute")

    @staticmethod
    def _check_property_overrides(chain: list[ClassPlan]) -> None:
        """A property one class of the MRO defines and another defines otherwise (a
        method, a constant, a static or class method, a property over another field, in
        either direction), or an attribute another class's ``__init__`` sets
        (``self.output_dim = 5`` through a base's setter, or into a read-only property).
        In the class, the first definition in the MRO wins; a
        converted parameter holds each property as an attribute its wrap stores, base
        first, after its methods are bound and beside its constants, so the property
        would replace the method (``p.output_dim()`` became an int), a constant would
        replace the property, two fields would become one."""
        for p in chain:
            for name in p.facts.properties:
                field = p.properties.get(name)
                for q in chain:
                    if q is p:
                        continue
                    other = ("a method" if name in q.facts.methods
                             else "a constant" if name in q.constants
                             else "a static method" if name in q.static_funcs
                             else "a class method" if name in q.facts.classmethods
                             else "a property over another field" if name in q.facts.properties
                             and q.properties.get(name) != field
                             else "an attribute its __init__ sets" if q.init is not None
                             and name in q.init.writes
                             else None)
                    if other is not None:
                        raise Refuse(f"property {p.name}.{name} is {other} in {q.name}; a converted "
                                     "parameter holds a property as an attribute its wrap stores, "
                                     "which does not override as the class's members do")

    @staticmethod
    def _check_defaults(plan: ClassPlan, with_init: list[ClassPlan]) -> None:
        """The factory passes its parameters (``__new__``'s, else ``Parameter``'s) to the
        wraps by name, so a caller who leaves one out gives every ``__init__`` the
        factory's default: an ``__init__`` whose own default differs got that one."""
        factory = plan.factory_params
        defaults = {p.name.value: code_of(p.default) for p in [*factory.posonly_params,
                                                             *factory.params, *factory.kwonly_params]
                    if p.default is not None}
        source = "__new__" if plan.new is not None else "Parameter"
        if with_init:
            _check_positions(plan, with_init, source)
        for p in with_init:
            init = p.init
            assert init is not None
            for name, default in init.defaults.items():
                if name in defaults and default != defaults[name]:
                    raise Refuse(f"{p.name}.__init__ defaults {name!r} to `{default}` "
                                 f"where {source} defaults it to `{defaults[name]}`; the factory "
                                 "would pass its own default on")
            # A default of its own passed on by name: the factory gives the next
            # ``__init__`` the caller's keywords only, so its default must be the same.
            later = with_init[with_init.index(p) + 1:]
            for name, default in sorted(init.forwarded_defaults.items()):
                receiver = next((q for q in later if name in q.init.param_names), None)  # type: ignore[union-attr]
                theirs = receiver.init.defaults.get(name) if receiver is not None else None  # type: ignore[union-attr]
                if theirs != default:
                    if receiver is None:
                        where = "no later __init__ names it"
                    elif theirs is None:
                        where = f"{receiver.name}.__init__ has no default for it"
                    else:
                        where = f"{receiver.name}.__init__ defaults it to `{theirs}`"
                    raise Refuse(f"{p.name}.__init__ defaults {name!r} to `{default}` and passes it on "
                                 f"by name, where {where}; the factory would give the bases the "
                                 "caller's keywords only")
            # An ``__init__`` reading its ``**kwargs`` held there every keyword of the call
            # it did not name; the factory passes the wrap only those ``__init__`` names.
            if init.reads_rest:
                kept = sorted({q.name.value for q in [*factory.posonly_params, *factory.params,
                                                        *factory.kwonly_params]} - set(init.param_names))
                if kept:
                    raise Refuse(f"{p.name}.__init__ reads **{init.star_kwarg}, which held "
                                 f"{kept[0]!r} of the call; the factory passes {source} "
                                 f"{kept[0]!r} and the wrap only what {p.name}.__init__ names")
                # A keyword an ``__init__`` before it took and did not pass on never
                # reached it; the factory gives every wrap the caller's keywords.
                read = _keys_read(p.facts.init, init.star_kwarg) if p.facts.init is not None else None
                taken = {name: q.name for q in reversed(with_init[:with_init.index(p)])
                         for name in q.init.param_names  # type: ignore[union-attr]
                         if name not in q.init.forwarded and name not in init.param_names  # type: ignore[union-attr]
                         and (read is None or name in read)}
                if taken:
                    first = sorted(taken)[0]
                    raise Refuse(f"{p.name}.__init__ reads **{init.star_kwarg}, which never held "
                                 f"{first!r}: {taken[first]}.__init__ took it; the factory gives "
                                 "every wrap the caller's keywords")
            # A relay the factory calls is given every parameter of the factory its
            # ``**kwargs`` took; ``__init__`` had one there only when the caller passed it.
            if init.relays and init.forwards_rest and p.facts.qualname in plan.wrap_chain:
                unnamed = sorted(set(defaults) - set(init.param_names))
                if unnamed:
                    raise Refuse(f"{p.name}.__init__ takes {unnamed[0]!r} only through **kwargs, "
                                 f"where it was only when the caller passed it; the factory "
                                 f"would always pass {source}'s default `{defaults[unnamed[0]]}`")

    def _new_facts(self, plan: ClassPlan, news: list[ClassPlan],
                   plans: dict[str, ClassPlan]) -> NewFacts:
        """The ``__new__`` chain ``news`` (MRO order) as steps on a plain ``Parameter``
        (``codemod.planning.new_chain``): the factory builds the data, creates the tensor
        and sets its attributes as the chain did, before any ``__init__`` runs."""
        try:
            links = [read_link(p.facts.new, p.name, p.facts.module) for p in news]  # type: ignore[arg-type]
            composed = compose(links, plan.facts.module, {p.name for p in plans.values()})
        except NewRefusal as refusal:
            raise Refuse(refusal.reason) from None
        members = {n for q in plan.mro for n in [
            *plans[q].facts.methods, *plans[q].constants, *plans[q].static_funcs,
            *plans[q].properties]} | property_fields_of(plan.mro, plans)
        for instance, stmts in composed.post:
            use = SelfUse(instance)
            use.read_statements(stmts)
            touched = sorted((use.reads | use.writes | use.calls) & members)
            if touched:
                raise Refuse(f"__new__ uses self.{touched[0]} before the wraps give a plain "
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
                raise Refuse(f"__new__ rebinds its parameter {rebound[0]!r}, which __init__ "
                             "received unchanged; the factory passes one name to both")
            raise Refuse(f"{binder.owner}.__new__ assigns {rebound[0]!r}, also a parameter of "
                         f"{links[0].owner}.__new__ that __init__ received unchanged; the "
                         "factory passes one name to both")
        return NewFacts(params=composed.params, call_args=composed.call_args,
                        docstring=composed.docstring, prelude=composed.prelude,
                        post=composed.post)


def _check_positions(plan: ClassPlan, with_init: list[ClassPlan], source: str) -> None:
    """A call's positional arguments reach ``__new__`` (else ``Parameter.__new__``) and
    the first ``__init__`` of the MRO by position, each under its own name there; the
    factory takes ``__new__``'s names and passes each on by name. Where the ``__init__``
    names a position otherwise, a positional call gave its parameter the argument, and
    the factory gives it its own default, or the factory's argument of that name:
    refused. Left: a parameter that is neither (no default, no factory parameter of that
    name), for which the factory's call raises ``TypeError`` (loudly; keyword calls, the
    rule in engines, convert as before), and a call that raised anyway: the ``__init__``
    does not take ``__new__``'s name by position, an ``__init__`` of the chain needs it
    (no default), and no relay passes it on itself (``_relay_passes``), so it had none
    (vLLM's ``_ColumnvLLMParameter.__init__(self, output_dim, **kwargs)`` beside
    ``__new__(cls, data, **kwargs)``, with a base ``__init__`` that needs ``data``)."""
    factory = plan.factory_params
    given = [p.name.value for p in [*factory.posonly_params, *factory.params]]
    first = with_init[0]
    init = first.init
    assert init is not None
    taken = [p.name.value for p in [*init.params.posonly_params, *init.params.params]][1:]
    needed = {name for p in with_init for name in p.init.param_names  # type: ignore[union-attr]
              if name not in p.init.defaults}  # type: ignore[union-attr]
    builder = "Parameter.__new__" if source == "Parameter" else source
    for at, (outer, inner) in enumerate(zip(given, taken)):
        raised_anyway = outer not in taken and outer in needed and not _relay_passes(with_init, outer)
        if outer == inner or raised_anyway or (inner not in init.defaults and inner not in given):
            continue
        raise Refuse(f"{first.name}.__init__ takes a call's argument {at + 1} as {inner!r}, "
                     f"which {builder} takes as {outer!r}; the factory passes it on as {outer!r}, "
                     f"so a positional call would give {inner!r} "
                     + (f"its default `{init.defaults[inner]}`" if inner not in given else "another argument"))


def _relay_passes(with_init: list[ClassPlan], name: str) -> bool:
    """Whether a relay of the chain passes the next ``__init__`` an argument for
    ``name`` itself: by that keyword, into its position (``super().__init__(None, x)``
    filling ``data``), or through a ``*`` spread."""
    for at, p in enumerate(with_init):
        init = p.init
        assert init is not None
        if not init.relays:
            continue
        args = init.super_args
        if any(a.star == "*" or (a.keyword is not None and a.keyword.value == name) for a in args):
            return True
        positional = sum(1 for a in args if a.keyword is None and a.star == "")
        if not positional:
            continue
        if at + 1 == len(with_init):
            return True  # the next ``__init__`` is not one of the chain's: not known
        following = with_init[at + 1].init
        assert following is not None
        slots = [q.name.value for q in [*following.params.posonly_params, *following.params.params]][1:]
        if name in slots[:positional]:
            return True
    return False


def _keys_read(function: cst.FunctionDef, kwargs: str | None) -> set[str] | None:
    """The keys ``function`` reads of its ``**kwargs`` (``kwargs`` its name), when it reads
    it only by literal keys (``kwargs.get("k")``, ``kwargs["k"]``, ``kwargs.pop("k")``,
    ``"k" in kwargs``); None when it reads it any other way (it may see every key)."""
    if kwargs is None:
        return None
    tree = ast.parse(code_of(function).strip())
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    keys: set[str] = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id == kwargs and isinstance(node.ctx, ast.Load)):
            continue
        key = literal_key_read(node, parents)
        if key is None:
            return None
        keys.add(str(key.value))
    return keys

