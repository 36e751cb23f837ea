"""A family listed in torch's registry of traceable tensor subclasses converts, and the
code around it compiles and answers as before.

vLLM 0.10-0.11 and Aphrodite 0.10 hand their Parameter classes to
``torch._dynamo.config.patch("traceable_tensor_subclasses", [...])`` around compiled
code; the value proof refused that list, which kept most of the family as classes. torch
matches the registry by exact type (``analysis/type_registries.py``): after conversion the
factories there match nothing, and the parameters they build are plain ``Parameter``s,
which Dynamo traces unlisted. One tree, compiled with the patch in both trees.
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

    def __init__(self, data, scale=1.0):
        self.scale = scale

    def scaled(self):
        return self.data * self.scale


class WeightParam(BaseParam):
    pass
'''

COMPILED = '''import torch
from torch._dynamo import config

from pkg.params import BaseParam, WeightParam


def forward(x, p):
    return x * p.scaled().sum()


def run(x, p):
    with torch._dynamo.config.patch("traceable_tensor_subclasses", [BaseParam, WeightParam]):
        torch._dynamo.reset()
        return torch.compile(forward, backend="eager", fullgraph=True)(x, p)


config.nontraceable_tensor_subclasses.update(())
'''

SCENARIO = '''import torch

from pkg import compiled
from pkg.params import BaseParam, WeightParam

x = torch.arange(4.0)
for name, make in [("base", BaseParam), ("weight", WeightParam)]:
    p = make(torch.ones(2, 2), scale=2.0)
    print(name, compiled.run(x, p).tolist())
'''


def test_the_family_converts_and_compiled_code_answers_as_before(tmp_path: Path) -> None:
    original, converted = convert_copy(tmp_path, {
        "pkg/__init__.py": "", "pkg/params.py": PARAMS, "pkg/compiled.py": COMPILED})
    params = (converted / "pkg" / "params.py").read_text()
    assert "def BaseParam(" in params and "def WeightParam(" in params
    before, after = answers_of(original, SCENARIO), answers_of(converted, SCENARIO)
    assert before == after and before["weight"] == "[0.0, 8.0, 16.0, 24.0]"


LOOK_ALIKES = {
    "a local named config": '''from torch._dynamo import config

from pkg.params import WeightParam


class Recorder:
    def patch(self, key, value):
        self.value = value
        return self


def f(p):
    config = Recorder()
    kept = config.patch("traceable_tensor_subclasses", [WeightParam])
    return isinstance(p, kept.value[0])
''',
    "the registry read back": '''from torch._dynamo import config

from pkg.params import WeightParam


def f(p):
    with config.patch("traceable_tensor_subclasses", {WeightParam}):
        return type(p) in config.traceable_tensor_subclasses
''',
}

ASK = '''import torch

from pkg import use
from pkg.params import BaseParam, WeightParam

for name, made in [("base", BaseParam(torch.ones(2))), ("weight", WeightParam(torch.ones(2))),
                   ("plain", torch.nn.Parameter(torch.ones(2))), ("none", None)]:
    try:
        print(name, use.f(made))
    except Exception as exc:
        print(name, "raised", type(exc).__name__)
'''


@pytest.mark.parametrize("case", sorted(LOOK_ALIKES))
def test_look_alikes_and_readers_of_the_registry_answer_as_before(case: str, tmp_path: Path) -> None:
    """Second review of 2026-12-06: a ``config`` of the code's own, and a registry the
    code reads back, were accepted and answered otherwise after conversion."""
    original, converted = convert_copy(tmp_path, {
        "pkg/__init__.py": "", "pkg/params.py": PARAMS, "pkg/use.py": LOOK_ALIKES[case]})
    before, after = answers_of(original, ASK), answers_of(converted, ASK)
    assert before["weight"] == "True" and before == after
