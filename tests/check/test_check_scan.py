"""The ``ast`` look that decides which files ``check`` parses with LibCST."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemod.check import _AstFiles

from .helpers import BASE_TREE, run, write_tree

NAMES = frozenset({"Packed", "Base"})


@pytest.mark.parametrize(
    ("source", "value_use", "class_style"),
    [
        pytest.param("from pkg import Packed\nimport pkg.params as pm\n", False, False, id="imports"),
        pytest.param("from pkg import Packed\np = Packed(data=1)\n", False, False, id="construction"),
        pytest.param("import pkg.params as pm\np = pm.Packed(1)\n", False, False, id="module-construction"),
        pytest.param("f(Packed=1)\ndef g(Packed): pass\n", False, False, id="keyword-and-param"),
        pytest.param("from pkg import Packed as P\np = P(1)\n", False, False, id="alias-construction"),
        pytest.param("from pkg import Packed as P\nk = P\n", True, False, id="alias-value"),
        pytest.param("import pkg.params.Packed as P\nk = P\n", True, False, id="import-as-value"),
        pytest.param("Packed.load(p, w)\n", True, False, id="unbound-method"),
        pytest.param("def f(p: Packed): pass\n", True, False, id="annotation"),
        pytest.param("KINDS = {'p': Packed}\n", True, False, id="value"),
        pytest.param("ok = isinstance(p, (int, pm.Base))\n", True, True, id="isinstance"),
        pytest.param("ok = issubclass(Packed, object)\n", True, True, id="issubclass"),
        pytest.param("ok = type(p) is Packed\n", True, True, id="compare"),
        pytest.param("class Mine(Packed):\n    pass\n", True, True, id="base"),
        pytest.param("ok = isinstance(p, int)\nPacked(1)\n", False, False, id="unrelated-check"),
    ],
)
def test_scan(source, value_use, class_style):
    path = Path("m.py")
    files = _AstFiles({path: _source(source)})  # type: ignore[dict-item]
    scan = files.scan(path, NAMES)
    assert scan is not None
    assert (scan.value_use, scan.class_style) == (value_use, class_style)


class _source:
    """Just the ``text`` attribute ``_AstFiles`` reads."""

    def __init__(self, text: str) -> None:
        self.text = text


def test_scan_of_unparsable_text_is_none():
    files = _AstFiles({Path("m.py"): _source("def (:\n")})  # type: ignore[dict-item]
    assert files.scan(Path("m.py"), NAMES) is None


def test_files_that_only_import_and_construct_are_not_parsed(tmp_path, capsys):
    build = "from pkg.params import Packed\n\n\ndef build(d):\n    return Packed(d)\n"
    tree = {**BASE_TREE, **{f"pkg/build{i}.py": build for i in range(5)}}
    root = write_tree(tmp_path / "src", tree)
    assert run(capsys, "apply", root).rc == 1
    result = run(capsys, "check", root)
    assert result.rc == 0
    # After apply nothing names a factory in a base, an isinstance or a comparison (the
    # rewritten checks name ``Features.X`` inside has_param_feature calls): no LibCST parse.
    assert "(8 file(s) scanned, 0 parsed)" in result.err, result.err
