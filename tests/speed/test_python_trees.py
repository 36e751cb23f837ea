"""CPython's parse of a file is made once per run and shared by every stage that reads
the file with ``ast.parse`` (class-value proofs, import graph, screens, statement spans)."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from codemod import api
from codemod.analysis import python_trees
from codemod.types import Options
from tests.speed.test_leftover_screen import FIXTURE_TREES


def test_each_file_parsed_by_cpython_once_per_run(monkeypatch):
    root = FIXTURE_TREES[0]
    texts = {path.read_text() for path in Path(root).rglob("*.py")}
    parses: Counter[str] = Counter()
    parse = ast.parse

    def counting(source, *args, **kwargs):
        if isinstance(source, str) and source in texts:
            parses[source] += 1
        return parse(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    before = api.run([root], Options(jobs=1))
    assert parses and max(parses.values()) == 1
    assert python_trees._TREES == {}  # dropped at the end of the run
    parses.clear()
    again = api.run([root], Options(jobs=1))
    assert max(parses.values()) == 1  # a new run parses again, once
    assert [(f.path, f.outcome, f.new_text) for f in again.files] == \
        [(f.path, f.outcome, f.new_text) for f in before.files]


def test_the_cli_keeps_the_trees_it_exits_with_and_the_next_run_frees_them():
    """Freeing the trees costs time the CLI, which leaves with ``os._exit``, need not
    spend (``keep_trees``); the next run starts from none."""
    root = FIXTURE_TREES[0]
    api.run([root], Options(jobs=1), keep_trees=True)
    kept = dict(python_trees._TREES)
    assert kept
    api.read_tree([FIXTURE_TREES[1]], Options(jobs=1))
    assert not set(python_trees._TREES) & set(kept)
    python_trees.clear()


def test_a_trees_nodes_are_listed_once_in_walk_order_and_forgotten_with_the_trees() -> None:
    text = "def f(a):\n    return [x for x in a if type(x) is int]\n\nclass C:\n    y = 1\n"
    tree = python_trees.parse(text)
    listed = python_trees.nodes(tree)
    assert listed == list(ast.walk(tree))
    assert python_trees.nodes(tree) is listed
    other = ast.parse(text)  # an equal tree is another tree
    assert python_trees.nodes(other) is not listed and python_trees.nodes(other) == list(ast.walk(other))
    python_trees.clear()
    assert python_trees.nodes(tree) is not listed
