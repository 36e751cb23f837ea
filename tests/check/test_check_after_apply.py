"""``codemod check`` on a tree ``apply`` converted and someone broke again by hand.

Every class-only use of a factory function left anywhere is a finding with
``path:line:col``: checks and bases the use-site visitor sees, and also attribute reads,
unions, ``except``, ``case`` patterns, ``super()``, ``register()``, and uses reached
through star imports (``__all__`` honoured), ``getattr(module, "X")`` or re-exports.
Each case printed "All checks passed" before these were looked for.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from codemod.cli import main

from .helpers import PARAMS, run, write_tree

TREE = {
    "pkg/__init__.py": "from .params import Base, Packed  # re-export\n",
    "pkg/params.py": PARAMS,
    "pkg/sub/__init__.py": "from pkg.params import *\n\n__all__ = ['Base', 'Packed']\n",
}

HEAD = "import functools\nimport pkg.params as pm\nfrom pkg.params import Base, Packed\n\n\n"


@pytest.fixture(scope="module")
def converted_once(tmp_path_factory) -> Path:
    """TREE after ``codemod apply`` (made once; tests take copies)."""
    root = write_tree(tmp_path_factory.mktemp("converted"), TREE)
    assert main(["apply", str(root)]) == 1
    return root


@pytest.fixture
def converted(converted_once, tmp_path) -> Path:
    return Path(shutil.copytree(converted_once, tmp_path / "converted"))


CASES = [
    # (id, source of pkg/new.py, [(line, column, code)], words in the message)
    ("attribute-read", HEAD + "def f(p):\n    return Packed.describe(p)\n", [(7, 12, "CM004")],
     "reads an attribute of the former class"),
    ("dunder-mro", HEAD + "def f():\n    return Base.__mro__\n", [(7, 12, "CM004")], "attribute"),
    ("union-in-isinstance", HEAD + "def f(p):\n    return isinstance(p, Packed | int)\n",
     [(7, None, "CM004")], "`isinstance` check"),  # a union reads like a tuple
    ("union-value", HEAD + "KINDS = Packed | Base\n", [(6, 9, "CM004"), (6, 18, "CM004")], "`|`"),
    ("except", HEAD + "def f(p):\n    try:\n        p()\n    except Packed:\n        pass\n",
     [(9, 12, "CM004")], "`except`"),
    ("match-class", HEAD + "def f(p):\n    match p:\n        case Packed():\n            return 1\n",
     [(8, 14, "CM004")], "`case`"),
    ("super", HEAD + "def f(p):\n    return super(Packed, p)\n", [(7, 18, "CM004")], "`super()`"),
    ("singledispatch-register", HEAD + "@functools.singledispatch\ndef f(x):\n    return 0\n\n\n"
     "f.register(Packed, lambda x: 1)\n", [(11, 12, "CM004")], "`register()`"),
    ("star-import-isinstance", "from pkg.params import *\n\n\ndef f(p):\n    return isinstance(p, Packed)\n",
     [(5, 26, "CM004")], "from pkg.params import *"),
    ("star-import-type-is", "from pkg.params import *\n\n\ndef f(p):\n    return type(p) is Base\n",
     [(5, 23, "CM004")], "never matches"),
    ("star-import-base", "from pkg.params import *\n\n\nclass Mine(Packed):\n    pass\n",
     [(4, 12, "CM003")], "subclassing a function fails"),
    ("reexport-through-star-all", "from pkg.sub import Packed\n\n\ndef f(p):\n    return isinstance(p, Packed)\n",
     [(5, 26, "CM004")], "star import in a re-exporting module"),
    ("getattr-module", HEAD + "def f(p):\n    return isinstance(p, getattr(pm, 'Packed'))\n",
     [(7, 26, "CM004")], "`getattr`"),
    ("module-dict", HEAD + "def f(p):\n    return isinstance(p, pm.__dict__['Packed'])\n",
     [(7, 26, "CM004")], "a module's `__dict__`"),
    ("import-module", "import importlib\n\n\ndef f(p):\n"
     "    return isinstance(p, importlib.import_module('pkg.params').Packed)\n",
     [(5, 26, "CM004")], "a module looked up by a string"),
]


@pytest.mark.parametrize(("source", "expected", "words"),
                         [pytest.param(s, e, w, id=i) for i, s, e, w in CASES])
def test_every_class_only_use_left_is_a_finding(converted, capsys, source, expected, words):
    (converted / "pkg/new.py").write_text(source)
    result = run(capsys, "check", converted)
    assert result.rc == 1, result.err
    found = [(Path(p).name, line, code) for p, line, code in
             [(m.split(":")[0], int(m.split(":")[1]), m.split(": ")[1].split()[0])
              for m in result.out.splitlines()]]
    for line, column, code in expected:
        assert ("new.py", line, code) in found, result.out
        if column is not None:
            assert f"new.py:{line}:{column}: {code}" in result.out, result.out
    assert words in result.out
    assert "All checks passed" not in result.err


def test_clean_tree_stays_clean(converted, capsys):
    result = run(capsys, "check", converted)
    assert (result.rc, result.out) == (0, ""), result.out


def test_harmless_uses_are_not_findings(converted, capsys):
    (converted / "pkg/new.py").write_text(
        HEAD + "def f(data):\n    return Packed(data), Packed.__name__, typing_name(Base)\n\n\n"
        "def typing_name(x):\n    return x.__qualname__\n")
    result = run(capsys, "check", converted)
    assert (result.rc, result.out) == (0, ""), result.out


def test_factories_recognised_without_the_features_class(converted, capsys):
    """A converted module is recognised by its factories (a ``def X`` that builds a
    Parameter and calls the module's ``wrap_*`` functions), not only by ``Features``."""
    params = converted / "pkg/params.py"
    params.write_text(params.read_text().replace("Features", "ParamKinds"))
    (converted / "pkg/new.py").write_text(HEAD + "def f(p):\n    return isinstance(p, Packed)\n")
    result = run(capsys, "check", converted)
    assert result.rc == 1, result.err
    assert "new.py:7:12: CM004" in result.out


def test_kept_class_keeps_its_reason_after_apply(tmp_path, capsys):
    """A family where one class is converted and one kept: ``check`` after ``apply`` names
    the same reason for the kept class as ``apply`` did (it used to give the clash of the
    names the first run generated: "the generated name ... is already used")."""
    root = write_tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/params.py": """
            import torch


            class Base(torch.nn.Parameter):
                def __new__(cls, data, **kwargs):
                    return super().__new__(cls, data=data, requires_grad=False)

                def __init__(self, data, dim=None):
                    self._dim = dim

                def describe(self):
                    return "base"


            class Packed(Base):
                pass


            class Keep(Base):
                pass
        """,
        "pkg/user.py": "from pkg.params import Keep\n\n\ndef f(p):\n    kind = type(p)\n"
                       "    return kind == Keep or kind.__name__ == 'Keep'\n",
    })
    assert main(["apply", str(root)]) == 1
    applied = capsys.readouterr().err
    assert "pkg/user.py:6" in applied
    result = run(capsys, "check", root)
    kept = [line for line in result.out.splitlines() if "`Keep`" in line]
    assert kept and all("pkg/user.py:6" in line for line in kept), result.out
    assert "already used" not in result.out
