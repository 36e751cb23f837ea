"""``loaded_while_importing``: the files importing a module runs."""

from __future__ import annotations


from codemod.analysis.import_graph import loaded_while_importing
from tests.speed.test_prefilter import write_tree


def test_follows_import_time_statements_only(tmp_path):
    root = write_tree(tmp_path / "src", {
        "pkg/runtime.py": """
            from typing import TYPE_CHECKING

            from . import a
            import pkg.sub.b as b
            try:
                from pkg.sub import c
            except ImportError:
                pass
            if TYPE_CHECKING:
                from pkg import typing_only
            else:
                from pkg import runtime_else

            class K:
                from pkg import in_class

            def f():
                from pkg import in_function
        """,
        "pkg/a.py": "from .deep import x\n",
        "pkg/deep.py": "x = 1\n",
        "pkg/sub/b.py": "",
        "pkg/sub/c.py": "",
        "pkg/typing_only.py": "",
        "pkg/runtime_else.py": "",
        "pkg/in_class.py": "",
        "pkg/in_function.py": "",
        "pkg/unrelated.py": "import pkg.runtime\n",
    })
    (root / "pkg" / "__init__.py").write_text("")
    texts = {p: p.read_text() for p in root.rglob("*.py")}
    loaded = loaded_while_importing(root / "pkg" / "runtime.py", "pkg.runtime", texts)
    names = sorted(str(p.relative_to(root)) for p in loaded)
    assert names == sorted([
        "pkg/__init__.py", "pkg/runtime.py", "pkg/a.py", "pkg/deep.py", "pkg/sub/__init__.py",
        "pkg/sub/b.py", "pkg/sub/c.py", "pkg/runtime_else.py", "pkg/in_class.py",
    ])


def test_package_init_runs_first(tmp_path):
    root = write_tree(tmp_path / "src", {"pkg/runtime.py": "", "pkg/helpers.py": ""})
    (root / "pkg" / "__init__.py").write_text("from pkg import helpers\n")
    texts = {p: p.read_text() for p in root.rglob("*.py")}
    loaded = loaded_while_importing(root / "pkg" / "runtime.py", "pkg.runtime", texts)
    assert root / "pkg" / "helpers.py" in loaded


def test_unparsable_file_imports_nothing(tmp_path):
    root = write_tree(tmp_path / "src", {"pkg/runtime.py": "from pkg import broken\n",
                                        "pkg/broken.py": "def f(:\n", "pkg/other.py": ""})
    texts = {p: p.read_text() for p in root.rglob("*.py")}
    loaded = loaded_while_importing(root / "pkg" / "runtime.py", "pkg.runtime", texts)
    assert root / "pkg" / "broken.py" in loaded and root / "pkg" / "other.py" not in loaded


def test_star_imports_and_literal_import_module(tmp_path):
    root = write_tree(tmp_path / "src", {
        "pkg/runtime.py": "import importlib\nfrom pkg.sub import *\nimportlib.import_module('pkg.dyn')\n"
                          "x = __import__('pkg.other')\n",
        "pkg/sub/util.py": "",
        "pkg/sub/skipped.py": "",
        "pkg/dyn.py": "",
        "pkg/other.py": "",
    })
    (root / "pkg" / "sub" / "__init__.py").write_text("__all__ = ['util']\n")
    texts = {p: p.read_text() for p in root.rglob("*.py")}
    loaded = loaded_while_importing(root / "pkg" / "runtime.py", "pkg.runtime", texts)
    names = {str(p.relative_to(root)) for p in loaded}
    assert {"pkg/sub/util.py", "pkg/dyn.py", "pkg/other.py", "pkg/sub/__init__.py"} <= names
    assert "pkg/sub/skipped.py" not in names
