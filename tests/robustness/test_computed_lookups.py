"""A module's members read by a computed name or all at once refuse the classes it binds.

``getattr(params, kind)``, ``vars(params)[key]``, ``inspect.getmembers(params)``,
``globals()[name]`` in the module itself: no rewrite sees a class name there, and after
conversion such a read finds a factory function (``isinstance`` raises, a collection of
the module's classes loses them). Each case is a package of our own converted by
``codemod apply``; the probe must answer the same before and after, and the refusal must
name the read. Reads that give only names, literal names and writes still convert.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from codemod.planning.computed_lookups import computed_lookups
from codemod.planning.lookup_gate import may_look_up, read_heads
from tests.robustness.test_issue12_adversarial import FAMILY, PROBE, same_behaviour

#: use.py names no class: the read reaches the classes only through the module.
REFUSED = {
    "getattr_computed": (
        {"use.py": "import torch\nimport advpkg.params as P\n\n\ndef go(name='Col'):\n"
                   "    kind = getattr(P, name)\n    return isinstance(kind(torch.zeros(2)), kind)\n"},
        "getattr(P, name)"),
    "vars_subscript_alias": (
        {"use.py": "import torch\nfrom advpkg import params as kinds\n\n\ndef go(name='Row'):\n"
                   "    kind = vars(kinds)[name]\n    return isinstance(kind(torch.zeros(2)), kind)\n"},
        "vars(kinds)"),
    "dict_items": (
        {"use.py": "from advpkg import params\n\n\ndef go():\n"
                   "    return sorted(k for k, v in params.__dict__.items() if isinstance(v, type))\n"},
        "params.__dict__"),
    "getmembers": (
        {"use.py": "import inspect\n\nfrom advpkg import params\n\n\ndef go():\n"
                   "    return [n for n, _ in inspect.getmembers(params, inspect.isclass)]\n"},
        "inspect.getmembers(params, inspect.isclass)"),
    "sys_modules_by_string": (
        {"use.py": "import sys\nimport torch\nimport advpkg.params\n\n\ndef go(name='Col'):\n"
                   "    kind = getattr(sys.modules['advpkg.params'], name)\n"
                   "    return isinstance(kind(torch.zeros(2)), kind)\n"},
        "getattr(sys.modules['advpkg.params'], name)"),
    "own_globals": (
        {"params.py": FAMILY + "\n\ndef kind_of(name):\n    return globals()[name]\n",
         "use.py": "import torch\nfrom advpkg.params import kind_of\n\n\ndef go(name='Col'):\n"
                   "    kind = kind_of(name)\n    return isinstance(kind(torch.zeros(2)), kind)\n"},
        "globals()"),
    "own_module_by_name": (
        {"params.py": FAMILY + "\n\nimport sys\n\n\ndef kind_of(name):\n"
                      "    return getattr(sys.modules[__name__], name)\n",
         "use.py": "import torch\nfrom advpkg.params import kind_of\n\n\ndef go(name='Row'):\n"
                   "    kind = kind_of(name)\n    return isinstance(kind(torch.zeros(2)), kind)\n"},
        "getattr(sys.modules[__name__], name)"),
    "package_reexport": (
        {"__init__.py": "from advpkg.params import *\n",
         "use.py": "import torch\nimport advpkg\n\n\ndef go(name='Col'):\n"
                   "    kind = getattr(advpkg, name)\n    return isinstance(kind(torch.zeros(2)), kind)\n"},
        "getattr(advpkg, name)"),
    # Found by the review of the rule (2026-12-06): forms its text read let through.
    "conditional_literal": (
        {"use.py": "import torch\nfrom advpkg import params\n\n\ndef go(col=True):\n"
                   "    kind = getattr(params, 'Col' if col else 'Row')\n"
                   "    return isinstance(kind(torch.zeros(2)), kind)\n"},
        "getattr(params, 'Col' if col else 'Row')"),
    "comment_in_the_import": (
        {"use.py": "import torch\nfrom advpkg import (  # see load()\n    params)\n\n\ndef go(k='Col'):\n"
                   "    kind = getattr(params, k)\n    return isinstance(kind(torch.zeros(2)), kind)\n"},
        "getattr(params, k)"),
    "comment_in_the_call": (
        {"use.py": "import torch\nfrom advpkg import params\n\n\ndef go(k='Col'):\n"
                   "    kind = getattr(  # the class\n        params, k)\n"
                   "    return isinstance(kind(torch.zeros(2)), kind)\n"},
        "getattr(params, k)"),
    "dict_of_a_parenthesised_module": (
        {"use.py": "import torch\nfrom advpkg import params\n\n\ndef go(k='Col'):\n"
                   "    kind = (params).__dict__[k]\n    return isinstance(kind(torch.zeros(2)), kind)\n"},
        "params.__dict__"),
    "dict_through_getattr": (
        {"use.py": "import torch\nfrom advpkg import params\n\n\ndef go(k='Col'):\n"
                   "    kind = getattr(params, '__dict__')[k]\n    return isinstance(kind(torch.zeros(2)), kind)\n"},
        "getattr(params, '__dict__')"),
    "builtins_getattr": (
        {"use.py": "import builtins\nimport torch\nfrom advpkg import params\n\n\ndef go(k='Col'):\n"
                   "    kind = builtins.getattr(params, k)\n    return isinstance(kind(torch.zeros(2)), kind)\n"},
        "builtins.getattr(params, k)"),
    "getattribute": (
        {"use.py": "import torch\nfrom advpkg import params\n\n\ndef go(k='Col'):\n"
                   "    kind = params.__getattribute__(k)\n    return isinstance(kind(torch.zeros(2)), kind)\n"},
        "params.__getattribute__(k)"),
    "getmembers_static": (
        {"use.py": "import inspect\n\nfrom advpkg import params\n\n\ndef go():\n"
                   "    return [n for n, _ in inspect.getmembers_static(params, inspect.isclass)]\n"},
        "inspect.getmembers_static(params, inspect.isclass)"),
    "class_reexported_under_another_name": (
        {"registry.py": "from advpkg.params import Col as ColumnKind, Row as RowKind\n",
         "use.py": "import torch\nfrom advpkg import registry\n\n\ndef go(k='ColumnKind'):\n"
                   "    kind = getattr(registry, k)\n    return isinstance(kind(torch.zeros(2)), kind)\n"},
        "getattr(registry, k)"),
    "relative_import_module": (
        {"use.py": "import importlib\nimport torch\n\n\ndef go(k='Col'):\n"
                   "    kind = getattr(importlib.import_module('.params', 'advpkg'), k)\n"
                   "    return isinstance(kind(torch.zeros(2)), kind)\n"},
        "getattr(importlib.import_module('.params', 'advpkg'), k)"),
    "literal_through_own_module": (
        {"use.py": "import sys\nimport torch\nfrom advpkg.params import Col, Row\n\n\ndef go():\n"
                   "    kind = getattr(sys.modules[__name__], 'Col')\n"
                   "    return isinstance(kind(torch.zeros(2)), kind), Row(torch.zeros(1)).shape[0]\n"},
        "getattr(sys.modules[__name__], 'Col')"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_computed_read_refuses_the_classes_its_module_binds(tmp_path, capsys, case):
    files, code = REFUSED[case]
    err = same_behaviour(tmp_path, {"params.py": FAMILY, **files, "probe.py": PROBE}, capsys)
    refusal = next((line for line in err.splitlines() if ": Col: " in line), "")
    assert code in refusal, err
    if case != "literal_through_own_module":  # the safety net's literal rule
        assert "by a computed name or all at once" in refusal, err


#: Reads that give names, not classes; a literal name (the safety net's rule); a write; a
#: module that binds no converted class; an object that is no module.
CONVERTED = {
    "names_only": "from advpkg import params\n\n\ndef go():\n"
                  "    return [n for n in vars(params).keys() if n in ('Col', 'Row')],"
                  " 'Col' in vars(params), 'Col' in dir(params)\n",
    "literal_call": "import torch\nimport advpkg.params as P\n\n\ndef go():\n"
                    "    return getattr(P, 'Col')(torch.zeros(2), output_dim=3).output_dim\n",
    "called_where_read": "import torch\nimport advpkg.params as P\n\n\ndef go(name='Col'):\n"
                         "    return getattr(P, name)(torch.zeros(2), output_dim=4).output_dim\n",
    "keys_iterated": "from advpkg import params\n\n\ndef go():\n"
                     "    return [n for n in list(vars(params)) if n in ('Col', 'Row')]\n",
    "parameter_named_like_the_module": "from advpkg import params\n\n\ndef copy(params, keys):\n"
                                        "    return [getattr(params, k) for k in keys]\n\n\n"
                                        "def go():\n    return copy(type('O', (), {'a': 1})(), ['a'])\n",
    "other_module": "import torch\nfrom advpkg import helpers\n\n\ndef go(name='scale'):\n"
                    "    return getattr(helpers, name), sorted(vars(helpers))[:0]\n",
    "not_a_module": "import torch\n\n\ndef go(name='float32'):\n"
                    "    holder = type('H', (), {'x': 1})()\n"
                    "    return str(getattr(torch, name)), getattr(holder, 'x' if name else name)\n",
}


@pytest.mark.parametrize("case", sorted(CONVERTED))
def test_reads_that_find_no_class_still_convert(tmp_path, capsys, case):
    err = same_behaviour(tmp_path, {"params.py": FAMILY + "\n\ndef fill(k, v):\n    globals()[k] = v\n",
                                    "helpers.py": "scale = 2\n", "use.py": CONVERTED[case],
                                    "probe.py": PROBE}, capsys)
    assert "refused" not in err, err


def _lookups(code: str) -> list[str]:
    tree = ast.parse(code)
    return [found[2] for found in computed_lookups(tree, Path("pkg/use.py"), lambda m: m.split(".")[0] != "torch")]


@pytest.mark.parametrize(("code", "expected"), [
    ("import pkg.m as M\ngetattr(M, n)", ["getattr(M, n)"]),
    ("import pkg.m as M\ngetattr(M, 'X')", []),
    ("from pkg import m\nm.__dict__[k]", ["m.__dict__"]),
    ("from pkg import m\nm.__dict__['X']", []),
    ("from pkg import m\nvars(m).get(k)", ["vars(m)"]),
    ("from pkg import m\nvars(m).get('X')", []),
    ("from pkg import m\ndict(vars(m))", ["vars(m)"]),
    ("from pkg import m\nlist(vars(m))", []),
    ("from pkg import m\n[n for n in m.__dict__]", []),
    ("from pkg import m\nfor k, v in vars(m).items():\n    pass", ["vars(m)"]),
    ("import pkg.m as M\ngetattr(M, n)(1)", []),
    ("from pkg import m\nvars(m)[k](1)", []),
    ("from pkg import m\nf(vars(m))", ["vars(m)"]),
    ("from pkg import m\nvars(m).keys()", []),
    ("from pkg import m\n'X' in m.__dict__", []),
    ("import inspect\nfrom pkg import m\ninspect.getmembers(m)", ["inspect.getmembers(m)"]),
    ("import pkg.m\ngetattr(pkg.m, n)", ["getattr(pkg.m, n)"]),
    ("import sys\ngetattr(sys.modules['pkg.m'], n)", ["getattr(sys.modules['pkg.m'], n)"]),
    ("import importlib\ngetattr(importlib.import_module('pkg.m'), n)",
     ["getattr(importlib.import_module('pkg.m'), n)"]),
    ("import sys\ngetattr(sys.modules[__name__], n)", ["getattr(sys.modules[__name__], n)"]),
    ("import importlib\ngetattr(importlib.import_module('.m', 'pkg'), n)",
     ["getattr(importlib.import_module('.m', 'pkg'), n)"]),
    ("globals()[n]", ["globals()"]),
    ("globals()[n] = 1", []),
    ("globals().update(d)", []),
    ("import torch\ngetattr(torch, n)", []),
    ("def f(self, n):\n    return getattr(self, n)", []),
    ("def f():\n    from pkg import m\n    return getattr(m, n)", ["getattr(m, n)"]),
])
def test_computed_lookup_forms(code, expected):
    assert _lookups(code) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("import pkg.m as M\ngetattr(M, n)\n", True),         # the alias of a module word
    ("from pkg import m\nx = m.__dict__\n", True),
    ("from pkg import (\n    m as kinds,\n)\nvars(kinds)\n", True),
    ("import sys\ngetattr(sys.modules['pkg.m'], n)\n", True),
    ("import torch\ngetattr(torch, n)\n", False),          # no module word
    ("def f(self):\n    return getattr(self, n)\n", False),
    ("x = 1\n", False),
    ("from pkg import m\n(m).__dict__\n", True),             # bare parentheses: the name inside
    ("import m\ntype(self).__dict__\n", False),               # another call's result: no module
    ("import importlib\nimportlib.import_module(n).__dict__\n", True),  # a module by a string
])
def test_text_gate(text, expected):
    heads = read_heads(text)
    assert (heads is not None and may_look_up(heads, frozenset({"m", "pkg"}), own=False)) is expected


def test_text_gate_reads_globals_only_in_a_module_that_binds_a_class():
    heads = read_heads("globals()[n]\n")
    assert heads is not None and may_look_up(heads, frozenset({"m"}), own=True)
    assert not may_look_up(heads, frozenset({"m"}), own=False)
