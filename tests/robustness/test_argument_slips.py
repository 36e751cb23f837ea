"""Arguments that are almost certainly slips, refused before anything is read or written.

From an adversarial review (2026-12-06): ``codemod apply ""`` (a script's empty
``"$FILES"``) converted the whole working directory, and ``check --output-file
pkg/c2.py`` or ``apply --report pkg/c1.py`` replaced a source file with a report. Each is
a usage error now (exit 2) and the tree is left as it was.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from codemod.cli import main

PARAMS = "import torch\n\n\nclass XParam(torch.nn.Parameter):\n    pass\n"


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "params.py").write_text(PARAMS)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # click's usage errors
        return int(exc.code or 0)


@pytest.mark.parametrize("argv", [
    ["apply", ""], ["apply", "pkg", ""], ["check", ""], ["apply", "--dry-run", ""],
    ["check", "--output-file", "pkg/out.py", "pkg"],
    ["apply", "--report", "pkg/report.py", "pkg"],
    ["apply", "--dry-run", "--report", "report.py", "pkg"],
    ["apply", "--dry-run", "--report", "REPORT.PY", "pkg"],
    ["check", "--output-file", "pkg/stub.pyi", "pkg"],
    ["check", "--output-file", "pyproject.toml", "pkg"],
    ["check", "--output-file", "link.json", "pkg"],  # a symlink to pkg/params.py
], ids=lambda argv: " ".join(repr(a) if a == "" else a for a in argv))
def test_a_slip_is_a_usage_error(tree: Path, argv: list[str], capsys) -> None:
    (tree / "link.json").symlink_to(tree / "pkg" / "params.py")
    assert _run(argv) == 2
    assert "Error: Invalid value" in capsys.readouterr().err
    assert (tree / "pkg" / "params.py").read_text() == PARAMS
    assert sorted(p.name for p in (tree / "pkg").iterdir()) == ["__init__.py", "params.py"]
    assert not (tree / "report.py").exists() and not (tree / "REPORT.PY").exists()
    assert (tree / "pyproject.toml").read_text() == ""


def test_dot_and_other_report_names_still_work(tree: Path) -> None:
    assert _run(["check", "--no-cache", "--output-file", "findings.txt", "."]) == 1
    assert "CM001" in (tree / "findings.txt").read_text()
    assert _run(["apply", "--dry-run", "--report", "report.json", "pkg"]) == 1
    assert (tree / "report.json").is_file()
