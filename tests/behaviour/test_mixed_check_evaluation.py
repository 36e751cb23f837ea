"""A class check mixing a converted class with other members evaluates what the tuple
evaluated: the subject once, every other member once and in its order, whatever the
features answer.

Found by an adversarial review (2026-12-06): ``isinstance(p, (KINDS[k], Col))`` became
``has_param_feature(p, Features.Col) or isinstance(p, KINDS[k])``, so a converted
parameter never evaluated ``KINDS[k]`` (a ``KeyError`` the original raised was gone,
a counted lookup ran less often), and ``isinstance(stream.next_item, (Col, Plain))`` read
a property twice. Each case below is run on the original tree and on its conversion;
the answers, the exceptions and the counts of evaluations must be the same. A
``type(x.attr) in (Col, C)`` check, which would read ``x.attr`` on both sides of an
``or``, refuses ``Col`` instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .conftest import run_cli

pytest.importorskip("torch")

PARAMS = '''
    import torch
    from torch.nn import Parameter


    class Col(Parameter):
        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data=data, requires_grad=False)

        def __init__(self, data, output_dim=0):
            self.output_dim = output_dim
'''

USER = '''
    import torch

    from eng.params import Col
    from eng.registry import REG

    CALLS = []
    KINDS = {"dict": dict}


    class Plain:
        pass


    class Config:
        pass


    class Stream:
        def __init__(self, items):
            self.items = list(items)
            self.reads = 0

        @property
        def next_item(self):
            self.reads += 1
            return self.items.pop()


    def kind(name):
        CALLS.append(name)
        return KINDS[name]


    def attempt(check):
        try:
            return check()
        except Exception as exc:
            return type(exc).__name__


    def run():
        p = Col(torch.zeros(2))
        q = torch.zeros(2)
        stream = Stream([p, q, p])
        config = Config()
        return {
            "missing key": attempt(lambda: isinstance(p, (KINDS["none"], Col))),
            "missing attribute": attempt(lambda: isinstance(p, (Col, config.param_cls))),
            "calls": [isinstance(x, (kind("dict"), Col)) for x in (p, q)],
            "calls made": len(CALLS),
            "property": [isinstance(stream.next_item, (Col, Plain)) for _ in range(3)],
            "property reads": stream.reads,
            "imported member": [isinstance(x, (Col, torch.Tensor)) for x in (p, q, 1)],
            "from-imported member": [isinstance(x, (Col, REG.kind)) for x in (p, q)],
            "from-imported reads": REG.reads,
        }
'''

TYPE_IN_ATTRIBUTE = '''

    class Holder:
        def __init__(self, weight):
            self.weight = weight


    def kind_of(holder):
        return type(holder.weight) in (Col, torch.Tensor)
'''


REGISTRY = '''
    class Registry:
        def __init__(self):
            self.reads = 0

        @property
        def kind(self):
            self.reads += 1
            return dict


    REG = Registry()
'''


def _tree(root: Path, user: str) -> Path:
    (root / "eng").mkdir(parents=True)
    (root / "eng" / "__init__.py").write_text("")
    (root / "eng" / "registry.py").write_text(textwrap.dedent(REGISTRY).lstrip())
    (root / "eng" / "params.py").write_text(textwrap.dedent(PARAMS).lstrip())
    (root / "eng" / "user.py").write_text(textwrap.dedent(user).lstrip())
    (root / "pyproject.toml").write_text("")
    return root


def _run(tree: Path) -> dict[str, object]:
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1",
               PYTHONWARNINGS="ignore")
    done = subprocess.run(
        [sys.executable, "-c", "import json, eng.user; print(json.dumps(eng.user.run()))"],
        cwd=tree, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_mixed_checks_evaluate_as_the_tuple_did(tmp_path: Path) -> None:
    before = _tree(tmp_path / "before", USER)
    after = Path(shutil.copytree(before, tmp_path / "after"))
    assert run_cli(["apply", "--jobs", "1", str(after / "eng")]) == 1
    user = (after / "eng" / "user.py").read_text()
    assert "def Col(" in (after / "eng" / "params.py").read_text()
    # Members that run code, or a subject that may, go into one helper call ...
    assert 'isinstance_or_param_feature(p, KINDS["none"], Features.Col)' in user
    assert "isinstance_or_param_feature(p, config.param_cls, Features.Col)" in user
    assert 'isinstance_or_param_feature(x, kind("dict"), Features.Col)' in user
    assert "isinstance_or_param_feature(stream.next_item, Plain, Features.Col)" in user
    # ... a plain name and an attribute of an imported module stay a readable ``or``.
    assert "has_param_feature(x, Features.Col) or isinstance(x, torch.Tensor)" in user
    # An attribute of an object imported by ``from`` may be a property: read it as before.
    assert "isinstance_or_param_feature(x, REG.kind, Features.Col)" in user
    expected = _run(before)
    assert expected == {
        "missing key": "KeyError", "missing attribute": "AttributeError",
        "calls": [True, False], "calls made": 2,
        "property": [True, False, True], "property reads": 3,
        "imported member": [True, True, False],
        "from-imported member": [True, False], "from-imported reads": 2}
    assert _run(after) == expected


def test_type_in_on_an_attribute_refuses(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "tree", USER + TYPE_IN_ATTRIBUTE)
    report = tmp_path / "report.json"
    run_cli(["apply", "--jobs", "1", "--report", str(report), str(tree / "eng")])
    assert "class Col(" in (tree / "eng" / "params.py").read_text()
    (col,) = json.loads(report.read_text())["classes"]
    assert col["status"] == "refused"
    lines = (tree / "eng" / "user.py").read_text().splitlines()
    line = next(n for n, code in enumerate(lines, 1) if "type(holder.weight) in" in code)
    assert f"user.py:{line} " in col["refusal"]["reason"]


KEPT_BASE = '''
    import torch


    class Base(torch.nn.Parameter):
        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data=data, requires_grad=False)


    class Leaf(Base):
        pass


    class Other(Base):
        pass
'''

HOLDER = '''
    from eng.params import Base


    class Holder:
        def __init__(self, weight):
            self.weight = weight


    def is_base(h):
        return isinstance(h.w, Base)
'''


def test_an_attribute_checked_against_a_kept_base_converts_in_a_later_run(tmp_path: Path,
                                                                          capsys) -> None:
    """The one place an attribute chain is still read twice: checked against a Parameter
    class the run keeps, it stays ``has_param_feature(...) or isinstance(...)``, which
    the run that converts the class merges into one feature check (the helper call
    would hold the class as a value, and that run would keep the class)."""
    tree = tmp_path / "tree"
    (tree / "eng").mkdir(parents=True)
    (tree / "eng" / "__init__.py").write_text("")
    (tree / "eng" / "params.py").write_text(textwrap.dedent(KEPT_BASE).lstrip())
    (tree / "eng" / "user.py").write_text(textwrap.dedent(HOLDER).lstrip())
    (tree / "pyproject.toml").write_text('[tool.codemod]\nallow-classes = ["Leaf"]\n')
    assert run_cli(["apply", "--jobs", "1", str(tree / "eng")]) == 1
    user = tree / "eng" / "user.py"
    assert "has_param_feature(h.w, Features.Base) or isinstance(h.w, Base)" in user.read_text()
    (tree / "pyproject.toml").write_text("[tool.codemod]\n")
    capsys.readouterr()
    assert run_cli(["apply", "--jobs", "1", str(tree / "eng")]) == 1
    assert "return has_param_feature(h.w, Features.Base)\n" in user.read_text()
    # The runtime module the first run wrote compares types on purpose: no warning.
    assert "warning" not in capsys.readouterr().err
    assert "def Base(" in (tree / "eng" / "params.py").read_text()
