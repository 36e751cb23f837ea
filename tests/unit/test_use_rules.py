"""The use rule table (``analysis.use_rules``): every kind a reader tells apart has one
rule, the rules are the ones ``apply``, the safety net and ``check`` act by, and each
reader decides through it (a changed row changes what they do)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from codemod.analysis.ast_uses import use_kind
from codemod.analysis.use_rules import USE_RULES, Outcome, UseKind, rule_of
from codemod.check.converted import Target
from codemod.check.findings import use_findings

K, V, R, L, E = Outcome.KEPT, Outcome.VALUE, Outcome.REWRITTEN, Outcome.LEFTOVER, Outcome.ESCAPES

#: The table as documented in docs/ARCHITECTURE.md ("Classify uses"), written out again:
#: kind -> (outcome, CM002?, code for a factory, changes for a kept class).
EXPECTED = {
    "call": (K, None, None, False),
    "value": (V, None, None, False),
    "annotation": (R, None, None, False),
    "attribute": (R, None, "CM004", False),
    "subscript": (L, None, "CM004", False),
    "union": (L, None, "CM004", False),
    "isinstance": (R, "CM002", "CM004", True),
    "issubclass": (R, "CM002", "CM004", False),
    "isinstance union": (R, None, "CM004", False),
    "issubclass union": (R, None, "CM004", False),
    "type-comparison": (R, "CM002", "CM004", False),
    "base": (L, "CM002", "CM003", False),
    "except": (L, None, "CM004", False),
    "match-class": (E, None, "CM004", False),
    "super": (L, None, "CM004", False),
    "super union": (L, None, None, False),
    "register": (L, None, "CM004", False),
    "feature-argument": (V, None, "CM004", False),
}


def test_every_kind_has_its_rule():
    assert {str(kind) for kind in UseKind} == set(EXPECTED)
    for word, (outcome, converted, factory, kept) in EXPECTED.items():
        rule = rule_of(word)
        assert (rule.outcome, rule.converted_code, rule.factory_code, rule.kept_changes) == \
            (outcome, converted, factory, kept), word
        assert bool(rule.factory_fails) == (factory is not None), word
        assert rule.needs_class == (outcome not in (K, V)), word


#: One mention of ``X`` per kind, as ``ast_uses.use_kind`` reads it.
SNIPPETS = {
    "call": "X(1)",
    "value": "reg(X)",
    "annotation": "def f(p: X): ...",
    "attribute": "X.load(p)",
    "subscript": "X[int]",
    "union": "T = X | int",
    "isinstance": "isinstance(p, (X, int))",
    "issubclass": "issubclass(A, X)",
    "isinstance union": "isinstance(p, X | int)",
    "issubclass union": "issubclass(A, (X | int, B))",
    "type-comparison": "type(p) in (X, int)",
    "base": "class A(X): ...",
    "except": "try:\n    pass\nexcept X:\n    pass",
    "match-class": "match p:\n    case X():\n        pass",
    "super": "super(X, self)",
    "super union": "super(X | Y, self)",
    "register": "abc.register(X)",
    "feature-argument": "has_param_feature(p, Features.A, X)",
}


@pytest.mark.parametrize("word", sorted(SNIPPETS))
def test_use_kind_reads_each_kind(word):
    tree = ast.parse(SNIPPETS[word])
    parents = {id(child): parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    mention = next(n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "X")
    kind = use_kind(mention, parents)
    assert kind is UseKind(word)
    assert kind == word  # the safety net's messages and caches still read the word


_CLASS = Target("class", "X", "pkg.params", "X")
_KEPT = Target("kept", "X", "pkg.params", "X")
_FACTORY = Target("factory", "X", "pkg.params", "X")
_SHADOW = Target("shadow", "X", "pkg.params", "X")


@pytest.mark.parametrize("kind,label", [(UseKind.ISINSTANCE, "isinstance"),
                                        (UseKind.ISSUBCLASS, "issubclass"),
                                        (UseKind.TYPE_COMPARISON, "type() is"),
                                        (UseKind.BASE, "class A")])
def test_check_codes_come_from_the_rules(kind, label):
    """``check``'s findings for a check or base: the codes of the kind's rule."""
    rule = USE_RULES[kind]
    path = Path("pkg/use.py")

    def codes(target: Target) -> list[str]:
        return [f.code for f in use_findings(path, (1, 1), kind, label, [("X", target)])]

    assert codes(_CLASS) == [rule.converted_code]
    assert codes(_FACTORY) == [rule.factory_code]
    assert codes(_KEPT) == ([rule.converted_code] if rule.kept_changes else [])
    assert codes(_SHADOW) == (["CM004"] if rule.kept_changes else [])
