"""``statement_spans`` cuts each top-level statement's code from the text; where it
places them, the pieces must be exactly what ``Module.code_for_node`` generates, and a
module rebuilt from some of them must read as ``Module.code`` writes it."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from codemod.analysis.classes import analyse_file
from codemod.analysis.statement_text import statement_spans

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

SOURCES = {
    "plain": "import os\n\n\ndef f():\n    return 1\n",
    "header-and-footer": "#!/usr/bin/env python\n# header\n\nimport os\n\n# trailing\n",
    "block-footer-comments": "def f():\n    x = 1\n    # inside, closing the block\n# outside\n\nx = 2\n",
    "decorators": "@a\n@b(\n    1)\nclass C:\n    pass\n\n\n@c\ndef g(): ...\n",
    "semicolons": "a = 1; b = 2\nc = (3,\n     4); d = 5\n",
    "continuation": "x = 1 + \\\n    2\ny = 3\n",
    "strings": 's = """\n# not a comment\n\n"""\nt = 1\n',
    "crlf": "import os\r\n\r\n# c\r\nx = 1\r\n",
    "one-line-compound": "if x: y = 1\nelse: y = 2\nz = 3\n",
    "form-feed": "x = 1\n\x0c\ny = 2\n",
    "docstring": '"""Doc."""\n\nimport os\n',
    "decorator-continued": "@a \\\n    .b\ndef f(): ...\n",
    "empty": "",
    "only-comments": "# a\n# b\n",
}
UNPLACED = {
    "no-final-newline": "x = 1\ny = 2",
    "lone-cr": "x = 1\ry = 2\r",
    "decorator-on-next-line": "@\\\na\ndef f(): ...\n",
}


def _check(text: str) -> list[tuple[int, int]] | None:
    module = cst.parse_module(text)
    spans = statement_spans(text, module)
    if spans is not None:
        assert [text[a:b] for a, b in spans] == [module.code_for_node(s) for s in module.body]
    return spans


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_placed_pieces_are_the_generated_code(name):
    text = SOURCES[name]
    spans = _check(text)
    assert spans is not None or not text.strip()


@pytest.mark.parametrize("name", sorted(UNPLACED))
def test_unplaceable_texts_are_left_to_codegen(name):
    assert _check(UNPLACED[name]) is None


def test_fixture_files():
    placed = 0
    for path in sorted(FIXTURES.rglob("*.py")):
        text = path.read_text()
        try:
            placed += _check(text) is not None
        except cst.ParserSyntaxError:
            continue
    assert placed > 100


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_code_of_a_rebuilt_module(name):
    """The first statement replaced, the others kept: the same text as ``Module.code``."""
    ff = analyse_file(Path("m.py"), SOURCES[name])
    module = ff.module
    if not module.body:
        return
    new_first = cst.parse_statement("replaced = True\n")
    rebuilt = module.with_changes(body=[new_first, *module.body[1:]])
    assert ff.code_of(rebuilt) == rebuilt.code
    assert ff.source_code() == module.code


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_code_of_a_module_whose_header_was_copied(name):
    """A codemod (``AddImportsVisitor``) hands back copies of the header and footer lines:
    the kept statements are still cut from the text, and only the replaced one is
    reported as generated (the verifier parses only that one again)."""
    ff = analyse_file(Path("m.py"), SOURCES[name])
    module = ff.module
    if not module.body or ff.statement_codes is None or ff._spans is None:
        return
    new_first = cst.parse_statement("replaced = True\n")
    rebuilt = module.with_changes(body=[new_first, *module.body[1:]],
                                  header=[line.deep_clone() for line in module.header],
                                  footer=[line.deep_clone() for line in module.footer])
    text, generated = ff.code_and_generated(rebuilt)
    assert text == rebuilt.code
    assert generated == [rebuilt.code_for_node(new_first)]


def test_verify_parses_the_generated_statements_and_compiles_the_whole_text():
    """The verifier's two checks survive parsing only the generated statements: a
    generated statement LibCST rejects, and a text CPython cannot compile, both fail."""
    from codemod.pipeline.conversion import verify_text

    good = "import os\n\nx = 1\n"
    assert verify_text(good, Path("m.py"), ["x = 1\n"]) is None
    assert verify_text(good, Path("m.py"), ["x = (\n"]) is not None  # LibCST rejects it
    assert verify_text("def f():\n    return 1\nreturn 2\n", Path("m.py"), []) is not None
    assert verify_text("type X = int\n", Path("m.py"), []) is None  # newer syntax: LibCST's check
