"""CM006: a comparison of two objects' types written into a tree ``apply`` converted.

Right after ``apply`` there is none (every one was rewritten to ``param_type``); one added
afterwards is a finding with its place, in any file, with the same rule ``apply`` rewrites
by; none before migration (the classes still exist); suppressible; a file that binds
``type`` itself is passed over.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from codemod.cli import main

from .helpers import PARAMS, run, write_tree

TREE = {
    "pkg/__init__.py": "",
    "pkg/params.py": PARAMS,
    "pkg/util.py": "def same(a, b):\n    return type(a) is type(b)\n",
    "pkg/fast.py": "from torch import nn\n\n\ndef plain(p):\n    return type(p) is nn.Parameter\n",
}


@pytest.fixture(scope="module")
def converted_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_tree(tmp_path_factory.mktemp("converted"), TREE)
    assert main(["apply", str(root)]) == 1
    return root


@pytest.fixture
def converted(converted_once: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(converted_once, tmp_path / "converted"))


def test_none_right_after_apply(converted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "param_type(a) is param_type(b)" in (converted / "pkg" / "util.py").read_text()
    assert "param_type(p) is nn.Parameter" in (converted / "pkg" / "fast.py").read_text()
    assert "CM006" not in run(capsys, "check", converted).out


def test_none_before_migration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_tree(tmp_path, TREE)
    assert "CM006" not in run(capsys, "check", root).out


def test_each_form_added_afterwards_is_found(converted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (converted / "pkg" / "later.py").write_text(
        "def f(a, b):\n"
        "    if type(a) is type(b):\n"
        "        return 1\n"
        "    return (type(a) != b.__class__,\n"
        "            a.__class__ == b.__class__)\n\n\n"
        "def g(a, b):\n"
        "    return type(a) is int or type(a) in (type(b),)  # a membership test: this rule\n\n\n"
        "def h(a, b):\n"
        "    return type(a) is type(b)  # codemod: ignore[CM006]\n")
    (converted / "pkg" / "own_type.py").write_text(
        "def f(a, b, type=type):\n    return type(a) is type(b)\n")
    done = run(capsys, "check", converted)
    assert done.rc == 1
    found = [(name, line, code) for name, line, code in done.findings() if code == "CM006"]
    assert found == [("later.py", 2, "CM006"), ("later.py", 4, "CM006"), ("later.py", 5, "CM006"),
                     ("later.py", 9, "CM006")]
    line = next(text for text in done.out.splitlines() if "later.py:2:" in text)
    assert "later.py:2:8: CM006 compares two objects' types" in line
    assert "`param_type(a) is param_type(b)`" in line and "`pkg.params_features`" in line


def test_only_files_given_are_reported(converted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (converted / "pkg" / "later.py").write_text("def f(a, b):\n    return type(a) is type(b)\n")
    (converted / "pkg" / "other.py").write_text("def f(a, b):\n    return type(a) == type(b)\n")
    done = run(capsys, "check", converted / "pkg" / "other.py")
    assert [(name, code) for name, _, code in done.findings()] == [("other.py", "CM006")]


def test_a_type_compared_with_torchs_parameter_added_afterwards_is_found(
        converted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``type(p) is nn.Parameter`` holds for every converted parameter: found when
    ``Parameter`` is torch's through the module's imports, in each spelling; a class of the
    engine's own named ``Parameter`` is not torch's."""
    (converted / "pkg" / "later.py").write_text(
        "import torch\n"
        "import torch.nn as tnn\n"
        "from torch.nn import Parameter\n\n\n"
        "def f(p):\n"
        "    return (type(p) is not tnn.Parameter,\n"
        "            Parameter == p.__class__,\n"
        "            type(p) == torch.nn.Parameter,\n"
        "            type(p) not in (int, Parameter))\n")
    (converted / "pkg" / "own.py").write_text(
        "from pkg.mine import Parameter\n\n\n"
        "def f(p):\n    return type(p) is Parameter\n")
    done = run(capsys, "check", converted)
    found = [(name, line) for name, line, code in done.findings() if code == "CM006"]
    assert found == [("later.py", 7), ("later.py", 8), ("later.py", 9), ("later.py", 10)], done.out
    line = next(text for text in done.out.splitlines() if "later.py:7:" in text)
    assert "compares an object's type with torch.nn.Parameter" in line and "`param_type(p)`" in line


def test_parameter_under_another_name_and_held_types_added_afterwards_are_found(
        converted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``Parameter`` imported ``as`` another name or bound to one at module level; a name
    holding an object's type compared with it or with another type (reported at its
    binding); none for a name ``apply`` binds to ``param_type``."""
    (converted / "pkg" / "later.py").write_text(
        "from torch import nn\n"
        "from torch.nn import Parameter as P\n\n"
        "Param = nn.Parameter\n\n\n"
        "def f(p, q):\n"
        "    t = type(p)\n"
        "    k = q.__class__\n"
        "    return type(p) is P, type(p) in (Param,), t == nn.Parameter, k is t\n")
    (converted / "pkg" / "done.py").write_text(
        "from pkg.params_features import param_type\n\n\n"
        "def f(p):\n    t = param_type(p)\n    return t == Param\n")
    done = run(capsys, "check", converted)
    found = [(name, line) for name, line, code in done.findings() if code == "CM006"]
    assert found == [("later.py", 8), ("later.py", 9), ("later.py", 10), ("later.py", 10)], done.out
    assert any("`t` holds an object's type" in text and "later.py:8:" in text for text in done.out.splitlines())


def test_a_name_bound_to_a_type_otherwise_is_found(
        converted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Second review of 2026-12-06: annotated, chained, walrus or twice bound, such a name
    compared with ``nn.Parameter`` was not seen by ``apply`` nor ``check``; ``apply``
    leaves it and warns, ``check`` reports it at its first binding to a type."""
    (converted / "pkg" / "later.py").write_text(
        "from torch import nn\n\n\n"
        "def f(p, q):\n"
        "    a: type = type(p)\n"
        "    u = b = q.__class__\n"
        "    if (c := type(p)) is nn.Parameter:\n"
        "        return a is nn.Parameter, b == nn.Parameter\n")
    done = run(capsys, "check", converted)
    found = [(name, line) for name, line, code in done.findings() if code == "CM006"]
    assert found == [("later.py", 5), ("later.py", 6), ("later.py", 7)], done.out
