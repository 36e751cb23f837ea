"""Every ``codemod check`` code, before and after ``apply``, table-driven on small trees."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from codemod.cli import main

from .helpers import BASE_TREE, PARAMS, run, write_tree


def _tree(tmp_path: Path, extra: dict[str, str] | None = None) -> Path:
    return write_tree(tmp_path / "src", {**BASE_TREE, **(extra or {})})


# ---------------------------------------------------------------------------------------
# before apply: CM001 per class, CM002 per class-style use


def test_before_apply_one_finding_per_class_and_use(tmp_path, capsys):
    root = _tree(tmp_path)
    result = run(capsys, "check", root)
    assert result.rc == 1
    assert sorted(result.findings()) == sorted([
        ("params.py", 4, "CM001"),
        ("params.py", 16, "CM001"),
        ("layers.py", 8, "CM002"),   # isinstance(p, Base)
        ("layers.py", 9, "CM002"),   # isinstance(p, (P, pm.Base))
        ("layers.py", 10, "CM002"),  # issubclass(P, Base)
        ("layers.py", 11, "CM002"),  # type(p) is Base
        ("layers.py", 12, "CM002"),  # type(p) in (Base, P)
        ("layers.py", 13, "CM002"),  # p.__class__ == P
    ])
    assert "[*]" in result.out  # every one is fixable
    assert "8 fixable with `codemod apply`" in result.err


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param("isinstance(p, Base)", "`isinstance` check against Parameter class `Base`", id="isinstance"),
        pytest.param("isinstance(\n            p, (P, pm.Base),\n        )", "`P`, `pm.Base`", id="multi-line"),
        pytest.param("not isinstance(p, [P])", "`isinstance` check against Parameter class `P`", id="list"),
        pytest.param("issubclass(P, pm.Base)", "`issubclass` check", id="issubclass"),
        pytest.param("type(p) is not Base", "`type() is not` check", id="type-is-not"),
        pytest.param("Base == type(p)", "`type() ==` check", id="type-eq-reversed"),
        pytest.param("type(p) not in {Base, P}", "`type() not in` check", id="type-not-in-set"),
        pytest.param("p.__class__ is P", "`__class__ is` check", id="dunder-class"),
        pytest.param("0 < 1 and type(p) != Base", "`type() !=` check", id="in-expression"),
        pytest.param("isinstance(p, P | pm.Base)", "`P`, `pm.Base`", id="union"),
        pytest.param("isinstance(p, (int | P, str))", "Parameter class `P`", id="union-in-tuple"),
        pytest.param("issubclass(P, pm.Base | Base)", "`issubclass` check against Parameter class `P`, `pm.Base`, `Base`",
                     id="issubclass-union"),
    ],
)
def test_cm002_each_check_form(tmp_path, capsys, source, expected):
    extra = {"pkg/uses.py": f"""
        import pkg.params as pm
        from pkg.params import Base, Packed as P


        def f(p):
            return {source}
    """}
    result = run(capsys, "check", _tree(tmp_path, extra))
    found = [f for f in result.findings() if f[0] == "uses.py"]
    assert found == [("uses.py", 6, "CM002")]
    assert expected in result.out


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("P(data=p)", id="construction"),
        pytest.param("isinstance(p, int)", id="other-class"),
        pytest.param("type(p) is int", id="other-type"),
        pytest.param("p.Base is Base", id="not-a-type-check"),
        pytest.param("[Base for Base in (1, 2)]", id="unrelated-local-name"),
    ],
)
def test_cm002_not_reported(tmp_path, capsys, source):
    extra = {"pkg/uses.py": f"""
        from pkg.params import Base, Packed as P


        def f(p):
            return {source}
    """}
    result = run(capsys, "check", _tree(tmp_path, extra))
    assert [f for f in result.findings() if f[0] == "uses.py"] == []


def test_shadowed_isinstance_is_not_a_check(tmp_path, capsys):
    extra = {"pkg/uses.py": """
        from pkg.params import Base


        def isinstance(a, b):
            return True


        def f(p):
            return isinstance(p, Base)
    """}
    result = run(capsys, "check", _tree(tmp_path, extra))
    assert [f for f in result.findings() if f[0] == "uses.py"] == []


def test_cm001_transitive_across_files(tmp_path, capsys):
    extra = {"pkg/plugin.py": """
        from pkg import Packed


        class Doubled(Packed):
            pass
    """}
    result = run(capsys, "check", _tree(tmp_path, extra))
    assert ("plugin.py", 4, "CM001") in result.findings()
    assert "`Doubled` derives from torch.nn.Parameter (through `Packed`)" in result.out


def test_cm001_refused_class_is_not_fixable_and_names_the_reason(tmp_path, capsys):
    root = write_tree(tmp_path / "src", {
        "pkg/__init__.py": "",
        "pkg/params.py": """
            from torch.nn import Parameter


            class OwnData(Parameter):
                @property
                def data(self):
                    return 2
        """,
        "pkg/uses.py": """
            from pkg.params import OwnData


            def f(p):
                return isinstance(p, OwnData)  # stays a class: not a finding
        """,
    })
    result = run(capsys, "check", root)
    assert result.rc == 1
    assert result.findings() == [("params.py", 4, "CM001")]
    assert "[*]" not in result.out
    assert "keeps it a class: overrides `data`" in result.out
    assert "1 need(s) a change by hand or an allow-list entry" in result.err


def test_use_that_apply_cannot_rewrite_makes_the_class_unfixable(tmp_path, capsys):
    # The engine refuses a hierarchy whose class is used as a value; check agrees.
    extra = {"pkg/registry.py": """
        from pkg.params import Packed

        KINDS = {"packed": Packed}


        def is_kind(p, name):
            return isinstance(p, KINDS[name])
    """}
    result = run(capsys, "check", _tree(tmp_path, extra))
    assert result.rc == 1
    assert set(result.codes()) == {"CM001"}
    assert "used as a value at" in result.out and "registry.py:3" in result.out
    assert "table `KINDS` read at registry.py:7 -> isinstance at registry.py:7" in result.out
    assert "[*]" not in result.out


# ---------------------------------------------------------------------------------------
# after apply: clean; reintroductions are CM001/CM003/CM004/CM005


@pytest.fixture(scope="module")
def converted_once(tmp_path_factory) -> Path:
    """BASE_TREE after ``codemod apply`` (made once; tests take copies)."""
    root = _tree(tmp_path_factory.mktemp("converted"))
    assert main(["apply", str(root)]) == 1
    assert "class Features" in (root / "pkg/params_features.py").read_text()
    return root


@pytest.fixture
def converted(converted_once, tmp_path) -> Path:
    return Path(shutil.copytree(converted_once, tmp_path / "converted"))


def test_clean_after_apply(converted, capsys):
    result = run(capsys, "check", converted)
    assert (result.rc, result.out) == (0, "")
    assert "All checks passed" in result.err


@pytest.mark.parametrize(
    ("source", "code", "message"),
    [
        pytest.param("class Mine(Packed):\n    pass\n", "CM003",
                     "class Mine derives from `Packed`, a factory function now", id="subclass"),
        pytest.param("class Mine(pm.Base):\n    pass\n", "CM003", "`pm.Base`", id="subclass-module-attr"),
        pytest.param("class Mine(Base2):\n    pass\n", "CM003", "`Base2`", id="subclass-reexport-alias"),
        pytest.param("def f(p):\n    return isinstance(p, Packed)\n", "CM004",
                     "it raises TypeError; write `has_param_feature(obj, Features.Packed)` "
                     "(both from `pkg.params_features`)", id="isinstance"),
        pytest.param("def f(p):\n    return isinstance(p, (int, pm.Base))\n", "CM004",
                     "`pm.Base`", id="isinstance-tuple"),
        pytest.param("def f(p):\n    return type(p) is Base2\n", "CM004",
                     "it is always false; write `param_kind_is(obj, Features.Base)`", id="type-is"),
        pytest.param("def f(p):\n    return type(p) != Packed\n", "CM004", "it is always true",
                     id="type-ne"),
        pytest.param("def f(p):\n    return p.__class__ in (Packed,)\n", "CM004", "`__class__ in`",
                     id="dunder-class-in"),
        pytest.param("def f(c):\n    return issubclass(c, Packed)\n", "CM004", "`issubclass`",
                     id="issubclass"),
        pytest.param("def f(p):\n    return isinstance(p, int | Packed)\n", "CM004",
                     "`isinstance` check against `Packed`", id="isinstance-union"),
        pytest.param("def f(p):\n    return isinstance(p, (str, int | pm.Base))\n", "CM004",
                     "`pm.Base`", id="isinstance-union-in-tuple"),
        # Review of 2026-12-06: spellings of a class spec written in the call itself.
        pytest.param("def f(p):\n    return isinstance(p, Union[int, Packed])\n", "CM004",
                     "`isinstance` check against `Packed`", id="typing-union"),
        pytest.param("def f(p):\n    return isinstance(p, Optional[pm.Base])\n", "CM004",
                     "`pm.Base`", id="typing-optional"),
        pytest.param("def f(p):\n    return isinstance(p, (Packed,) + EXTRA)\n", "CM004",
                     "`Packed`", id="concatenation"),
        pytest.param("def f(p, c):\n    return isinstance(p, Packed if c else int)\n", "CM004",
                     "`Packed`", id="conditional"),
        pytest.param("def f(p):\n    return isinstance(p, (k := Packed))\n", "CM004",
                     "`Packed`", id="walrus"),
        pytest.param("def f(p, c):\n    return type(p) in ((Packed,) if c else ())\n", "CM004",
                     "`type() in` check against `Packed`", id="type-in-conditional"),
    ],
)
def test_reintroduced_after_apply(converted, capsys, source, code, message):
    (converted / "pkg/new.py").write_text(
        "import pkg.params as pm\nfrom pkg import Base as Base2\nfrom pkg.params import Packed\n"
        "from typing import Optional, Union\nEXTRA = ()\n" + source
    )
    result = run(capsys, "check", converted)
    assert result.rc == 1
    assert result.findings() == [("new.py", 6 if code == "CM003" else 7, code)]
    assert message in result.out
    assert "[*]" not in result.out


@pytest.mark.parametrize(("source", "lines"), [
    pytest.param("def f(p: Packed | None) -> None:\n    pass\n", [6], id="parameter"),
    pytest.param("def f(p) -> int | pm.Base:\n    pass\n", [6], id="return"),
    pytest.param("X: Packed | None = None\n", [6], id="module-annotated-assignment"),
    pytest.param("class C:\n    x: int | Packed = 1\n", [7], id="class-annotated-assignment"),
    pytest.param("def f():\n    x: Packed | None = None\n", [], id="local-not-evaluated"),
    pytest.param("def f(p: Packed) -> Packed:\n    pass\n", [], id="no-union"),
    pytest.param("if TYPE_CHECKING:\n    def f(p: Packed | None): ...\n", [], id="type-checking"),
    pytest.param("if typing.TYPE_CHECKING:\n    pass\nelse:\n    def f(p: Packed | None): ...\n",
                 [9], id="type-checking-else"),
    pytest.param("from __future__ import annotations\ndef f(p: Packed | None):\n    pass\n", [],
                 id="postponed"),
])
def test_union_in_an_evaluated_annotation(converted, capsys, source, lines):
    """``Factory | None`` in an annotation Python evaluates raises at import (review of
    2026-12-06: ``check`` passed it, treating every annotation as harmless)."""
    head = "import pkg.params as pm\nfrom pkg.params import Packed\n\n\n"
    if "TYPE_CHECKING" in source:
        head = "import typing\nfrom typing import TYPE_CHECKING\n" + head[:-2]
    if source.startswith("from __future__"):
        head, source = source.split("\n", 1)[0] + "\n" + head, source.split("\n", 1)[1]
        lines = [line + 1 for line in lines]
    (converted / "pkg/new.py").write_text(head + "\n" + source)
    result = run(capsys, "check", converted)
    assert [line for _, line, code in result.findings() if code == "CM004"] == lines
    assert result.rc == (1 if lines else 0)


@pytest.mark.parametrize(("read", "reported"), [
    pytest.param("Packed.__doc__", False, id="doc"),
    pytest.param("Packed.__defaults__", False, id="defaults"),
    pytest.param("pm.Base.__code__", False, id="code"),
    pytest.param("Packed.__mro__", True, id="mro"),
    pytest.param("Packed.__subclasses__()", True, id="subclasses"),
])
def test_attributes_every_function_has(converted, capsys, read, reported):
    """``X.__doc__`` of a factory is valid code (review of 2026-12-06: it was CM004)."""
    (converted / "pkg/new.py").write_text(
        f"import pkg.params as pm\nfrom pkg.params import Packed\n\nVALUE = {read}\n")
    result = run(capsys, "check", converted)
    assert result.findings() == ([("new.py", 4, "CM004")] if reported else [])


@pytest.mark.parametrize(("source", "lines"), [
    pytest.param("has_param_feature(p, Packed)", [7], id="has-param-feature"),
    pytest.param("pf.param_kind_is(p, pf.Features.Base, pm.Base)", [7], id="param-kind-is"),
    pytest.param("has_param_feature(p, pf.Features.Packed)", [], id="a-features-member"),
    pytest.param("has_param_feature(Packed(1), pf.Features.Packed)", [], id="factory-called"),
])
def test_a_factory_where_a_feature_belongs(converted, capsys, source, lines):
    """``has_param_feature(p, X)`` with the factory for ``Features.X`` answers False for
    every parameter (review of 2026-12-06: check passed it)."""
    (converted / "pkg/new.py").write_text(
        "import pkg.params as pm\nimport pkg.params_features as pf\n"
        "from pkg.params import Packed\nfrom pkg.params_features import has_param_feature\n\n\n"
        f"def f(p):\n    return {source}\n")
    result = run(capsys, "check", converted)
    assert [line for _, line, code in result.findings() if code == "CM004"] == [
        line + 1 for line in lines]
    if lines:
        assert "take a `Features` member" in result.out


def test_renamed_re_export_of_a_factory(converted, capsys):
    """A factory re-exported under another name, then checked or subclassed through that
    name (review of 2026-12-06: only the class names were looked for after ``apply``)."""
    (converted / "pkg/compat").mkdir()
    (converted / "pkg/compat/__init__.py").write_text("from pkg.params import Packed as PackedParam\n")
    (converted / "pkg/compat/again.py").write_text("from pkg.compat import PackedParam as P2\n")
    (converted / "pkg/compat/user.py").write_text(
        "from pkg.compat import PackedParam\nfrom pkg.compat.again import P2\n\n\n"
        "def f(p):\n    return isinstance(p, PackedParam), type(p) is P2\n\n\n"
        "class Mine(PackedParam):\n    pass\n")
    result = run(capsys, "check", converted)
    assert sorted(result.findings()) == [("user.py", 6, "CM004"), ("user.py", 6, "CM004"),
                                         ("user.py", 9, "CM003")]


def test_advice_imports_resolve(converted, capsys):
    """The module CM004's advice names holds what it says (it named the factory's module,
    which has neither ``Features`` nor the helpers: an ``ImportError``)."""
    (converted / "pkg/new.py").write_text(
        "from pkg.params import Packed\n\n\ndef f(p):\n    return isinstance(p, Packed)\n")
    out = run(capsys, "check", converted).out
    module = re.search(r"\(both from `([\w.]+)`\)", out)[1]
    runtime = (converted / (module.replace(".", "/") + ".py")).read_text()
    assert "class Features" in runtime and "def has_param_feature" in runtime


def test_unions_are_converted_and_then_clean(tmp_path, capsys):
    """``isinstance(p, A | B)`` is a fixable CM002 like the tuple form; ``apply`` rewrites
    it and ``check`` then passes."""
    extra = {"pkg/unions.py": """
        from pkg.params import Base, Packed


        def f(p):
            return isinstance(p, Packed | Base | int), issubclass(Packed, Base | Packed)
    """}
    root = _tree(tmp_path, extra)
    before = run(capsys, "check", root)
    assert ("unions.py", 5, "CM002") in before.findings()
    assert "CM001" in before.codes() and "used as a class" not in before.out
    assert run(capsys, "apply", root).rc == 1
    assert "has_param_feature(p, Features.Packed, Features.Base)" in (root / "pkg/unions.py").read_text()
    assert run(capsys, "check", root).rc == 0


def test_new_parameter_class_after_apply_is_cm001_and_cm005(converted, capsys):
    (converted / "pkg/fresh.py").write_text(
        "from torch.nn import Parameter\n\n\nclass Fresh(Parameter):\n    pass\n"
    )
    result = run(capsys, "check", converted)
    assert result.rc == 1
    assert result.findings() == [("fresh.py", 4, "CM001"), ("fresh.py", 4, "CM005")]
    assert "partly converted: 1 Parameter class(es)" in result.out
    assert "factory functions it made in `pkg.params`" in result.out
    assert "2 fixable with `codemod apply`" in result.err
    # apply converts it; then the tree is clean again.
    assert run(capsys, "apply", converted).rc == 1
    assert run(capsys, "check", converted).rc == 0


def test_partly_converted_tree(tmp_path, capsys):
    # One hierarchy converted, a second one (another package) not yet.
    root = _tree(tmp_path)
    assert run(capsys, "apply", root / "pkg").rc == 1
    write_tree(root, {"other/__init__.py": "", "other/params.py": PARAMS})
    result = run(capsys, "check", root)
    assert result.rc == 1
    assert sorted(result.codes()) == ["CM001", "CM001", "CM005"]


def test_a_features_class_alone_is_not_a_converted_module(tmp_path, capsys):
    root = write_tree(tmp_path / "src", {
        "feat/__init__.py": "",
        "feat/flags.py": """
            class Features:
                fast = "fast"


            def slow():
                return 1
        """,
        "feat/use.py": """
            from feat.flags import Features, slow


            def f(x):
                return isinstance(x, Features) or type(x) is slow
        """,
    })
    result = run(capsys, "check", root)
    assert (result.rc, result.out) == (0, "")


# ---------------------------------------------------------------------------------------
# golden cases from other features: kept classes (shadows) and feature-prefix


def _golden(fixtures_dir: Path, name: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(fixtures_dir / "golden" / name / "input", tmp_path / name))


def test_shadow_classes(fixtures_dir, tmp_path, capsys):
    root = _golden(fixtures_dir, "leaf_refused_shadow", tmp_path)
    before = run(capsys, "check", root)
    assert before.rc == 1
    kept = [f for f in before.findings() if f[2] == "CM001" and f[0] == "params.py"]
    assert len(kept) == 4  # Base (kept), Column, Packed (converted), Shared (refused)
    # isinstance on the kept Base is rewritten by apply: a fixable CM002.
    assert ("use.py", 6, "CM002") in before.findings()
    assert run(capsys, "apply", root).rc == 1
    after = run(capsys, "check", root)
    # Base and Shared stay classes: CM001 without [*]; every use apply wrote is fine.
    lines = (root / "pkg/params.py").read_text().splitlines()
    kept_lines = [i + 1 for i, text in enumerate(lines)
                  if text.startswith(("class Base(", "class Shared("))]
    assert sorted(after.findings()) == [("params.py", n, "CM001") for n in kept_lines]
    assert "[*]" not in after.out
    (root / "pkg/new.py").write_text(
        "from pkg.params import Base, Packed\n\n\n"
        "def f(p):\n"
        "    return [isinstance(p, Base), type(p) is Base, isinstance(p, Packed)]\n"
    )
    again = run(capsys, "check", root)
    new = [f for f in again.findings() if f[0] == "new.py"]
    assert new == [("new.py", 5, "CM004"), ("new.py", 5, "CM004")]
    assert "a class `codemod apply` kept whose converted subclasses are plain Parameters" in again.out
    assert "`has_param_feature(obj, Features.Base) or isinstance(obj, Base)`" in again.out
    assert "`has_param_feature(obj, Features.Packed)`" in again.out


def test_feature_prefix(fixtures_dir, tmp_path, capsys):
    root = _golden(fixtures_dir, "feature_prefix", tmp_path)
    assert run(capsys, "check", root).rc == 1
    assert run(capsys, "apply", root).rc == 1
    assert run(capsys, "check", root).rc == 0
    (root / "foo/new.py").write_text(
        "from foo import ShardedFooParameter\n\n\n"
        "def f(p):\n    return isinstance(p, ShardedFooParameter)\n"
    )
    result = run(capsys, "check", root)
    assert result.findings() == [("new.py", 5, "CM004")]
    member = re.search(r"^    (\w+) = \"foo\.params\.ShardedFooParameter\"$",
                       (root / "foo/params_features.py").read_text(), re.MULTILINE)[1]
    assert f"`has_param_feature(obj, Features.{member})`" in result.out


def test_features_members_are_found_by_value(tmp_path, capsys):
    # With a feature-prefix the member names differ from the factory names.
    root = write_tree(tmp_path / "src", {
        "foo/__init__.py": "",
        "foo/params.py": """
            class Features:
                IsBase = "foo.params.Base"
                IsKept = "foo.params.Kept"


            def Base(data, **kwargs):
                return data


            class Kept:
                pass
        """,
        "foo/use.py": """
            from foo.params import Base, Kept


            def f(p):
                return isinstance(p, Base), isinstance(p, Kept), type(p) is Kept
        """,
    })
    result = run(capsys, "check", root)
    assert result.findings() == [("use.py", 5, "CM004"), ("use.py", 5, "CM004")]
    assert "`has_param_feature(obj, Features.IsBase)`" in result.out
    assert "`has_param_feature(obj, Features.IsKept) or isinstance(obj, Kept)`" in result.out
