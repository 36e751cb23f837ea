"""``type(a) is type(b)`` -> ``param_type(a) is param_type(b)`` (inline before/after table),
what is left alone, where the helper is imported from, and the text gate.

What each rewritten form answers is proved side by side in
``tests/behaviour/test_type_identity.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest

from codemod.cli import main
from codemod.transforms.local_imports import with_import_first
from codemod.transforms.skeleton import MARKER, skeleton_text
from codemod.analysis.type_comparisons import compares_types, may_compare_types

PARAMS = '''from torch.nn import Parameter


class Packed(Parameter):
    def __new__(cls, data, **kwargs):
        return super().__new__(cls, data=data, requires_grad=False)

    def __init__(self, data, pack_dim=0):
        self.pack_dim = pack_dim
'''

IMPORT = "from pkg.params_features import param_type\n\n\n"

#: (module text, its text after ``apply``; None: unchanged)
CASES = [
    ("def f(a, b):\n    return type(a) is type(b)\n",
     IMPORT + "def f(a, b):\n    return param_type(a) is param_type(b)\n"),
    ("def f(a, b):\n    return type(a) is not type(b) or a.__class__ != b.__class__\n",
     IMPORT + "def f(a, b):\n    return param_type(a) is not param_type(b) or param_type(a) != param_type(b)\n"),
    ("def f(a, b): return (type(a)) == type(b)\n",
     IMPORT + "def f(a, b): return (param_type(a)) == param_type(b)\n"),
    ("def f(a, b):\n    return type(a) is b.__class__\n",
     IMPORT + "def f(a, b):\n    return param_type(a) is param_type(b)\n"),
    # A rebound ``type`` is not the builtin.
    ("def f(a, b, type=type):\n    return type(a) is type(b)\n", None),
    # Bound by the module inside an ``if``: not the builtin here either.
    ("import sys\n\nif sys.version_info >= (3,):\n    def type(x):\n        return int\n\n\n"
     "def f(a, b):\n    return type(a) is type(b)\n", None),
    # Rebound in a class body: that body's code calls the binding, its methods the builtin.
    ("class Table:\n    type = staticmethod(lambda x: int)\n    SAME = type(1) is type('a')\n\n"
     "    def same(self, a, b):\n        return type(a) is type(b)\n",
     IMPORT + "class Table:\n    type = staticmethod(lambda x: int)\n    SAME = type(1) is type('a')\n\n"
     "    def same(self, a, b):\n        return param_type(a) is param_type(b)\n"),
    # A name that merely contains the helper's does not keep the file as it is.
    ("def g():\n    param_types = {}\n    return param_types\n\n\ndef f(a, b):\n    return type(a) is type(b)\n",
     IMPORT + "def g():\n    param_types = {}\n    return param_types\n\n\n"
     "def f(a, b):\n    return param_type(a) is param_type(b)\n"),
    # A type compared with torch's Parameter: held for no former class, would hold for a
    # converted parameter (SGLang's ``type(actual_param) is not nn.Parameter``).
    ("import torch\nfrom torch import nn\n\n\ndef f(a):\n    return type(a) is not nn.Parameter\n",
     "import torch\nfrom torch import nn\n\nfrom pkg.params_features import param_type\n\n\n"
     "def f(a):\n    return param_type(a) is not nn.Parameter\n"),
    ("import torch\n\n\ndef f(a):\n    return torch.nn.Parameter == a.__class__\n",
     "import torch\n\nfrom pkg.params_features import param_type\n\n\n"
     "def f(a):\n    return torch.nn.Parameter == param_type(a)\n"),
    ("from torch.nn import Parameter\n\n\ndef f(a):\n    return (type(a)\n            is Parameter)\n",
     "from torch.nn import Parameter\n\nfrom pkg.params_features import param_type\n\n\n"
     "def f(a):\n    return (param_type(a)\n            is Parameter)\n"),
    # Another class named Parameter is not torch's.
    ("class Parameter:\n    pass\n\n\ndef f(a):\n    return type(a) is Parameter\n", None),
    # A membership test in a container written out that holds another object's type
    # or torch's Parameter: the subject and each object's type.
    ("def f(a, b):\n    return type(a) in (type(b),)\n",
     IMPORT + "def f(a, b):\n    return param_type(a) in (param_type(b),)\n"),
    ("def f(a, b):\n    return a.__class__ not in {b.__class__, int}\n",
     IMPORT + "def f(a, b):\n    return param_type(a) not in {param_type(b), int}\n"),
    ("from torch import nn\n\n\ndef f(a):\n    return type(a) in [nn.Parameter, int]\n",
     "from torch import nn\n\nfrom pkg.params_features import param_type\n\n\n"
     "def f(a):\n    return param_type(a) in [nn.Parameter, int]\n"),
    # ... not a container of other classes only (a literal's type among them), a name,
    # or one with ``*x``.
    ("def f(a):\n    return type(a) in (int, str)\n", None),
    ("def f(a):\n    return type(a) in (int, type(None), type(''), type(...))\n", None),
    ("def f(a, kinds):\n    return type(a) in kinds\n", None),
    ("def f(a, b, rest):\n    return type(a) in (type(b), *rest)\n", None),
    # A chain, a type compared with a class: not this rewrite.
    ("def f(a, b, c):\n    return type(a) is type(b) is c\n", None),
    ("def f(a):\n    return type(a) is int\n", None),
]


def _tree(root: Path, use: str, init: str = "") -> Path:
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(init)
    (pkg / "params.py").write_text(PARAMS)
    (pkg / "use.py").write_text(use)
    return pkg


@pytest.mark.parametrize(("before", "after"), CASES)
def test_type_comparisons(tmp_path: Path, before: str, after: str | None) -> None:
    pkg = _tree(tmp_path, before)
    assert main(["apply", str(pkg)]) == 1
    assert (pkg / "use.py").read_text() == (before if after is None else after)


@pytest.mark.parametrize(("before", "after"), [
    ('def f(a, b):\n    """Same kind?"""\n    return a\n',
     'def f(a, b):\n    """Same kind?"""\n    from pkg.params_features import param_type\n    return a\n'),
    ("def f(a, b):\n    return a\n",
     "def f(a, b):\n    from pkg.params_features import param_type\n    return a\n"),
    ("def f(a, b): return a\n",
     "def f(a, b):\n    from pkg.params_features import param_type\n    return a\n"),
])
def test_a_local_import_comes_first_in_the_function(before: str, after: str) -> None:
    """Where the runtime module loads the file while it is imported (a second run over a
    partly converted tree), the helper is imported inside the function that compares."""
    function = cst.parse_module(before).body[0]
    assert isinstance(function, cst.FunctionDef)
    done = cst.Module(body=[with_import_first(function, "pkg.params_features", ["param_type"])])
    assert done.code == after


#: Functions that start with imports: the helper's import goes where isort puts it.
LOCAL_IMPORTS = [
    # Among the package's own imports, by module name.
    ("def f(a):\n    import os\n\n    from pkg.alpha import A\n    from pkg.zeta import Z\n    return a\n",
     "def f(a):\n    import os\n\n    from pkg.alpha import A\n    from pkg.params_features import param_type\n"
     "    from pkg.zeta import Z\n    return a\n"),
    # After them.
    ("def f(a):\n    from pkg.arg_groups import D\n    from pkg.fields import P\n    return a\n",
     "def f(a):\n    from pkg.arg_groups import D\n    from pkg.fields import P\n"
     "    from pkg.params_features import param_type\n    return a\n"),
    # None of the package: a section of its own after the absolute imports, before the
    # relative ones.
    ("def f(a):\n    import os\n\n    from torch import nn\n\n    from .local import L\n    return a\n",
     "def f(a):\n    import os\n\n    from torch import nn\n\n    from pkg.params_features import param_type\n"
     "\n    from .local import L\n    return a\n"),
]


@pytest.mark.parametrize(("before", "after"), LOCAL_IMPORTS)
def test_a_local_import_goes_where_isort_puts_it(before: str, after: str, tmp_path: Path) -> None:
    function = cst.parse_module(before).body[0]
    assert isinstance(function, cst.FunctionDef)
    done = cst.Module(body=[with_import_first(function, "pkg.params_features", ["param_type"])])
    assert done.code == after
    # ruff's isort (first party: ``pkg``) leaves the function's imports as they are.
    ruff = Path(sys.executable).parent / "ruff"
    if not ruff.exists():
        pytest.skip("ruff is not installed beside the interpreter")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "mod.py").write_text(after)
    checked = subprocess.run([str(ruff), "check", "--isolated", "--no-cache", "--select", "I",
                              "--config", "lint.isort.known-first-party = ['pkg']", "pkg/mod.py"],
                             cwd=tmp_path, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_second_apply_changes_nothing(tmp_path: Path) -> None:
    pkg = _tree(tmp_path, CASES[0][0])
    assert main(["apply", str(pkg)]) == 1
    once = (pkg / "use.py").read_text()
    assert main(["apply", str(pkg)]) == 0
    assert (pkg / "use.py").read_text() == once


#: Texts with a comparison the transformer rewrites, laid out in every way the gate
#: must still see.
COMPARING = [
    "x = type(a) is type(b)\n",
    "x = (type(a)\n     is type(b))\n",
    "x = type(\n    a\n) is type(\n    b)\n",
    "x = type(a) is \\\n    type(b)\n",
    "x = type(a) != (type(b))\n",
    "x = type(a) is not type(b)\n",
    "x = type(a)==type(b)\n",
    "x = a.__class__ == b.__class__\n",
    "x = (\n    a.__class__\n    is type(b)\n)\n",
    "x = type(a) is b.__class__\n",
    "x = (a\n).__class__ is type(b)\n",
    "x = (\n    type(first_operand_with_a_long_name)\n    is type(second_operand)\n)\n",
    "x = type(a) in (type(b),)\n",
    "x = type(a) not in (int, type(b))\n",
    "x = a.__class__ in {\n    int,\n    b.__class__,\n}\n",
    "x = type(a) in [torch.nn.Parameter]\n",
]


@pytest.mark.parametrize("text", COMPARING)
def test_the_gate_sees_every_comparison(text: str) -> None:
    assert compares_types(text)
    assert may_compare_types(text)


@pytest.mark.parametrize("text", [
    "x = type(a).__name__\n",
    "print(type(a), type(b))\n",
    "x = isinstance(a, type(b))\n",
    "x = mytype(a) is mytype(b)\n",
    "name = a.__class__.__name__\n",
    "x = type(a) in (int, str)\n",
    "x = type(a) in kinds\n",
    "for base in type(a).__mro__:\n    pass\n",
])
def test_the_gate_passes_over_other_uses_of_a_type(text: str) -> None:
    assert not compares_types(text)
    assert not may_compare_types(text)


#: Texts around the binding a held type starts from (``t = type(p)``): line ends of
#: every kind, a first and a last line, annotations, walruses, comments, a value that
#: continues on the next line, a ``type`` that is not the builtin's call.
BINDING_TEXTS = [
    "t = type(p)\n", "t = type(p)", "x = 1\nt = type(p)", "\n\nt = type(p)  # why\n",
    "t = type(p)\r\nu = 1\r\n", "x = 1\rt = type(p)\r", "t: type = type(p)\n",
    "u = t = p.__class__\n", "if (t := type(p)) is q:\n    pass\n", "t = type(\n    p)\n",
    "t = type(f(p))\n", "t = type(f(g(p)))\n", "t = dtype(p)\n", "t = p.dtype\n",
    "t = type(p) if a else b\n", "t = type(p).__name__\n", "# t = type(p)\n",
    "s = 'type' ; t = x.__class__\n", "t = x.__class__ # c\nu = type(q)\n",
    "def f():\n    t = type(p)\n    return t is nn.Parameter\n", "x = 'type(p)'\n",
    "t = x.__class__\r\n", "t = type(p)\x0cu = 2\n", "class A:\n    kind = type(B)\n",
]


@pytest.mark.parametrize("text", BINDING_TEXTS)
def test_the_binding_screen_reads_only_lines_that_spell_type_as_the_pattern_reads_the_text(text: str) -> None:
    """``_binds_type`` asks the binding pattern of the lines spelling ``type`` or
    ``__class__`` only (fast on a large text); its answer is the pattern's over the whole
    text, also at the text's ends and with every kind of line end."""
    from codemod.analysis import type_comparisons

    for variant in (text, text.replace("\n", "\r\n"), "x = 1\n" * 3 + text + "\ny = 2\n"):
        assert type_comparisons._binds_type(variant) == bool(type_comparisons._BINDS_TYPE.search(variant))


