"""A class member written, augmented or deleted through the class (``X.CONST = v``) changed
what every instance saw; a converted parameter holds its own copy, so no rewrite can keep
that. Such a spelling refuses the hierarchy (before, ``X.CONST = 9`` became an assignment
to a local ``_X_CONST`` and ``X.CONST += 1`` raised ``UnboundLocalError``)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from codemod.cli import main

FAMILY = '''
    from torch.nn import Parameter


    class BaseParam(Parameter):
        SCALE = 2

        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data=data, requires_grad=False)

        def load(self, w):
            return w


    class ColumnParam(BaseParam):
        SCALE = 3
'''

WRITES = [
    "ColumnParam.SCALE = 9",
    "ColumnParam.SCALE += 1",
    "ColumnParam.SCALE: int = 9",
    "ColumnParam.SCALE, other = 9, 1",
    "[ColumnParam.SCALE, *rest] = 9, 1",
    "del ColumnParam.load",
    "for ColumnParam.SCALE in (1, 2): pass",
    "with open('/dev/null') as ColumnParam.SCALE: pass",
    "[0 for ColumnParam.SCALE in (1, 2)]",
]


@pytest.mark.parametrize("write", WRITES)
def test_class_member_write_refuses(tmp_path: Path, write: str, capsys: pytest.CaptureFixture[str]) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "params.py").write_text(textwrap.dedent(FAMILY).lstrip())
    user = f"from pkg.params import ColumnParam\n\n\ndef change():\n    {write}\n"
    (pkg / "user.py").write_text(user)
    main(["apply", str(tmp_path)])
    assert (pkg / "user.py").read_text() == user
    assert "class ColumnParam(BaseParam):" in (pkg / "params.py").read_text()
    assert "ColumnParam: used as a class at" in capsys.readouterr().err


def test_class_member_read_still_rewritten(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "params.py").write_text(textwrap.dedent(FAMILY).lstrip())
    (pkg / "user.py").write_text(
        "from pkg.params import ColumnParam\n\n\ndef read(p):\n"
        "    return ColumnParam.SCALE, ColumnParam.load(p, 1)\n")
    main(["apply", str(tmp_path)])
    text = (pkg / "user.py").read_text()
    assert "ColumnParam" not in text.split("def read")[1]
