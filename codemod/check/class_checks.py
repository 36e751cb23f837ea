"""The one rule by which ``codemod check`` finds class-style uses of target names (checks
and class bases), written once for both trees it reads.

``uses.ClassStyleUses`` walks LibCST's tree (files CPython's tree cannot decide) and
``uses_from_ast.AstClassStyleUses`` CPython's (every other file); each only takes its
nodes apart (``parts``, ``callee``, ``is_type_call``, ``is_class_attribute``,
``target_of``, ``spelling``) and hands the pieces to ``ClassChecks``, which decides:

* ``isinstance(p, C)`` and ``issubclass(A, C)`` with two positional arguments (both of
  ``issubclass``'s are read), unless the file rebinds the builtin; ``C`` a name, a
  tuple/list/set, a union ``A | B`` or ``Union[A, B]``, a concatenation, a conditional
  expression or an assignment expression (nested ones flattened, ``*x`` skipped);
* ``type(p)`` or ``p.__class__`` compared with ``is``/``is not``/``==``/``!=`` (either side)
  or ``in``/``not in`` (a tuple/list/set on the right);
* a class statement's bases; the bases of a Parameter class of the plan are the
  hierarchy (CM001), except a base that is a factory function now (CM003);
* ``isinstance`` or-ed with a ``has_param_feature`` call is what ``apply`` writes for a
  kept class: its kept classes are not reported again.

What each kind of use then means (CM002, CM003, CM004) is ``analysis.use_rules``'.
"""

from __future__ import annotations

from collections.abc import Container
from typing import Any, NamedTuple

from codemod.analysis.use_rules import UseKind
from codemod.check.converted import Target
from codemod.runtime.helpers import HAS_PARAM_FEATURE

#: Operators (as written) comparing ``type(p)`` with one class, and with several.
EQUALITY = frozenset({"is", "is not", "==", "!="})
MEMBERSHIP = frozenset({"in", "not in"})
#: The builtins the checks call (a file that binds one of them is not checked there).
CHECK_BUILTINS = ("isinstance", "issubclass", "type")
#: ``typing`` subscripts that name their classes as a union (``Union[A, B]``, ``Optional[A]``).
TYPING_UNIONS = frozenset({"Union", "Optional"})


class CheckUse(NamedTuple):
    """One check or class statement naming targets: its node, its kind, how the finding
    names it (``isinstance``, ``type() is``, ``class X``), the (spelling, target) pairs."""

    node: Any
    kind: UseKind
    label: str
    named: list[tuple[str, Target]]


class ClassChecks:
    """The decisions, over nodes of either tree (taken apart by a subclass)."""

    def __init__(self, targets: dict[str, Target], planned: set[int],
                 *namespaces: Container[str]) -> None:
        self.targets = targets
        #: ids of the top-level class statements that are Parameter classes of the plan.
        self.planned = planned
        self.found: list[CheckUse] = []
        #: The builtins the file binds itself (in one of ``namespaces``).
        self.shadowed = {name for name in CHECK_BUILTINS if any(name in ns for ns in namespaces)}
        #: ids of the operands or-ed with a ``has_param_feature`` call.
        self._paired: set[int] = set()

    # -- what a subclass reads from its tree ----------------------------------------------
    def parts(self, expr: Any) -> list[Any] | None:
        """The members of a tuple/list/set (``*x`` skipped), the two sides of ``A | B``
        and of a concatenation ``(A,) + rest``, both branches of ``A if c else B``, the
        value of ``(k := A)``, the members of ``Union[A, B]``/``Optional[A]``; None for
        any other expression."""
        raise NotImplementedError

    def callee(self, expr: Any) -> str | None:
        """The last name of what a call calls (``f`` for ``f(...)`` and ``m.f(...)``);
        None when ``expr`` is no call."""
        raise NotImplementedError

    def is_type_call(self, expr: Any) -> bool:
        """``type(x)``: one positional argument, no keyword, no star."""
        raise NotImplementedError

    def is_class_attribute(self, expr: Any) -> bool:
        """``x.__class__``."""
        raise NotImplementedError

    def target_of(self, expr: Any) -> Target | None:
        """The target a name or attribute chain resolves to (None for anything else)."""
        raise NotImplementedError

    def spelling(self, expr: Any) -> str | None:
        """``a.b.c`` for a name or attribute chain."""
        raise NotImplementedError

    # -- the rule -------------------------------------------------------------------------
    def report(self, node: Any, kind: UseKind, label: str, named: list[tuple[str, Target]]) -> None:
        if named:
            self.found.append(CheckUse(node, kind, label, named))

    def elements(self, expr: Any) -> list[Any]:
        """The classes ``expr`` names as a class spec, nested tuples and unions flattened."""
        parts = self.parts(expr)
        if parts is None:
            return [expr]
        return [element for part in parts for element in self.elements(part)]

    def named(self, exprs: list[Any]) -> list[tuple[str, Target]]:
        """(spelling, target) of each of ``exprs`` that names a target."""
        out = []
        for expr in exprs:
            target = self.target_of(expr)
            if target is not None:
                out.append((self.spelling(expr) or target.name, target))
        return out

    def subject(self, expr: Any) -> str | None:
        """``"type()"`` for ``type(x)``, ``"__class__"`` for ``x.__class__``, else None."""
        if "type" not in self.shadowed and self.is_type_call(expr):
            return "type()"
        if self.is_class_attribute(expr):
            return "__class__"
        return None

    def class_statement(self, node: Any, name: str, bases: list[Any]) -> None:
        """A class statement with its (unstarred) bases."""
        named = self.named(bases)
        if id(node) in self.planned:
            named = [(s, t) for s, t in named if t.kind == "factory"]
        self.report(node, UseKind.BASE, f"class {name}", named)

    def either_or(self, first: Any, second: Any) -> None:
        """Two operands of an ``or`` that face each other."""
        for one, other in ((first, second), (second, first)):
            if self.callee(one) == HAS_PARAM_FEATURE:
                self._paired.add(id(other))

    def check_call(self, node: Any, func: str, args: list[Any] | None) -> None:
        """A call of ``isinstance`` or ``issubclass``; ``args``: its two positional
        arguments (None when it has another number, a keyword or a star)."""
        if func in self.shadowed or args is None:
            return
        exprs = self.elements(args[1])
        if func == "issubclass":
            exprs = self.elements(args[0]) + exprs
        named = self.named(exprs)
        if id(node) in self._paired:
            named = [(s, t) for s, t in named if t.kind != "shadow"]
        kind = UseKind.ISINSTANCE if func == "isinstance" else UseKind.ISSUBCLASS
        self.report(node, kind, func, named)

    def comparison(self, node: Any, links: list[tuple[Any, str | None, Any]]) -> None:
        """A comparison as its links (left, operator as written or None, right)."""
        for left, op, right in links:
            subject, other = self.subject(left), right
            if subject is None and op in EQUALITY:
                subject, other = self.subject(right), left
            if subject is not None and (op in EQUALITY or op in MEMBERSHIP):
                exprs = self.elements(other) if op in MEMBERSHIP else [other]
                self.report(node, UseKind.TYPE_COMPARISON, f"{subject} {op}", self.named(exprs))
