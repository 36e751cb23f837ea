"""A property's backing field written where ``set_param_field`` cannot stand (a nested
target: tuple, list, starred, ``for``, ``with``, comprehension) or where no rewrite
reaches it (``p._f += v``, ``del p._f``, ``p.__dict__["_f"] = v`` and the other writes
through the attribute dict with the field's name) refuses the classes the field belongs
to, naming the line. Before, a nested target stopped the run with "the converted text
does not compile", ``+=``/``del`` were left to raise ``AttributeError`` on a converted
parameter (it holds the attribute, not the field), and a dict write gave it a field no
longer read."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from codemod.cli import main

FAMILY = '''
    from torch.nn import Parameter


    class BaseParam(Parameter):
        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data=data, requires_grad=False)

        def __init__(self, data, tag="t"):
            self._tag = tag

        @property
        def tag(self):
            return self._tag

        @tag.setter
        def tag(self, value):
            self._tag = value


    class ColumnParam(BaseParam):
        def cycle(self, xs):
            for self._tag in xs:
                pass
            return [self._tag for self._tag in xs]
'''

KEPT_LEAF = '''

    class PinnedParam(BaseParam):
        @property
        def data(self):
            return super().data
'''

WRITES = [
    "p._tag, other = 'x', 1",
    "[p._tag, *rest] = 'x', 1",
    "*p._tag, last = 'x', 1",
    "for p._tag in ('a', 'b'): pass",
    "for (p._tag, n) in [('a', 1)]: pass",
    "with open('/dev/null') as p._tag: pass",
    "with open('/dev/null') as (p._tag, q): pass",
    "[0 for p._tag in ('a', 'b')]",
    "{k: 0 for k, p._tag in [(1, 'a')]}",
    "p._tag += 'x'",
    "del p._tag",
    "del p._tag, other",
    "p.__dict__['_tag'] = 'x'",
    "vars(p)['_tag'] = 'x'",
    "p.__dict__.update(_tag='x')",
    "p.__dict__.update({'_tag': 'x'})",
    "p.__dict__.pop('_tag', None)",
    "del p.__dict__['_tag']",
    "p.__dict__.setdefault('_tag', 'x')",
]


def _tree(tmp_path: Path, write: str, family: str) -> Path:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "params.py").write_text(textwrap.dedent(family).lstrip())
    (pkg / "user.py").write_text(f"def change(p, other=None, q=None):\n    {write}\n")
    return pkg


@pytest.mark.parametrize("family", [FAMILY, FAMILY + KEPT_LEAF], ids=["converted", "shadow"])
@pytest.mark.parametrize("write", WRITES)
def test_unreached_field_write_refuses(tmp_path: Path, write: str, family: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    pkg = _tree(tmp_path, write, family)
    before = {p.name: p.read_text() for p in pkg.iterdir()}
    code = main(["apply", str(tmp_path)])
    err = capsys.readouterr().err
    assert "does not compile" not in err
    assert code != 2, err
    assert {p.name: p.read_text() for p in pkg.iterdir() if p.suffix == ".py"} == before
    assert "BaseParam: used at " in err and "user.py:2" in err
    assert "writes the backing field '_tag' of property 'tag'" in err


def test_plain_field_write_and_own_nested_targets_still_convert(tmp_path: Path) -> None:
    """``p._tag = v`` is rewritten; ``for self._tag in`` inside the class becomes ``for
    self.tag in`` with the class, which is valid; ``self._tag`` of an ordinary class's
    method is that object's own field."""
    pkg = _tree(tmp_path, "p._tag = 'x'", FAMILY)
    (pkg / "holder.py").write_text(
        "class Holder:\n    def bump(self):\n        for self._tag in (1, 2):\n"
        "            pass\n        self._tag += 1\n        del self._tag\n")
    main(["apply", str(tmp_path)])
    assert "def BaseParam(" in (pkg / "params.py").read_text()
    assert "for self.tag in xs:" in (pkg / "params.py").read_text()
    assert "set_param_field(p, \"_tag\", \"tag\", 'x')" in (pkg / "user.py").read_text()


#: The field by name in a call that no field rewrite reaches (fourth adversarial review:
#: each converted, then raised ``AttributeError`` or lost the write).
CALLS = [
    "delattr(p, '_tag')",
    "p.__delattr__('_tag')",
    "p.__getattribute__('_tag')",
    "p.__setattr__('_tag', 'x')",
    "object.__setattr__(p, '_tag', 'x')",
    "operator.attrgetter('_tag')(p)",
]


@pytest.mark.parametrize("call", CALLS)
def test_field_named_in_an_unreached_call_refuses(tmp_path: Path, call: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    pkg = _tree(tmp_path, call, FAMILY)
    before = {p.name: p.read_text() for p in pkg.iterdir()}
    assert main(["apply", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert {p.name: p.read_text() for p in pkg.iterdir() if p.suffix == ".py"} == before
    assert "BaseParam: used at " in err and "user.py:2" in err
    assert "names the backing field '_tag' of property 'tag' in a call of `" in err


@pytest.mark.parametrize("call", ["getattr(p, '_tag')", "getattr(p, '_tag', None)",
                                  "hasattr(p, '_tag')", "setattr(p, '_tag', 'x')"])
def test_field_named_in_a_rewritten_call_converts(tmp_path: Path, call: str) -> None:
    pkg = _tree(tmp_path, call, FAMILY)
    assert main(["apply", str(tmp_path)]) == 1
    assert "def BaseParam(" in (pkg / "params.py").read_text()
    assert "_field(p, \"_tag\"" in (pkg / "user.py").read_text()
