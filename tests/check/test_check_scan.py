"""The ``ast`` look that decides which files ``check`` parses with LibCST."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from codemod.check.scan import AstFiles
from codemod.fileio import SourceFile

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


class _Reference(ast.NodeVisitor):
    """The look as it was first written (every node walked, no line pruning): the
    oracle ``AstFiles.class_style`` must agree with."""

    def __init__(self, names: frozenset[str]) -> None:
        self.names = names
        self.found = False

    def _mentions(self, node: ast.AST) -> bool:
        return any((isinstance(sub, ast.Name) and sub.id in self.names)
                   or (isinstance(sub, ast.Attribute) and sub.attr in self.names)
                   for sub in ast.walk(node))

    def visit_Import(self, node: ast.AST) -> None:
        return None

    visit_ImportFrom = visit_Import

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.found |= any(self._mentions(base) for base in node.bases)
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        self.found |= self._mentions(node)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "issubclass"):
            self.found |= any(self._mentions(arg) for arg in node.args)
        self.generic_visit(node)


def _reference(text: str, names: frozenset[str]) -> bool:
    tree = ast.parse(text)
    local = set(names)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.asname and alias.name.rpartition(".")[2] in names:
                    local.add(alias.asname)
    visitor = _Reference(frozenset(local))
    visitor.visit(tree)
    return visitor.found


TRICKY = [
    "x = f'''\n{\n  isinstance(p, Base)\n}'''\n",
    "x = f'{a}' f'''\n\n{type(p) is Packed}'''\n",
    "@decorate(isinstance(p, Base))\ndef f():\n    pass\n",
    "@decorate(type(q)\n          is Packed)\nclass C:\n    pass\n",
    "ok = isinstance(p,\n    (int,\n     pm.\\\n     Base))\n",
    "class C(\n    object,\n    Packed,\n):\n    pass\n",
    "match x:\n    case 1:\n        from pkg import Packed as Q\nok = type(p) == Q\n",
    "ok = 'Base' == s\n",
    "ok = isinstance(p, Base2) or BaseX is y\n",
    "ok = isinstance(p, int)\r\nclass C(Base): pass\r\n",
    "ok = isinstance(p, int)\rclass C(Base): pass\r",
    "def f():\n    try:\n        from a import Base as B\n    except ImportError:\n        pass\n    return type(p) is B\n",
]


@pytest.mark.parametrize("text", TRICKY)
def test_pruned_walk_agrees_with_a_full_walk(text, tmp_path):
    path = tmp_path / "m.py"
    files = AstFiles({path: _file(path, text)})
    assert files.class_style(path, NAMES) == _reference(text, NAMES)


def _file(path: Path, text: str) -> SourceFile:
    return SourceFile(path, text, "utf-8", False, 0o644)


def test_pruned_walk_agrees_with_a_full_walk_on_every_fixture_file():
    root = Path(__file__).resolve().parents[2] / "fixtures"
    names = NAMES | {"BasevLLMParameter", "PackedvLLMParameter", "ModelWeightParameter",
                     "Parameter", "ColumnParameter", "RowParameter"}
    seen = {True: 0, False: 0}
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        try:
            expected = _reference(text, names)
        except SyntaxError:
            continue
        files = AstFiles({path: _file(path, text)})
        assert files.class_style(path, names) == expected, path
        seen[expected] += 1
    assert seen[True] > 20 and seen[False] > 20
