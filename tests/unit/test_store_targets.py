"""``StoreTargets`` and ``WrittenTargets``: the two meanings of "a target" the rewrites use."""

from __future__ import annotations

import libcst as cst

from codemod.transforms.store_targets import StoreTargets, WrittenTargets


def _codes(code: str, visitor: StoreTargets, *id_sets: str) -> list[set[str]]:
    """For each of the visitor's id sets named in ``id_sets``, the code of every node of
    ``code`` whose id it recorded. One parse and one visit: ids are compared while every
    node is alive (ids of nodes freed by an earlier parse could be reused)."""
    module = cst.parse_module(code)
    nodes: list[cst.CSTNode] = []

    class _All(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            nodes.append(node)
            return True

    module.visit(_All())
    module.visit(visitor)
    return [{module.code_for_node(n) for n in nodes if id(n) in getattr(visitor, name)}
            for name in id_sets]


def test_statement_targets_are_stored_whole() -> None:
    visitor = StoreTargets()
    code = "p._f = 1\np._g += 1\np._h: int = 2\ndel p._i\nq._a, q._b = 1, 2\nfor r._c in x:\n    pass\n"
    assert _codes(code, visitor, "_stores") == [{
        "p._f", "p._g", "p._h", "p._i", "q._a, q._b"}]


def test_written_targets_reach_inside_tuples_and_loop_and_with_targets() -> None:
    visitor = WrittenTargets()
    code = ("X.A = 1\n(X.B, [X.C, d]) = v\nfor X.D in x:\n    pass\n[0 for X.E in x]\n"
            "with f() as X.F:\n    pass\nwith g():\n    pass\nprint(X.G)\n")
    written, stores = _codes(code, visitor, "_written", "_stores")
    assert written == {
        "X.A", "(X.B, [X.C, d])", "X.B", "[X.C, d]", "X.C", "d", "X.D", "X.E", "X.F"}
    assert stores == {"X.A", "(X.B, [X.C, d])"}
