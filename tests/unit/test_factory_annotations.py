"""A factory in another module than the ``__new__`` it copies can evaluate its annotations.

``class Mine(Base)`` in a plugin that never imported ``torch``: its factory takes
``Base.__new__``'s parameters, ``data: torch.Tensor`` among them. The annotation is
evaluated when the factory is defined, so the plugin imports ``torch`` as the base's
module did; an annotation whose name the plugin binds to something else is left out.
Importing the converted plugin must not raise ``NameError``.
"""

from __future__ import annotations

import importlib
import sys
import textwrap

import pytest

from codemod.cli import main

BASE = """
    import torch
    from typing import Optional

    from torch.nn import Parameter


    class Base(Parameter):
        def __new__(cls, data: torch.Tensor, scale: Optional[float] = None, **kwargs):
            return super().__new__(cls, data, requires_grad=False)

        def __init__(self, data, scale=None, loader=None):
            self.loader = loader
"""

PLUGIN = """
    from pkg.base import Base

    Optional = "the plugin's own"


    class Mine(Base):
        def __init__(self, extra=None, **kwargs):
            super().__init__(**kwargs)
            self.extra = extra
"""


@pytest.fixture
def fresh_pkg(monkeypatch: pytest.MonkeyPatch):
    """``pkg`` imported afresh by the test, and no ``pkg`` module of it left behind for
    later tests (the ones there before come back when ``monkeypatch`` undoes)."""
    for name in [n for n in sys.modules if n == "pkg" or n.startswith("pkg.")]:
        monkeypatch.delitem(sys.modules, name)
    yield
    for name in [n for n in sys.modules if n == "pkg" or n.startswith("pkg.")]:
        del sys.modules[name]


def test_the_factory_imports_what_its_annotations_name(tmp_path, capsys, monkeypatch,
                                                       fresh_pkg) -> None:
    torch = pytest.importorskip("torch")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    for name, text in {"__init__.py": "", "base.py": BASE, "plugin.py": PLUGIN}.items():
        (pkg / name).write_text(textwrap.dedent(text).lstrip("\n"))
    capsys.readouterr()
    main(["apply", str(pkg)])
    assert "refused" not in capsys.readouterr().err
    plugin = (pkg / "plugin.py").read_text()
    assert "import torch\n" in plugin
    assert "def Mine(data: torch.Tensor, scale=None, **kwargs) -> Parameter:" in plugin
    monkeypatch.syspath_prepend(str(tmp_path))
    mine = importlib.import_module("pkg.plugin").Mine(torch.zeros(2), extra=1)
    assert mine.extra == 1 and mine.loader is None
