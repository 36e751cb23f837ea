"""``scripts/verify_tree.py``, the verifier that shares no code with the transformer.

Trees are written by hand: an *original* with Parameter classes and a *converted* one in
which they are functions, plus a use file that is the same in both.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from scripts.verify_tree import main, verify

ORIGINAL_PARAMS = """
import torch


class Base(torch.nn.Parameter):
    pass


class Packed(Base):
    pass


class Other:
    pass


class NotAParameter:
    pass
"""

CONVERTED_PARAMS = """
import torch


def Base(data):
    return torch.nn.Parameter(data)


def Packed(data):
    return torch.nn.Parameter(data)


class Other:
    pass


def NotAParameter():
    pass
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))


def _pair(tmp_path: Path, common: dict[str, str], converted_only: dict[str, str] | None = None,
          params: str = "pkg/params.py") -> tuple[Path, Path]:
    original, converted = tmp_path / "original", tmp_path / "converted"
    base = {"pkg/__init__.py": "from .params import Base, Packed\n"} if params == "pkg/params.py" else {}
    _write(original, {**base, params: ORIGINAL_PARAMS, **common})
    _write(converted, {**base, params: CONVERTED_PARAMS, **common, **(converted_only or {})})
    return original, converted


def _kinds(report) -> list[str]:
    return sorted(use.kind for use in report.class_only_uses)


@pytest.mark.parametrize(("body", "kinds"), [
    ("isinstance(p, Packed)", ["isinstance"]),
    ("isinstance(p, (int, (Packed,)))", ["isinstance"]),
    ("isinstance(p, Packed | Base | int)", ["isinstance", "isinstance"]),
    ("issubclass(type(p), Base)", ["issubclass"]),
    ("type(p) is Packed or type(p) in (Base,) or p.__class__ != Packed",
     ["type-comparison", "type-comparison", "type-comparison"]),
    ("Packed.load(p)", ["attribute"]),
    ("Packed.__mro__", ["attribute"]),
    ("super(Packed, p)", ["super"]),
    ("dispatch.register(Packed)", ["dispatch-register"]),
    ("Packed[int]", ["subscript"]),
    ("Packed | None", ["union"]),
    ("Packed(p), Packed.__name__, Packed.__qualname__, cast(Packed, p), isinstance(p, Other)", []),
])
def test_class_only_uses(tmp_path, body, kinds):
    original, converted = _pair(tmp_path, {"pkg/use.py": f"""
        from typing import cast
        from pkg.params import Base, Other, Packed


        def f(p, dispatch):
            return {body}
    """})
    report = verify(original, converted)
    assert _kinds(report) == kinds
    assert report.ok == (not kinds)
    assert report.converted == ["pkg.params.Base", "pkg.params.Packed"]  # not NotAParameter


def test_statements_that_need_a_class(tmp_path):
    original, converted = _pair(tmp_path, {"pkg/use.py": """
        from pkg.params import Packed


        class Mine(Packed):
            pass


        def f(p):
            try:
                p()
            except (ValueError, Packed):
                pass
            match p:
                case Packed():
                    return 1
    """})
    assert _kinds(verify(original, converted)) == ["class-base", "except", "match-class"]


@pytest.mark.parametrize(("files", "expression"), [
    ({}, "m.Packed"),
    ({}, "pkg.params.Packed"),
    ({}, "getattr(m, 'Packed')"),
    ({}, "pkg.Packed"),  # re-exported by pkg/__init__.py
    ({"pkg/star.py": "from pkg.params import *\n"}, "star.Packed"),
    ({"pkg/again/__init__.py": "from ..params import *\n__all__ = ['Packed']\n"}, "again.Packed"),
    ({"pkg/alias.py": "from pkg.params import Packed\nK = Packed\n"}, "alias.K"),
    ({"pkg/glob.py": "from pkg.params import Packed\nglobals()['G'] = Packed\n"}, "glob.G"),
    ({}, "m.__dict__['Packed']"),
    ({}, "vars(m)['Packed']"),
    ({}, "importlib.import_module('pkg.params').Packed"),
    ({}, "sys.modules['pkg.params'].Packed"),
])
def test_uses_resolved_through_imports(tmp_path, files, expression):
    original, converted = _pair(tmp_path, {**files, "pkg/use.py": f"""
        import importlib
        import sys
        import pkg
        import pkg.params
        import pkg.params as m
        from pkg import again, alias, glob, star


        def f(p):
            return isinstance(p, {expression})
    """})
    assert _kinds(verify(original, converted)) == ["isinstance"]


def test_type_name_compared_with_a_string(tmp_path):
    original, converted = _pair(tmp_path, {"pkg/use.py": """
        def f(p):
            return type(p).__name__ == "Packed" or p.__class__.__qualname__ in ("Other", "Packed")
    """})
    assert _kinds(verify(original, converted)) == ["type-name", "type-name"]


