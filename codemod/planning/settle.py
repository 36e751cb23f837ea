"""Settling a plan: what a refusal keeps as a class (its hierarchy), which kept classes
serve converted subclasses as *shadows*, and the reason each kept class is given."""

from __future__ import annotations

from codemod.analysis.init_shapes import OddFieldStores, SelfUse, first_param
from codemod.planning.hierarchy import HierarchyWalk
from codemod.planning.model import ClassPlan
from codemod.types import Refusal, RefusalKind


class Settling(HierarchyWalk):
    """Keeps hierarchies whole: the ``_settle`` step of the planner."""

    #: Every backing field of a property of the tree.
    _backing_fields: frozenset[str]

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
                       and refusal.kind is not RefusalKind.KEPT}
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
                why, cause, follows = self._kept_reason(q, plans, refused, kept, blockers,
                                                        kept_for_base)
                plan.refusal = Refusal(plan.facts.path, plan.facts.line, plan.name, why,
                                       RefusalKind.KEPT, cause, follows)
            for q in kept:
                if plans[q].shadow:
                    self._as_shadow(plans[q])

    def _ancestors_in_order(self, qualname: str) -> list[str]:
        """The bases ``_ancestors`` gives, in MRO order (a decision made on the first
        one found must not depend on set order)."""
        return self.index.mros.get(qualname, [qualname])[1:]

    def _kept_reason(self, q: str, plans: dict[str, ClassPlan], refused: set[str],
                     kept: set[str], blockers: dict[str, str], kept_for_base: dict[str, str],
                     ) -> tuple[str, RefusalKind | None, str]:
        """Why ``q`` stays a class, naming its true relation to the class that caused it:
        a refused base it derives from, a base that cannot be a shadow, or a subclass
        that is refused or stays a class. Among several, the first by path and line.
        Also the kind of the refusal the reason quotes (None: it quotes none), and the
        qualified name of the class the reason names."""
        def first(candidates: set[str]) -> ClassPlan:
            return plans[min(candidates, key=lambda c: (str(plans[c].facts.path), plans[c].facts.line, c))]

        plan = plans[q]
        refused_bases = refused & self._ancestors(q)
        if refused_bases:
            base = first(refused_bases)
            return (f"kept as a class because it derives from {base.name}, which is refused: "
                    f"{base.refusal.reason}", base.refusal.kind,  # type: ignore[union-attr]
                    base.facts.qualname)
        if q in kept_for_base:
            base = plans[kept_for_base[q]]
            return (f"kept as a class because it derives from {base.name}, which stays a class "
                    f"and cannot also serve converted subclasses: {blockers[kept_for_base[q]]}", None,
                    base.facts.qualname)
        descendants = self._descendants(q)
        quoted: Refusal | None = None
        if refused & descendants:
            named = first(refused & descendants)
            quoted = named.refusal
            cause = f"its subclass {named.name} is refused ({named.refusal.reason})"  # type: ignore[union-attr]
        elif kept & descendants:
            named = first(kept & descendants)
            cause = f"its subclass {named.name} stays a class"
        else:
            named = first(refused)
            quoted = named.refusal
            cause = f"{named.name} of its hierarchy is refused ({named.refusal.reason})"  # type: ignore[union-attr]
        kind = quoted.kind if quoted is not None else None
        follows = named.facts.qualname
        if plan.shadow:
            return (f"kept as a class because {cause}; its converted subclasses get its "
                    f"attributes through {plan.wrap_name} and its methods through its "
                    "registered kind", kind, follows)
        if q in blockers:
            return (f"kept as a class because {cause}; it cannot also serve converted "
                    f"subclasses: {blockers[q]}", kind, follows)
        return f"kept as a class because {cause}", kind, follows

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
            use = SelfUse(first_param(fn))
            fn.body.visit(use)
            for called, _ in use.super_calls:
                if (name, called) not in plan.super_targets:
                    return (f"{facts.name}.{name} calls super().{called}(), and no one class "
                            "is next in the MRO of every subclass to call instead")
            odd = OddFieldStores(first_param(fn), fields)
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
