"""``@f.register`` (``functools.singledispatch``/``singledispatchmethod``) reads a
parameter's annotation as the class to dispatch on. Rewritten to ``Parameter``, it took
every parameter (and every plain ``Parameter``); such an annotation now refuses the
hierarchy, on the LibCST path and through the CPython leftover screen alike."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from codemod.cli import main

FAMILY = '''
    from torch.nn import Parameter


    class BaseParam(Parameter):
        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data=data, requires_grad=False)


    class ColumnParam(BaseParam):
        pass
'''

USERS = {
    "function": '''
        import functools

        from pkg.params import ColumnParam


        @functools.singledispatch
        def kind(p):
            return "other"


        @kind.register
        def _(p: ColumnParam):
            return "column"
    ''',
    "method": '''
        import functools

        from pkg.params import ColumnParam


        class Loader:
            @functools.singledispatchmethod
            def kind(self, p):
                return "other"

            @kind.register
            def _(self, p: "ColumnParam"):
                return "column"

            @kind.register
            def _(self, p: ColumnParam | None):
                return "column"
    ''',
    # Review of 2026-12-06: registered by a call or through an alias of ``register``,
    # the annotation was rewritten and the handler took every parameter.
    "call": '''
        import functools

        from pkg.params import ColumnParam


        @functools.singledispatch
        def kind(p):
            return "other"


        def _column(p: ColumnParam):
            return "column"


        kind.register(_column)
    ''',
    "alias": '''
        import functools

        from pkg.params import ColumnParam


        @functools.singledispatch
        def kind(p):
            return "other"


        on = kind.register


        @on
        def _(p: ColumnParam):
            return "column"
    ''',
}


@pytest.mark.parametrize("user", sorted(USERS))
def test_dispatch_annotation_refuses(tmp_path: Path, user: str, capsys: pytest.CaptureFixture[str]) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "params.py").write_text(textwrap.dedent(FAMILY).lstrip())
    text = textwrap.dedent(USERS[user]).lstrip()
    (pkg / "user.py").write_text(text)
    main(["apply", str(tmp_path)])
    assert (pkg / "user.py").read_text() == text
    assert "class ColumnParam(BaseParam):" in (pkg / "params.py").read_text()
    assert "ColumnParam: used as a class at" in capsys.readouterr().err


def test_a_function_passed_elsewhere_is_still_rewritten(tmp_path: Path) -> None:
    """Only ``.register(f)`` with the function alone marks it: ``run(load)`` does not."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "params.py").write_text(textwrap.dedent(FAMILY).lstrip())
    (pkg / "user.py").write_text(
        "from pkg.params import ColumnParam\n\n\ndef load(p: ColumnParam):\n    return p\n\n\n"
        "HOOKS = [load]\nREG.register_hook(load)\n")
    main(["apply", str(tmp_path)])
    assert "def load(p: Parameter):" in (pkg / "user.py").read_text()


def test_other_decorated_annotation_still_rewritten(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "params.py").write_text(textwrap.dedent(FAMILY).lstrip())
    (pkg / "user.py").write_text(
        "import functools\n\nfrom pkg.params import ColumnParam\n\n\n"
        "@functools.cache\ndef load(p: ColumnParam):\n    return p\n")
    main(["apply", str(tmp_path)])
    assert "def load(p: Parameter):" in (pkg / "user.py").read_text()
