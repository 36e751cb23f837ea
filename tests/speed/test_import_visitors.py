"""The engine's cheap runs of LibCST's import visitors give the visitors' own results.

``import_edits.add_imports`` runs ``AddImportsVisitor`` on the top-level statements only and
``import_edits.remove_imports`` scopes only the statements that mention the names; both must
produce exactly the text the visitors produce on the whole module (on these sources:
``remove_imports`` also keeps the comments LibCST drops with a removed statement or name,
tests/unit/test_import_comments.py).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

from codemod.transforms import import_edits

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def context() -> CodemodContext:
    return CodemodContext(filename="pkg/mod.py", full_module_name="pkg.mod",
                          full_package_name="pkg")


ADD_SOURCES = {
    "plain": """
        import os
        from pkg.params import Base


        def f(p):
            return isinstance(p, Base)
    """,
    "docstring-and-future": '''
        """Doc."""
        from __future__ import annotations

        import os


        class A:
            x = 1
    ''',
    "no-imports": """
        class A:
            pass


        def f():
            import os
            return os
    """,
    "comment-before-first-statement": """
        from pkg.params import Base
        # a comment that belongs to the class
        class A(Base):
            pass
    """,
    "imports-after-code": """
        x = 1
        from pkg.params import Base

        if x:
            from pkg.other import Thing
    """,
    "strict-flag": """
        __strict__ = True
        import os
        def f():
            pass
    """,
    "existing-from-import-merged": """
        from pkg.runtime import add_param_feature
        from pkg.params import Base as B

        @decorated
        def f():
            return add_param_feature
    """,
    "assignments-between-imports": '''
        """Doc."""
        import os
        logger = os.getenv("X")  # configured here
        from pkg.params import Base
        __all__ = ["Base", "has_param_feature"]
        has_param_feature = None; import sys

        # a comment
        TABLE = {"b": Base}
    ''',
    "many-import-lines": """
        \"\"\"Doc.\"\"\"
        from __future__ import annotations
        import os
        import torch.nn as nn
        from typing import Any
        from pkg.runtime import add_param_feature
        from . import sibling
        from .params import Base
        import pkg.runtime, typing
        from torch.nn import (
            Parameter,  # the base
        )
        x = 1
        import sys
    """,
    "assignment-first": """
        __all__ = ["f"]
        import os
        x = 1
    """,
    "empty": "",
}
REQUESTS = [
    [("pkg.runtime", "has_param_feature", None)],
    [("pkg.runtime", "Features", "Features_runtime"), ("pkg.runtime", "has_param_feature", None)],
    [("pkg.runtime", "add_param_feature", None), ("torch.nn", "Parameter", None)],
    [("__future__", "annotations", None)],
    [("typing", None, None)],
]


@pytest.mark.parametrize("requests", REQUESTS, ids=range(len(REQUESTS)))
@pytest.mark.parametrize("name", sorted(ADD_SOURCES))
def test_add_imports_same_as_visitor(name, requests):
    module = cst.parse_module(textwrap.dedent(ADD_SOURCES[name]).lstrip("\n"))
    fast, full = context(), context()
    for ctx in (fast, full):
        for mod, obj, asname in requests:
            AddImportsVisitor.add_needed_import(ctx, mod, obj, asname)
    expected = AddImportsVisitor(full).transform_module(module).code
    assert import_edits.add_imports(module, fast).code == expected


def test_add_imports_with_nothing_requested_returns_the_tree():
    module = cst.parse_module("import os\n")
    assert import_edits.add_imports(module, context()) is module


REMOVE_SOURCES = {
    "unused-after-rewrite": """
        from pkg.params import Base, Packed
        from pkg.runtime import Features


        def f(p):
            return has_param_feature(p, Features.Base)
    """,
    "still-used-for-construction": """
        from pkg.params import Base, Packed


        def f(data):
            return Base(data), Packed(data)
    """,
    "used-in-one-function-only": """
        from pkg.params import (
            Base,  # the base
            Packed,
        )


        def f(data):
            return 1


        def g(data):
            return Packed(data)
    """,
    "shadowed-locally": """
        from pkg.params import Base


        def f(Base):
            return Base
    """,
    "exported-in-all": """
        from pkg.params import Base

        __all__ = ["Base"]
    """,
    "string-annotation": """
        from pkg.params import Base


        def f(p: "Base") -> None:
            pass
    """,
    "mentioned-in-a-comment": """
        from pkg.params import Base  # Base is imported
        # Base used to be checked here


        def f(p):
            return p
    """,
    "nested-import-too": """
        from pkg.params import Base


        def f(p):
            from pkg.params import Base
            return p
    """,
    "nested-import-used": """
        from pkg.params import Base


        def f(p):
            from pkg.params import Base
            return Base(p)
    """,
    "module-import": """
        import torch
        import pkg.params


        def f(p):
            return torch.ones(1)
    """,
    "two-on-one-line": """
        from pkg.params import Base; from pkg.params import Packed
        x = Packed
    """,
    "annotation-only": """
        from pkg.params import Base


        def f(p) -> Base:
            return p
    """,
    "argument-and-keyword": """
        from pkg.params import Base


        def f(p):
            return g(Base, Packed=1)


        def h(p):
            return g(x=Base)
    """,
    "shadowed-in-class-scope": """
        from pkg.params import Base


        class C:
            Base = 1
            y = Base()
    """,
    "shadowed-in-comprehension": """
        from pkg.params import Base

        x = [Base() for Base in makers]
    """,
    "shadowed-by-lambda-and-except": """
        from pkg.params import Base, Packed

        f = lambda Base: Base()
        try:
            pass
        except E as Packed:
            Packed.x()
    """,
    "global-statement": """
        from pkg.params import Base


        def f():
            global Base
            Base = Base()
    """,
    "decorator": """
        from pkg.params import Base


        @Base
        def f():
            pass
    """,
    "called-in-a-docstring-only": '''
        from pkg.params import Base


        def f(p):
            """Call Base(p) to build one."""
            return p
    ''',
    "class-body-use": """
        from pkg.params import Base


        class Holder:
            kind = Base
    """,
}
REMOVALS = [
    ({"Base"}, [("pkg.params", "Base", None)]),
    ({"Base", "Packed"}, [("pkg.params", "Base", None), ("pkg.params", "Packed", None)]),
    ({"torch", "pkg"}, [("torch", None, None), ("pkg.params", None, None)]),
]


@pytest.mark.parametrize("removal", REMOVALS, ids=range(len(REMOVALS)))
@pytest.mark.parametrize("name", sorted(REMOVE_SOURCES))
def test_remove_imports_same_as_visitor(name, removal):
    names, requests = removal
    module = cst.parse_module(textwrap.dedent(REMOVE_SOURCES[name]).lstrip("\n"))
    fast, full = context(), context()
    for ctx in (fast, full):
        for mod, obj, asname in requests:
            RemoveImportsVisitor.remove_unused_import(ctx, mod, obj=obj, asname=asname)
    expected = RemoveImportsVisitor(full).transform_module(module).code
    assert import_edits.remove_imports(module, set(names), fast).code == expected


@pytest.mark.parametrize("removal", REMOVALS, ids=range(len(REMOVALS)))
@pytest.mark.parametrize("name", sorted(REMOVE_SOURCES))
def test_remove_imports_given_the_code_generates_no_module(name, removal, monkeypatch):
    """With the module's code given (``FileFacts.code_of``, mostly cut from the text),
    the same answer, and the whole module is not generated again."""
    names, requests = removal
    text = textwrap.dedent(REMOVE_SOURCES[name]).lstrip("\n")
    module = cst.parse_module(text)
    fast, full = context(), context()
    for ctx in (fast, full):
        for mod, obj, asname in requests:
            RemoveImportsVisitor.remove_unused_import(ctx, mod, obj=obj, asname=asname)
    expected = RemoveImportsVisitor(full).transform_module(module).code
    generated = cst.Module.code
    calls: list[cst.Module] = []

    def counted(self: cst.Module) -> str:
        calls.append(self)
        return generated.fget(self)  # type: ignore[attr-defined]

    monkeypatch.setattr(cst.Module, "code", property(counted))
    got = import_edits.remove_imports(module, set(names), fast, text)
    assert module not in calls
    monkeypatch.undo()
    assert got.code == expected


@pytest.mark.parametrize("path", sorted((FIXTURES / "engine").rglob("*.py")),
                         ids=lambda p: p.name)
def test_visitors_same_on_the_engine_sources(path):
    """Every top-level imported name of a real file, requested for removal."""
    module = cst.parse_module(path.read_text())
    fast, full = context(), context()
    names: set[str] = set()
    for stmt in module.body:
        if not import_edits.is_import_line(stmt):
            continue
        for small in stmt.body:  # type: ignore[attr-defined]
            if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar) \
                    and small.module is not None and not small.relative:
                for alias in small.names:
                    names.add(alias.evaluated_alias or alias.evaluated_name)
                    for ctx in (fast, full):
                        RemoveImportsVisitor.remove_unused_import(
                            ctx, cst.Module([]).code_for_node(small.module),
                            obj=alias.evaluated_name, asname=alias.evaluated_alias)
                        AddImportsVisitor.add_needed_import(ctx, "pkg.runtime", "Features")
    expected = RemoveImportsVisitor(full).transform_module(
        AddImportsVisitor(full).transform_module(module))
    got = import_edits.remove_imports(import_edits.add_imports(module, fast), names, fast)
    assert got.code == expected.code


def test_add_imports_gives_the_visitor_only_the_statements_it_reads(monkeypatch):
    source = '"""Doc."""\nimport os\nfrom pkg.a import b\n\n\nx = 1\n\n\ndef f():\n    pass\n\n\ny = 2\n'
    seen: list[int] = []
    transform = AddImportsVisitor.transform_module

    def spy(self, tree):  # type: ignore[no-untyped-def]
        seen.append(len(tree.body))
        return transform(self, tree)

    monkeypatch.setattr(AddImportsVisitor, "transform_module", spy)
    ctx = context()
    AddImportsVisitor.add_needed_import(ctx, "pkg.c", "d")
    tree = cst.parse_module(source)
    out = import_edits.add_imports(tree, ctx)
    assert seen == [4]  # docstring, two imports, ``x = 1``
    assert out.code == source.replace("from pkg.a import b\n", "from pkg.a import b\nfrom pkg.c import d\n")
