"""A member of a converted class read through an instance's type (``type(p).CONST``,
``p.__class__.load(p, w)``) refuses the class that defines it, naming the line: after
conversion ``type(p)`` is ``torch.nn.Parameter``, which has no such member (before this
rule the class was converted and the read raised ``AttributeError``)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from codemod.cli import main

FAMILY = '''
    from torch.nn import Parameter


    class BaseParam(Parameter):
        PACK = 4

        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data=data, requires_grad=False)

        def load(self, w):
            return w

        @staticmethod
        def helper(x):
            return x


    class ColumnParam(BaseParam):
        pass
'''

READS = [
    "type(p).PACK",
    "p.__class__.PACK",
    "type(p).load(p, 1)",
    "p.__class__.helper(1)",
    "type(make()).PACK",
    # Across a comment line and a line continuation: the lexical gate before the parse
    # must let these through.
    "(type(p)  # why\n        .PACK)",
    "(p.__class__.\n        # why\n        load(p, 1))",
    "type(p) \\\n        .PACK",
    # By a literal name (the adversarial review of 2026-12-04: these answered None/False).
    "getattr(type(p), 'PACK', None)",
    "hasattr(p.__class__, \"load\")",
    # Written by name (review of 2026-12-06: set the constant on torch's Parameter).
    "setattr(type(p), 'PACK', 2)",
    "delattr(p.__class__, 'PACK')",
    "monkeypatch.setattr(type(p), 'PACK', 2)",
    "type.__setattr__(type(p), 'PACK', 2)",
]


def _tree(tmp_path: Path, use: str) -> Path:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "params.py").write_text(textwrap.dedent(FAMILY).lstrip())
    (pkg / "user.py").write_text(f"def read(p, make=None):\n    return {use}\n")
    return pkg


@pytest.mark.parametrize("use", READS)
def test_a_member_read_through_the_type_refuses(tmp_path: Path, use: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    pkg = _tree(tmp_path, use)
    main(["apply", str(tmp_path)])
    err = capsys.readouterr().err
    assert "class BaseParam(Parameter):" in (pkg / "params.py").read_text()
    assert "BaseParam: used at " in err and "user.py:2" in err
    assert "through the instance's type, which is torch.nn.Parameter after conversion" in err


@pytest.mark.parametrize("use", ["type(p).__name__", "type(p).other", "p.__class__.mro()",
                                 "getattr(type(p), 'other', None)", "getattr(p, 'PACK')"])
def test_other_attributes_of_the_type_convert(tmp_path: Path, use: str) -> None:
    pkg = _tree(tmp_path, use)
    (pkg / "holder.py").write_text(
        "class Holder:\n    PACK = 1\n\n    def read(self):\n        return type(self).PACK\n")
    main(["apply", str(tmp_path)])
    assert "def BaseParam(" in (pkg / "params.py").read_text()


def test_a_static_methods_first_parameter_is_not_self(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """``self`` of a method is left alone (its class's own rules apply); a static
    method's first parameter is an ordinary argument and is screened."""
    pkg = _tree(tmp_path, "p")
    (pkg / "holder.py").write_text(
        "class Holder:\n    @staticmethod\n    def read(p):\n        return type(p).PACK\n")
    main(["apply", str(tmp_path)])
    err = capsys.readouterr().err
    assert "class BaseParam(Parameter):" in (pkg / "params.py").read_text()
    assert "holder.py:4" in err
