"""CM003's advice is what ``apply`` writes for a subclass, and it works as written.

``class Mine(Packed)`` after ``Packed`` became a factory: ``check`` tells the user to write
a factory that builds a ``Parameter``, gives it its kind (``init_param_kind``), runs the
wraps of ``Packed``'s chain and its own, and registers the kind with ``Packed``'s as base:
the shape ``apply`` writes for a subclass it converts. The advice written out by hand
gives a parameter whose kind, features, inherited methods and attributes are those a
converted subclass has.
"""

from __future__ import annotations

import importlib
import sys
import textwrap

import pytest

from codemod.check.rules import RULES_BY_CODE
from codemod.cli import main

from .helpers import run, write_tree

PARAMS = """
    from torch.nn import Parameter


    class Base(Parameter):
        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data=data, requires_grad=False)

        def __init__(self, data, loader=None):
            self.loader = loader

        def describe(self):
            return "base"


    class Packed(Base):
        def __init__(self, packed_dim=0, **kwargs):
            super().__init__(**kwargs)
            self.packed_dim = packed_dim
"""

#: The advice of docs/checks.md (CM003) for ``class Mine(Packed)`` with an ``extra``.
MINE = """
    from torch.nn import Parameter

    from pkg.params import wrap_base, wrap_packed
    from pkg.params_features import Features, init_param_kind, register_param_kind


    def Mine(data, **kwargs) -> Parameter:
        param = Parameter(data=data, requires_grad=False)
        init_param_kind(param, Features.Mine)
        wrap_base(param, data=data, **kwargs)
        wrap_packed(param, **kwargs)
        wrap_mine(param, **kwargs)
        return param


    def wrap_mine(param, extra=None, **kwargs):
        param.extra = extra


    def describe_of_mine(self):
        return "mine"


    register_param_kind(Features.Mine, bases=(Features.Packed,),
                        methods={"describe": describe_of_mine})
"""


@pytest.fixture
def fresh_pkg(monkeypatch: pytest.MonkeyPatch):
    """``pkg`` imported afresh by the test, and no ``pkg`` module of it left behind for
    later tests (the ones there before come back when ``monkeypatch`` undoes)."""
    for name in [n for n in sys.modules if n == "pkg" or n.startswith("pkg.")]:
        monkeypatch.delitem(sys.modules, name)
    yield
    for name in [n for n in sys.modules if n == "pkg" or n.startswith("pkg.")]:
        del sys.modules[name]


def test_the_help_names_what_apply_writes() -> None:
    advice = RULES_BY_CODE["CM003"].help
    assert "add_param_feature" not in advice
    for words in ("init_param_kind(param, Features.Y)", "wrap_y(param, **kwargs)",
                  "register_param_kind(Features.Y, bases=(Features.X,)"):
        assert words in advice, advice


def test_the_finding_names_the_subclass_kind(tmp_path, capsys) -> None:
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/params.py": PARAMS})
    assert main(["apply", str(root)]) == 1
    (root / "pkg/mine.py").write_text("from pkg.params import Packed\n\n\nclass Mine(Packed):\n    pass\n")
    result = run(capsys, "check", root)
    assert "CM003" in result.out
    assert "init_param_kind(param, Features.Mine)" in result.out, result.out
    assert "register_param_kind(Features.Mine, bases=(Features.Packed,))" in result.out
    assert "add_param_feature" not in result.out


def test_the_advice_works_as_written(tmp_path, monkeypatch, fresh_pkg) -> None:
    torch = pytest.importorskip("torch")
    root = write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/params.py": PARAMS})
    assert main(["apply", str(root)]) == 1
    runtime = root / "pkg/params_features.py"
    text = runtime.read_text()
    member = '    Packed = "pkg.params.Packed"\n'
    assert member in text
    runtime.write_text(text.replace(member, member + '    Mine = "pkg.mine.Mine"\n'))
    (root / "pkg/mine.py").write_text(textwrap.dedent(MINE).lstrip("\n"))
    monkeypatch.syspath_prepend(str(root))
    mine = importlib.import_module("pkg.mine")
    features = importlib.import_module("pkg.params_features")
    p = mine.Mine(torch.zeros(2), loader=print, packed_dim=1, extra=3)
    assert type(p) is torch.nn.Parameter and not p.requires_grad
    assert (p.loader, p.packed_dim, p.extra) == (print, 1, 3)
    assert features.param_kind_is(p, features.Features.Mine)
    assert features.has_param_feature(p, features.Features.Packed)
    assert features.has_param_feature(p, features.Features.Base)
    assert p.describe() == "mine"
    packed = importlib.import_module("pkg.params").Packed(torch.zeros(2))
    assert packed.describe() == "base" and not features.has_param_feature(packed, features.Features.Mine)
