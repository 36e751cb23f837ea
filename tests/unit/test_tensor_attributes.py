"""A class that defines an attribute torch's tensor type defines in C stays a class.

On the class's own instances the class member wins over torch's data descriptor; on a
plain Parameter the descriptor wins over anything stored on the instance, so a factory
would silently answer torch's value. Such a class is refused, naming the attribute
(Aphrodite's BitsAndBytes parameter caches its own ``dtype``).
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
import torch

from codemod import api
from codemod.planning.plan import build_plan
from codemod.types import TENSOR_DATA_DESCRIPTORS, Options


def test_the_list_is_torchs_own() -> None:
    """The list equals the public data descriptors of the installed torch's tensor types."""
    live = {name for klass in (torch.nn.Parameter, torch.Tensor, torch._C.TensorBase)
            for name, value in vars(klass).items()
            if inspect.isdatadescriptor(value) and not name.startswith("_")}
    assert TENSOR_DATA_DESCRIPTORS == live


def test_a_plain_parameter_ignores_an_instance_dtype() -> None:
    """Why the refusal is needed: the instance attribute loses to torch's descriptor."""
    param = torch.nn.Parameter(torch.zeros(2))
    with pytest.raises(AttributeError):
        param.dtype = torch.float16  # type: ignore[misc]
    assert param.dtype is torch.float32


@pytest.mark.parametrize("member", [
    "    @cached_property\n    def dtype(self):\n        return torch.float16\n",
    "    @property\n    def shape(self):\n        return (1,)\n",
    "    device = 'meta'\n",
    "    def data(self):\n        return None\n",
])
def test_overriding_a_tensor_attribute_is_refused(tmp_path: Path, member: str) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "params.py").write_text(
        "from functools import cached_property\n\nimport torch\n\n\n"
        "class Weight(torch.nn.Parameter):\n" + member
        + "\n\nclass Plain(torch.nn.Parameter):\n    def tag(self):\n        return 1\n"
    )
    result = api.read_tree([tmp_path], Options())
    plan = build_plan(api.analyse(result.sources, result))
    by_name = {p.name: p for p in plan.classes.values()}
    name = member.split("def ")[-1].split("(")[0] if "def " in member else member.split()[0]
    assert by_name["Weight"].refusal is not None
    assert by_name["Weight"].refusal.reason == (
        f"overrides `{name}`, the tensor's C-level attribute; a plain Parameter cannot")
    assert by_name["Plain"].converted
