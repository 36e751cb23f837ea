"""A ``Features`` member that Python would mangle refuses its class.

``class Features:`` defines one member per converted class, named ``<feature-prefix><Class>``.
A name starting with two underscores (and not ending with them) is mangled inside a class
body (``__Hidden`` becomes ``_Features__Hidden``), so ``Features.__Hidden``, read where the
class is defined, raised ``AttributeError`` on import: a broken tree reported as converted
(adversarial review of 2026-12-06: ``feature-prefix = "_"`` on a tree with
``_ColumnvLLMParameter``; a module-level ``class __HiddenParam``). Such a class is refused
with the reason; the others still convert and the tree imports.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from codemod.cli import main

PARAMS = '''
    import torch


    class _Column(torch.nn.Parameter):
        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data=data, requires_grad=False)

        def __init__(self, data, output_dim=0):
            self.output_dim = output_dim


    class __Hidden(torch.nn.Parameter):
        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data=data, requires_grad=False)


    class Row(torch.nn.Parameter):
        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data=data, requires_grad=False)
'''


def _apply(tmp_path: Path, prefix: str | None, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "params.py").write_text(textwrap.dedent(PARAMS).lstrip())
    (tmp_path / "pyproject.toml").write_text(
        "" if prefix is None else f'[tool.codemod]\nfeature-prefix = "{prefix}"\n')
    assert main(["apply", "--jobs", "1", str(tmp_path / "pkg")]) == 1
    text = (tmp_path / "pkg" / "params.py").read_text()
    pytest.importorskip("torch")
    done = subprocess.run([sys.executable, "-c", "import pkg.params"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return text, capsys.readouterr().err


def test_a_private_class_name_refuses_only_that_class(tmp_path, capsys):
    text, err = _apply(tmp_path, None, capsys)
    assert "class __Hidden(" in text and "def _Column(" in text and "def Row(" in text
    assert "__Hidden: its `Features` member `__Hidden` starts with two underscores" in err


def test_an_underscore_prefix_refuses_the_classes_it_would_mangle(tmp_path, capsys):
    text, err = _apply(tmp_path, "_", capsys)
    assert "class _Column(" in text and "def Row(" in text and "Features._Row" in text
    assert ('_Column: its `Features` member `__Column` (`feature-prefix = "_"`) starts with '
            "two underscores") in err
