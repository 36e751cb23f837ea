"""``visit_mentioning`` with ``descend``: only the body statements that name a rewritten
name are visited, and the spliced code of a changed class is the code LibCST generates."""

from __future__ import annotations

import libcst as cst

from codemod.transforms.statement_visits import Made, visit_mentioning

SOURCE = '''\
import torch


class Layer:
    """Doc."""

    scale = 2  # a constant

    def untouched(self, x):
        # no mention here
        return x + 1

    @staticmethod
    def checks(p):
        if isinstance(p, Packed):
            return 1
        return 0

    class Inner:
        def deep(self, q):
            return isinstance(q, Packed)

    def tail(self):
        pass
    # a trailing comment


def other(x):
    return x
'''


class _Rename(cst.CSTTransformer):
    """Renames ``Packed`` to ``Features``; records the functions whose bodies it walked."""

    def __init__(self) -> None:
        self.walked: list[str] = []
        self.entered: list[str] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.entered.append(node.name.value)

    def visit_Return(self, node: cst.Return) -> None:
        self.walked.append(cst.Module([]).code_for_node(node))

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        return updated_node.with_changes(value="Features") if original_node.value == "Packed" else updated_node


def _codes(module: cst.Module) -> list[str]:
    return [module.code_for_node(stmt) for stmt in module.body]


def test_descent_visits_only_mentioning_statements_and_keeps_the_rest() -> None:
    module = cst.parse_module(SOURCE)
    whole = module.visit(_Rename())
    rename = _Rename()
    made = Made()
    new = visit_mentioning(module, rename, frozenset({"Packed"}), _codes(module), descend=True, made=made)
    assert new.code == whole.code
    layer_old, layer_new = module.body[1], new.body[1]
    assert isinstance(layer_old, cst.ClassDef) and isinstance(layer_new, cst.ClassDef)
    old_body, new_body = layer_old.body.body, layer_new.body.body
    assert new_body[2] is old_body[2]  # ``untouched`` is the same node, never walked
    assert new_body[5] is old_body[5]
    assert "return x + 1" not in rename.walked
    # Every def still enters the transformer, in order (its scope context).
    assert rename.entered == ["untouched", "checks", "deep", "tail"]
    assert new.body[2] is module.body[2]
    spliced = made.get(layer_new)
    assert spliced is not None
    assert spliced[0] == new.code_for_node(layer_new)
    for part in spliced[1]:
        cst.parse_module(part)


def test_a_header_that_names_one_is_visited_whole() -> None:
    source = "class A(Packed):\n    def f(self):\n        return 1\n"
    module = cst.parse_module(source)
    rename = _Rename()
    new = visit_mentioning(module, rename, frozenset({"Packed"}), _codes(module), descend=True, made=Made())
    assert new.code == module.visit(_Rename()).code
    assert rename.walked == ["return 1"]
