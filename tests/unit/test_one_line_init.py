"""An ``__init__`` written on one line (``def __init__(self, x): self.x = x``) becomes a
wrap whose body sets the attribute on the parameter, as the class did on the instance.

The wrap re-reads the body in the shape the planner saw: one statement line, not the
bare small statements (which ended up at module level, after the wrap).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from codemod.cli import main

FAMILY = '''
import torch


class Scaled(torch.nn.Parameter):
    def __init__(self, data=None, *, scale=1): self.scale = scale


def scale_of(p):
    return p.scale if isinstance(p, Scaled) else None
'''


def test_one_line_init_sets_the_attribute_inside_the_wrap(tmp_path: Path, capsys) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "params.py").write_text(FAMILY.lstrip("\n"))
    assert main(["apply", str(pkg)]) == 1, capsys.readouterr().err  # 1: changes made
    converted = (pkg / "params.py").read_text()
    assert "\nparam.scale = scale" not in converted
    assert "    param.scale = scale\n" in converted
    script = textwrap.dedent('''
        import torch
        from pkg.params import Scaled, scale_of
        print(scale_of(Scaled(torch.zeros(2))))
    ''')
    env = dict(os.environ, PYTHONPATH=str(tmp_path), PYTHONWARNINGS="ignore")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1"]