def test_the_binding_screen_sees_bindings_anywhere_in_a_large_text() -> None:
    filler = "x = torch.zeros(3, dtype=torch.float16)\n" * 2000
    from codemod.analysis import type_comparisons

    assert not type_comparisons._binds_type(filler)
    assert type_comparisons._binds_type(filler + "t = type(p)\n" + filler)
    assert type_comparisons._binds_type(filler + "t = p.__class__")


@pytest.mark.parametrize("text", ["x = type(a) in (int, type(None))\n",
                                  "x = type(a) in (int, kinds.type)\n"])
def test_a_membership_test_passes_the_gate_and_the_parse_decides(text: str) -> None:
    """The text gate lets a membership test through when its bracket spells ``type``,
    ``__class__`` or ``Parameter`` (a superset); CPython's tree tells a container holding
    another object's type or ``Parameter`` from the rest."""
    assert may_compare_types(text)
    assert not compares_types(text)


def test_the_helper_comes_from_the_nearest_runtime_module(tmp_path: Path) -> None:
    """Two families in two subsystems: a file of the second takes the helper from its
    subsystem's runtime, though the first's serves more classes (its package may need
    what this subsystem does not)."""
    root = tmp_path / "pkg"
    for folder in ("", "big", "small", "small/layers", "small/cache"):
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / "__init__.py").write_text("")
    (root / "big" / "params.py").write_text(PARAMS + "\n\nclass Wide(Packed):\n    pass\n")
    (root / "small" / "layers" / "params.py").write_text(PARAMS.replace("Packed", "Scale"))
    (root / "small" / "cache" / "swap.py").write_text("def f(a, b):\n    return type(a) is type(b)\n")
    (root / "big" / "swap.py").write_text("def f(a, b):\n    return type(a) is type(b)\n")
    assert main(["apply", str(root)]) == 1
    assert (root / "small" / "cache" / "swap.py").read_text().startswith(
        "from pkg.small.layers.params_features import param_type\n")
    assert (root / "big" / "swap.py").read_text().startswith("from pkg.big.params_features import param_type\n")


