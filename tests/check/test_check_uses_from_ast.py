"""Class-style uses read from CPython's tree (``check.uses_from_ast``) are the ones LibCST's
visitor (``check.uses``) finds: same findings, positions and messages on every fixture
tree; a file CPython's tree cannot decide goes to LibCST."""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst
import pytest

import codemod.check.engine as engine
from codemod import api
from codemod.analysis.classes import _module_globals
from codemod.analysis.names import import_bindings as cst_import_bindings
from codemod.analysis.names import module_globals
from codemod.check.uses_from_ast import Undecided, import_bindings
from codemod.types import Options

from .helpers import BASE_TREE, write_tree

REPO = Path(__file__).resolve().parents[2]
GOLDEN = sorted(p for p in (REPO / "fixtures" / "golden").glob("*/input"))
TREES = [*GOLDEN, *sorted(p for p in (REPO / "fixtures" / "golden").glob("*/expected")),
         REPO / "fixtures" / "engine"]


def _both(paths: list[Path], options: Options, monkeypatch: pytest.MonkeyPatch) -> tuple:
    """The check's result as it is, and with every file read by LibCST's visitor."""
    new = engine.check_tree(paths, options)
    calls: list[Path] = []
    original = engine._uses_from_ast

    def counted(run, path, *args):
        calls.append(path)
        return original(run, path, *args)

    monkeypatch.setattr(engine, "_uses_from_ast", counted)
    engine.check_tree(paths, options)
    monkeypatch.setattr(engine, "_uses_from_ast", lambda *args: None)
    old = engine.check_tree(paths, options)
    monkeypatch.undo()
    return new, old, calls


def _same(new, old) -> None:
    assert new.findings == old.findings
    assert new.suppressed == old.suppressed
    assert new.errors == old.errors
    assert new.warnings == old.warnings


