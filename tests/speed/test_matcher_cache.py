"""LibCST's import codemods are searched for matcher decorators once per class, not at
each construction; classes with decorated methods, and ours, keep being searched."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor

import codemod.api  # noqa: F401  (installs the cache)
from codemod.transforms.matcher_cache import _remember_none_found


def test_a_libcst_class_with_nothing_found_is_searched_once():
    searched: list[object] = []

    def gather(obj: object) -> dict:
        searched.append(obj)
        return {}

    cached = _remember_none_found(gather)
    Plain = type("Plain", (), {"__module__": "libcst.codemod.visitors._fake"})
    assert cached(Plain()) == {} and cached(Plain()) == {}
    assert len(searched) == 1


def test_other_classes_and_found_decorators_are_searched_each_time():
    searched: list[object] = []
    found = {"matcher": ("f",)}

    def gather(obj: object) -> dict:
        searched.append(obj)
        return found if type(obj).__name__ == "Decorated" else {}

    cached = _remember_none_found(gather)
    Ours = type("Ours", (), {"__module__": "codemod.transforms.x"})
    Decorated = type("Decorated", (), {"__module__": "libcst.codemod.visitors._fake"})
    for _ in range(2):
        assert cached(Ours()) == {}
        assert cached(Decorated()) == found
    assert len(searched) == 4


def test_decorated_visitors_still_work_after_install():
    class Renamer(m.MatcherDecoratableTransformer):
        @m.leave(m.Name("a"))
        def rename(self, original: cst.Name, updated: cst.Name) -> cst.Name:
            return updated.with_changes(value="b")

    for _ in range(2):
        assert cst.parse_module("a = a + c\n").visit(Renamer()).code == "b = b + c\n"


def test_add_imports_visitor_still_adds_imports():
    for _ in range(2):
        context = CodemodContext(full_module_name="pkg.mod", full_package_name="pkg")
        AddImportsVisitor.add_needed_import(context, "pkg.runtime", "Features")
        module = cst.parse_module("import os\n\nx = 1\n")
        assert AddImportsVisitor(context).transform_module(module).code == (
            "import os\nfrom pkg.runtime import Features\n\nx = 1\n")


def test_warm_searches_the_import_codemods_classes_before_a_fork(monkeypatch) -> None:
    """After ``warm`` (the parent, before forking the workers), constructing and running
    the import codemods searches no LibCST class again."""
    import libcst.matchers._visitors as visitors

    from codemod.transforms import matcher_cache

    searched: list[str] = []
    for name in matcher_cache._GATHERERS:
        original = getattr(visitors, name)

        def gather(obj: object, original=original) -> dict:
            searched.append(type(obj).__name__)
            return original(obj)

        monkeypatch.setattr(visitors, name, matcher_cache._remember_none_found(gather))
    matcher_cache.warm()
    assert "AddImportsVisitor" in searched and "RemoveImportsVisitor" in searched
    searched.clear()
    matcher_cache.warm()
    assert searched == []
