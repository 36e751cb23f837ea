"""A class-level expression that reads a name the class body bound before it reads the
class's member; the converted constant or method is at module level, where that name is
the module's. Such a class is refused (before, ``DOUBLE = SCALE * 2`` and ``def load(self,
w=SCALE)`` silently took the module's ``SCALE``)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from codemod.cli import main

TEMPLATE = '''
    from torch.nn import Parameter

    SCALE = "module"


    class ColumnParam(Parameter):
        SCALE = 2
        {line}

        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data=data, requires_grad=False)
'''

REFUSED = [
    "DOUBLE = SCALE * 2",
    "DOUBLE: int = SCALE",
    "FIRST = [n for n in SCALE]",
    "def load(self, w=SCALE): return w",
    "def load(self, w=(SCALE, 1)): return w",
    "def load(self, *, w=-SCALE): return w",
]

CONVERTED = [
    "PAIRS = [(n, SCALE) for n in (1, 2)]",
    "def load(self, w=1): return SCALE",
]

#: Not reads of the class's own name, but values that may be a function or a descriptor
#: (``class_rules.class_attribute_not_plain_data``): refused for that.
NOT_DATA = [
    "OTHER = other.SCALE if False else 1",
    "CALLED = dict(SCALE=1)",
    "LATER = lambda: SCALE",
]


def _apply(tmp_path: Path, line: str) -> str:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "params.py").write_text(textwrap.dedent(TEMPLATE).lstrip().replace("{line}", line))
    main(["apply", str(tmp_path)])
    return (pkg / "params.py").read_text()


@pytest.mark.parametrize("line", REFUSED)
def test_reading_own_member_refuses(tmp_path: Path, line: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert "class ColumnParam(Parameter):" in _apply(tmp_path, line)
    assert "reads its own class-level name 'SCALE'" in capsys.readouterr().err


@pytest.mark.parametrize("line", CONVERTED)
def test_module_scope_reads_convert(tmp_path: Path, line: str) -> None:
    assert "def ColumnParam(" in _apply(tmp_path, line)


MANGLED = '''
    from torch.nn import Parameter


    class BaseParam(Parameter):
        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data=data, requires_grad=False)

        def __init__(self, data):
            self.__tag = "base"

        def base_tag(self):
            return self.__tag


    class ColumnParam(BaseParam):
        def __init__(self, data):
            super().__init__(data)
            self.__tag = "column"
'''


def test_private_names_refuse(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``self.__tag`` is ``_BaseParam__tag`` in one class and ``_ColumnParam__tag`` in the
    other; module-level functions would share one ``__tag`` (``base_tag()`` then answered
    "column")."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "params.py").write_text(textwrap.dedent(MANGLED).lstrip())
    main(["apply", str(tmp_path)])
    assert "class ColumnParam(BaseParam):" in (pkg / "params.py").read_text()
    assert "uses the private name '__tag'" in capsys.readouterr().err


@pytest.mark.parametrize("line", NOT_DATA)
def test_module_scope_reads_of_values_that_may_bind_are_refused_as_such(
        tmp_path: Path, line: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert "class ColumnParam(Parameter):" in _apply(tmp_path, line)
    err = capsys.readouterr().err
    assert "which may be a function or a descriptor" in err and "reads its own" not in err
