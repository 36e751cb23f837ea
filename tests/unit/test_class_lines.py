"""``FileFacts.class_line`` (CPython's numbering) equals LibCST's position metadata."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemod.analysis.classes import analyse_file

REPO = Path(__file__).resolve().parents[2]
FILES = sorted((REPO / "fixtures").rglob("*.py"))

CRAFTED = {
    "decorated-and-commented": "# c\n\n@dec(\n  1)\n# mid\nclass A(B):\n    class Inner: pass\n"
                               "if x:\n    class C: pass\nclass D: pass\n",
    "crlf": "import x\r\n\r\nclass A:\r\n    '''doc\r\n    '''\r\n\r\nclass B(A): pass\r\n",
    "cr": "import x\r\rclass A:\r    pass\rclass B(A): pass\r",
    "continuation": "x = 1 + \\\n    2\nclass A: pass\ns = '''\nclass Fake:\n'''\nclass B: pass\n",
}


def _check(path: Path, text: str) -> int:
    ff = analyse_file(path, text)
    lines = [ff.class_line(facts.node) for facts in ff.classes]
    if ff.classes:  # answered by CPython's numbering, not by a fallback to the metadata
        assert ff._class_lines and all(id(f.node) in ff._class_lines for f in ff.classes)
    assert lines == [ff.line_of(facts.node) for facts in ff.classes], path
    return len(ff.classes)


def test_fixture_files():
    assert sum(_check(path, path.read_text()) for path in FILES) > 50


@pytest.mark.parametrize("case", sorted(CRAFTED))
def test_crafted(case, tmp_path):
    assert _check(tmp_path / "m.py", CRAFTED[case]) >= 2
