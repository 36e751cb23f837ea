"""A refused leaf keeps only what it must: its bases serve converted relatives as shadows.

* A kept base with read-only properties over fields is a shadow: a write of the field
  from outside goes through ``set_param_field``, which gives a class instance its field
  (its property reads it) and a converted parameter the attribute.
* A shadow's own methods that read or write the field, or call ``super()``, are
  rewritten so that, bound onto converted parameters, they work on both kinds.
* What no rewrite covers (``+=``, ``del``, unpacking into the field) keeps the base a
  class and says exactly that.
* ``a = p._f = v`` writes through the helper too (a read-only property would refuse
  ``p.f = v`` on a class instance).
* A converted relative deep-copies with the shadow's functions acting on the copy.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from codemod.cli import main

GOLDEN = Path(__file__).resolve().parents[2] / "fixtures" / "golden"

FAMILY = '''
    import torch
    from torch.nn import Parameter


    class Base(Parameter):
        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data=data, requires_grad=False)

        def __init__(self, data, dim=0):
            self._dim = dim

        @property
        def dim_(self):
            return self._dim

        def load(self, w):
            self.data.copy_(w)

        def shifted(self):
            return self._dim + 1

        # extra

    class Mid(Base):
        def load(self, w):
            super().load(w * 2)


    class Leaf(Mid):
        @property
        def data(self):
            return torch.Tensor.data.__get__(self)


    class Sibling(Mid):
        pass
'''


def _tree(root: Path, extra: str = "", use: str = "") -> Path:
    files = {"pkg/__init__.py": "",
             "pkg/params.py": textwrap.dedent(FAMILY).replace("    # extra\n", textwrap.indent(
                 textwrap.dedent(extra), "    ")),
             "pkg/use.py": textwrap.dedent(use)}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text.lstrip("\n"))
    return root / "pkg"


def _refusals(err: str) -> dict[str, str]:
    out = {}
    for line in err.splitlines():
        if line.startswith("  ") and ": " in line:
            _where, cls, reason = line.strip().split(": ", 2)
            out[cls] = reason
    return out


def _apply(capsys, pkg: Path) -> dict[str, str]:
    capsys.readouterr()
    main(["apply", str(pkg)])
    return _refusals(capsys.readouterr().err)


def test_read_only_base_with_field_uses_and_super_is_a_shadow(tmp_path, capsys):
    pkg = _tree(tmp_path, extra='''
        def move(self, dim):
            self._dim = dim
    ''', use='''
        def relabel(p, d):
            p._dim = d
            return p.dim_
    ''')
    reasons = _apply(capsys, pkg)
    assert "Sibling" not in reasons, reasons
    assert reasons["Base"].endswith(
        "get its attributes through wrap_base and its methods through its registered kind")
    assert reasons["Mid"].endswith(
        "get its attributes through wrap_mid and its methods through its registered kind")
    params = (pkg / "params.py").read_text()
    # The kept classes' own functions work on both kinds; their properties are untouched.
    assert '        return param_field(self, "_dim") + 1\n' in params
    assert '        set_param_field(self, "_dim", "dim_", dim)\n' in params
    assert "        Base.load(self, w * 2)\n" in params
    assert "        return self._dim\n" in params
    script = textwrap.dedent('''
        import copy, torch
        from pkg.params import Leaf, Sibling
        from pkg.use import relabel
        for p in (Leaf(torch.zeros(2), dim=0), Sibling(torch.zeros(2), dim=0)):
            p.load(torch.ones(2))
            print(p.tolist(), p.dim_, p.shifted(), relabel(p, 3), p.shifted())
            p.move(5)
            print(p.dim_, p.shifted())
    ''')
    env = dict(os.environ, PYTHONPATH=str(tmp_path), PYTHONWARNINGS="ignore")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[2.0, 2.0] 0 1 3 4", "5 6"] * 2


@pytest.mark.parametrize("extra, how", [
    ("def bump(self):\n    self._dim += 1\n", "bump changes in place (`+=`)"),
    ("def drop(self):\n    del self._dim\n", "drop deletes"),
    ("def swap(self, d):\n    self._dim, x = d, 0\n", "swap unpacks into"),
])
def test_field_changes_no_rewrite_covers_keep_the_base_and_say_why(tmp_path, capsys, extra, how):
    reasons = _apply(capsys, _tree(tmp_path, extra=extra))
    why = (f"Base.{how} the property field '_dim'; only a plain read or `=` of it can serve "
           "both kinds (a converted parameter holds the attribute)")
    assert reasons["Sibling"] == ("kept as a class because it derives from Base, which stays a "
                                  f"class and cannot also serve converted subclasses: {why}")


def test_chained_field_write_goes_through_the_helper(tmp_path, capsys):
    pkg = _tree(tmp_path, use='''
        def relabel(p, d):
            old = p._dim = d
            if d: new = p._dim = d; print(new)
            return old
    ''')
    _apply(capsys, pkg)
    assert (pkg / "use.py").read_text() == textwrap.dedent('''\
        from pkg.params_features import set_param_field


        def relabel(p, d):
            old = d
            set_param_field(p, "_dim", "dim_", old)
            if d:
                new = d
                set_param_field(p, "_dim", "dim_", new)
                print(new)
            return old
    ''')


def test_converted_relative_of_a_shadow_deep_copies(tmp_path):
    """The old constructors made ``deepcopy`` raise (``type(p)(data, requires_grad)``);
    a converted parameter copies, and the kept classes' functions act on the copy."""
    script = textwrap.dedent('''
        import copy, torch
        from eng.parameter import ChannelScale
        p = ChannelScale(data=torch.zeros(4, 1), output_dim=0, weight_loader=print)
        c = copy.deepcopy(p)
        c.move_output(1)
        print(p.shard_dim(), c.shard_dim(), c.output_dim, c.weight_loader is print)
        c.load_column(torch.arange(8.0).reshape(8, 1) if False else torch.ones(4, 1))
        print(p.tolist() == torch.zeros(4, 1).tolist(), c.tolist() == torch.ones(4, 1).tolist())
    ''')
    tree = GOLDEN / "shadow_read_only" / "expected"
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONWARNINGS="ignore",
               PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["0 1 1 True", "True True"]
