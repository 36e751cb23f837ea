"""On a tree an earlier ``apply`` converted, a class kept for a use no rewrite covers is
reported with that use, not with a clash of the names the earlier run generated.

The first run keeps ``WeightParam`` (a function compares ``type(p)``, held in a local
that it also reads otherwise, with it) and with it its base ``BaseParam``, as a shadow whose wrap function
``wrap_base_param`` it writes beside the class, and converts ``ScaleParam``. Planned
again, the tree holds ``wrap_base_param`` already: refused at once for that clash, every
class of the module used to give it as its reason, and the use in ``offload.py`` was never
looked for. A clash now refuses its classes only once the rounds found every other
reason; a real clash (a function of the engine's own with the name) still refuses.
"""

from __future__ import annotations

from pathlib import Path

from codemod import api
from codemod.cli import main
from codemod.types import Options

PARAMS = '''from torch.nn import Parameter


class BaseParam(Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)

    def __init__(self, data, weight_loader=None):
        self._weight_loader = weight_loader

    @property
    def weight_loader(self):
        return self._weight_loader


class ScaleParam(BaseParam):
    pass


class WeightParam(BaseParam):
    pass
'''

OFFLOAD = '''from pkg.params import WeightParam


def rebuild(param):
    kind = type(param)
    print(kind.__name__)
    if kind == WeightParam:
        return WeightParam(data=param.data, weight_loader=param.weight_loader)
    return param
'''

USER = '''from pkg.params import ScaleParam


def make(data):
    return ScaleParam(data=data)
'''


def _tree(root: Path, extra: str = "") -> Path:
    package = root / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "params.py").write_text(PARAMS + extra)
    (package / "offload.py").write_text(OFFLOAD)
    (package / "user.py").write_text(USER)
    return package


def _reasons(package: Path) -> dict[str, str]:
    result = api.run([package], Options())
    return {r.subject: r.reason for r in result.refusals}


def test_a_second_plan_gives_the_use_that_kept_the_class(tmp_path: Path) -> None:
    package = _tree(tmp_path)
    first = _reasons(package)
    assert "offload.py" in first["WeightParam"] and "type(param)" in first["WeightParam"]
    assert "ScaleParam" not in first
    assert main(["apply", str(package)]) in (0, 1)
    params = (package / "params.py").read_text()
    assert "class BaseParam(Parameter)" in params and "def wrap_base_param(" in params
    assert "class ScaleParam" not in params
    again = _reasons(package)
    assert set(again) == {"BaseParam", "WeightParam"}
    assert not any("already used" in reason for reason in again.values()), again
    assert again["WeightParam"] == first["WeightParam"]
    assert "its subclass WeightParam is refused" in again["BaseParam"]
    # And the second run changes nothing.
    before = {p.name: p.read_text() for p in package.iterdir() if p.suffix == ".py"}
    assert main(["apply", str(package)]) in (0, 1)
    assert before == {p.name: p.read_text() for p in package.iterdir() if p.suffix == ".py"}


def test_a_real_clash_still_refuses_with_the_name(tmp_path: Path) -> None:
    package = _tree(tmp_path, "\n\ndef wrap_base_param(param):\n    return param\n")
    reasons = _reasons(package)
    assert "already used" in reasons["BaseParam"] and "wrap_base_param" in reasons["BaseParam"]
    assert "already used" in reasons["ScaleParam"]
