"""``earlier_shadow_parts``: what an earlier ``apply`` wrote beside a class it kept as a
shadow is recognised only as a whole (the wrap and the kind's registration), so a
module's own function of the same name still refuses the class for the clash."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from codemod.analysis.earlier_shadows import earlier_shadow_parts
from codemod.cli import main

MEMBERS = {"wrap_base": "Base"}

WRAP = "def wrap_base(param, weight_loader, **kwargs):\n    param.weight_loader = weight_loader\n"
FIELDS = 'register_param_fields(Features.Base, {"_weight_loader": "weight_loader"})\n'
KIND = 'register_param_kind(Features.Base, methods={"load": Base.load})\n'


def parts(text: str) -> dict[str, list[int]]:
    return earlier_shadow_parts(cst.parse_module(text).body, MEMBERS)


def test_wrap_and_registrations_together():
    text = "class Base: pass\n" + WRAP + FIELDS + KIND + "x = 1\n"
    assert parts(text) == {"wrap_base": [1, 2, 3]}


def test_wrap_and_kind_without_fields():
    assert parts(WRAP + "y = 2\n" + KIND) == {"wrap_base": [0, 2]}


@pytest.mark.parametrize("text", [
    WRAP,  # the name alone: the module's own function
    WRAP + FIELDS,  # no kind registered
    KIND,  # no wrap
    WRAP.replace("(param,", "(p,") + KIND,  # not a wrap's first parameter
    WRAP + KIND.replace("Features.Base", "Features.Other"),  # another class's kind
    WRAP + "register_param_kind(kind=Features.Base)\n",  # not as apply writes it
], ids=["wrap-alone", "fields-only", "kind-alone", "other-param", "other-kind", "keyword"])
def test_anything_less_is_not_recognised(text):
    assert parts(text) == {}


def test_a_function_of_the_module_with_the_wrap_name_still_refuses(tmp_path: Path, capsys):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "params.py").write_text(textwrap.dedent('''\
        from torch.nn import Parameter


        class Base(Parameter):
            def __new__(cls, data, **kwargs):
                return super().__new__(cls, data=data, requires_grad=False)

            def __init__(self, data, weight_loader):
                self._weight_loader = weight_loader


        def wrap_base(param):
            return param
    '''))
    before = (pkg / "params.py").read_text()
    assert main(["apply", str(pkg)]) == 1
    assert "the generated name 'wrap_base' is already used in pkg.params" in capsys.readouterr().err
    assert (pkg / "params.py").read_text() == before


FAMILY = '''\
from torch.nn import Parameter


class Base(Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)

    def __init__(self, data, tag="t"):
        self.tag = tag

    def hello(self):
        return "base:" + self.tag


class Leaf(Base):
    pass


class Kept(Base):
    pass
'''


def _first_run(tmp_path: Path) -> Path:
    """``pkg`` converted once with ``Kept`` allowed: ``Base`` a shadow beside its wrap."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "params.py").write_text(FAMILY)
    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.codemod]\nallow-classes = ["Kept"]\n')
    assert main(["apply", str(pkg)]) == 1
    assert "def wrap_base(param" in (pkg / "params.py").read_text()
    config.unlink()
    return pkg


@pytest.mark.parametrize("edit", [
    ("    param.tag = tag\n", "    param.tag = tag\n    param.calibrated = True\n"),
    ("def wrap_base(", "# tuned by hand\ndef wrap_base("),
    ('"hello": Base.hello', '"hello": Base.hello, "shout": Base.hello'),
], ids=["wrap-body", "comment", "registration"])
def test_a_hand_edit_of_the_earlier_output_fails_the_run(tmp_path: Path, edit, capsys):
    pkg = _first_run(tmp_path)
    text = (pkg / "params.py").read_text()
    assert edit[0] in text
    edited = text.replace(edit[0], edit[1], 1)
    (pkg / "params.py").write_text(edited)
    capsys.readouterr()
    assert main(["apply", str(pkg)]) == 2
    err = capsys.readouterr().err
    assert "pkg/params.py:11: Base: the wrap `wrap_base` and the registrations an earlier" in err
    assert (pkg / "params.py").read_text() == edited


def test_the_earlier_output_as_written_gives_way(tmp_path: Path):
    pkg = _first_run(tmp_path)
    assert main(["apply", str(pkg)]) == 1
    text = (pkg / "params.py").read_text()
    assert "def Base(" in text and "def Kept(" in text and text.count("def wrap_base(") == 1
    assert main(["apply", str(pkg)]) == 0


USER = '''\
from pkg.params import Kept
from pkg.params_features import Features, has_param_feature


class Holder:
    def has_param_feature(self, p, *features):
        return "method"

    def check(self, p):
        return self.has_param_feature(p, Features.Leaf) or isinstance(p, Kept)


def plain(p):
    return has_param_feature(p, Features.Leaf) or isinstance(p, Kept)


def commented(p):
    return (has_param_feature(p, Features.Leaf)  # leaves
            or isinstance(p, Kept))


def walrus(p, q):
    return has_param_feature(p, [p := q, Features.Leaf][1]) or isinstance(p, Kept)
'''


def test_an_earlier_check_merges_only_where_the_answer_is_the_same(tmp_path: Path):
    """``has_param_feature(p, A) or isinstance(p, B)`` an earlier run wrote becomes one
    call once ``B`` converts, but not for a method of that name, a comment inside, or a
    feature argument with a side effect (fifth and sixth reviews)."""
    pkg = _first_run(tmp_path)
    (pkg / "user.py").write_text(USER)
    assert main(["apply", str(pkg)]) == 1
    text = (pkg / "user.py").read_text()
    flat = " ".join(text.split()).replace("( ", "(").replace(" )", ")")
    assert "return has_param_feature(p, Features.Leaf, Features.Kept)\n" in text
    assert "self.has_param_feature(p, Features.Leaf) or has_param_feature(p, Features.Kept)" in flat
    assert "# leaves" in text
    assert "[p := q, Features.Leaf][1]) or has_param_feature(p, Features.Kept)" in flat


def test_names_added_beside_an_alias_all_import(tmp_path: Path):
    """An isort-ordered import holding an alias gains the helpers on a line of its own (the
    sixth review: sorting them in lost names, ``NameError``)."""
    pkg = _first_run(tmp_path)
    (pkg / "user.py").write_text(
        "from pkg.params import Kept\nfrom pkg.params_features import param_type as pt\n\n\n"
        "def check(p):\n    return isinstance(p, Kept), pt\n")
    assert main(["apply", str(pkg)]) == 1
    tree = ast.parse((pkg / "user.py").read_text())
    imported = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
                for alias in node.names}
    assert {"Features", "has_param_feature", "pt"} <= imported
