"""``libcst.matchers`` imported through ``codemod`` skips only the signature docstrings
``dataclasses`` would write for its classes; the matchers behave the same, and other
dataclasses keep their docstrings."""

from __future__ import annotations

import dataclasses
import inspect
import subprocess
import sys
import textwrap

from codemod.quiet_matchers import TARGET, _SignaturesOfOthers


def _run(code: str) -> str:
    """``code`` in a fresh interpreter (``libcst.matchers`` not yet imported); its stdout."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, check=True)
    return done.stdout


def test_matcher_classes_get_the_empty_signature_docstring_and_still_match():
    out = _run("""
        import dataclasses, inspect
        import codemod
        import libcst as cst
        import libcst.matchers as m
        print(m.Name.__doc__)
        print(m.matches(cst.Name("x"), m.Name("x")), m.matches(cst.Name("y"), m.Name("x")))
        print(m.Name("x") == m.Name("x"), dataclasses.inspect is inspect)
    """)
    assert out.split("\n")[:3] == ["Name()", "True False", "False True"]


def test_without_codemod_the_docstring_is_the_signature():
    # What the finder changes: without it the docstring spells out every field.
    out = _run("""
        import libcst.matchers as m
        print(m.Name.__doc__)
    """)
    assert out.startswith("Name(value:")


def test_other_modules_get_their_real_signature():
    @dataclasses.dataclass
    class Mine:
        value: int

    quiet = _SignaturesOfOthers()
    assert str(quiet.signature(Mine)) == str(inspect.signature(Mine)) != "()"
    Matcher = type("Matcher", (), {"__module__": TARGET})
    assert str(quiet.signature(Matcher)) == "()"
    assert quiet.Parameter is inspect.Parameter