def test_name_holding_a_type_compared_with_a_converted_name(tmp_path):
    """``t = type(p)`` (or ``p.__class__``, or a walrus), then ``t == Packed``: the name
    holds a type, which a function never equals; a name holding anything else is a value."""
    original, converted = _pair(tmp_path, {"pkg/use.py": """
        from pkg.params import Base, Packed


        def f(p, q):
            t = type(p)
            if (k := q.__class__) in (Base, int):
                return t is not Packed
            return t == Packed


        def g(p, factory):
            t = param_type(p)
            return t == Packed or factory == Base
    """})
    assert _kinds(verify(original, converted)) == ["type-comparison"] * 3


def test_star_import_honours_all(tmp_path):
    original, converted = _pair(tmp_path, {
        "pkg/other.py": "from pkg.params import Packed\n__all__ = ['helper']\n\n\ndef helper():\n    pass\n",
        "pkg/use.py": "from pkg.other import *\n\n\ndef f(p):\n    return isinstance(p, Packed)\n",
    })
    assert verify(original, converted).ok
    _write(converted, {"pkg/use.py": "from pkg.params import *\n\n\ndef f(p):\n    return isinstance(p, Packed)\n"})
    _write(original, {"pkg/use.py": "from pkg.params import *\n\n\ndef f(p):\n    return isinstance(p, Packed)\n"})
    assert _kinds(verify(original, converted)) == ["isinstance"]


def test_namespace_package_below_the_top_package(tmp_path):
    """``pkg/ns`` has no ``__init__.py``: its modules are ``pkg.ns.*``, as Python names them."""
    original, converted = _pair(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/ns/use.py": "from pkg.ns.params import Packed\n\n\ndef f(p):\n    return isinstance(p, Packed)\n",
    }, params="pkg/ns/params.py")
    report = verify(original, converted)
    assert report.converted == ["pkg.ns.params.Base", "pkg.ns.params.Packed"]
    assert _kinds(report) == ["isinstance"]


def test_symlinked_subdirectory_is_followed(tmp_path):
    use = "from pkg.params import Packed\n\n\ndef f(p):\n    return isinstance(p, Packed)\n"
    original, converted = _pair(tmp_path, {})
    for root in (original, converted):
        _write(root.parent / f"{root.name}-outside", {"linked/__init__.py": "", "linked/use.py": use})
        os.symlink(root.parent / f"{root.name}-outside" / "linked", root / "pkg" / "linked")
    report = verify(original, converted)
    assert [(u.kind, u.path.relative_to(converted).as_posix()) for u in report.class_only_uses] == \
        [("isinstance", "pkg/linked/use.py")]


def test_added_imports_must_resolve(tmp_path):
    original, converted = _pair(tmp_path, {"pkg/use.py": "x = 1\n"}, {"pkg/use.py": """
        import json
        from typing import cast

        from pkg.params import Base, Nope
        from pkg.missing import helper
        from .params import Packed
        x = 1
    """})
    report = verify(original, converted)
    assert report.added_imports == 6
    assert len(report.import_problems) == 2, report.import_problems
    assert "binds no Nope" in report.import_problems[0] or "binds no Nope" in report.import_problems[1]
    assert any("no module pkg.missing" in p for p in report.import_problems)


def test_added_imports_are_executed_on_request(tmp_path):
    original, converted = _pair(tmp_path, {
        "pkg/broken.py": "raise RuntimeError('importing this fails')\nhelper = 1\n",
        "pkg/use.py": "x = 1\n",
    }, {"pkg/use.py": "from pkg.broken import helper\nx = 1\n"})
    assert verify(original, converted).ok  # statically it resolves
    report = verify(original, converted, run_imports=True)
    assert not report.ok
    assert "RuntimeError: importing this fails" in report.import_problems[0]


def test_changed_files_must_compile(tmp_path):
    original, converted = _pair(tmp_path, {"pkg/use.py": "x = 1\n"}, {"pkg/use.py": "def f(:\n"})
    report = verify(original, converted)
    assert len(report.compile_problems) == 1 and "use.py" in report.compile_problems[0]


def test_command_line_exit_status(tmp_path, capsys):
    original, converted = _pair(tmp_path, {"pkg/use.py": "from pkg.params import Packed\n\n\nclass Y(Packed):\n    pass\n"})
    assert main([str(original), str(converted)]) == 1
    assert "CLASS-ONLY USE LEFT" in capsys.readouterr().out
    _write(converted, {"pkg/use.py": "x = 1\n"})
    _write(original, {"pkg/use.py": "x = 1\n"})
    assert main([str(original), str(converted)]) == 0
