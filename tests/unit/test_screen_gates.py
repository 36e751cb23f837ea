"""The lexical gates before the tree-wide screens parse a file: each must let through
every file where its walker could find something (a superset), and keep out the common
text that is not a hit (method calls on a parameter, names that merely contain a field)."""

from __future__ import annotations

import pytest

from codemod.planning.field_targets import FieldGate
from codemod.planning.type_members import _member_pattern, type_read_lines

FIELD = FieldGate(frozenset({"_dim", "_loader"}))


@pytest.mark.parametrize(("text", "hit"), [
    ("p._dim, x = v", True),
    ("del p._loader", True),
    ("p.__dict__['_dim'] = 1", True),
    ("_dim += 1", True),
    ("p.out_dim = 1", False),            # ends with a field, not the field
    ("p._dims = 1", False),
    ("x.in_dim + p.weight_loader", False),
    ("x.in_dim + p._dim", True),          # a rejected match does not hide a later one
    # a dict key spelled another way: any attribute dict is screened
    ("p.__dict__['_d' 'im'] = 1", True),
    ("p.__dict__[('_'  # why\n    'dim')] = 1", True),
    ("vars(p)['\\137dim'] = 1", True),
    ("vars(p)['\\N{LOW LINE}dim'] = 1", True),
    ("p.__dict__['_di\\\nm'] = 1", True),
    ("p.__dict__['_di'] = 1", False),       # a prefix alone is no field
    ("p.__dict__['x\\n'] = 1", False),      # a newline is no identifier character
    ("vars(p)['\\x5fdim'] = 1", True),
    ("p.\uff3fdim += 1", True),            # NFKC: CPython reads ``p._dim``
    ("invars = 1", False),
])
def test_field_mentions_are_whole_words(text: str, hit: bool) -> None:
    assert FIELD(text) is hit


MEMBER = _member_pattern(frozenset({"PACK", "load"}))


@pytest.mark.parametrize(("text", "hit"), [
    ("type(p).PACK", True),
    ("p.__class__.load(p, w)", True),
    ("(type(p)  # why\n  .PACK)", True),
    ("(type(p) # a\n  # b\n  .PACK)", True),
    ("(p.__class__.\n  # why\n  load(p, w))", True),
    ("type(p) \\\n  .PACK", True),
    ('x = f("#") + (type(p)  # c\n .PACK)', True),
    ("p.load(w)", False),
    ("param.PACK", False),
    ("f(p).PACKED", False),
    ("type(p).PACK_SIZE", False),
    ("type (p).PACK", True),
    ("type\\\n(p).PACK", True),
    ("type(p).\uff30ACK", True),           # NFKC: CPython reads ``PACK``
    ("x.__\uff43lass__.load", True),
])
def test_type_reads_are_let_through(text: str, hit: bool) -> None:
    assert bool(type_read_lines(text, MEMBER)) is hit


@pytest.mark.parametrize("text", [
    "(type  # why\n  (p)).PACK",
    "(type\n  # why\n  (p)).PACK",
    "type \\\n(p).PACK",
])
def test_a_type_call_across_comments_and_continuations_is_let_through(text: str) -> None:
    assert type_read_lines(text, MEMBER) == [text.count("\n", 0, text.index(".PACK")) + 1]
