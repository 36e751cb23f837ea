"""A name that holds an object's type (``t = type(p)``, then ``t == X``) answers as before.

SGLang's offloader decides how to rebuild a parameter by its type held in a local
(``old_param_type = type(old_param)``, then ``old_param_type == ModelWeightParameter`` /
``== torch.nn.Parameter``, and a ``raise`` naming it otherwise). Left as it was, a
converted parameter's type is ``Parameter``: the first test would never hold and the second
would hold for every converted kind. The rewrite (``transforms/held_type_uses.py``) makes
the name hold ``param_type(p)`` and compares it with ``Features`` members. One tree, one
module of such functions, each asked for every kind of object in both trees; the answers
must be the same (a ``raise`` message may name the kind as a string where it showed the
class: only its type is compared).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .side_by_side import answers_of, convert_copy

pytest.importorskip("torch")

PARAMS = '''from torch.nn import Parameter


class BaseParam(Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)

    def __init__(self, data, weight_loader=None):
        self.weight_loader = weight_loader


class WeightParam(BaseParam):
    def __init__(self, data, output_dim=0, **kwargs):
        super().__init__(data, **kwargs)
        self.output_dim = output_dim


class PackedParam(WeightParam):
    pass


class ScaleParam(BaseParam):
    pass
'''

HELD = '''import torch
from torch import nn

from pkg import params
from pkg.params import PackedParam, ScaleParam, WeightParam


def rebuild(old):
    """The offloader's shape: a branch per kind, a raise for the rest."""
    old_type = type(old)
    if old_type == WeightParam:
        return "weight"
    elif old_type == torch.nn.Parameter:
        return "plain"
    raise ValueError(f"Unknown {old_type=}")


def identity(p):
    t = p.__class__
    if t is ScaleParam:
        return "scale"
    if t is not params.PackedParam:
        return "not packed"
    return "packed"


def member(p, q):
    k = type(p)
    return (k in (WeightParam, PackedParam), k not in [nn.Parameter, type(q)], k != type(q))


def two_names(p, q):
    a = type(p)
    b = type(q)
    return a == b, a is WeightParam, b != ScaleParam


def nested(p):
    t = type(p)
    check = lambda: t == PackedParam
    return [t is WeightParam for _ in range(1)][0], check()
'''

#: No converted class named: the type-comparison rewrite binds the names (``t is
#: nn.Parameter`` would hold for every converted parameter, ``a is b`` for two kinds).
PLAIN = '''import torch.nn as nn


def is_plain(p):
    t = type(p)
    return t is nn.Parameter


def same(a, b):
    x = type(a)
    y = b.__class__
    return x is y, x in (type(b), nn.Parameter)
'''

SCENARIO = '''import torch

from pkg import held, plain
from pkg.params import PackedParam, ScaleParam, WeightParam


def loader(param, loaded):
    pass


def objects():
    return {
        "weight": WeightParam(torch.zeros(2, 2), output_dim=1, weight_loader=loader),
        "packed": PackedParam(torch.zeros(2, 2), output_dim=0, weight_loader=loader),
        "scale": ScaleParam(torch.zeros(2, 2), weight_loader=loader),
        "plain": torch.nn.Parameter(torch.zeros(2, 2), requires_grad=False),
        "tensor": torch.zeros(2, 2),
        "number": 3,
    }


made = objects()
for module, form in [(held, "rebuild"), (held, "identity"), (held, "member"), (held, "two_names"),
                     (held, "nested"), (plain, "is_plain"), (plain, "same")]:
    for left in made:
        for right in (made if form in ("member", "two_names", "same") else [None]):
            try:
                args = (made[left],) if right is None else (made[left], made[right])
                answer = getattr(module, form)(*args)
            except Exception as exc:
                answer = "raised " + type(exc).__name__
            print(f"{form}:{left}:{right}", answer)
