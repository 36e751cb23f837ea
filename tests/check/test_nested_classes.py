"""Parameter classes below a module's top level: ``apply`` keeps them as classes and says
so; ``check`` reports each (CM001, not fixable), so the CI guard sees a subclass written
in a function, a class body or a module-level block as it sees a top-level one."""

from __future__ import annotations

import ast
import textwrap

import pytest

from codemod.analysis.nested_classes import nested_parameter_classes

from .helpers import run, write_tree

NESTED = """
    import contextlib

    import torch
    from torch import nn
    from torch.nn import Parameter as P


    class Top(nn.Parameter):
        pass


    def make():
        class Local(torch.nn.Parameter):
            pass

        class Deeper(Local):
            pass
        return Deeper


    def make_later():
        class Early(Late):  # derives from a class defined after it
            pass

        class Late(P):
            pass
        return Early


    def local_import():
        from torch.nn.parameter import UninitializedParameter as U

        class Lazy(U):
            pass
        return Lazy


    class Holder:
        class Inner(nn.Parameter):
            pass

        class Config:  # not a Parameter class
            pass


    if torch.cuda.is_available():
        class InIf(nn.Parameter):
            pass
    else:
        class InElse(P):
            pass

    try:
        class InTry(P):
            pass
    except ImportError:
        class InExcept(P):
            pass

    with contextlib.suppress(Exception):
        class InWith(P):
            pass

    for _ in range(1):
        class InFor(P):
            pass


    def subclass_of_top():
        class FromTop(Top):
            pass
        return FromTop


    def unrelated():
        class Plain(object):
            pass

        class Mod(nn.Module):
            pass
        return Plain, Mod
"""

NESTED_NAMES = ["Local", "Deeper", "Early", "Late", "Lazy", "Inner", "InIf", "InElse", "InTry",
                "InExcept", "InWith", "InFor", "FromTop"]


def _line_of(text: str, name: str) -> int:
    lines = textwrap.dedent(text).lstrip("\n").splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.lstrip().startswith(f"class {name}("))


#: (line, name) of each nested Parameter class of NESTED, in source order.
EXPECTED = [(_line_of(NESTED, name), name) for name in NESTED_NAMES]
TOP_LINE = _line_of(NESTED, "Top")


def test_expected_lines_are_in_source_order():
    assert [line for line, _ in EXPECTED] == sorted(line for line, _ in EXPECTED)


def test_check_reports_every_nested_parameter_class(tmp_path, capsys):
    root = write_tree(tmp_path / "src", {"pkg/__init__.py": "", "pkg/m.py": NESTED})
    result = run(capsys, "check", "--no-cache", root)
    assert result.rc == 1
    nested = [(line, code) for name, line, code in result.findings() if line != TOP_LINE]
    assert nested == [(line, "CM001") for line, _ in EXPECTED]
    assert "[*]" not in result.out
    assert f"pkg/m.py:{EXPECTED[0][0]}:5: CM001 `Local` derives from torch.nn.Parameter but is defined in " \
        "function `make`" in result.out.replace("\\", "/")
    assert "defined in class `Holder`" in result.out
    assert "defined in an `if` block" in result.out
    assert "defined in a `try` block" in result.out
    # The top-level class is still reported once: FromTop subclasses it in a function,
    # a use no rewrite covers, so apply keeps it and says why.
    top = [line for line in result.out.splitlines() if f":{TOP_LINE}:1: CM001" in line]
    assert len(top) == 1 and "keeps it a class" in top[0]


def test_apply_warns_and_leaves_them(tmp_path, capsys):
    root = write_tree(tmp_path / "src", {"pkg/__init__.py": "", "pkg/m.py": NESTED})
    before = (root / "pkg/m.py").read_text()
    result = run(capsys, "apply", "--jobs", "1", root)
    assert (root / "pkg/m.py").read_text() == before
    warned = [line for line in result.err.splitlines() if "converts only classes defined at" in line]
    assert len(warned) == len(EXPECTED)
    assert f"pkg/m.py:{EXPECTED[0][0]}: `Local` derives from torch.nn.Parameter but is defined in " \
        "function `make`" in result.err.replace("\\", "/")


