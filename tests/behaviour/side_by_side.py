"""A small package written out, a copy of it converted by ``codemod apply``, and what one
script prints in each: the side-by-side shape of the behaviour tests whose packages need
no stubs. The script prints one ``case answer`` line per case; the tests compare the two
dicts."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from codemod.cli import main


def convert_copy(base: Path, files: dict[str, str]) -> tuple[Path, Path]:
    """``files`` (path relative to the tree -> text) written under ``base/original``, and
    a copy under ``base/converted`` converted by ``codemod apply`` on its ``pkg``."""
    original = base / "original"
    for rel, text in files.items():
        path = original / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    converted = base / "converted"
    shutil.copytree(original, converted)
    assert main(["apply", str(converted / "pkg")]) == 1
    return original, converted


def answers_of(tree: Path, script: str, timeout: int = 300) -> dict[str, str]:
    """``case -> answer`` of each line ``script`` prints, run with ``tree`` on the path."""
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONWARNINGS="ignore", PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, "-c", script], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr
    return dict(line.split(" ", 1) for line in done.stdout.splitlines())
