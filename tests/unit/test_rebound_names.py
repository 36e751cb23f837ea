"""A converted class's name bound to something else in the same file refuses the class.

The rewrites resolve a name once per file; Python resolves it per scope. Before this
rule, ``def shadow(ColumnParam, x): return isinstance(x, ColumnParam)`` became a feature
check on the parameter family, and a function-local ``from other import ColumnParam`` was
taken for the family's class: the converted code answered differently and nothing said so.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from codemod.cli import main

FAMILY = '''
    import torch
    from torch.nn import Parameter


    class BaseParam(Parameter):
        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data=data, requires_grad=False)

        def __init__(self, data, weight_loader):
            self._weight_loader = weight_loader

        @property
        def weight_loader(self):
            return self._weight_loader


    class ColumnParam(BaseParam):
        pass
'''

OTHER = '''
    class ColumnParam:
        pass
'''


def _apply(tmp_path: Path, capsys: pytest.CaptureFixture[str], use: str) -> tuple[str, str]:
    """Convert a package whose ``use.py`` is ``use``; return (its new text, stderr)."""
    files = {"pkg/__init__.py": "", "pkg/parameter.py": FAMILY, "pkg/other.py": OTHER,
             "pkg/use.py": use}
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    capsys.readouterr()
    main(["apply", str(tmp_path / "pkg")])
    return (tmp_path / "pkg/use.py").read_text(), capsys.readouterr().err


@pytest.mark.parametrize(("use", "line", "how"), [
    ('''
     from pkg.parameter import ColumnParam


     def shadow(ColumnParam, x):
         return isinstance(x, ColumnParam)
     ''', 4, "a parameter of `shadow` also named `ColumnParam`"),
    ('''
     from pkg.parameter import ColumnParam

     check = lambda x, ColumnParam=int: isinstance(x, ColumnParam)
     ''', 3, "a parameter of a `lambda` also named `ColumnParam`"),
    ('''
     from pkg.parameter import ColumnParam


     def local(x):
         class ColumnParam:
             pass
         return isinstance(x, ColumnParam)
     ''', 5, "a nested class also named `ColumnParam`"),
    ('''
     from pkg.parameter import ColumnParam


     def other(x):
         from pkg.other import ColumnParam
         return isinstance(x, ColumnParam)
     ''', 5, "an import of `pkg.other.ColumnParam` also named `ColumnParam`"),
    ('''
     from pkg.other import ColumnParam


     def ours(x):
         from pkg.parameter import ColumnParam
         return isinstance(x, ColumnParam)
     ''', 1, "an import of `pkg.other.ColumnParam` also named `ColumnParam`"),
    ('''
     from pkg.parameter import ColumnParam as CP


     def aliased(CP, x):
         return isinstance(x, CP)
     ''', 4, "a parameter of `aliased` also named `CP`"),
])
def test_a_second_binding_refuses_the_class(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            use: str, line: int, how: str) -> None:
    before = textwrap.dedent(use).lstrip("\n")
    after, err = _apply(tmp_path, capsys, use)
    assert after == before
    assert f"ColumnParam: used at {tmp_path / 'pkg' / 'use.py'}:{line} (" in err, err
    assert how in err, err


@pytest.mark.parametrize("use", [
    # A function-local import of the same class is the same binding.
    '''
    from pkg.parameter import ColumnParam


    def again(x):
        from pkg.parameter import ColumnParam
        return isinstance(x, ColumnParam)
    ''',
    # The methods of a class do not see its class-level names: ``m`` means the import.
    '''
    from pkg.parameter import ColumnParam


    class Holder:
        def m(self, x):
            return isinstance(x, ColumnParam)
    ''',
])
def test_the_same_binding_converts(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                   use: str) -> None:
    after, err = _apply(tmp_path, capsys, use)
    assert "refused" not in err, err
    assert "has_param_feature(x, Features.ColumnParam)" in after
