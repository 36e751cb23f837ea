"""Two files or packages of one run that Python knows by the same name stop the run.

The index, the plan and the rewrites name classes and modules by their dotted names. Two
loose scripts both ``tool.py`` given together, or two projects both holding a package
``app`` run from their common parent, used to share their classes' names: ``check`` lost
one class's CM001, and ``apply`` rewrote both trees' uses to import a runtime module it
wrote into one tree only (the other failed to import; adversarial review of 2026-12-06).
Now such a run writes nothing and exits 2, naming both; a shared name under which no file
may define a Parameter class (``conftest.py`` in two test directories) changes nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codemod.cli import main

PARAMS = "import torch\n\n\nclass XParam(torch.nn.Parameter):\n    pass\n"
USE = "from app.params import XParam\n\n\ndef f(p):\n    return isinstance(p, XParam)\n"
LOOSE = PARAMS + "\n\ndef f(p):\n    return isinstance(p, XParam)\n"


def _snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*.py"))}


def test_two_loose_scripts_of_one_name(tmp_path: Path, monkeypatch, capsys) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "tool.py").write_text(LOOSE)
    monkeypatch.chdir(tmp_path)
    before = _snapshot(tmp_path)
    assert main(["apply", "a/tool.py", "b/tool.py"]) == 2
    assert _snapshot(tmp_path) == before
    assert "b/tool.py and a/tool.py are both `tool` to Python" in capsys.readouterr().err
    assert main(["check", "--no-cache", "a/tool.py", "b/tool.py"]) == 2
    # Each on its own converts.
    assert main(["apply", "a/tool.py"]) == 1
    assert "def XParam(" in (tmp_path / "a" / "tool.py").read_text()


def test_two_packages_of_one_name(tmp_path: Path, monkeypatch, capsys) -> None:
    for project in ("svc1", "svc2"):
        package = tmp_path / project / "app"
        package.mkdir(parents=True)
        (tmp_path / project / "pyproject.toml").write_text("")
        (package / "__init__.py").write_text("")
        (package / "params.py").write_text(PARAMS)
        (package / "use.py").write_text(USE)
    monkeypatch.chdir(tmp_path)
    before = _snapshot(tmp_path)
    assert main(["apply", "."]) == 2
    assert _snapshot(tmp_path) == before
    err = capsys.readouterr().err
    assert f"svc2{os.sep}app and svc1{os.sep}app are both `app` to Python" in err


@pytest.mark.parametrize("shared", ["conftest.py", "setup.py"])
def test_a_shared_name_without_parameter_classes_is_fine(tmp_path: Path, monkeypatch,
                                                        shared: str) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "params.py").write_text(PARAMS)
    for folder in ("t1", "t2"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / shared).write_text("VALUE = 1\n")
    monkeypatch.chdir(tmp_path)
    assert main(["apply", "pkg", "t1", "t2"]) == 1
    assert "def XParam(" in (tmp_path / "pkg" / "params.py").read_text()
