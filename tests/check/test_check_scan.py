"""The ``ast`` look that decides which files ``check`` parses with LibCST."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemod.check.scan import AstFiles

from .helpers import BASE_TREE, run, write_tree

NAMES = frozenset({"Packed", "Base"})


@pytest.mark.parametrize(
    ("source", "class_style"),
    [
        pytest.param("from pkg import Packed\nimport pkg.params as pm\n", False, id="imports"),
        pytest.param("from pkg import Packed\np = Packed(data=1)\n", False, id="construction"),
        pytest.param("p = pm.Packed(1)\nk = {'a': Packed}\n", False, id="values"),
        pytest.param("def f(p: Packed): pass\n", False, id="annotation"),
        pytest.param("ok = isinstance(p, int)\nPacked(1)\n", False, id="unrelated-check"),
        pytest.param("ok = isinstance(p, (int, pm.Base))\n", True, id="isinstance"),
        pytest.param("ok = issubclass(Packed, object)\n", True, id="issubclass"),
        pytest.param("ok = type(p) is Packed\n", True, id="compare"),
        pytest.param("ok = [p.__class__ in (1, Packed) for p in ps]\n", True, id="nested-compare"),
        pytest.param("class Mine(Packed):\n    pass\n", True, id="base"),
        pytest.param("def f():\n    class Mine(pm.Packed): pass\n", True, id="nested-base"),
        pytest.param("from pkg import Packed as P\nok = isinstance(p, P)\n", True, id="alias"),
        pytest.param("import pkg.params.Packed as P\nok = type(p) == P\n", True, id="import-as"),
        pytest.param("from pkg import Other as P\nok = isinstance(p, P)\n", False, id="other-alias"),
    ],
)
def test_class_style(source, class_style):
    files = AstFiles({Path("m.py"): _source(source)})  # type: ignore[dict-item]
    assert files.class_style(Path("m.py"), NAMES) is class_style


class _source:
    """Just the ``text`` attribute ``AstFiles`` reads."""

    def __init__(self, text: str) -> None:
        self.text = text


def test_unparsable_text_is_none():
    files = AstFiles({Path("m.py"): _source("def (:\n")})  # type: ignore[dict-item]
    assert files.class_style(Path("m.py"), NAMES) is None


def test_files_that_only_import_and_construct_are_not_parsed(tmp_path, capsys):
    build = "from pkg.params import Packed\n\n\ndef build(d):\n    return Packed(d)\n"
    tree = {**BASE_TREE, **{f"pkg/build{i}.py": build for i in range(4)}}
    root = write_tree(tmp_path / "src", tree)
    assert run(capsys, "apply", root).rc == 1
    result = run(capsys, "check", root)
    assert result.rc == 0
    # After apply nothing names a factory in a base, an isinstance or a comparison (the
    # rewritten checks name ``Features.X`` inside has_param_feature calls): no LibCST parse.
    # (7 files and the runtime module ``apply`` added)
    assert "(8 file(s) scanned, 0 parsed)" in result.err, result.err
