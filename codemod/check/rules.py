"""The ``codemod check`` finding codes (``Rule``) and one reported place (``Finding``).

Plain values with no import from the rest of the tool, so the reporters and the check
engine both read them without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Rule:
    """One finding code: what it finds, and what to write instead."""

    code: str
    name: str
    #: One line: what it finds.
    summary: str
    #: What to write instead, and whether ``codemod apply`` fixes it.
    help: str
    #: Whether ``codemod apply`` fixes findings of this code (CM001: when it converts the class).
    fixable: bool


RULES: tuple[Rule, ...] = (
    Rule(
        "CM001", "parameter-subclass",
        "A class derives, directly or through other classes of the tree, from torch.nn.Parameter.",
        "Run `codemod apply`: the class becomes a factory function of the same name plus a "
        "wrap function. A class `apply` refuses (the message says why) must be rewritten by "
        "hand, or listed in `[tool.codemod] allow-classes` if it has to stay a subclass.",
        True,
    ),
    Rule(
        "CM002", "class-check",
        "An isinstance/issubclass/type() check, or a class base, names a Parameter class "
        "that `codemod apply` converts.",
        "Run `codemod apply`: `isinstance(p, X)` becomes `has_param_feature(p, Features.X)` "
        "and `type(p) is X` becomes `param_kind_is(p, Features.X)`.",
        True,
    ),
    Rule(
        "CM003", "factory-subclassed",
        "A class derives from a name that `codemod apply` turned into a factory function; "
        "subclassing a function fails at import.",
        "Write what `apply` writes for a subclass: a factory `def Y(data, **kwargs)` that "
        "builds `Parameter(data=data, requires_grad=False)`, gives it its kind with "
        "`init_param_kind(param, Features.Y)`, calls the wraps of `X`'s chain base first "
        "and then its own `wrap_y(param, **kwargs)` (the former `__init__` body), and "
        "returns it; below it, `register_param_kind(Features.Y, bases=(Features.X,), "
        "methods={...})` once. `codemod apply` cannot fix this.",
        False,
    ),
    Rule(
        "CM004", "factory-class-check",
        "An isinstance/issubclass/type() check names a factory function made by "
        "`codemod apply`: isinstance raises TypeError, `type(p) is X` is always false.",
        "Write `has_param_feature(p, Features.X)` for isinstance and "
        "`param_kind_is(p, Features.X)` for `type(p) is X`. `codemod apply` cannot fix this.",
        False,
    ),
    Rule(
        "CM005", "partly-converted",
        "The tree holds factory functions made by `codemod apply` and Parameter classes "
        "that `apply` would still convert.",
        "Run `codemod apply` on the whole tree again.",
        True,
    ),
    Rule(
        "CM006", "type-compare",
        "After migration: `type(a) is type(b)` (or `is not`, `==`, `!=`, `x.__class__`) "
        "compares two objects' types; two converted parameters of different former classes "
        "are both torch.nn.Parameter.",
        "Write `param_type(a) is param_type(b)` with `param_type` from the family's runtime "
        "module: a converted parameter's former kind, `type(x)` for any other object "
        "(what `apply` writes). `codemod apply` does not rewrite a tree it converted already.",
        False,
    ),
)
RULES_BY_CODE = {rule.code: rule for rule in RULES}


@dataclass(frozen=True)
class Finding:
    """One reported place: code, message, location, and whether ``apply`` fixes it."""

    code: str
    message: str
    path: Path
    line: int
    column: int
    fixable: bool

    @property
    def rule(self) -> Rule:
        """The rule of this finding's code."""
        return RULES_BY_CODE[self.code]

    def render(self) -> str:
        """``path:line:col: CODE [*] message`` (``[*]``: ``codemod apply`` fixes it)."""
        mark = "[*] " if self.fixable else ""
        return f"{self.path}:{self.line}:{self.column}: {self.code} {mark}{self.message}"

    def sort_key(self) -> tuple[str, int, int, str]:
        return (str(self.path), self.line, self.column, self.code)
