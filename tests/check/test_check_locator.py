"""``Locator`` (positions from CPython's ast) agrees with LibCST's PositionProvider."""

from __future__ import annotations

import textwrap

import libcst as cst

from codemod.analysis.classes import analyse_file
from codemod.check.locate import Locator

SOURCE = textwrap.dedent('''
    import torch
    from pkg import Base


    @decorator(arg)
    class A(Base):
        """é"""

        class Inner(Base):
            pass

        def m(self, p):
            s = "ünïcödé"; ok = isinstance(p, Base)
            t = f"{isinstance(p, Base)} and {type(p) is Base}"
            return (type(p) is Base) == (p.__class__ == Base) != isinstance(
                p,
                (Base, int),
            ) if issubclass(A, Base) else 1 < 2 < 3
    x = [isinstance(y, Base) for y in range(3) if type(y) in (Base,)]


    class B: pass
''').lstrip()


class Walk(cst.CSTVisitor):
    """Every node of the kinds the locator knows, with its kind and ordinal."""

    def __init__(self) -> None:
        self.nodes: list[tuple[cst.CSTNode, tuple[str, int]]] = []
        self.counts = {"class": 0, "call": 0, "cmp": 0}

    def _add(self, node: cst.CSTNode, kind: str) -> None:
        self.nodes.append((node, (kind, self.counts[kind])))
        self.counts[kind] += 1

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._add(node, "class")

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value in ("isinstance", "issubclass"):
            self._add(node, "call")

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self._add(node, "cmp")


def test_locator_matches_position_provider(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(SOURCE, encoding="utf-8")
    ff = analyse_file(path, SOURCE)
    walk = Walk()
    ff.module.visit(walk)
    assert walk.counts == {"class": 3, "call": 5, "cmp": 6}
    locator = Locator()
    for node, ordinal in walk.nodes:
        assert locator.place(ff, SOURCE, node, ordinal, walk.counts) == \
            (ff.line_of(node), ff.col_of(node)), ordinal
    for node in ff.module.body:
        if isinstance(node, cst.ClassDef):
            assert locator.place_class(ff, SOURCE, node) == (ff.line_of(node), ff.col_of(node))


def test_locator_falls_back_when_counts_differ(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(SOURCE, encoding="utf-8")
    ff = analyse_file(path, SOURCE)
    walk = Walk()
    ff.module.visit(walk)
    node, ordinal = walk.nodes[-1]
    wrong = dict(walk.counts, cmp=walk.counts["cmp"] + 1)
    assert Locator().place(ff, SOURCE, node, ordinal, wrong) == (ff.line_of(node), ff.col_of(node))
    # ... and when ast cannot parse the text.
    assert Locator().place(ff, "def (:\n", node, ordinal, walk.counts) == \
        (ff.line_of(node), ff.col_of(node))
