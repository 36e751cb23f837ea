"""The text searches the screens share (``analysis/text_search.py``): matches that start no
longer name (``unjoined``), written without a lookbehind, find what the lookbehind did; the
walk over the nodes spanning some lines (``nodes_on_lines``) finds every node a full walk
finds on those lines.
"""

from __future__ import annotations

import ast
import re

import pytest

from codemod.analysis.text_search import lines_matching, nodes_on_lines, star_import, unjoined
from codemod.planning import safety_net

TEXTS = [
    "type(p) is type(q)",
    "x = dtype(a); y = x.type(b); z = my_type(c)\n_type(d)\nT = type (e)",
    "ｔｙｐｅ(p)\n1type(q)",
    "from m import *\nreimport *\nimport(\n*",
    "importlib.import_module('x')\nsys.modules['y']\nmy_import_module()\n__import__('z')",
]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize(("literal", "lookbehind", "joiners"), [
    (r"type[ \t]*\(", r"(?<![\w.])type[ \t]*\(", "."),
    (r"import(?!\w)", r"(?<![\w.])import(?!\w)", "."),
    (r"import\s*(?:\(\s*)?\*", r"\bimport\s*(?:\(\s*)?\*", ""),
    (r"(?:import_module|sys\.modules|__import__)\b", r"\bimport_module\b|\bsys\.modules\b|\b__import__\b", ""),
])
def test_unjoined_finds_what_the_lookbehind_found(text: str, literal: str, lookbehind: str,
                                                  joiners: str) -> None:
    found = [m.start() for m in unjoined(text, re.compile(literal), joiners)]
    assert found == [m.start() for m in re.finditer(lookbehind, text)]


def test_the_safety_nets_gates_answer_as_their_patterns_did() -> None:
    case = re.compile(r"^[ \t]+case\s", re.MULTILINE)
    star = re.compile(r"\bimport\s*(?:\(\s*)?\*")
    for text in [*TEXTS, "match x:\n    case 1:\n        pass\n", "lowercase 1\n  case\t2", "case 1",
                 "x = 1\n\tcase(", "from a import (\n    *)"]:
        assert safety_net._indented_case(text) is (case.search(text) is not None), text
        assert star_import(text) is (star.search(text) is not None), text


SOURCE = '''def f(a, b):
    if type(a) is type(b):
        return [lambda x: x for _ in ()]
    return (
        type(a)
        ==
        type(b)
    )


class C:
    @decorate(type(1))
    def g(self):
        return 1
'''


@pytest.mark.parametrize("word", ["type", "lambda", "return", "decorate"])
def test_nodes_on_lines_find_every_node_spanning_a_matching_line(word: str) -> None:
    tree = ast.parse(SOURCE)
    lines = lines_matching(SOURCE, re.compile(word))
    walked = {id(node) for node in nodes_on_lines(tree, lines)}
    for node in ast.walk(tree):
        first, last = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        if first is not None and any(first <= line <= last for line in lines):
            assert id(node) in walked, ast.dump(node)
    assert len(walked) < sum(1 for _ in ast.walk(tree))
