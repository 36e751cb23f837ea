"""What ``apply`` and ``check`` say is true and the same on every run.

* A class kept because of a relative names its true relation: the refused base it
  derives from, the base that cannot serve converted subclasses, or its refused subclass.
* The same tree gives the same text whatever the hash seed (set order).
* The summary says "converted" only for what was written, "would convert" in a dry run.
* A file that cannot be decoded and names no Parameter class is skipped with a warning.
* Python 3.12 syntax (PEP 695) is read by LibCST when this Python cannot compile it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from codemod.cli import main

ROOT = Path(__file__).resolve().parents[2]

FAMILY = '''
    from torch.nn import Parameter


    class Base(Parameter):
        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data=data, requires_grad=False)

        def __init__(self, data, loader=None):
            self._loader = loader

        @property
        def loader(self):
            return self._loader

        def forget(self):
            del self._loader


    class Odd(Base):
        @property
        def data(self):
            raise ValueError("no data")


    class Left(Base):
        pass


    class Right(Base):
        pass


    class Both(Left, Right):
        pass


    class Odd2(Base):
        @property
        def data(self):
            raise ValueError("no data")


    class Child(Odd2):
        pass
'''

SIMPLE = '''
    from torch.nn import Parameter


    class Base(Parameter):
        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data=data, requires_grad=False)


    class Packed(Base):
        pass
'''

USE = '''
    from pkg.params import Base


    def is_base(p):
        return isinstance(p, Base)
'''

DATA = "overrides `data`, the tensor's C-level attribute; a plain Parameter cannot"
NO_SHADOW = ("Base.forget deletes the property field '_loader'; only a plain read or `=` of "
             "it can serve both kinds (a converted parameter holds the attribute)")


def _tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, text in {"pkg/__init__.py": "", **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(textwrap.dedent(text).lstrip("\n"))
    return root / "pkg"


def _run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _refusals(err: str) -> dict[str, str]:
    out = {}
    for line in err.splitlines():
        if line.startswith("  ") and ": " in line:
            _where, cls, reason = line.strip().split(": ", 2)
            out[cls] = reason
    return out


def test_kept_classes_name_their_true_relation(tmp_path, capsys):
    pkg = _tree(tmp_path, {"pkg/params.py": FAMILY})
    code, _, err = _run(capsys, "apply", "--dry-run", pkg)
    reasons = _refusals(err)
    assert reasons["Odd"] == reasons["Odd2"] == DATA
    # Child derives from Odd2 (not from Odd, the first refused class of the file).
    assert reasons["Child"] == f"kept as a class because it derives from Odd2, which is refused: {DATA}"
    # Both is a leaf: it is kept because of its base, not as "a base of a kept class".
    for leaf in ("Left", "Right", "Both"):
        assert reasons[leaf] == ("kept as a class because it derives from Base, which stays a "
                                 f"class and cannot also serve converted subclasses: {NO_SHADOW}")
    assert reasons["Base"] == (f"kept as a class because its subclass Odd is refused ({DATA}); "
                               f"it cannot also serve converted subclasses: {NO_SHADOW}")


def test_same_tree_same_text_whatever_the_hash_seed(tmp_path):
    pkg = _tree(tmp_path, {"pkg/params.py": FAMILY, "pkg/use.py": USE,
                           "pkg/table.py": "from pkg.params import Left, Right\n\nKINDS = [Right, Left]\n"})
    outputs = set()
    for seed in ("0", "1", "2", "3"):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(ROOT))
        done = subprocess.run(
            [sys.executable, "-c", "from codemod.cli import main_entry; main_entry()",
             "apply", "--dry-run", "--jobs", "2", str(pkg)],
            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
        outputs.add((done.returncode, done.stdout, done.stderr))
    assert len(outputs) == 1, outputs


def test_summary_words_match_what_happened(tmp_path, capsys):
    pkg = _tree(tmp_path / "a", {"pkg/params.py": SIMPLE, "pkg/use.py": USE})
    _, _, err = _run(capsys, "apply", "--dry-run", pkg)
    assert "would change 2 file(s) of 3 scanned (2 parsed) and would add 1 runtime module(s)" in err
    assert "; would convert 2 class(es) [" in err and " converted" not in err
    _, _, err = _run(capsys, "apply", pkg)
    assert "changed 2 file(s) of 3 scanned (2 parsed) and added 1 runtime module(s); " \
           "converted 2 class(es) [" in err
    # A second run writes nothing: it says nothing about classes or rewrites.
    _, _, err = _run(capsys, "apply", pkg)
    assert err.splitlines()[0].startswith("changed 0 file(s) of 4 scanned")
    assert "convert" not in err and "[" not in err
    # Everything refused: nothing written, nothing "converted".
    refused = _tree(tmp_path / "b", {"pkg/params.py": FAMILY})
    for args in (("--dry-run",), ()):
        _, _, err = _run(capsys, "apply", *args, refused)
        assert "convert" not in err.splitlines()[0], err


def test_undecodable_file_naming_no_class_is_a_warning(tmp_path, capsys):
    pkg = _tree(tmp_path, {"pkg/params.py": SIMPLE, "pkg/use.py": USE,
                           "pkg/legacy.py": b"NAME = '\xe9t\xe9'\n"})
    code, out, err = _run(capsys, "check", pkg)
    assert code == 1, err  # findings, not an error
    assert f"warning: {pkg}/legacy.py:1: cannot decode as utf-8" in err
    assert "skipped: it names no Parameter class" in err
    code, _, err = _run(capsys, "apply", pkg)
    assert code == 1 and "converted 2 class(es)" in err
    # One that names a class could be a use site: the run fails and writes nothing.
    pkg = _tree(tmp_path / "b", {"pkg/params.py": SIMPLE, "pkg/use.py": USE,
                                 "pkg/legacy.py": b"from pkg.params import Packed\nNAME = '\xe9'\n"})
    code, _, err = _run(capsys, "apply", pkg)
    assert code == 2 and f"error: {pkg}/legacy.py:2: cannot decode as utf-8" in err
    assert "isinstance(p, Base)" in (pkg / "use.py").read_text()


NEWER = '''
    from pkg.params import Base

    type Loader = int


    def first[T](items: list[T]) -> T:
        return items[0]


    def is_base(p) -> bool:
        return isinstance(p, Base)
'''


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="this Python compiles PEP 695 itself")
def test_python_312_syntax_is_read_by_libcst(tmp_path, capsys):
    pkg = _tree(tmp_path, {"pkg/params.py": SIMPLE, "pkg/newer.py": NEWER})
    code, _, err = _run(capsys, "apply", pkg)
    assert code == 1, err
    text = (pkg / "newer.py").read_text()
    assert "has_param_feature(p, Features.Base)" in text
    assert "type Loader = int" in text and "def first[T](items: list[T]) -> T:" in text


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="this Python compiles PEP 695 itself")
def test_an_error_in_python_312_syntax_names_the_version(tmp_path, capsys):
    broken = NEWER.replace("type Loader = int", "type Loader[ = int")
    pkg = _tree(tmp_path, {"pkg/params.py": SIMPLE, "pkg/newer.py": broken})
    code, _, err = _run(capsys, "apply", pkg)
    assert code == 2
    assert f"error: {pkg}/newer.py:3:" in err
    assert "(Python 3.12 syntax, which this Python 3.11 cannot compile; LibCST rejects it too)" in err
