"""A function that binds ``isinstance``/``type``/``getattr``... itself (a parameter, a
local assignment, a nested ``def``) calls its own object, not the builtin: no rewrite
applies there, so the use stays and refuses the class. Before, only module-level
bindings were seen, and ``isinstance = lambda a, b: "mine"`` in a function had its call
rewritten into a feature check (another answer)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from codemod.analysis.bound_names import assigned_as_global, bound_in_some_function
from codemod.cli import main

FAMILY = '''
    from torch.nn import Parameter


    class Kind(Parameter):
        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data=data, requires_grad=False)
'''

LOCAL = [
    "def f(p):\n    isinstance = lambda a, b: 'mine'\n    return isinstance(p, Kind)\n",
    "def f(p, type=type):\n    return type(p) is Kind\n",
    "def f(p):\n    def isinstance(a, b):\n        return 'mine'\n    return isinstance(p, Kind)\n",
    "def f(p):\n    from mylib import isinstance\n    return isinstance(p, Kind)\n",
    "def f(p):\n    def g():\n        return isinstance(p, Kind)\n    isinstance = print\n    return g()\n",
    "check = lambda p, isinstance=print: isinstance(p, Kind)\n",
    "def f(p):\n    match p:\n        case type:\n            pass\n    return type(p) is Kind\n",
    "def f(p):\n    try:\n        pass\n    except E as isinstance:\n        pass\n"
    "    return isinstance(p, Kind)\n",
    "def f(p):\n    (type := print)\n    return type(p) is Kind\n",
    # another function assigns the module's ``isinstance``: after it ran, this call is not
    # the builtin either
    "def g():\n    global isinstance\n    isinstance = print\n\n\n"
    "def f(p):\n    return isinstance(p, Kind)\n",
    "def f(p):\n    return [type(p) is Kind for type in (print,)]\n",
    # CPython reads the parameter's name in NFKC form: it is ``isinstance``
    "def f(p, \uff49\uff53\uff49\uff4e\uff53\uff54\uff41\uff4e\uff43\uff45=print):\n"
    "    return isinstance(p, Kind)\n",
    "def f(p):\n    def \\\n  isinstance(a, b):\n        return 'mine'\n    return isinstance(p, Kind)\n",
    "def f(p):\n    for _, isinstance in g():\n        pass\n    return isinstance(p, Kind)\n",
    "def f(p):\n    match p:\n        case [*isinstance]:\n            pass\n    return isinstance(p, Kind)\n",
]


@pytest.mark.parametrize("use", LOCAL)
def test_a_locally_bound_builtin_is_not_rewritten(tmp_path: Path, use: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "params.py").write_text(textwrap.dedent(FAMILY).lstrip())
    text = "from pkg.params import Kind\n\n\n" + use
    (pkg / "use.py").write_text(text)
    main(["apply", str(tmp_path)])
    assert (pkg / "use.py").read_text() == text
    assert "Kind: used as a class at" in capsys.readouterr().err


def test_the_builtin_elsewhere_in_the_file_is_still_rewritten(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "params.py").write_text(textwrap.dedent(FAMILY).lstrip())
    (pkg / "use.py").write_text(
        "from pkg.params import Kind\n\n\ndef other(isinstance):\n    return isinstance\n\n\n"
        "def f(p):\n    return isinstance(p, Kind), type(p) is Kind\n")
    main(["apply", str(tmp_path)])
    text = (pkg / "use.py").read_text()
    assert "has_param_feature(p, Features.Kind), param_kind_is(p, Features.Kind)" in text


BUILTINS = ("isinstance", "type", "getattr")


@pytest.mark.parametrize(("text", "bound"), [
    ("isinstance(x, int)\n", set()),
    ("isinstance = print\n", set()),                          # module level: not a function's
    ('def f():\n    """the type of it"""\n    return type(x)\n', set()),
    ("def f():\n    def type(x):\n        pass\n", {"type"}),
    ("def f(isinstance):\n    pass\n", {"isinstance"}),
    ("def f():\n    del getattr\n", {"getattr"}),
    ("def f():\n    [type for type in x]\n", {"type"}),       # a comprehension's scope
    ("def f():\n    global type\n    type = 1\n", {"type"}),     # assigns the module's
    ("def f():\n    def \\\n  type(x):\n        pass\n", {"type"}),
    ("def f():\n    del isinstance\n    (a, b) = 1, 2\n", {"isinstance"}),
    ("def f(\uff49\uff53\uff49\uff4e\uff53\uff54\uff41\uff4e\uff43\uff45):\n    pass\n", {"isinstance"}),
    ("def f(:\n    type = 1\n", set(BUILTINS)),                # unreadable: all kept
])
def test_the_module_wide_gate(text: str, bound: set[str]) -> None:
    """The gate before any function body is walked: a name it leaves out is bound by no
    function; one it keeps is looked at exactly."""
    assert bound_in_some_function(text, BUILTINS) == bound


@pytest.mark.parametrize(("text", "assigned"), [
    ("def f():\n    global isinstance\n    isinstance = print\n", {"isinstance"}),
    ("def f():\n    isinstance = print\n", set()),                 # a local, not the module's
    ("def f():\n    return isinstance(1, int)\n", set()),
    # syntax of a newer Python: each name a ``global`` statement declares
    ("type X = int\ndef f():\n    global a, \\\n  type\n    type = 1\n", {"type"}),
    ("type X = int\ndef f():\n    return isinstance(1, int)\n", set()),
])
def test_a_global_assigned_in_a_function(text: str, assigned: set[str]) -> None:
    assert assigned_as_global(text, BUILTINS) == assigned
