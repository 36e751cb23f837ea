"""A use-site file is parsed by LibCST as a skeleton: the bodies that name nothing a
rewrite reads become one string each, and LibCST reads everything else as in the
whole text (same statements, same codes cut from the text, same positions)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from codemod.analysis.classes import analyse_file, statement_spans
from codemod.prefilters import prefilter
from codemod.transforms.skeleton import MARKER, skeleton_text

REPO = Path(__file__).resolve().parents[2]

SOURCE = textwrap.dedent('''\
    """Doc."""
    import torch
    from pkg.params import Base

    LIMIT = 3


    def helper(x):
        # a comment
        return x + 1


    class Model:
        """Doc."""

        def forward(self, p):
            return isinstance(p, Base)

        def other(self):
            y = 1
            return y

        def last(self):
            return 2


    def uses_import():
        import os
        return os


    def ends():
        return [
            1,
        ]
    ''')


def test_bodies_naming_nothing_become_one_string_on_the_same_lines():
    skeleton = skeleton_text(SOURCE, frozenset({"Base"}))
    assert skeleton is not None
    assert skeleton.count("\n") == SOURCE.count("\n")
    assert "return x + 1" not in skeleton  # helper's body (the comment above it stays)
    assert "y = 1" not in skeleton  # a method naming nothing
    assert "return isinstance(p, Base)" in skeleton  # names a word
    assert "return 2" in skeleton  # the last method: the lines after it are the class's
    assert "import os" in skeleton  # a nested import binds a name
    assert "1,\n" not in skeleton  # the last statement's body too
    assert skeleton.count(MARKER) == 3
    for header in ("def helper(x):", "class Model:", "    def other(self):", "def ends():"):
        assert header in skeleton


def test_nothing_to_replace_or_a_text_it_cannot_read():
    assert skeleton_text("import os\n\nx = 1\n", frozenset({"Base"})) is None
    assert skeleton_text(SOURCE.replace("\n", "\r\n"), frozenset({"Base"})) is None
    assert skeleton_text(SOURCE + f"# {MARKER}\n", frozenset({"Base"})) is None


def test_an_indented_comment_after_a_body_keeps_it():
    text = "import os\n\nx = 1\n\n\ndef f():\n    return 1\n    # the block's own\n\ny = 2\n"
    assert skeleton_text(text, frozenset({"Base"})) is None


def _files() -> list[Path]:
    found = sorted((REPO / "codemod").rglob("*.py")) + sorted((REPO / "fixtures").rglob("*.py"))
    return found[::3]


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(REPO)))
def test_libcst_reads_a_skeleton_as_the_whole_text(path: Path):
    text = path.read_text(encoding="utf-8")
    words = frozenset({"Parameter", "isinstance", "Base"})
    skeleton = skeleton_text(text, words)
    if skeleton is None:
        return
    whole = analyse_file(path, text)
    part = analyse_file(path, text, skeleton)
    real, made = whole.module, part.module
    assert len(made.body) == len(real.body)
    assert (made.default_indent, made.default_newline, made.has_trailing_newline) == \
        (real.default_indent, real.default_newline, real.has_trailing_newline)
    assert made.header == real.header or all(a.deep_equals(b) for a, b in zip(made.header, real.header))
    assert len(made.footer) == len(real.footer)
    assert statement_spans(text, made) == statement_spans(text, real)
    assert (part.bindings, part.globals) == (whole.bindings, whole.globals)
    assert [c.qualname for c in part.classes] == [c.qualname for c in whole.classes]
    for mine, theirs, code in zip(made.body, real.body, whole.statement_codes):
        if MARKER not in made.code_for_node(mine):
            assert mine.deep_equals(theirs), code
    # Only lines that name no word were replaced, and the line count is the same.
    old_lines, new_lines = text.split("\n"), skeleton.split("\n")
    assert len(old_lines) == len(new_lines)
    for old, new in zip(old_lines, new_lines):
        if old != new:
            assert not prefilter(old, words)
    assert cst.parse_module(skeleton).code == skeleton
