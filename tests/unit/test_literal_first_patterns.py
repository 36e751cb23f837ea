"""Text searches split into patterns that each start with their literal words.

A pattern that starts with a look-behind or ``\\b`` is tried at every offset of a text;
one that starts with a literal is searched for by it. Two searches were rewritten so:
``bound_names._mentioned`` (which of the names a module mentions otherwise than as a
call: ``bound_at_module_level``, ``bound_in_some_function``, ``assigned_as_global``) and
``check.findings._other_forms`` (the gate of the class-only uses of a factory). Each
must answer as the one pattern it replaces, kept here as the reference, so a change to
either side that gives another answer fails here.
"""

from __future__ import annotations

import re

import pytest

from codemod.analysis import bound_names
from codemod.analysis.text_search import alternation, nfkc_text
from codemod.check import findings
from codemod.runtime.helpers import HAS_PARAM_FEATURE, PARAM_KIND_IS


def _reference(text: str, names: tuple[str, ...]) -> set[str]:
    alternation = "|".join(sorted(map(re.escape, names)))
    pattern = re.compile(rf"(?<![\w.])(?P<name>{alternation})(?!\w)(?![ \t\f]*\()"
                         rf"|\b(?:def|class)[\s\\]+(?P<defined>{alternation})(?!\w)")
    return {m.group("name") or m.group("defined") for m in pattern.finditer(nfkc_text(text))}


NAME_SETS = [("type",), ("isinstance", "issubclass", "type", "getattr", "hasattr", "setattr"),
             ("is", "isinstance", "self")]

TEXTS = [
    "", "type", "type = int\n", "t = type(p)\n", "t = type (p)\n", "t = type\n(p)\n",
    "x.type = 1\n", "mytype = 1\n", "_type = 2\n", "type_ = 3\n", "(type)\n", "[type, int]\n",
    "def type(): pass\n", "class  type: pass\n", "class\ttype(A): pass\n", "def \\\n type(x): pass\n",
    "xdef type(): pass\n", "deftype = 2\n", "async def type(): pass\n", "é.type\n", "étype = 1\n",
    "ｔｙｐｅ = 1\n", "def ｔｙｐｅ(): pass\n", "isinstance = f\nself.x = 1\n", "print(is_x, isinstance)\n",
    "global isinstance; isinstance = f\n", "for type in kinds:\n    pass\n", "from x import type\n",
    "import a as isinstance\n", "lambda type: type\n", "f(type=1)\n", "x = {'type': 1}\n",
    "class A:\n    def getattr(self): pass\n", "type\r\n(p)\r\n", "t = type\x0c(p)\n",
]


@pytest.mark.parametrize("names", NAME_SETS)
@pytest.mark.parametrize("text", TEXTS)
def test_the_split_patterns_find_what_the_one_pattern_found(text: str, names: tuple[str, ...]) -> None:
    assert bound_names._mentioned(text, names) == _reference(text, names)
    padded = "x = 1\n" * 3 + text + "\ny = 2\n"
    assert bound_names._mentioned(padded, names) == _reference(padded, names)


def test_a_mention_at_the_start_of_the_text_counts() -> None:
    """The look-behind after the name sees no character before a name at offset 0, as a
    look-behind before it did."""
    assert bound_names._mentioned("type = int", ("type",)) == {"type"}
    assert bound_names._mentioned("def type(): pass", ("type",)) == {"type"}
    assert bound_names._mentioned(".type = int", ("type",)) == set()


def _forms_reference(names: frozenset[str]) -> re.Pattern[str]:
    words = alternation(names)
    return re.compile(rf"(?<!\w)(?:{words})\s*[.\[|]|\|\s*[\w.]*(?<!\w)(?:{words})(?!\w)"
                      rf"|\bexcept\b[^\n:]*(?<!\w)(?:{words})(?!\w)|\bsuper\s*\(\s*(?:{words})(?!\w)"
                      rf"|\bregister\s*\(\s*[\w.]*(?<!\w)(?:{words})(?!\w)"
                      rf"|\b(?:{HAS_PARAM_FEATURE}|{PARAM_KIND_IS})\s*\(")


FACTORY_NAME_SETS = [frozenset({"Col"}), frozenset({"Col", "ColRow", "Packed"})]

FORM_TEXTS = [
    "", "Col", "x = Col(1)\n", "x = Col.attr\n", "x = Col .attr\n", "x = Col\n.attr\n", "x = Col[int]\n",
    "x = Col | None\n", "x = None | Col\n", "x = None | m.Col\n", "x = None |Colx\n", "xCol.attr\n",
    "_Col.attr\n", "m.Col.attr\n", "é.Col.x\n", "éCol.x\n", "ColRow.x\n", "Column.x\n",
    "try:\n    pass\nexcept (ValueError, Col):\n    pass\n", "except:\n    Col\n", "xexcept Col:\n",
    "super(Col, self).f()\n", "super (  Col)\n", "xsuper(Col)\n", "register(m.Col)\n",
    "registry.register(Col)\n", "xregister(Col)\n", "has_param_feature(p, F.X)\n",
    "xhas_param_feature(p)\n", "param_kind_is (p, F.X)\n", "_param_kind_is(p)\n",
]


@pytest.mark.parametrize("names", FACTORY_NAME_SETS)
@pytest.mark.parametrize("text", FORM_TEXTS)
def test_the_split_factory_forms_match_where_the_one_pattern_matched(text: str, names: frozenset[str]) -> None:
    reference = _forms_reference(names)
    for variant in (text, "x = 1\n" + text, text.replace("\n", "\r\n")):
        assert any(form.search(variant) for form in findings._other_forms(names)) \
            is bool(reference.search(variant))


def test_no_factory_names_no_form() -> None:
    """With no names there is nothing to find: no pattern at all (the one pattern matched
    ``x = (.5)`` then; its caller never asked, its prefilter passing no file)."""
    assert findings._other_forms(frozenset()) == ()


def test_a_word_after_no_word_character_starts_with_its_literal() -> None:
    """``word_after`` places the look-behind after the word: the pattern starts with the
    literal, and matches where the look-behind before the word matched, at the text's
    start too."""
    from codemod.analysis.text_search import word_after

    assert word_after("def") == r"def(?<!\wdef)"
    plain, not_after_dot = re.compile(word_after("type")), re.compile(word_after("type", r"[\w.]"))
    for text in ["type", "x = type", "(type)", "mytype", "_type", "é.type", "étype", "x.type"]:
        assert bool(plain.search(text)) is bool(re.search(r"(?<!\w)type", text))
        assert bool(not_after_dot.search(text)) is bool(re.search(r"(?<![\w.])type", text))
