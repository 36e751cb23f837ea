"""Small source trees for the robustness tests, and ways to run the CLI on them.

The hierarchy here is the tests' own (not a golden fixture), so that these tests pin
input handling, not what the conversion looks like: every expectation about converted
text is computed by running the tool on a plain variant of the same tree.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

import pytest

from codemod.cli import main
from scripts.verify_tree import verify

#: Whether ``codemod apply`` writes nothing when a file failed, writes modules that
#: define converted classes last, and says "no Python files" for an empty tree (the
#: apply change proposed with these tests). Flip it with that change: the matrix rows
#: then expect no file written on exit 2, and the expected failures that record the
#: current behaviour become plain tests.
APPLY_ALL_OR_NOTHING = True

#: Whether the engine compiles a file with CPython before LibCST parses it
#: (``analysis.compiles.cpython_rejects``): syntax errors then carry CPython's message and line, and
#: input no interpreter runs (200+ nested brackets, ``return`` outside a function) fails
#: before anything is converted.
ENGINE_COMPILES_FIRST = True

#: A Parameter hierarchy: a base with a property over a backing field and a loader, a
#: subclass with its own ``__init__``. The docstring holds a non-ASCII character so that
#: every encoding variant has something to encode.
HIERARCHY = '''\
"""Parameters with a loader; caf\u00e9 edition."""
import torch
from torch import nn


class BaseParam(nn.Parameter):
    """Base kind (\u00e9)."""

    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)

    def __init__(self, data, loader):
        self._loader = loader

    @property
    def loader(self):
        return self._loader

    def load(self, weight):
        self.data.copy_(weight)


class SplitParam(BaseParam):
    def __init__(self, dim, **kwargs):
        self._dim = dim
        super().__init__(**kwargs)

    def load(self, weight):
        size = self.data.shape[self._dim]
        self.data.copy_(weight.narrow(self._dim, 0, size))
'''

#: A module of the same package that uses the classes: a cross-file use site.
USE_SITE = '''\
from pkg.params import BaseParam


def is_base(p):
    return isinstance(p, BaseParam)
'''

#: A module that mentions no Parameter class: never rewritten.
UNRELATED = '''\
def helper(x):
    return x + 1
'''


def base_tree(root: Path, **overrides: bytes | str | None) -> Path:
    """``root/tree/pkg`` with ``__init__.py``, ``params.py``, ``use.py``, ``other.py``.

    ``overrides`` (keyword = file name without ``.py``) replaces a file's content, adds a
    file, or (None) leaves it out. Returns ``root/tree``.
    """
    files: dict[str, bytes | str | None] = {
        "__init__": "", "params": HIERARCHY, "use": USE_SITE, "other": UNRELATED,
    }
    files.update(overrides)
    tree = root / "tree"
    pkg = tree / "pkg"
    pkg.mkdir(parents=True)
    for name, content in files.items():
        if content is None:
            continue
        path = pkg / f"{name}.py"
        if isinstance(content, str):
            path.write_bytes(content.encode())
        else:
            path.write_bytes(content)
    return tree


Snapshot = dict[str, object]


def snapshot(root: Path) -> Snapshot:
    """Every entry under ``root``: bytes for a file, ("link", target), ("fifo",), ("dir",)."""
    out: Snapshot = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                out[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                out[rel] = ("dir",)
            elif stat.S_ISFIFO(info.st_mode):
                out[rel] = ("fifo",)
            else:
                out[rel] = (path.read_bytes(), stat.S_IMODE(info.st_mode))
    return out


def changed(before: Snapshot, after: Snapshot) -> set[str]:
    """Entries that differ, appeared or disappeared (a leftover temp file shows here)."""
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


REPO_ROOT = Path(__file__).resolve().parents[2]


def codemod_command() -> list[str]:
    """The installed console script next to this interpreter, else the module."""
    script = Path(sys.executable).with_name("codemod")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from codemod.cli import main_entry; main_entry()"]


def process_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a ``codemod`` subprocess: it imports the ``codemod`` of this
    checkout (which the in-process tests use), wherever the script was installed from."""
    path = os.environ.get("PYTHONPATH")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), path]))}
    env.update(extra or {})
    return env


def run_main(
    args: list[str], cwd: Path, capsys: pytest.CaptureFixture[str], *, verify_tree: bool = True,
) -> tuple[int, str, str]:
    """``main(args)`` in this process, in ``cwd``; returns (code, stdout, stderr).

    When it is an ``apply`` that changed a directory, ``scripts/verify_tree.py`` must
    find nothing to fix in it (compared with a copy taken before), unless
    ``verify_tree`` is off (a run that excludes files using the classes on purpose)."""
    capsys.readouterr()
    old = Path.cwd()
    originals = _copies_before(args, cwd) if verify_tree else []
    os.chdir(cwd)
    try:
        code = main(args)
    finally:
        os.chdir(old)
    out, err = capsys.readouterr()
    if code == 1:
        for target, original in originals:
            report = verify(original, target)
            assert report.ok, "\n".join(report.problems)
    for _, original in originals:
        shutil.rmtree(original.parent, ignore_errors=True)
    return code, out, err


def _copies_before(args: list[str], cwd: Path) -> list[tuple[Path, Path]]:
    """(directory, copy of it) for each directory an ``apply`` (not ``--dry-run``) is
    given; a directory that cannot be copied (a FIFO, no permission) is not verified."""
    if not args or args[0] != "apply" or "--dry-run" in args:
        return []
    out = []
    for arg in args[1:]:
        target = (cwd / arg).absolute()
        if arg.startswith("-") or not target.is_dir():
            continue
        copy = Path(tempfile.mkdtemp(prefix="verify-")) / "original"
        try:
            shutil.copytree(target, copy, symlinks=True)
        except (OSError, shutil.Error):
            shutil.rmtree(copy.parent, ignore_errors=True)
            continue
        out.append((target, copy))
    return out


def run_process(args: list[str], cwd: Path, env: Mapping[str, str] | None = None,
                timeout: float = 300) -> tuple[int, str, str]:
    """``codemod ARGS`` as a subprocess in ``cwd``; returns (code, stdout, stderr)."""
    proc = subprocess.run(
        [*codemod_command(), *args], cwd=cwd, capture_output=True, text=True,
        timeout=timeout, env=process_env(env),
    )
    return proc.returncode, proc.stdout, proc.stderr


TRACEBACK = re.compile(r"^Traceback \(most recent call last\)", re.MULTILINE)


def copy_tree(src: Path, dst: Path) -> None:
    """Copy a tree keeping symlinks as links."""
    shutil.copytree(src, dst, symlinks=True)