def test_a_comparison_beside_a_use_of_a_class_is_rewritten_too(tmp_path: Path) -> None:
    """A file that uses a converted class is converted from a skeleton (bodies that name
    nothing rewritten stand in as one string): a body holding a comparison of types is
    kept whole, so the comparison is rewritten and the file is not left half-done."""
    use = ("from pkg.params import Packed\n\n\n"
           "def make(data):\n    return Packed(data, pack_dim=1)\n\n\n"
           "def same(a, b):\n    found = a\n    return type(found) is type(b)\n\n\n"
           "class Holder:\n    def first(self):\n        return 1\n\n"
           "    def same(self, a, b):\n        return a.__class__ == b.__class__\n\n"
           "    def last(self):\n        return 2\n")
    pkg = _tree(tmp_path, use)
    assert main(["apply", str(pkg)]) == 1
    text = (pkg / "use.py").read_text()
    assert "return param_type(found) is param_type(b)" in text
    assert "return param_type(a) == param_type(b)" in text
    assert "type(found) is type(b)" not in text and "a.__class__ ==" not in text


def test_the_skeleton_keeps_a_body_that_compares_types() -> None:
    """A use-site file is parsed from a skeleton; a body holding a comparison of types
    stays whole in it (else the rewrite would not see it, and the run would fall back to
    parsing the whole file)."""
    text = ("from pkg.params import Packed\n\n\n"
            "def make(data):\n    return Packed(data)\n\n\n"
            "def same(a, b):\n    return type(a) is type(b)\n\n\n"
            "def other(a):\n    return a + 1\n\n\n"
            "def last():\n    return 2\n")
    skeleton = skeleton_text(text, frozenset({"Packed"}))
    assert skeleton is not None and MARKER in skeleton
    assert "    return type(a) is type(b)\n" in skeleton and "return a + 1" not in skeleton


