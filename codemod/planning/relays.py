"""Relays: a class whose ``super().__init__(...)`` passes other arguments than its own.

Its wrap calls the wraps of the classes after it in the MRO at the place of its super
call, with exactly what it passed; the checks here make sure that chain is the same in
every subclass and that what it reads is present when its wrap runs.
"""

from __future__ import annotations

from codemod.analysis.init_shapes import SelfUse
from codemod.analysis.names import is_name_or_literal
from codemod.planning.hierarchy import HierarchyWalk
from codemod.planning.model import ClassPlan, RelayLink
from codemod.planning.refuse import Refuse


class Relays(HierarchyWalk):
    """The planner's relay checks (static facts only, cached per relay)."""

    #: Qualname of a relaying class -> its chain, or why it has none.
    _relay_links: dict[str, RelayLink | str]

    def _relay_link(self, relay: ClassPlan, plans: dict[str, ClassPlan]) -> RelayLink:
        """Where ``relay``'s ``super().__init__(...)`` leads, or ``Refuse`` saying why it
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
            except Refuse as exc:
                known = exc.reason
            self._relay_links[qualname] = known
        if isinstance(known, str):
            raise Refuse(known)
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

            raise Refuse(
                f"{relay.name}.__init__ {_why_relay(relay)}, and the classes it reaches "
                f"depend on the subclass: after {relay.name} "
                f"come {names(tail_a)} in {plans[sub_a].name} but {names(tail_b)} in "
                f"{plans[sub_b].name}"
            )
        tail = relay.mro[1:]
        after = [plans[q] for q in tail if plans[q].facts.init is not None]
        if not after:
            raise Refuse(
                f"{relay.name}.__init__ passes arguments to torch's own Parameter.__init__, "
                "which takes none"
            )
        following = after[0]
        if following.init is None or any(p.init is None for p in after):
            blocker = next(p for p in after if p.init is None)
            why = f": {blocker.name} stays a class ({blocker.refusal.reason})" \
                if blocker.refusal is not None else ""
            raise Refuse(f"{blocker.name}.__init__ cannot be followed{why}")
        positional = [p.name.value for p in following.init.params.params[1:]]
        arg_names: list[str | None] = []
        for arg in init.super_args:  # positional arguments come first (Python's syntax)
            if arg.star == "**":
                arg_names.append(None)
            elif None in arg_names and not is_name_or_literal(arg.value):
                # Python spreads ``**kwargs`` before it evaluates a keyword written after
                # it; the wraps spread it last, after every named argument.
                keyword = arg.keyword.value if arg.keyword is not None else "?"
                raise Refuse(
                    f"{relay.name}.__init__ passes {keyword!r} after **kwargs to "
                    "super().__init__(), computed after the spread; the wraps would compute "
                    "it first"
                )
            elif arg.keyword is not None:
                arg_names.append(arg.keyword.value)
            elif len(arg_names) < len(positional):
                arg_names.append(positional[len(arg_names)])
            else:
                raise Refuse(
                    f"{relay.name}.__init__ passes more positional arguments to "
                    f"{following.name}.__init__ than it takes"
                )
        explicit = [n for n in arg_names if n is not None]
        if len(set(explicit)) != len(explicit):
            raise Refuse(f"{relay.name}.__init__ passes one argument of super().__init__() twice")
        for name in explicit:
            if not self._keyword_taken(name, after, plans):
                raise Refuse(
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
        pre_use = SelfUse(init.self_name)
        pre_use.read_statements(init.pre)
        use = SelfUse(init.self_name)
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
            raise Refuse(
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
            raise Refuse(
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


def _why_relay(relay: ClassPlan) -> str:
    """What makes ``relay``'s wrap call the next wraps itself: other arguments, or
    statements before ``super().__init__()`` that must run before the bases' bodies."""
    init = relay.init
    if init is not None and init.ordered_pre:
        return "runs statements before super().__init__() that the bases' bodies must follow"
    return "passes super().__init__() other arguments than its own"
