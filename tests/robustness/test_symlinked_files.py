"""Symbolic links to Python files, and modules reachable under a second name.

An adversarial review (2026-12-06) found two ways a use escaped: a symlinked ``.py``
file whose target lay outside the walked package was skipped without a word (its
``isinstance`` stayed while the class became a function), and a module reached through
a symlinked directory under a second name (``pk/legacy -> sub``) was read once, under
its direct name, so ``from pk.legacy.params import XParam`` named no module of the run
and was taken for another object. Now a linked file whose target lies in the project is
read under the link's path (as a symlinked directory is), one that leaves the project
stops the run (exit 2, nothing written), and an import through a second name refuses
the class, naming the line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from codemod.cli import main

PARAMS = "import torch\n\n\nclass AParam(torch.nn.Parameter):\n    pass\n"
USE = "from {module} import AParam\n\n\ndef f(p):\n    return isinstance(p, AParam)\n"


def _project(root: Path) -> Path:
    (root / "pk").mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    (root / "pk" / "__init__.py").write_text("")
    (root / "pk" / "params.py").write_text(PARAMS)
    return root


def _answer(root: Path, module: str) -> str:
    pytest.importorskip("torch")
    code = (f"import torch, {module} as user, pk.params as params; "
            "print(user.f(params.AParam(torch.zeros(2))))")
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                          text=True, timeout=120)
    return done.stdout.strip() or done.stderr.strip().splitlines()[-1]


def test_a_linked_file_inside_the_project_is_converted_through_the_link(tmp_path, monkeypatch):
    root = _project(tmp_path)
    (root / "shared").mkdir()
    (root / "shared" / "c1.py").write_text(USE.format(module="pk.params"))
    (root / "pk" / "c1.py").symlink_to("../shared/c1.py")
    monkeypatch.chdir(root)
    assert main(["apply", "pk"]) == 1
    assert (root / "pk" / "c1.py").is_symlink()  # written through the link
    assert "has_param_feature(p, Features.AParam)" in (root / "shared" / "c1.py").read_text()
    assert _answer(root, "pk.c1") == "True"
    assert main(["check", "--no-cache", "pk"]) == 0


def test_a_linked_file_leaving_the_project_stops_the_run(tmp_path, monkeypatch, capsys):
    root = _project(tmp_path / "proj")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "c1.py").write_text(USE.format(module="pk.params"))
    (root / "pk" / "c1.py").symlink_to(tmp_path / "elsewhere" / "c1.py")
    monkeypatch.chdir(root)
    assert main(["apply", "pk"]) == 2
    assert "class AParam(" in (root / "pk" / "params.py").read_text()
    assert "symbolic link to a file outside the tree" in capsys.readouterr().err
    assert main(["check", "--no-cache", "pk"]) == 2


#: Ways to reach ``pk.sub.params`` through the second name ``pk.legacy`` (a review of the
#: first fix found every form but the first still converting into a ``TypeError``).
SECOND_NAME_USES = {
    "from-import": USE.format(module="pk.legacy.params"),
    "import-as": "import pk.legacy.params as m\n\n\ndef f(p):\n    return isinstance(p, m.AParam)\n",
    "import": "import pk.legacy.params\n\n\ndef f(p):\n"
              "    return isinstance(p, pk.legacy.params.AParam)\n",
    "from-package": "from pk.legacy import params\n\n\ndef f(p):\n"
                    "    return isinstance(p, params.AParam)\n",
    "relative": "from .legacy.params import AParam\n\n\ndef f(p):\n    return isinstance(p, AParam)\n",
    "relative-module": "from .legacy import params as q\n\n\ndef f(p):\n"
                       "    return isinstance(p, q.AParam)\n",
}


def test_a_linked_file_leaving_the_project_without_parameter_code_is_skipped(
        tmp_path, monkeypatch, capsys):
    """A linked file outside the project that names no Parameter class cannot hold a use:
    skipped with a warning, as an undecodable file is (the third review: the first fix
    stopped every such run)."""
    root = _project(tmp_path / "proj")
    (root / "pk" / "use.py").write_text(USE.format(module="pk.params"))
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "helper.py").write_text("X = 1\n")
    (root / "pk" / "helper.py").symlink_to(tmp_path / "elsewhere" / "helper.py")
    monkeypatch.chdir(root)
    assert main(["apply", "pk"]) == 1
    assert "def AParam(" in (root / "pk" / "params.py").read_text()
    err = capsys.readouterr().err
    assert "pk/helper.py: symbolic link to a file outside the tree" in err
    assert "skipped: it names no Parameter class" in err
    assert (tmp_path / "elsewhere" / "helper.py").read_text() == "X = 1\n"
    assert main(["check", "--no-cache", "pk"]) == 0


@pytest.mark.parametrize("form", sorted(SECOND_NAME_USES))
def test_an_import_through_a_second_name_refuses(tmp_path, monkeypatch, form):
    root = _project(tmp_path)
    (root / "pk" / "sub").mkdir()
    (root / "pk" / "sub" / "__init__.py").write_text("")
    (root / "pk" / "params.py").unlink()
    (root / "pk" / "sub" / "params.py").write_text(PARAMS)
    (root / "pk" / "legacy").symlink_to("sub", target_is_directory=True)
    (root / "pk" / "use.py").write_text(SECOND_NAME_USES[form])
    monkeypatch.chdir(root)
    assert main(["apply", "--report", "r.json", "pk"]) == 1  # a class refused: work left
    (aparam,) = json.loads(Path("r.json").read_text())["classes"]
    assert aparam["status"] == "refused"
    assert "use.py:1 " in aparam["refusal"]["reason"]
    assert "a second name of pk.sub.params" in aparam["refusal"]["reason"]
    assert "class AParam(" in (root / "pk" / "sub" / "params.py").read_text()


def test_paths_given_from_a_directory_entered_through_a_link(tmp_path, monkeypatch, capsys):
    """From a working directory entered through a symlink, ``a.py`` is read through the
    link and ``../b.py`` from the physical directory (as the shell's ``ls ..``): the
    file found under the other spelling is still one of the given paths (before, its
    findings were dropped and ``check`` passed; ``apply`` stopped, naming the tree twice)."""
    real = _project(tmp_path / "real")
    (real / "pk" / "sub").mkdir()
    (real / "pk" / "sub" / "__init__.py").write_text("")
    (real / "pk" / "sub" / "a.py").write_text(USE.format(module="pk.params"))
    (real / "pk" / "b.py").write_text(USE.format(module="pk.params"))
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    logical = tmp_path / "link" / "pk" / "sub"
    monkeypatch.chdir(logical)
    monkeypatch.setenv("PWD", str(logical))
    assert main(["check", "--no-cache", "a.py", "../b.py"]) == 1
    out = capsys.readouterr().out
    assert "a.py:5:12: CM002" in out and "b.py:5:12: CM002" in out
    assert main(["apply", ".", ".."]) == 1
    assert "has_param_feature(p, Features.AParam)" in (real / "pk" / "b.py").read_text()
