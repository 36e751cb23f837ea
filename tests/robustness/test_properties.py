"""Property-based: ``apply`` on arbitrary Python programs (hypothesmith) never crashes,
never changes a file that has no Parameter subclass, and is idempotent.

Programs come from ``hypothesmith`` (``from_grammar``: valid Python built from the
grammar, deliberately odd in whitespace, comments and line continuations;
``from_node``: structured code built from LibCST's node types). The runs
are bounded and derandomized (the same examples every time, no example database), so
the tests are deterministic and take seconds.
"""

from __future__ import annotations

import re
import shutil

import hypothesmith
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from .trees import HIERARCHY, TRACEBACK, base_tree, changed, run_main, snapshot

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                           HealthCheck.data_too_large, HealthCheck.filter_too_much],
)

#: Snippets that look like Parameter subclasses to a text search but are not subclasses
#: of torch's Parameter: the engine must parse and then leave them alone.
DECOYS = [
    "",
    "\n\nclass Parameter:\n    pass\n\n\nclass Local(Parameter):\n    pass\n",
    "\n\nfrom mylib import Parameter\n\n\nclass Mine(Parameter):\n    pass\n",
    "\n\nimport torch\n\n\nclass NotParam(torch.Tensor):\n    pass\n",
    "\n\nfrom torch.nn import Parameter as P\nx = P\n",
]

#: Odd text from the grammar (whitespace, comments, continuations, every statement kind)
#: or structured code from LibCST's node types (nested classes, functions, with...).
#: ``from_node`` may be drawn once per example only (it records hypothesis targets under
#: fixed labels), so the second program of a test is always from the grammar.
programs = st.one_of(hypothesmith.from_grammar(), hypothesmith.from_node())
odd_programs = hypothesmith.from_grammar()


def _encodable(program: str) -> bool:
    try:
        program.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\0" not in program


def _no_crash(code: int, err: str, allowed: set[int]) -> None:
    assert code in allowed, err
    assert "internal error" not in err, err
    assert not TRACEBACK.search(err), err
    if code == 2:  # a clean report of an input the parser refuses, naming the file
        assert re.search(r"^error: tree/pkg/\w+\.py:", err, re.MULTILINE), err


@SETTINGS
@given(program=programs, other=odd_programs, decoy=st.sampled_from(DECOYS))
def test_files_without_parameter_subclasses_never_change(
    program: str, other: str, decoy: str, tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assume(_encodable(program) and _encodable(other))
    root = tmp_path_factory.mktemp("prop")
    base_tree(root, params=None, use=None, gen=program + decoy, other=other)
    before = snapshot(root)
    code, out, err = run_main(["apply", "tree"], root, capsys)
    _no_crash(code, err, {0, 2})
    event(f"exit {code}")
    assert changed(before, snapshot(root)) == set()
    assert out == ""
    shutil.rmtree(root)


@settings(SETTINGS, max_examples=30)
@given(program=programs, other=odd_programs)
def test_apply_on_random_code_is_safe_and_idempotent(
    program: str, other: str, tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The hierarchy module with a random program in front of it, and a random module
    that imports a class without using it: the hierarchy converts (or the parser's
    refusal is reported cleanly), the random module is untouched, every written file
    compiles, and a second run changes nothing."""
    assume(_encodable(program) and _encodable(other))
    assume(not re.search(r"BaseParam|SplitParam|_loader|_dim", program + other))
    root = tmp_path_factory.mktemp("prop")
    gen = other.rstrip("\\\n") + "\nfrom pkg.params import BaseParam\n"
    base_tree(root, params=program + "\n" + HIERARCHY, gen=gen)
    before = snapshot(root)
    code, _, err = run_main(["apply", "tree"], root, capsys)
    _no_crash(code, err, {1, 2})
    event(f"exit {code}")
    first = snapshot(root)
    diff = changed(before, first)
    assert "tree/pkg/gen.py" not in diff
    assert "tree/pkg/other.py" not in diff
    for rel in diff:
        compile(first[rel][0], rel, "exec", dont_inherit=True)  # type: ignore[index]
    if code == 1:
        assert diff == {"tree/pkg/params.py", "tree/pkg/use.py", "tree/pkg/params_features.py"}, err

    code2, _, err2 = run_main(["apply", "tree"], root, capsys)
    _no_crash(code2, err2, {0, 2})
    assert changed(first, snapshot(root)) == set(), err2
    shutil.rmtree(root)
