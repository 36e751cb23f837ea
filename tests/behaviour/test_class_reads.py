"""Reads through a converted class's name answer as before: ``X.__name__``,
``X.__qualname__`` and ``X.__module__`` (the factory is a top-level function of the same
name in the same module), an unbound method ``X.load(p, w)`` as the MRO finds it, a class
constant and a static method. ``X.__name__`` used to refuse the class, as a use no rewrite
covers; now the name stays, and the rest of the family converts with it. One tree,
converted by ``codemod apply``, and one script run in both.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .side_by_side import answers_of, convert_copy

pytest.importorskip("torch")

PARAMS = '''import torch
from torch.nn import Parameter


class BaseParam(Parameter):
    SCALE = 3

    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)

    def __init__(self, data, shift=0.0):
        self.shift = shift

    def load(self, w):
        self.data.copy_(w + self.shift)

    @staticmethod
    def double(x):
        return 2 * x


class PackedParam(BaseParam):
    def load(self, w):
        BaseParam.load(self, w * PackedParam.SCALE)
'''

USE = '''import torch

from pkg.params import BaseParam, PackedParam

KINDS = {name: name for name in (BaseParam.__name__, PackedParam.__qualname__)}


def load_both(p, w):
    PackedParam.load(p, w)
    return BaseParam.double(BaseParam.SCALE)


def describe():
    return f"{PackedParam.__module__}:{KINDS[PackedParam.__name__]}"
'''

SCENARIO = '''import torch

from pkg import use
from pkg.params import PackedParam

p = PackedParam(torch.zeros(2), shift=1.0)
print("loaded", use.load_both(p, torch.ones(2)), p.data.tolist())
print("described", use.describe())
print("kinds", sorted(use.KINDS))
'''


def test_reads_through_the_class_name_answer_as_before(tmp_path: Path) -> None:
    original, converted = convert_copy(tmp_path, {
        "pkg/__init__.py": "", "pkg/params.py": PARAMS, "pkg/use.py": USE})
    params = (converted / "pkg" / "params.py").read_text()
    assert "def BaseParam(" in params and "def PackedParam(" in params
    use = (converted / "pkg" / "use.py").read_text()
    assert "PackedParam.__name__" in use and "PackedParam.load" not in use
    before, after = answers_of(original, SCENARIO), answers_of(converted, SCENARIO)
    assert before == after
    assert before["described"] == "pkg.params:PackedParam"
    assert before["loaded"] == "6 [4.0, 4.0]"


NEEDS_CLASS = {
    # ``case X.CONST:`` compares with the constant; a bare name there would capture
    # anything (found by review: ``case _BASE_PARAM_SCALE:`` answered every value).
    "pkg/match.py": '''from pkg.params import BaseParam


def kind(x):
    match x:
        case BaseParam.SCALE:
            return "scale"
        case _:
            return "other"
''',
    # A method's own name read through the class: the generated function has another.
    "pkg/names.py": '''from pkg.params import PackedParam

NAMES = (PackedParam.load.__name__, PackedParam.double.__qualname__)
''',
}

SCENARIOS = {
    "pkg/match.py": 'from pkg import match\nprint("kinds", match.kind(3), match.kind(5))\n',
    "pkg/names.py": 'from pkg import names\nprint("names", *names.NAMES)\n',
}


@pytest.mark.parametrize("module", sorted(NEEDS_CLASS))
def test_reads_that_need_the_class_keep_it(tmp_path: Path, module: str) -> None:
    """Each of these reads keeps the family as classes (a use no rewrite covers), and the
    tree answers as before."""
    original, converted = convert_copy(tmp_path, {
        "pkg/__init__.py": "", "pkg/params.py": PARAMS, module: NEEDS_CLASS[module]})
    assert (converted / "pkg" / "params.py").read_text() == PARAMS
    assert (converted / module).read_text() == NEEDS_CLASS[module]
    before, after = answers_of(original, SCENARIOS[module]), answers_of(converted, SCENARIOS[module])
    assert before == after
