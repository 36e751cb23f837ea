"""``screen_file``'s "untouched" answer: a file it proves no rewrite changes is not
parsed by LibCST, so the proof must hold: LibCST's conversion of every such file gives
its own text back, on every fixture tree and on crafted positions one by one; and the
positions a rewrite acts on are never proven untouched.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from codemod import api
from codemod.pipeline import conversion, outcomes, plan_rounds, reading, rewrite_reach, workers
from codemod.transforms.leftover_screen import screen_file
from codemod.types import Options
from tests.speed.test_leftover_screen import FIXTURE_TREES, USES, _plan
from tests.speed.test_prefilter import PARAMS, write_tree


def _proven(result: api.RunResult, plan, path: Path) -> bool:
    """What ``_convert_one`` relies on to skip LibCST for ``path``."""
    text = result.sources[path].text
    _, untouched = screen_file(path, text, plan, rewrite_reach.class_spellings(plan))
    return untouched and conversion.only_use_sites(path, text, plan)


def _libcst_text(result: api.RunResult, plan, path: Path) -> str:
    text = result.sources[path].text
    ff = result.facts.get(path) or reading.parse_facts(path, text)[0]
    assert ff is not None
    return api.convert_file(ff, plan).new_text


@pytest.mark.parametrize("proofs", [False, True], ids=["unproven", "proven"])
@pytest.mark.parametrize("allow_value_uses", [False, True], ids=["strict", "allow-value-uses"])
@pytest.mark.parametrize("root", FIXTURE_TREES, ids=lambda p: p.parent.name if p.name == "input" else p.name)
def test_fixture_trees_proven_untouched_are_unchanged(root, allow_value_uses, proofs):
    result, plan = _plan(root, allow_value_uses, proofs)
    for path in plan_rounds.rewrite_candidates(plan, result):
        if _proven(result, plan, path):
            assert _libcst_text(result, plan, path) == result.sources[path].text, path


#: Positions that a rewrite changes (or may): never proven untouched.
REWRITTEN = {
    "isinstance": "from pkg.params import Base\ndef f(p):\n    return isinstance(p, Base)\n",
    "annotation": "from pkg.params import Base\ndef f(p: Base) -> None: ...\n",
    "annotation-string": "from pkg.params import Base\ndef f(p: 'Base') -> None: ...\n",
    "annotation-string-nested": "from pkg.params import Base\ndef f(p: list['Base | None']): ...\n",
    "type-is": "from pkg.params import Base\ndef f(p):\n    return type(p) is Base\n",
    "backing-field": "from pkg.params import Base\ndef f(p):\n    p._input_dim = 1\n    return Base(p)\n",
    "field-read": "def f(p):\n    return p._input_dim\n",
    "field-getattr": "def f(p):\n    return getattr(p, '_input_dim', 0)\n",
    "field-self-of-staticmethod": ("class Other:\n    @staticmethod\n    def f(self):\n"
                                   "        return self._input_dim\n"),
    "field-self-of-class-in-function": ("def make():\n    class Other:\n        def f(self):\n"
                                        "            return self._input_dim\n    return Other\n"),
    "field-of-other-than-self": ("class Other:\n    def f(self, p):\n"
                                 "        return p._input_dim\n"),
}

#: Files with mentions no rewrite acts on: proven untouched.
UNTOUCHED = {
    "call": "from pkg.params import Base\nx = Base(1)\n",
    "attribute-call": "import pkg.params as P\nx = P.Base(1)\n",
    "comment-and-docstring": ('"""Builds a Base."""\nfrom pkg.params import Base\n'
                              "# isinstance(p, Base) is not code\nx = Base(1)  # a Base\n"),
    "string-not-annotation": "from pkg.params import Base\n__all__ = ['Base']\nx = Base('Base')\n",
    # Backing-field names where no field rewrite acts: ``self`` of an ordinary class's
    # method (nested functions included), and names that are no attribute.
    "field-of-own-self": ("class Other:\n    def __init__(self, d):\n        self._input_dim = d\n\n"
                          "    def f(self):\n        def inner():\n            return self._input_dim\n"
                          "        return inner()\n"),
    "field-name-not-attribute": ("def _input_dim(x):\n    return x\n\n"
                                 "class Other:\n    _input_dim = staticmethod(_input_dim)\n"),
}

@pytest.mark.parametrize("allow_value_uses", [False, True], ids=["strict", "allow-value-uses"])
@pytest.mark.parametrize("case", sorted(USES) + sorted(REWRITTEN) + sorted(UNTOUCHED))
def test_each_position(tmp_path, case, allow_value_uses):
    body = {**{k: v[0] for k, v in USES.items()}, **REWRITTEN, **UNTOUCHED}[case]
    root = write_tree(tmp_path / "src", {"pkg/params.py": PARAMS, "pkg/use.py": body}) / "pkg"
    result, plan = _plan(root, allow_value_uses)
    path = root / "use.py"
    if case in REWRITTEN:
        assert not _proven(result, plan, path)
        assert _libcst_text(result, plan, path) != body  # the case is about a rewrite
    elif case in UNTOUCHED:
        assert _proven(result, plan, path)
    if _proven(result, plan, path):
        assert _libcst_text(result, plan, path) == body


def test_run_skips_libcst_for_untouched_files(tmp_path, monkeypatch):
    """A file proven untouched is reported unchanged without a LibCST parse (it is
    counted as parsed: CPython's parser read it); the result is the same."""
    files = {"pkg/params.py": PARAMS, "pkg/use.py": UNTOUCHED["comment-and-docstring"],
             "pkg/check.py": REWRITTEN["isinstance"]}
    root = write_tree(tmp_path / "src", files) / "pkg"
    before = api.run([root], Options())
    parsed: list[Path] = []
    analyse = reading.parse_facts

    def counting(path: Path, text: str):
        parsed.append(path)
        return analyse(path, text)

    for stage in (workers, outcomes):  # the workers' parse, and the parent's of a late file
        monkeypatch.setattr(stage, "parse_facts", counting)
    after = api.run([root], Options())
    assert root / "use.py" not in parsed and root / "check.py" in parsed
    assert [(f.path, f.outcome, f.new_text) for f in after.files] == \
        [(f.path, f.outcome, f.new_text) for f in before.files]
    assert after.parsed == before.parsed
