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
    init = os.path.join("app", "__init__.py")
    assert f"svc2{os.sep}{init} and svc1{os.sep}{init} are both `app` to Python" in err
    assert "params.py" not in err  # only the outermost shared name


def test_two_packages_subclassing_a_third(tmp_path: Path, monkeypatch) -> None:
    """Neither ``app`` derives from ``Parameter`` directly: their classes derive from a
    third package's (a review found the first check, on the text alone, missed them)."""
    (tmp_path / "base" / "basepkg").mkdir(parents=True)
    (tmp_path / "base" / "basepkg" / "__init__.py").write_text("")
    (tmp_path / "base" / "basepkg" / "params.py").write_text(
        PARAMS.replace("XParam", "BaseParam"))
    for project in ("svc1", "svc2"):
        package = tmp_path / project / "app"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "params.py").write_text(
            "from basepkg.params import BaseParam\n\n\nclass XParam(BaseParam):\n    pass\n")
        (package / "use.py").write_text(USE)
    (tmp_path / "pyproject.toml").write_text('[tool.codemod]\nsrc = ["base", "svc1", "svc2"]\n')
    monkeypatch.chdir(tmp_path)
    before = _snapshot(tmp_path)
    assert main(["apply", "."]) == 2
    assert _snapshot(tmp_path) == before


def test_a_namespace_package_over_two_roots_is_one_package(tmp_path: Path, monkeypatch) -> None:
    """``company`` (no ``__init__.py``) spread over two ``src`` roots is one namespace
    package: its modules have different names, and the run converts as before."""
    core = tmp_path / "libs" / "core" / "company" / "core"
    plugins = tmp_path / "libs" / "plugins" / "company" / "plugins"
    core.mkdir(parents=True)
    plugins.mkdir(parents=True)
    (core / "__init__.py").write_text("")
    (core / "params.py").write_text(PARAMS)
    (plugins / "__init__.py").write_text("")
    (plugins / "use.py").write_text(USE.replace("app.params", "company.core.params"))
    (tmp_path / "pyproject.toml").write_text(
        '[tool.codemod]\nsrc = ["libs/core", "libs/plugins"]\n')
    monkeypatch.chdir(tmp_path)
    assert main(["apply", "."]) == 1
    assert "def XParam(" in (core / "params.py").read_text()
    assert "has_param_feature(p, Features.XParam)" in (plugins / "use.py").read_text()


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
