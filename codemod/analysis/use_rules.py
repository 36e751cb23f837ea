"""One table for every way a mention of a Parameter class can be used: what ``apply``
does with it and what ``codemod check`` reports about it.

A mention's kind (``UseKind``) is read from its position: on CPython's tree by
``analysis.ast_uses.use_kind`` (the safety net and ``check``'s other class-only uses),
``check.class_checks`` (``check``'s checks and class bases, over either tree) and
``transforms.leftover_screen`` (``apply``'s fast leftover scan). What follows from the
kind is written once, here (``USE_RULES``):

* ``outcome``: what ``apply`` does with a mention of a class it converts;
* ``converted_code``: the ``check`` code for a mention of a class ``apply`` will convert
  (CM002, the visitor's kinds only);
* ``factory_code`` and ``factory_fails``: the ``check`` code and the reason for a mention
  of a name that is a factory function now (CM003 for a base, CM004 otherwise);
* ``kept_changes``: whether the use changes meaning for a class ``apply`` kept while
  converting its subclasses (only ``isinstance``: its converted subclasses are plain
  Parameters now).

Adding a use form: give it a kind here with its rule, teach the readers above to tell it
apart; ``tests/unit/test_use_rules.py`` pins the table.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, StrEnum


class UseKind(StrEnum):
    """How a mention of a class name is used (the values are the words the safety net's
    messages and ``check``'s tables have always used)."""

    CALL = "call"
    VALUE = "value"
    ANNOTATION = "annotation"
    ATTRIBUTE = "attribute"
    SUBSCRIPT = "subscript"
    UNION = "union"
    ISINSTANCE = "isinstance"
    ISSUBCLASS = "issubclass"
    ISINSTANCE_UNION = "isinstance union"
    ISSUBCLASS_UNION = "issubclass union"
    TYPE_COMPARISON = "type-comparison"
    BASE = "base"
    EXCEPT = "except"
    MATCH_CLASS = "match-class"
    SUPER = "super"
    SUPER_UNION = "super union"
    REGISTER = "register"
    #: An argument after the first of ``has_param_feature``/``param_kind_is``, where a
    #: ``Features`` member belongs: a value for ``apply``; a factory there answers False.
    FEATURE_ARGUMENT = "feature-argument"


#: Attributes a converted class's factory function has with the value the class had (a
#: top-level function of the same name in the same module): ``X.__name__`` stays valid.
SAME_ON_FUNCTIONS = frozenset({"__name__", "__qualname__", "__module__"})


class Outcome(Enum):
    """What ``apply`` does with a mention of a class it converts."""

    #: The name stays valid: the factory function has the class's name (``X(...)``,
    #: ``X.__name__``).
    KEPT = "kept"
    #: The class handed on as a value: a leftover unless ``analysis.class_values``
    #: proves where it goes or ``allow-value-uses`` accepts it.
    VALUE = "value"
    #: A use-site rewrite changes it where the file's imports name the class (a form the
    #: rewrite does not cover is a class-style leftover).
    REWRITTEN = "rewritten"
    #: Needs a class and no rewrite changes it: a leftover that refuses the class.
    LEFTOVER = "leftover"
    #: Needs a class, no rewrite changes it, and the leftover scan takes it for
    #: something else: the safety net refuses the class even when imports name it.
    ESCAPES = "escapes"


@dataclass(frozen=True)
class UseRule:
    """What follows from one ``UseKind``."""

    outcome: Outcome
    #: ``check``'s code for a class ``apply`` converts (None: not reported).
    converted_code: str | None = None
    #: ``check``'s code for a name that is a factory function now (None: still valid).
    factory_code: str | None = None
    #: Why a factory function fails there (the end of the CM003/CM004 message).
    factory_fails: str = ""
    #: Whether the use changes meaning for a class ``apply`` kept (a shadow).
    kept_changes: bool = False

    @property
    def needs_class(self) -> bool:
        """Whether the position needs a class whatever value flows there (a mention
        reached through ``getattr``, ``globals()`` or a star import escapes)."""
        return self.outcome not in (Outcome.KEPT, Outcome.VALUE)


_K, _V, _R, _L, _E = Outcome.KEPT, Outcome.VALUE, Outcome.REWRITTEN, Outcome.LEFTOVER, Outcome.ESCAPES

#: kind -> (outcome, code for a converted class, code for a factory, changes for a kept class).
_TABLE: dict[UseKind, tuple[Outcome, str | None, str | None, bool]] = {
    UseKind.CALL: (_K, None, None, False),
    UseKind.VALUE: (_V, None, None, False),
    UseKind.ANNOTATION: (_R, None, None, False),
    UseKind.ATTRIBUTE: (_R, None, "CM004", False),
    UseKind.SUBSCRIPT: (_L, None, "CM004", False),
    UseKind.UNION: (_L, None, "CM004", False),
    UseKind.ISINSTANCE: (_R, "CM002", "CM004", True),
    UseKind.ISSUBCLASS: (_R, "CM002", "CM004", False),
    UseKind.ISINSTANCE_UNION: (_R, None, "CM004", False),
    UseKind.ISSUBCLASS_UNION: (_R, None, "CM004", False),
    UseKind.TYPE_COMPARISON: (_R, "CM002", "CM004", False),
    UseKind.BASE: (_L, "CM002", "CM003", False),
    UseKind.EXCEPT: (_L, None, "CM004", False),
    UseKind.MATCH_CLASS: (_E, None, "CM004", False),
    UseKind.SUPER: (_L, None, "CM004", False),
    UseKind.SUPER_UNION: (_L, None, None, False),  # needs a class; ``check`` has no message
    UseKind.REGISTER: (_L, None, "CM004", False),
    UseKind.FEATURE_ARGUMENT: (_V, None, "CM004", False),
}

#: Why a factory function fails where a class was used (the end of a CM003/CM004 message).
_FACTORY_FAILS: dict[UseKind, str] = {
    UseKind.ATTRIBUTE: "reads an attribute of the former class, which the function does not "
                       "have (an unbound method is a module-level function now)",
    UseKind.EXCEPT: "`except` needs an exception class: it raises TypeError when the handler "
                    "is tried",
    UseKind.MATCH_CLASS: "a `case` class pattern needs a class: it raises TypeError",
    UseKind.SUPER: "`super()` needs a class: it raises TypeError",
    UseKind.REGISTER: "`register()` needs a class: it raises TypeError",
    UseKind.SUBSCRIPT: "a function cannot be subscripted: it raises TypeError",
    UseKind.UNION: "`|` between functions raises TypeError",
    UseKind.ISINSTANCE_UNION: "a union with a function raises TypeError in `isinstance`",
    UseKind.ISSUBCLASS_UNION: "a union with a function raises TypeError in `issubclass`",
    UseKind.ISINSTANCE: "`isinstance` against a function raises TypeError",
    UseKind.ISSUBCLASS: "`issubclass` against a function raises TypeError",
    UseKind.TYPE_COMPARISON: "comparing a type with a function never matches",
    UseKind.BASE: "subclassing a function fails at import",
    UseKind.FEATURE_ARGUMENT: "`has_param_feature` and `param_kind_is` take a `Features` "
                              "member: given the function they answer False for every "
                              "parameter",
}

USE_RULES: dict[UseKind, UseRule] = {
    kind: UseRule(outcome, converted, factory, _FACTORY_FAILS.get(kind, ""), kept)
    for kind, (outcome, converted, factory, kept) in _TABLE.items()
}


def rule_of(kind: str) -> UseRule:
    """The rule of ``kind`` (a ``UseKind`` or its word)."""
    return USE_RULES[UseKind(kind)]