@pytest.mark.parametrize("tree", TREES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_same_findings_as_libcst_on_every_fixture_tree(tree, monkeypatch):
    paths = sorted(p for p in tree.iterdir() if p.is_dir() or p.suffix == ".py")
    if not paths:
        pytest.skip("empty tree")
    new, old, _ = _both(paths, Options(), monkeypatch)
    _same(new, old)


CHECKS = {
    "pkg/__init__.py": "from .params import Base, Packed  # re-export\n",
    "pkg/params.py": BASE_TREE["pkg/params.py"],
    "pkg/again.py": """
        from pkg.params import Base


        class Own(Base):
            pass
    """,
    "pkg/forms.py": """
        import pkg.params as pm
        from pkg import Base
        from pkg.params import Packed as P
        from pkg import params


        def checks(p, q, has_param_feature):
            return [
                isinstance(p, Base),
                isinstance(p, (P, pm.Base)),
                isinstance(p, Base | P),
                issubclass(P, Base),
                type(p) is Base, type(p) is not P, type(p) == Base, type(p) != P,
                Base is type(p), P == p.__class__,
                type(p) in (Base, P), type(p) not in (Base,),
                p.__class__ == P, p.__class__ is pm.Packed,
                has_param_feature(p, 1) or isinstance(p, Base),
                isinstance(p, Base) or has_param_feature(p, 1) or isinstance(p, P),
                f"{type(p) is Base}",
            ]


        class Sub(pm.Packed):
            pass


        def nested():
            return lambda x: isinstance(x, P)
    """,
    "pkg/unicode.py": """
        from pkg.params import Base

        def uses(p): return ("é" * 2, isinstance(p, Base))
    """,
}


#: Forms ``apply`` does not rewrite (the classes are refused, the checks still read).
ODD_FILES = {
    "pkg/shadowed_type.py": """
        from pkg.params import Base
        from mod import type


        def uses(p):
            return type(p) is Base, isinstance(p, Base)
    """,
    "pkg/shadowed.py": """
        from pkg.params import Base


        def isinstance(a, b):
            return False


        def uses(p):
            return isinstance(p, Base), issubclass(Base, Base), type(p) is Base
    """,
    "pkg/local_names.py": """
        from pkg.params import Base

        Other = Base


        def uses(p):
            try:
                from pkg.params import Packed
            except ImportError:
                Packed = None
            return isinstance(p, (Packed, Other)), isinstance(p, Base)
    """,
}
ODD_FORMS = """
    import pkg.params as pm
    from pkg import Base
    from pkg.params import Packed as P
    from pkg import params


    def checks(p, q):
        return [
            isinstance(p, (P, pm.Base, *q)),
            isinstance(p, [Base, (P,)]),
            isinstance(p, Base, extra=1),
            issubclass(Base | P, params.Packed),
            type(p, q) is Base, type(*q) is Base, type(p, k=1) is P,
            type(p) is Base is P,
            type(p) in [Base, *q],
        ]


    class Generic(list[Base]):
        pass


    class Meta(P, metaclass=type):
        pass


    def nested():
        class Inner(P):
            pass
"""


def test_same_findings_as_libcst_on_every_form(tmp_path, monkeypatch):
    write_tree(tmp_path, CHECKS)
    new, old, calls = _both([tmp_path / "pkg"], Options(), monkeypatch)
    _same(new, old)
    assert len(new.findings) > 20, [f.render() for f in new.findings]
    assert {p.name for p in calls} >= {"forms.py", "unicode.py", "again.py"}


def test_same_findings_as_libcst_on_forms_apply_refuses(tmp_path, monkeypatch):
    write_tree(tmp_path, {**CHECKS, **ODD_FILES, "pkg/odd.py": ODD_FORMS})
    new, old, _ = _both([tmp_path / "pkg"], Options(), monkeypatch)
    _same(new, old)
    assert any(f.code == "CM001" and not f.fixable for f in new.findings)


def test_same_findings_as_libcst_after_migration(tmp_path, monkeypatch):
    """Factories and kept classes (CM003/CM004): the tree converted by ``apply``, then
    the same checks written again against what it left, shadowed builtins included."""
    write_tree(tmp_path, {**CHECKS, "pkg/meta.py": """
        from pkg.params import Base


        class Meta(Base, metaclass=type):
            pass
    """})
    result = api.run([tmp_path / "pkg"], Options())
    for file in result.changed():
        file.path.write_text(file.new_text)
    write_tree(tmp_path, {"pkg/again_forms.py": CHECKS["pkg/forms.py"], **ODD_FILES,
                          "pkg/odd.py": ODD_FORMS})
    new, old, _ = _both([tmp_path / "pkg"], Options(), monkeypatch)
    _same(new, old)
    codes = {f.code for f in new.findings}
    assert {"CM003", "CM004"} <= codes, [f.render() for f in new.findings]


def test_same_findings_as_libcst_for_kept_classes(tmp_path, monkeypatch):
    """A refused subclass keeps its bases as classes (shadows): ``isinstance`` against
    them is still reported, and paired with ``has_param_feature`` it is not."""
    write_tree(tmp_path, {**CHECKS, "pkg/meta.py": """
        from pkg.params import Packed


        class Meta(Packed, metaclass=type):
            pass
    """})
    new, old, _ = _both([tmp_path / "pkg"], Options(), monkeypatch)
    _same(new, old)


def test_an_ambiguous_import_goes_to_libcst(tmp_path, monkeypatch):
    """``X`` imported from two places: LibCST's bindings keep one, in its walk's order;
    CPython's tree does not guess (``Undecided``) and LibCST's visitor reads the file."""
    write_tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/params.py": BASE_TREE["pkg/params.py"],
        "pkg/other.py": "class Base:\n    pass\n",
        "pkg/layers.py": """
            try:
                from pkg.params import Base
            except ImportError:
                from pkg.other import Base


            def f(p):
                return isinstance(p, Base)
        """,
    })
    tree = ast.parse((tmp_path / "pkg" / "layers.py").read_text())
    bindings = import_bindings(tree, "pkg.layers", False)
    with pytest.raises(Undecided):
        bindings.get("Base")
    assert "Base" in bindings
    new, old, _ = _both([tmp_path / "pkg"], Options(), monkeypatch)
    _same(new, old)


def test_a_file_that_does_not_compile_is_reported_as_before(tmp_path, monkeypatch):
    write_tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/params.py": BASE_TREE["pkg/params.py"],
        "pkg/layers.py": """
            from pkg.params import Base

            return isinstance(p, Base)
        """,
    })
    new, old, _ = _both([tmp_path / "pkg"], Options(), monkeypatch)
    _same(new, old)
    assert len(new.errors) == 1 and "layers.py:3" in new.errors[0]


def _python_files() -> list[Path]:
    return sorted(p for p in (REPO / "fixtures").rglob("*.py"))


def test_bindings_and_globals_match_libcst_on_every_fixture_file():
    """CPython's reading of imports and module-level names is LibCST's (names bound to
    two places aside: those are ``Undecided``)."""
    compared = 0
    for path in _python_files():
        text = path.read_text(encoding="utf-8")
        try:
            tree = ast.parse(text)
            module = cst.parse_module(text)
        except (SyntaxError, cst.ParserSyntaxError):
            continue
        is_package = path.name == "__init__.py"
        expected = cst_import_bindings(module, "pkg.mod", is_package)
        got = import_bindings(tree, "pkg.mod", is_package)
        assert got.names() == set(expected), path
        assert {k: v for k, v in expected.items() if k not in got.ambiguous} == dict(got), path
        assert module_globals(tree) == _module_globals(module), path
        compared += 1
    assert compared > 100


def test_match_case_imports_are_not_bindings_as_in_libcst():
    text = "match x:\n    case 1:\n        from a import B\nfrom c import D\n"
    assert import_bindings(ast.parse(text), "m", False) == \
        cst_import_bindings(cst.parse_module(text), "m", False) == {"D": "c.D"}
