"""A long generated line is checked on the innermost statement holding it, and the result
is the one the check of its whole top-level statement gives (``def_layout``).

Each case is laid out twice: as ``lay_out_long_statements`` does it, and with the
innermost check switched off (every line checked on its whole top-level statement, the
former way). Both must give the same text and the same re-laid statements; the cases
cover where the innermost statement cannot stand alone (it shares its line with another
one, or starts after a ``:`` or a continued line), so that the fallback is taken.
"""

from __future__ import annotations

import ast

import pytest

from codemod.transforms import def_layout
from codemod.transforms.def_layout import lay_out_long_statements

CALL = ("has_param_feature(param, Features.BasevLLMParameter, Features.PackedvLLMParameter, "
        "Features.RowvLLMParameter)")

#: (name, the original text, the converted text); the converted text holds ``CALL``.
CASES = [
    ("method in a class",
     "class A:\n    def f(self, param):\n        return isinstance(param, B)\n\n    y = 1\n",
     f"class A:\n    def f(self, param):\n        return {CALL}\n\n    y = 1\n"),
    ("decorated method",
     "class A:\n    @staticmethod\n    def f(param):\n        ok = isinstance(param, B)\n        return ok\n",
     f"class A:\n    @staticmethod\n    def f(param):\n        ok = {CALL}\n        return ok\n"),
    ("two statements on the line",
     "def f(param):\n    a = 1; ok = isinstance(param, B)\n    return ok\n",
     f"def f(param):\n    a = 1; ok = {CALL}\n    return ok\n"),
    ("one-line if body",
     "def f(param):\n    if param is not None: ok = isinstance(param, B)\n    return ok\n",
     f"def f(param):\n    if param is not None: ok = {CALL}\n    return ok\n"),
    ("after a continued line",
     "def f(param):\n    a = 1; \\\n    ok = isinstance(param, B)\n    return ok\n",
     f"def f(param):\n    a = 1; \\\n    ok = {CALL}\n    return ok\n"),
    ("except clause",
     "def f(param):\n    try:\n        pass\n    except ValueError:\n        ok = isinstance(param, B)\n",
     f"def f(param):\n    try:\n        pass\n    except ValueError:\n        ok = {CALL}\n"),
    ("match case",
     "def f(param, k):\n    match k:\n        case 1:\n            ok = isinstance(param, B)\n",
     f"def f(param, k):\n    match k:\n        case 1:\n            ok = {CALL}\n"),
    ("top-level statement",
     "ok = isinstance(param, B)\n",
     f"ok = {CALL}\n"),
    ("two long lines in two methods",
     "class A:\n    def f(self, param):\n        return isinstance(param, B)\n\n"
     "    def g(self, param):\n        return isinstance(param, B)\n",
     f"class A:\n    def f(self, param):\n        return {CALL}\n\n"
     f"    def g(self, param):\n        return {CALL}\n"),
    ("if header",
     "def f(param):\n    if isinstance(param, B):\n        return 1\n",
     f"def f(param):\n    if {CALL}:\n        return 1\n"),
]


def _whole_statement_only(monkeypatch: pytest.MonkeyPatch, original: str, text: str):
    with monkeypatch.context() as patched:
        patched.setattr(def_layout, "_relaid_inside", lambda *args: None)
        return lay_out_long_statements(original, text)


@pytest.mark.parametrize("name, original, text", CASES, ids=[c[0] for c in CASES])
def test_the_innermost_check_gives_what_the_whole_statement_check_gives(
        monkeypatch: pytest.MonkeyPatch, name: str, original: str, text: str) -> None:
    laid_out, statements = lay_out_long_statements(original, text)
    assert (laid_out, statements) == _whole_statement_only(monkeypatch, original, text)
    assert ast.dump(ast.parse(laid_out)) == ast.dump(ast.parse(text))
    # A line holding two statements, or a statement after a ``:`` or a continued line, is
    # not one black lays out either: it stays.
    if name not in ("two statements on the line", "one-line if body", "after a continued line"):
        assert laid_out != text, "the long line was laid out"
        assert all(len(line) <= 88 for line in laid_out.splitlines())


def test_a_line_in_a_large_class_is_checked_on_its_own_statement(monkeypatch: pytest.MonkeyPatch) -> None:
    filler = "".join(f"    def m{i}(self):\n        return {i}\n\n" for i in range(200))
    original = f"class A:\n{filler}    def f(self, param):\n        return isinstance(param, B)\n"
    text = f"class A:\n{filler}    def f(self, param):\n        return {CALL}\n"
    checked: list[str] = []
    same = def_layout._same_statement

    def recording(stmt: ast.stmt, relaid: list[str]) -> bool:
        checked.append(type(stmt).__name__)
        return same(stmt, relaid)

    monkeypatch.setattr(def_layout, "_same_statement", recording)
    laid_out, statements = lay_out_long_statements(original, text)
    assert checked == ["Return"]
    assert len(statements) == 1 and laid_out != text


def test_a_relayout_that_changes_the_statement_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    original = "class A:\n    def f(self, param):\n        return isinstance(param, B)\n"
    text = f"class A:\n    def f(self, param):\n        return {CALL}\n"
    # A layout function that drops an argument: both checks must refuse it.
    monkeypatch.setattr(def_layout, "lay_out_line",
                        lambda body, inside_brackets: [body.replace(", Features.RowvLLMParameter", "")])
    assert lay_out_long_statements(original, text) == (text, [])
