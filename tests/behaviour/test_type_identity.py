"""Comparisons of two objects' types answer as before conversion, in every file.

A converted parameter is a plain ``Parameter``: ``type(a) is type(b)`` would hold for two
former classes, and for a converted parameter and a plain one, had the tool left it.
Engines ask it (vLLM's ``replace_parameter`` keeps the old parameter when the types match;
``_is_same_param`` tells a weight from a scale). One tree with a small family, a module of
comparisons that imports torch and one that does not (a parameter reaches it all the
same), converted once; one script prints each form's answer for pairs of objects in both
trees (a copy or an unpickled parameter keeps its kind: ``tests/unit/test_runtime_helpers.py``,
where the original classes cannot be copied at all). Also the attribute-dict comprehension of a module that names no parameter and
does not import torch (two parameters of one kind must still compare equal).
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
        self._weight_loader = weight_loader

    @property
    def weight_loader(self):
        return self._weight_loader


class WeightParam(BaseParam):
    def __init__(self, data, output_dim=0, **kwargs):
        super().__init__(data, **kwargs)
        self.output_dim = output_dim


class ScaleParam(BaseParam):
    pass
'''

WITH_TORCH = '''import torch


def is_(a, b):
    return type(a) is type(b)


def is_not(a, b):
    return type(a) is not type(b)


def eq(a, b):
    return type(a) == type(b)


def ne(a, b):
    return (type(a)) != type(b)


def classes(a, b):
    return a.__class__ is b.__class__


def mixed(a, b):
    return type(a) is b.__class__


def plain(a, b):
    return type(a) is torch.nn.Parameter


def not_plain(a, b):
    return torch.nn.Parameter != a.__class__


def swap(old, new):
    """replace_parameter's decision: reuse the registered tensor, or register a fresh one."""
    if (
        type(old) is type(new)
        and old.dtype == new.dtype
    ):
        return "in place"
    return "fresh"
'''

WITHOUT_TORCH = '''def same_slot(a, b):
    fa = {k: v for k, v in a.__dict__.items() if k != "loader"}
    fb = {k: v for k, v in b.__dict__.items() if k != "loader"}
    return type(a) is type(b) and fa == fb
'''

SCENARIO = '''import torch

from pkg import plain, with_torch
from pkg.params import ScaleParam, WeightParam


def loader(param, loaded):
    pass


def objects():
    w = WeightParam(torch.zeros(2, 2), output_dim=1, weight_loader=loader)
    return {
        "weight": w,
        "weight2": WeightParam(torch.zeros(2, 2), output_dim=1, weight_loader=loader),
        "scale": ScaleParam(torch.zeros(2, 2), weight_loader=loader),
        "plain": torch.nn.Parameter(torch.zeros(2, 2), requires_grad=False),
        "plain2": torch.nn.Parameter(torch.zeros(2, 2), requires_grad=False),
        "tensor": torch.zeros(2, 2),
    }


PAIRS = [("weight", "weight2"), ("weight", "scale"), ("weight", "plain"), ("scale", "weight"),
         ("weight", "tensor"), ("plain", "plain2"), ("plain", "tensor"), ("tensor", "weight")]
for form in ["is_", "is_not", "eq", "ne", "classes", "mixed", "swap", "plain", "not_plain"]:
    for left, right in PAIRS:
        made = objects()
        try:
            answer = getattr(with_torch, form)(made[left], made[right])
        except Exception as exc:
            answer = "raised " + type(exc).__name__
        print(f"{form}:{left}:{right}", answer)
for left, right in [("weight", "weight2"), ("weight", "scale"), ("weight", "plain")]:
    made = objects()
    print(f"same_slot:{left}:{right}", plain.same_slot(made[left], made[right]))
'''


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], dict[str, str], Path]:
    """(before, after, converted tree)."""
    original, converted = convert_copy(tmp_path_factory.mktemp("type_identity"), {
        "pkg/__init__.py": "", "pkg/params.py": PARAMS, "pkg/with_torch.py": WITH_TORCH,
        "pkg/plain.py": WITHOUT_TORCH})
    return answers_of(original, SCENARIO), answers_of(converted, SCENARIO), converted


def test_the_comparisons_were_rewritten(answers: tuple[dict[str, str], dict[str, str], Path]) -> None:
    converted = answers[2] / "pkg"
    assert "def WeightParam(" in (converted / "params.py").read_text()
    for module in ("with_torch.py", "plain.py"):
        text = (converted / module).read_text()
        assert "type(a) is type(b)" not in text and "param_type(a) is param_type(b)" in text
    assert "param_attr_dict(a).items()" in (converted / "plain.py").read_text()


def test_every_form_answers_as_before(answers: tuple[dict[str, str], dict[str, str], Path]) -> None:
    before, after, _ = answers
    assert len(before) == 9 * 8 + 3
    # The pairs the rewrite exists for: left as they were, these would all flip.
    assert before["is_:weight:scale"] == "False" and before["swap:weight:plain"] == "fresh"
    assert before["is_:weight:weight2"] == "True" and before["same_slot:weight:weight2"] == "True"
    assert before["plain:weight:scale"] == "False" and before["plain:plain:tensor"] == "True"
    assert {form: after[form] for form in before if after[form] != before[form]} == {}
