"""PEP 604 unions in class checks: converted like the tuple form, same answers after.

The golden case ``union_checks`` holds the checks (``A | B``, ``A | B | C``, an ordinary
class or ``None`` mixed in, a union inside a tuple, ``issubclass``, a kept base in a
union, a subject with a side effect). Here the same tree is converted with and without
``allow-value-uses`` and its scenario run before and after: every answer, and how often
each subject is evaluated, must be the same. A union used as a value (``KINDS = A | B``)
needs the classes (``type.__or__``): it refuses the hierarchy even with the option on.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import run_cli

pytest.importorskip("torch")

CASE = Path(__file__).resolve().parents[2] / "fixtures" / "golden" / "union_checks"


def _scenario(tree: Path) -> list[str]:
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1",
               PYTHONWARNINGS="ignore")
    done = subprocess.run([sys.executable, str(CASE / "scenario.py")], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def _converted(tmp_path: Path, allow_value_uses: bool, extra: str = "") -> Path:
    tree = Path(shutil.copytree(CASE / "input", tmp_path / "tree"))
    (tree / "pyproject.toml").write_text(
        f"[tool.codemod]\nallow-value-uses = {'true' if allow_value_uses else 'false'}\n")
    if extra:
        with (tree / "pkg" / "checks.py").open("a") as handle:
            handle.write(extra)
    run_cli(["apply", str(tree)])
    return tree


@pytest.mark.parametrize("allow_value_uses", [False, True], ids=["strict", "allow-value-uses"])
def test_union_checks_answer_as_before(tmp_path: Path, allow_value_uses: bool) -> None:
    after = _converted(tmp_path, allow_value_uses)
    checks = (after / "pkg" / "checks.py").read_text()
    assert " | " not in checks.split("def loader_of")[0], checks  # every union was rewritten
    assert "def Column(" in (after / "pkg" / "params.py").read_text()
    before = _scenario(CASE / "input")
    assert len(before) == 20
    assert _scenario(after) == before


@pytest.mark.parametrize("allow_value_uses", [False, True], ids=["strict", "allow-value-uses"])
def test_a_union_used_as_a_value_refuses(tmp_path: Path, allow_value_uses: bool) -> None:
    after = _converted(tmp_path, allow_value_uses, "\n\nPAIR = Column | Row\n")
    assert "class Column(" in (after / "pkg" / "params.py").read_text()
    assert _scenario(after) == _scenario(CASE / "input")