SIMPLE = """
    import torch


    def make():
        class Local(torch.nn.Parameter):
            pass
        return Local


    class Holder:
        class Inner(torch.nn.Parameter):  # codemod: ignore[CM001]
            pass
"""


@pytest.mark.parametrize("allow", ["Local", "pkg.m.make.<locals>.Local"])
def test_allow_list_by_name_or_qualname(tmp_path, capsys, allow):
    root = write_tree(tmp_path / "src", {"pkg/__init__.py": "", "pkg/m.py": SIMPLE})
    assert run(capsys, "check", "--no-cache", root).findings() == [("m.py", 5, "CM001")]
    (tmp_path / "src" / "pyproject.toml").write_text(
        f'[tool.codemod]\nallow-classes = ["{allow}"]\n')
    result = run(capsys, "check", "--no-cache", root)
    assert result.rc == 0, result.out


def test_converted_tree_with_a_new_nested_subclass(tmp_path, capsys):
    """After apply, a Parameter subclass written in a function fails the check."""
    root = write_tree(tmp_path / "src", {"pkg/__init__.py": "", "pkg/m.py": """
        import torch


        class Top(torch.nn.Parameter):
            pass
    """})
    assert run(capsys, "apply", "--jobs", "1", root).rc == 1
    assert run(capsys, "check", "--no-cache", root).rc == 0
    (root / "pkg/late.py").write_text(
        "import torch\n\n\ndef build(data):\n"
        "    class Scale(torch.nn.Parameter):\n        pass\n    return Scale(data)\n")
    result = run(capsys, "check", "--no-cache", root)
    assert result.rc == 1
    assert result.findings() == [("late.py", 5, "CM001")]


@pytest.mark.parametrize(("source", "expected"), [
    pytest.param("def f():\n    class A(P): pass\n", [("f.<locals>.A", "function `f`")], id="function"),
    pytest.param("class C:\n    class A(P): pass\n", [("C.A", "class `C`")], id="class-body"),
    pytest.param("class C:\n    def m(self):\n        class A(P): pass\n",
                 [("C.m.<locals>.A", "function `m`")], id="method"),
    pytest.param("if x:\n    def f():\n        class A(P): pass\n",
                 [("f.<locals>.A", "function `f`")], id="function-in-if"),
    pytest.param("while x:\n    class A(P): pass\n", [("A", "a `while` loop")], id="while"),
    pytest.param("match x:\n    case 1:\n        class A(P): pass\n", [("A", "a `match` block")],
                 id="match"),
    pytest.param("class A(P): pass\n", [], id="top-level"),
    pytest.param("def f():\n    class A(Q): pass\n", [], id="not-a-parameter"),
    pytest.param("def f():\n    class A(make()): pass\n", [], id="computed-base"),
    pytest.param("def f():\n    class A(P): pass\n    class B(A): pass\n",
                 [("f.<locals>.A", "function `f`"), ("f.<locals>.B", "function `f`")], id="chain"),
    # Review of 2026-12-06: names were matched across scopes, and a function's own
    # import was not read.
    pytest.param("def f():\n    class A(P): pass\ndef g():\n    class A: pass\n    class B(A): pass\n",
                 [("f.<locals>.A", "function `f`")], id="same-name-in-another-function"),
    pytest.param("def f():\n    from inspect import P\n    class A(P): pass\n", [], id="local-import"),
    pytest.param("def f():\n    from torch import P\n    class A(P): pass\n",
                 [("f.<locals>.A", "function `f`")], id="local-import-of-a-parameter"),
    pytest.param("def f(P):\n    class A(P): pass\n", [], id="parameter-shadows"),
    pytest.param("if x:\n    class A(P): pass\ndef f():\n    class B(A): pass\n",
                 [("A", "an `if` block"), ("f.<locals>.B", "function `f`")], id="module-block-base"),
])
def test_finder_table(source, expected):
    tree = ast.parse(source)
    found = nested_parameter_classes(tree, lambda spelled: [spelled],
                                     lambda q: q in ("P", "torch.P"))
    assert [(n.qualname, n.where) for n in found] == expected


def test_finder_reads_nothing_below_simple_statements():
    tree = ast.parse("x = [1 for _ in ()]\n" * 3)
    assert nested_parameter_classes(tree, lambda s: [s], lambda q: True) == []
