"""The leftover screen classifies as the other readers do, kind for kind.

On every fixture tree, wherever ``leftover_screen`` decides a file:

* each mention it classified has the kind ``analysis.ast_uses.use_kind`` (the safety
  net's and ``check``'s reader) gives the same node; an annotation's names are one kind
  wherever they lie inside it (``list[X]``, ``X | None``), which ``use_kind`` reads by
  their own position;
* each leftover has the kind LibCST's scan gives it (``use_scanner.classified_leftovers``,
  by ``value_flow.leftover_kind``), so the same rule (``analysis.use_rules``) keeps or
  reports it: the leftovers whose rule needs a class are also exactly those
  ``unconverted_uses`` still reports when every value use is accepted
  (``allow-value-uses``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from codemod import api
from codemod.analysis import python_trees
from codemod.analysis.ast_uses import use_kind
from codemod.analysis.use_rules import USE_RULES, UseKind
from codemod.pipeline import conversion, plan_rounds, reading, rewrite_reach
from codemod.planning.plan import build_plan
from codemod.transforms.leftover_screen import screen_kinds
from codemod.transforms.use_scanner import classified_leftovers
from codemod.types import Options
from tests.speed.test_leftover_screen import USES
from tests.speed.test_prefilter import PARAMS, write_tree

REPO = Path(__file__).resolve().parents[2]
FIXTURE_TREES = [REPO / "fixtures" / "engine"] + sorted(
    p / "input" for p in (REPO / "fixtures" / "golden").iterdir() if (p / "input").is_dir())


def _parents(tree: ast.Module) -> dict[int, ast.AST]:
    return {id(child): parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}


def _libcst_leftovers(result: api.RunResult, plan, path: Path) -> dict:
    """LibCST's leftovers of ``path`` (``conversion.convert_with_leftovers``'s scan), each with its kind."""
    ff = result.facts.get(path) or reading.parse_facts(path, result.sources[path].text)[0]
    assert ff is not None
    kinds: dict = {}

    def recording(ff, plan, handled, names=None):
        pairs = classified_leftovers(ff, plan, handled, names)
        kinds.update(pairs)
        return [found for found, _ in pairs]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(conversion, "unconverted_uses", recording)
        leftovers = conversion.convert_with_leftovers(ff, plan, stop_at_leftovers=False, leftovers_only=True)[1]
    assert set(leftovers) == set(kinds)
    return kinds


def _same_kinds(root: Path) -> tuple[set[UseKind], set[UseKind]]:
    """Assert the kinds agree on every file of ``root`` the screen decides; the kinds of
    the mentions and of the leftovers seen."""
    result = api.read_tree([root], Options())
    index = api.analyse(result.sources, result)
    strict = build_plan(index, (), {}, allow_value_uses=False)
    lenient = build_plan(index, (), {}, allow_value_uses=True)
    names = rewrite_reach.class_spellings(strict)
    seen: set[UseKind] = set()
    leftover_kinds: set[UseKind] = set()
    for path in plan_rounds.rewrite_candidates(strict, result):
        text = result.sources[path].text
        screened = screen_kinds(path, text, strict, names)
        if screened is None:
            continue
        mentions, leftovers = screened
        parents = _parents(python_trees.parse(text))
        for node, kind in mentions:
            if kind is not UseKind.ANNOTATION:
                assert use_kind(node, parents) is kind, (path, node.lineno, kind)
        assert _libcst_leftovers(result, strict, path) == leftovers, path
        class_style = {found for found, kind in leftovers.items() if USE_RULES[kind].needs_class}
        assert set(_libcst_leftovers(result, lenient, path)) == class_style, path
        seen.update(kind for _, kind in mentions)
        leftover_kinds.update(leftovers.values())
    return seen, leftover_kinds


@pytest.mark.parametrize("root", FIXTURE_TREES, ids=lambda p: p.parent.name if p.name == "input" else p.name)
def test_fixture_trees_same_kinds(root):
    _same_kinds(root)


@pytest.mark.parametrize("case", sorted(USES))
def test_crafted_positions_same_kinds(tmp_path, case):
    root = write_tree(tmp_path / "src", {"pkg/params.py": PARAMS, "pkg/use.py": USES[case][0]}) / "pkg"
    _same_kinds(root)


def test_the_kinds_are_not_vacuous(tmp_path):
    """Mentions of every kind the screen models are compared, and leftovers of a value
    kind and of a class-style kind."""
    seen: set[UseKind] = set()
    leftover_kinds: set[UseKind] = set()
    for root in FIXTURE_TREES:
        more, left = _same_kinds(root)
        seen |= more
        leftover_kinds |= left
    for case in ("leftover-class-style-type-in-mixed", "attribute-call"):
        root = write_tree(tmp_path / case, {"pkg/params.py": PARAMS, "pkg/use.py": USES[case][0]}) / "pkg"
        more, left = _same_kinds(root)
        seen |= more
        leftover_kinds |= left
    assert {UseKind.CALL, UseKind.VALUE, UseKind.ISINSTANCE, UseKind.ANNOTATION,
            UseKind.TYPE_COMPARISON} <= seen, seen
    assert {UseKind.VALUE, UseKind.TYPE_COMPARISON} <= leftover_kinds, leftover_kinds