@pytest.mark.parametrize("text", [
    "x = (type(a) is  # note\n     type(b))\n",
    "x = (type(a) is\n     # note\n\n     type(b))\n",
    "x = (a.__class__\n     ==\n     b.__class__)\n",
    "x = (type(a) ==\n     b.__class__)\n",
    "x = (a.__class__  # note\n     is b.__class__)\n",
    'x = f("#", type(a) is\n      type(b))\n',
])
def test_the_gate_sees_comparisons_split_by_comments_and_lines(text: str) -> None:
    assert compares_types(text)
    assert may_compare_types(text)


def test_a_file_the_runtime_package_loads_imports_the_helpers_inside_its_functions(tmp_path: Path) -> None:
    """``pkg/__init__.py`` imports ``other.util``; a top-level import of
    ``pkg.params_features`` there would run ``pkg/__init__.py`` while ``other.util`` is
    half done (ImportError when ``other.util`` is imported first). Its helpers, the type
    comparison's and the attribute-dict read's, are imported inside the function; a
    comparison at module level stays as it is; the converted tree imports and answers."""
    pkg = _tree(tmp_path, "", init="from other.util import same\n")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "__init__.py").write_text("")
    (tmp_path / "other" / "util.py").write_text(
        'def same(a, b):\n    """Same kind and fields?"""\n'
        "    return type(a) is type(b) and {k: v for k, v in a.__dict__.items()} == dict(vars(b))\n\n\n"
        "SAME = type(1) is type(2)\n")
    assert main(["apply", str(pkg), str(tmp_path / "other")]) == 1
    assert (tmp_path / "other" / "util.py").read_text() == (
        'def same(a, b):\n    """Same kind and fields?"""\n'
        "    from pkg.params_features import param_attr_dict, param_type\n"
        "    return (\n        param_type(a) is param_type(b)\n"
        "        and {k: v for k, v in param_attr_dict(a).items()} == dict(param_attr_dict(b))\n    )\n\n\n"
        "SAME = type(1) is type(2)\n")
    script = ("import torch\nimport other.util\nfrom pkg.params import Packed\n"
              "w = Packed(torch.zeros(2), pack_dim=1)\n"
              "print(other.util.same(w, Packed(torch.zeros(2), pack_dim=1)), other.util.same(w, torch.zeros(2)))\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False"]


