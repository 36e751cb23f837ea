"""``rewrite_reach.DICT_COPY`` is written so that the regex engine can skip ahead (each
alternative starts with a literal); it must match exactly where the plain form does."""

from __future__ import annotations

import re

import pytest

from codemod.pipeline import rewrite_reach

#: The plain form: ``\b`` before each word.
PLAIN = re.compile(
    r"\.__dict__\s*(?:=|\|=|\.update\s*\(|\.get\s*\(|\[|\.items\s*\(|\.keys\s*\(|\.values\s*\(|!=)"
    r"|\bin\s+[\w.]+\.__dict__|\bvars\s*\(|\bgetattr\s*\([^()]*[\"']__dict__[\"']"
)

TEXTS = [
    "p.__dict__ = dict(q.__dict__)", "p.__dict__.update(q.__dict__)", "x = p.__dict__['a']",
    "for k, v in p.__dict__.items(): pass", "if 'a' in p.__dict__: pass", "k in a.b.__dict__",
    "kin a.__dict__", "vars(p)", "envvars(p)", "_vars (p)", "vars (p)", "évars(p)", "in\tx.__dict__",
    "getattr(p, '__dict__')", 'getattr (p, "__dict__")', "mygetattr(p, '__dict__')",
    "xgetattr(p, '__dict__') or getattr(q, '__dict__')", "p.__dict__ != q.__dict__",
    "p.__dict__", "nothing here", "in vars", "begin x.__dict__", "(in x.__dict__)", "ïn x.__dict__",
]


@pytest.mark.parametrize("text", TEXTS)
def test_dict_copy_gate_matches_where_the_plain_form_does(text):
    assert [m.span() for m in rewrite_reach.DICT_COPY.finditer(text)] == \
        [m.span() for m in PLAIN.finditer(text)]
