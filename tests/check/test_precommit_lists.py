"""A file list (as pre-commit passes the changed files) that touches no parameter code is
checked without planning the tree: no given file defines a Parameter class or names one
(by any name, re-exports included) other than in an import or a call, so no finding in
them can depend on the plan. The
findings, the summary and the exit code are those of a run that plans; a given file that
defines or names a class, a class below a module's top level, or an undecodable file in
the tree makes the run plan as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemod.check import engine
from codemod.cli import main

from .helpers import BASE_TREE, Run, run, write_tree

#: Files that touch no parameter code, and one that uses a class through a renamed
#: re-export (``pkg/__init__.py`` binds ``Base`` as ``Renamed``).
FILES = {
    **BASE_TREE,
    "pkg/__init__.py": "from .params import Base, Packed  # re-export\nfrom .params import Base as Renamed\n",
    "pkg/plain.py": "import torch\n\n\ndef scale(x):\n    return torch.ones(1) * x\n",
    "pkg/other.py": "def describe(p):\n    return type(p).__name__\n",
    # Imports and constructs a class: no class-style use, whatever the plan says.
    "pkg/builds.py": "from pkg.params import Packed\n\n\ndef build(data):\n    return Packed(data=data)\n",
    "pkg/renamed.py": "from pkg import Renamed\n\n\ndef is_base(p):\n    return isinstance(p, Renamed)\n",
    "pkg/nested.py": "import torch\n\n\ndef make():\n    class Local(torch.nn.Parameter):\n        pass\n    return Local\n",
}


def _runs(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
          *paths: Path) -> tuple[Run, Run, list[bool]]:
    """``check --no-cache paths``, and the same run made to plan; whether each planned."""
    planned: list[bool] = []
    real = engine.settled_plan

    def recording(*args, **kwargs):  # type: ignore[no-untyped-def]
        planned.append(True)
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "settled_plan", recording)
    fast = run(capsys, "check", "--no-cache", *paths)
    fast_planned = bool(planned)
    planned.clear()
    monkeypatch.setattr(engine, "_plan_can_matter", lambda *args: True)
    slow = run(capsys, "check", "--no-cache", *paths)
    assert planned
    return fast, slow, [fast_planned]


def test_a_list_that_touches_no_parameter_code_is_not_planned(tmp_path, capsys, monkeypatch):
    tree = write_tree(tmp_path, FILES) / "pkg"
    fast, slow, planned = _runs(capsys, monkeypatch, tree / "plain.py", tree / "other.py",
                                tree / "builds.py")
    assert planned == [False]
    assert (fast.rc, fast.out, fast.err) == (slow.rc, slow.out, slow.err)
    assert fast.rc == 0


@pytest.mark.parametrize("given, code", [
    ("renamed.py", "CM002"),   # names the class by a renamed re-export
    ("layers.py", "CM002"),    # names it directly
    ("params.py", "CM001"),    # defines it
    ("nested.py", "CM001"),    # defines one inside a function
])
def test_a_list_that_touches_parameter_code_is_planned(tmp_path, capsys, monkeypatch, given, code):
    tree = write_tree(tmp_path, FILES) / "pkg"
    fast, slow, planned = _runs(capsys, monkeypatch, tree / given, tree / "plain.py")
    assert planned == [True]
    assert (fast.rc, fast.out, fast.err) == (slow.rc, slow.out, slow.err)
    assert code in fast.codes() and fast.rc == 1


def test_an_undecodable_file_in_the_tree_makes_the_run_plan(tmp_path, capsys, monkeypatch):
    """Whether such a file fails the run is the plan's verdict (it could name a class)."""
    tree = write_tree(tmp_path, FILES) / "pkg"
    (tree / "latin.py").write_bytes(b"# -*- coding: utf-8 -*-\nNAME = '\xe9'\n")
    fast, slow, planned = _runs(capsys, monkeypatch, tree / "plain.py")
    assert planned == [True]
    assert (fast.rc, fast.out, fast.err) == (slow.rc, slow.out, slow.err)


def test_factory_findings_need_no_plan(tmp_path, capsys, monkeypatch):
    """In a converted tree the checks of factories (CM004 here) read the factories, not
    the plan: a file list that names no remaining class gets them without planning."""
    tree = write_tree(tmp_path, FILES) / "pkg"
    for name in ("renamed.py", "nested.py"):
        (tree / name).unlink()
    capsys.readouterr()
    assert main(["apply", str(tree)]) == 1
    (tree / "late.py").write_text("from pkg.params import Base\n\n\ndef is_base(p):\n"
                                  "    return isinstance(p, (Base, int))\n")
    fast, slow, planned = _runs(capsys, monkeypatch, tree / "late.py", tree / "plain.py")
    assert planned == [False]
    assert (fast.rc, fast.out, fast.err) == (slow.rc, slow.out, slow.err)
    assert fast.codes() == ["CM004"] and fast.rc == 1


def test_a_given_file_that_names_a_class_and_does_not_compile_is_planned(tmp_path, capsys, monkeypatch):
    """Whether a run reports such a file (exit 2) depends on the plan (it is read when a
    class it names is converted): the run plans, and says what a planned run says."""
    tree = write_tree(tmp_path, FILES) / "pkg"
    (tree / "broken.py").write_text("from pkg.params import Packed\nP = Packed(1)\nZ = (\n")
    fast, slow, planned = _runs(capsys, monkeypatch, tree / "broken.py")
    assert planned == [True]
    assert (fast.rc, fast.out, fast.err) == (slow.rc, slow.out, slow.err)
    assert fast.rc == 2 and "syntax error" in fast.err


def test_another_files_error_is_not_read_without_a_plan(tmp_path, capsys, monkeypatch):
    """The documented difference: a file outside the list that does not parse is reported
    by a run that plans (its rounds read it), not by one that does not plan; the
    findings in the given files are the same."""
    tree = write_tree(tmp_path, FILES) / "pkg"
    (tree / "broken.py").write_text("from pkg.params import Base\n\n\ndef f(p):\n"
                                    "    return isinstance(p, Base\n")
    fast, slow, planned = _runs(capsys, monkeypatch, tree / "plain.py")
    assert planned == [False]
    assert fast.out == slow.out and fast.findings() == []
    assert (fast.rc, slow.rc) == (0, 2) and "syntax error" in slow.err and "syntax error" not in fast.err