'''


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], dict[str, str], Path]:
    """(before, after, converted tree)."""
    original, converted = convert_copy(tmp_path_factory.mktemp("held_types"), {
        "pkg/__init__.py": "", "pkg/params.py": PARAMS, "pkg/held.py": HELD, "pkg/plain.py": PLAIN})
    return answers_of(original, SCENARIO), answers_of(converted, SCENARIO), converted


def test_every_class_converts_and_the_names_hold_kinds(
        answers: tuple[dict[str, str], dict[str, str], Path]) -> None:
    converted = answers[2] / "pkg"
    params = (converted / "params.py").read_text()
    for name in ("BaseParam", "WeightParam", "PackedParam", "ScaleParam"):
        assert f"def {name}(" in params
    held = (converted / "held.py").read_text()
    assert "old_type = param_type(old)" in held and "old_type == Features.WeightParam" in held
    assert "old_type == torch.nn.Parameter" in held
    assert "t == Features.ScaleParam" in held and "t != Features.PackedParam" in held
    assert "k not in [nn.Parameter, param_type(q)]" in held and "k != param_type(q)" in held
    assert "type(" not in held.replace("param_type(", "")
    plain = (converted / "plain.py").read_text()
    assert "t = param_type(p)" in plain and "x = param_type(a)" in plain and "y = param_type(b)" in plain
    assert "x in (param_type(b), nn.Parameter)" in plain


def test_every_comparison_answers_as_before(answers: tuple[dict[str, str], dict[str, str], Path]) -> None:
    before, after, _ = answers
    assert len(before) == 6 + 6 + 36 + 36 + 6 + 6 + 36
    # The answers the rewrite exists for: left as they were, these would flip.
    assert before["rebuild:weight:None"] == "weight" and before["rebuild:plain:None"] == "plain"
    assert before["rebuild:packed:None"] == "raised ValueError"
    assert before["identity:scale:None"] == "scale" and before["identity:packed:None"] == "packed"
    assert before["two_names:weight:scale"] == "(False, True, False)"
    assert before["nested:packed:None"] == "(False, True)"
    assert before["is_plain:weight:None"] == "False" and before["is_plain:plain:None"] == "True"
    assert before["same:weight:scale"] == "(False, False)" and before["same:weight:packed"] == "(False, False)"
    assert {case: (before[case], after[case]) for case in before if after[case] != before[case]} == {}


# Shapes the rule must not take for a comparison of kinds (adversarial review of
# 2026-12-06): each was rewritten, and answered otherwise after conversion. Each tree is
# converted alone; every function is asked for every pair of objects in both trees.
ADVERSARIAL = {
    "class body rebinds the name": ('''from pkg.params import WeightParam


def f(p, q):
    t = type(p)

    class C:
        t = type(q)
        ok = t == WeightParam
    return t == WeightParam, C.ok
''', {}),
    "a string equal to a kind's name": ('''from pkg.params import WeightParam


def f(p):
    t = type(p)
    return t == WeightParam, t == "pkg.params.WeightParam", t in ("pkg.params.ScaleParam", None)
''', {}),
    "a format spec in a raise message": ('''from pkg.params import WeightParam


def f(p):
    t = type(p)
    if t == WeightParam:
        return "weight"
    raise ValueError(f"bad {t:>5}")
''', {}),
    "type from a star import": ('''from pkg.helpers import *
from pkg.params import WeightParam


def f(p):
    t = type(p)
    return t == WeightParam, t == 7
''', {"pkg/helpers.py": "def type(x):\n    return 7 if x is None else x.__class__\n"}),
    "Parameter under another name": ('''from torch import nn
from torch.nn import Parameter as P

Param = nn.Parameter


def f(p):
    t = type(p)
    return t == P, t is Param


def g(p):
    return type(p) == P, type(p) in (Param, int)
''', {}),
    "a type imported from another module": ('''from pkg.consts import PLAIN
from pkg.params import WeightParam


def f(p):
    t = type(p)
    return t == WeightParam, t == PLAIN
''', {"pkg/consts.py": "import torch\n\nfrom pkg.params import WeightParam\n\n"
                        "PLAIN = type(WeightParam(torch.zeros(1)))\n"}),
    "an f-string outside a raise's message": ('''from pkg.params import WeightParam


def f(p):
    t = type(p)
    if t == WeightParam:
        return "weight"
    raise (KeyError if f"{t}".startswith("<") else ValueError)(f"bad {t}")
''', {}),
    "a class of no Parameter family": ('''from pkg.params import WeightParam
from pkg.other import Plain


def f(p):
    t = type(p)
    return t == WeightParam, t is Plain, t in (int, WeightParam)
''', {"pkg/other.py": "class Plain:\n    pass\n"}),
}

ASK_ALL = '''import inspect

import torch

from pkg import use
from pkg.params import PackedParam, ScaleParam, WeightParam

made = {
    "weight": WeightParam(torch.zeros(2, 2), output_dim=1),
    "packed": PackedParam(torch.zeros(2, 2)),
    "scale": ScaleParam(torch.zeros(2, 2)),
    "plain": torch.nn.Parameter(torch.zeros(2, 2), requires_grad=False),
    "tensor": torch.zeros(2),
    "none": None,
}
for name, fn in sorted(vars(use).items()):
    if not inspect.isfunction(fn) or fn.__module__ != "pkg.use":
        continue
    count = len(inspect.signature(fn).parameters)
    pairs = [(k,) for k in made] if count == 1 else [(a, b) for a in made for b in made]
    for keys in pairs:
        try:
            answer = fn(*[made[k] for k in keys])
        except Exception as exc:
            answer = "raised " + type(exc).__name__
        print(f"{name}:{','.join(keys)}", answer)
'''


@pytest.mark.parametrize("case", sorted(ADVERSARIAL))
def test_shapes_outside_the_rule_answer_as_before(case: str, tmp_path: Path) -> None:
    use, extra = ADVERSARIAL[case]
    original, converted = convert_copy(tmp_path, {
        "pkg/__init__.py": "", "pkg/params.py": PARAMS, "pkg/use.py": use, **extra})
    before, after = answers_of(original, ASK_ALL), answers_of(converted, ASK_ALL)
    assert before and {key: (before[key], after[key]) for key in before if after[key] != before[key]} == {}