def test_what_runs_at_import_in_a_file_the_runtime_package_loads_is_left_and_reported(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """In such a file a default value or decorator argument is evaluated when the
    ``def`` runs, at module level, before the function's own import of the helper: it
    stays as it is (before, it was rewritten and importing the file raised NameError), and
    so does a comparison right at module level; an attribute-dict read too. Each is named
    as a warning (comparisons with their lines)."""
    pkg = _tree(tmp_path, "", init="from other.util import same\n")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "__init__.py").write_text("")
    util = ('def mark(flag):\n    return lambda f: f\n\n\n'
            "@mark(type(1) == type(2))\n"
            "def same(a, b, strict=type(1) is type(2), check=lambda x, y: type(x) is type(y),\n"
            "         fields={k: v for k, v in vars(mark).items()}):\n"
            "    return type(a) is type(b)\n\n\n"
            "SAME = type(1) is type(2)\n")
    (tmp_path / "other" / "util.py").write_text(util)
    assert main(["apply", str(pkg), str(tmp_path / "other")]) == 1
    assert (tmp_path / "other" / "util.py").read_text() == util.replace(
        "    return type(a) is type(b)\n",
        "    from pkg.params_features import param_type\n    return param_type(a) is param_type(b)\n")
    warnings = [line for line in capsys.readouterr().err.splitlines() if "util.py" in line]
    assert "attribute-dict copies or reads outside every function left as they are (1)" in warnings[0]
    compared = warnings[1:]
    assert [w.split(": ", 2)[1].rsplit(":", 1)[1] for w in compared] == ["5", "6", "6", "11"]
    assert all("comparison of two objects' types left as it is" in w for w in compared)
    script = "import other.util\nimport torch\nprint(other.util.same(torch.zeros(1), 1))\n"
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False"]


def test_a_local_import_joins_a_one_line_import_of_the_same_module() -> None:
    """isort merges two imports from one module; a bracketed one keeps its layout."""
    one_line = cst.parse_module("def f(a):\n    from pkg.params_features import param_type\n    return a\n")
    function = one_line.body[0]
    assert isinstance(function, cst.FunctionDef)
    done = cst.Module(body=[with_import_first(function, "pkg.params_features", ["param_attr_dict"])])
    assert done.code == "def f(a):\n    from pkg.params_features import param_attr_dict, param_type\n    return a\n"
    bracketed = cst.parse_module("def f(a):\n    from pkg.params_features import (\n        param_type,\n    )\n"
                                 "    return a\n")
    function = bracketed.body[0]
    assert isinstance(function, cst.FunctionDef)
    done = cst.Module(body=[with_import_first(function, "pkg.params_features", ["param_attr_dict"])])
    assert done.code == ("def f(a):\n    from pkg.params_features import (\n        param_type,\n    )\n"
                         "    from pkg.params_features import param_attr_dict\n    return a\n")
