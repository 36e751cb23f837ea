"""Which outside module names may stand for a module of the tree (``TreeModules.likely``),
and which imports of a converted class's name the rewrites cannot follow."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from codemod.analysis import roots
from codemod.planning.misnamed_imports import TreeModules, misnamed_imports

MODULES = TreeModules(["pkglink", "pkglink.params", "pkglink.sub.user", "src.eng.params",
                       "layers.parameter", "sglang.srt.layers.parameter"])


@pytest.mark.parametrize(("module", "expected"), [
    ("pkglink.params", None),                  # a module of the tree
    ("pkg.params", "pkglink.params"),          # through a link: only the first part differs
    ("eng.params", "src.eng.params"),          # named from a directory above the root
    ("eng.layers.parameter", "layers.parameter"),  # from a namespace package's top directory
    ("vllm.model_executor.parameter", None),   # another engine's module
    ("torch", None),
    ("", None),
])
def test_likely(module, expected):
    assert MODULES.likely(module) == expected


def _escapes(tmp_path: Path, rel: str, text: str) -> list[tuple[int, str]]:
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    with roots.using(roots.ImportRoots.of(walked=[tmp_path])):
        found = misnamed_imports(ast.parse(text), path, text, {"Row": ["pkg.params.Row"]},
                                 TreeModules(["pkg.params"]))
    return [(line, qual) for line, _col, qual, _code, _how in found]


def test_a_relative_import_above_the_top_package(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    assert _escapes(tmp_path, "pkg/user.py", "from .params import Row\n") == []
    assert _escapes(tmp_path, "pkg/user.py", "from ..params import Row\n") == [(1, "pkg.params.Row")]
    assert _escapes(tmp_path, "pkg/user.py", "def f():\n    from ..params import Other, Row\n") == \
        [(2, "pkg.params.Row")]
    assert _escapes(tmp_path, "pkg/user.py", "from ..params import Other\n") == []


def test_an_absolute_import_of_another_name_for_a_tree_module(tmp_path):
    assert _escapes(tmp_path, "user.py", "from other.params import Row\n") == [(1, "pkg.params.Row")]
    assert _escapes(tmp_path, "user.py", "from pkg.params import Row\n") == []
    assert _escapes(tmp_path, "user.py", "from vllm.layers import Row\n") == []
