"""The text prefilter never skips a file that matters.

Each tree is run twice: as the engine runs it (files that cannot start a hierarchy, or
that never mention a hierarchy name, or mention one only in imports and construction
calls, are never parsed), and with every text test switched off (every file parsed and
converted). The results must be the same: same new texts, same refusals, same errors.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from codemod import api
from codemod.prefilters import inert, may_define_root, mentioned, prefilter
from codemod.pipeline import indexing, plan_rounds, results
from codemod.types import Options, Outcome

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
TREES = sorted(p / "input" for p in (FIXTURES / "golden").iterdir() if (p / "input").is_dir())
TREES.append(FIXTURES / "engine")

PARAMS = """
    from torch.nn import Parameter


    class Base(Parameter):
        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data=data, requires_grad=False)

        def __init__(self, data, input_dim=0, **kwargs):
            self._input_dim = input_dim

        @property
        def input_dim(self):
            return self._input_dim

        def load(self, w):
            self.data.copy_(w)


    class Packed(Base):
        pass
"""


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (dedented) under ``root``, with ``__init__.py`` in every package."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    for directory in {(root / rel).parent for rel in files}:
        while directory != root:
            (directory / "__init__.py").touch()
            directory = directory.parent
    return root


def outcome(result: api.RunResult) -> tuple[object, ...]:
    files = tuple(
        (str(f.path), f.outcome, f.new_text, f.error, f.refusals, f.counts)
        for f in result.files if f.outcome is not Outcome.UNCHANGED
    )
    return files, tuple(r.render() for r in result.refusals)


def unfiltered(monkeypatch: pytest.MonkeyPatch, paths: list[Path]) -> api.RunResult:
    """The engine with every text test answering "this file may matter"."""
    with monkeypatch.context() as patch:
        for stage in (indexing, plan_rounds):  # the index, and the planning rounds' candidates
            patch.setattr(stage, "may_define_root", lambda text: True)
            patch.setattr(stage, "inert", lambda text, names, fields=frozenset(): False)
        patch.setattr(results, "mentioned", lambda text, names: names)
        return api.run(paths, Options(jobs=1))


def assert_same_as_unfiltered(monkeypatch: pytest.MonkeyPatch, root: Path) -> api.RunResult:
    filtered = api.run([root], Options(jobs=1))
    reference = unfiltered(monkeypatch, [root])
    assert outcome(filtered) == outcome(reference)
    assert filtered.parsed <= reference.parsed
    return filtered


@pytest.mark.parametrize("tree", TREES, ids=lambda p: p.parent.name if p.name == "input" else p.name)
def test_fixture_trees_same_as_parsing_everything(monkeypatch, tree):
    assert_same_as_unfiltered(monkeypatch, tree)


CASES = {
    "subclass-in-another-file": {
        "pkg/params.py": PARAMS,
        "pkg/plugin/doubled.py": """
            from pkg.params import Base


            class Doubled(Base):
                pass
        """,
        "pkg/use.py": """
            from pkg.plugin.doubled import Doubled


            def f(p):
                return isinstance(p, Doubled)
        """,
    },
    "parameter-alias": {
        "pkg/params.py": """
            from torch.nn import Parameter as P


            class Aliased(P):
                pass
        """,
        "pkg/use.py": """
            from pkg.params import Aliased


            def f(p):
                return isinstance(p, Aliased)
        """,
    },
    "torch-nn-module-alias": {
        "pkg/params.py": """
            import torch.nn as tnn


            class Viann(
                tnn.Parameter,  # a comment (with parentheses)
            ):
                pass
        """,
        "pkg/use.py": "from pkg.params import Viann\n\nCHECK = lambda p: type(p) is Viann\n",
    },
    "uninitialized-alias": {
        "pkg/lazy.py": """
            from torch.nn import UninitializedParameter as U


            class Lazy(U):
                pass
        """,
    },
    "re-export-through-init": {
        "pkg/params.py": PARAMS,
        "pkg/layers/__init__.py": "from pkg.params import Base, Packed\n",
        "pkg/use.py": """
            from pkg.layers import Packed


            def f(p):
                return isinstance(p, Packed)
        """,
    },
    "re-export-under-another-name": {
        "pkg/params.py": PARAMS,
        "pkg/__init__.py": "from pkg.params import Base as Weight\n",
        "pkg/use.py": """
            from pkg import Weight


            def f(p):
                return isinstance(p, Weight)
        """,
        "pkg/build.py": """
            from pkg import Weight


            def g(data):
                return Weight(data)
        """,
    },
    "re-export-chain-and-dotted-use": {
        "pkg/params.py": PARAMS,
        "pkg/layers/common.py": "from pkg.params import Packed\n",
        "pkg/layers/__init__.py": "from pkg.layers.common import Packed\n",
        "pkg/use.py": """
            import pkg.layers
            from pkg import layers as L


            def f(p):
                return isinstance(p, pkg.layers.Packed) or type(p) is L.Packed
        """,
    },
    "re-export-imported-oddly": {
        "pkg/params.py": PARAMS,
        "pkg/layers/__init__.py": "from pkg.params import Base, Packed\n",
        "pkg/layers/more.py": "from ..params import Packed\n",
        "pkg/use.py": """
            import os; from pkg.layers import Packed


            def f(p):
                return isinstance(p, Packed)
        """,
        "pkg/sub/use2.py": """
            if True: from ..layers.more import Packed


            def g(p):
                return type(p) is Packed
        """,
    },
    "subclass-through-re-export": {
        "pkg/params.py": PARAMS,
        "pkg/layers/__init__.py": "from pkg.params import Base\n",
        "pkg/ext.py": """
            from pkg import layers


            class Ext(layers.Base):
                pass
        """,
        "pkg/use.py": "from pkg.ext import Ext\n\nok = lambda p: isinstance(p, Ext)\n",
    },
    "backing-field-written-elsewhere": {
        "pkg/params.py": PARAMS,
        "pkg/permute.py": """
            def permute(param):
                param._input_dim = 1 - param._input_dim
        """,
    },
    "construction-only-and-value-use": {
        "pkg/params.py": PARAMS,
        "pkg/build.py": """
            from pkg.params import Base, Packed


            def make(data):
                return Base(data), Packed(data=data)
        """,
        "pkg/table.py": """
            from pkg.params import Base

            KINDS = {"base": Base}


            def is_kind(p, name):
                return isinstance(p, KINDS[name])
        """,
    },
    "syntax-error-in-a-user": {
        "pkg/params.py": PARAMS,
        "pkg/broken.py": "from pkg.params import Base\n\ndef f(p:\n    return isinstance(p, Base)\n",
    },
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_crafted_trees_same_as_parsing_everything(monkeypatch, tmp_path, case):
    root = write_tree(tmp_path / "src", CASES[case])
    result = assert_same_as_unfiltered(monkeypatch, root / "pkg")
    assert result.changed() or result.refusals or result.failed()


def test_construction_only_file_is_not_parsed(tmp_path):
    root = write_tree(tmp_path / "src", CASES["construction-only-and-value-use"])
    result = api.run([root / "pkg"], Options(jobs=1))
    parsed = set(result.facts) | result.parsed_elsewhere
    assert root / "pkg" / "build.py" not in parsed
    # A plain use site whose leftover (the dict value) CPython's parser decides: the
    # round that finds it converts nothing, and the next plan leaves it nothing to do.
    assert root / "pkg" / "table.py" not in parsed
    assert result.parsed == len(parsed) == 1
    # The dict value use refuses the hierarchy; the construction file is never touched.
    assert result.refusals and not result.changed()


def test_alias_re_export_is_rewritten(tmp_path):
    root = write_tree(tmp_path / "src", CASES["re-export-under-another-name"])
    result = api.run([root / "pkg"], Options(jobs=1))
    by_name = {f.path.name: f for f in result.changed()}
    assert "has_param_feature(p, Features.Base)" in by_name["use.py"].new_text
    assert "build.py" not in by_name  # construction only: unchanged, never parsed


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("class A(Parameter): pass", True),
        ("class A(nn.Parameter): pass", True),
        ("class A(torch.nn.parameter.Parameter): pass", True),
        ("class A(\n    Base,\n    Parameter,\n): pass", True),
        ("class A(make(x), Parameter): pass", True),
        ("class A(Tensor):\n    x = Parameter(1)", False),
        ("from torch.nn import Parameter as P\nclass A(P): pass", True),
        ("from torch.nn import UninitializedParameter as U\n", True),
        ("class A(UninitializedTensorMixin, Tensor): pass", True),
        ("p = Parameter(torch.ones(1))", False),
        ("class A(Base): pass", False),
        ("P = nn.Parameter\nclass A(P): pass", True),
        ("P: type = torch.nn.parameter.Parameter  # alias\n", True),
        ("self.weight = Parameter\n", True),
        ("self.weight = Parameter(w)\nx = Parameter (w)", False),
        ("kind = 'Parameter'\n", False),
        ("param_cls = PackedvLLMParameter\n", False),
        ("U = nn.parameter.UninitializedParameter\n", True),
        ("P, other = nn.Parameter, 1\n", True),
    ],
)
def test_may_define_root(text, expected):
    assert may_define_root(text) is expected


NAMES = frozenset({"Base", "Packed"})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("x = 1", True),
        ("from pkg.params import Base\n", True),
        ("from pkg.params import (\n    Base,  # the base\n    Packed,\n)\n", True),
        ("from pkg.params import Base\np = Base(data)\n", True),
        ("import pkg.params\np = pkg.params.Packed (data=d)\n", True),
        ("from pkg.params import Base as B\n", False),
        ("from pkg.params import Base\nisinstance(p, Base)\n", False),
        ("from pkg.params import Base\ntype(p) is Base\n", False),
        ("from pkg.params import Base\nBase.load(p, w)\n", False),
        ("from pkg.params import Base\ndef f(p: Base): pass\n", False),
        ("from pkg.params import Base\ndef f(p: 'Base'): pass\n", False),
        ("from pkg.params import Base\nclass C(Base): pass\n", False),
        ("from pkg.params import Base\nclass C(Base(1)): pass\n", False),
        ("from pkg.params import Base\nKINDS = [Base]\n", False),
        ("from pkg.params import Base; isinstance(p, Base)\n", False),
        ("from pkg.params import (Base,  # (x)\n    Packed)\n", True),
        ('"""from m import (\n"""\nisinstance(p, Base)\n', False),  # never runs out of a string
        ("def f():\n    from pkg.params import Base\n    return Base(1)\n", True),
        ("p.Base\n", False),  # may be a module attribute: parse
    ],
)
def test_inert(text, expected):
    assert inert(text, NAMES) is expected


def test_inert_fields():
    assert inert("p._input_dim = 3\n", NAMES, frozenset({"_input_dim"})) is False
    assert inert("return p._input_dim\n", NAMES, frozenset({"_input_dim"})) is False
    assert inert("p._other = 3\n", NAMES, frozenset({"_input_dim"})) is True


def test_prefilter_gate_agrees_with_the_whole_word_test():
    names = frozenset({"_weight_loader", "Base"})
    assert prefilter("default_weight_loader(x)", names) is False
    assert prefilter("p._weight_loader = f", names) is True
    assert prefilter("BaseModel", names) is False
    assert prefilter("(Base)", names) is True


@pytest.mark.parametrize(
    "text",
    ["", "Base", "xBase Base_ (Base)", "BaseX Base", "Packed.Base", "BasePacked Packed",
     "é Base", "Baseé", "_weight_loader default_weight_loader", "a_b b ab"],
)
def test_mentioned_agrees_with_prefilter(text):
    names = frozenset({"Base", "BaseX", "Packed", "_weight_loader", "b", "a_b"})
    found = mentioned(text, names)
    assert found == {n for n in names if prefilter(text, frozenset({n}))}
    assert bool(found) is prefilter(text, names)


def test_mentions_scans_each_file_once_per_name(monkeypatch, tmp_path):
    calls: list[frozenset[str]] = []

    def spy(text, names):
        calls.append(names)
        return mentioned(text, names)

    monkeypatch.setattr(results, "mentioned", spy)
    memo = api.Mentions()
    path = tmp_path / "a.py"
    assert memo.any(path, "x = Base(1)", frozenset({"Base", "Packed"}))
    assert not memo.any(path, "x = Base(1)", frozenset({"Packed"}))
    assert memo.any(path, "x = Base(1)", frozenset({"Base", "Packed", "Other"})) is True
    assert calls == [frozenset({"Base", "Packed"}), frozenset({"Other"})]


def test_import_targets_of_a_use_site(tmp_path):
    root = write_tree(tmp_path / "src", {
        "pkg/sub/use.py": "import os; from ..layers import Packed as P\nimport a.b\nfrom . import c\n",
    })
    path = root / "pkg" / "sub" / "use.py"
    targets = api.file_import_targets(path, path.read_text())
    assert sorted(targets) == sorted([
        ("os", "os"), ("P", "pkg.layers.Packed"), ("a", "a"), ("c", "pkg.sub.c"),
    ])
    # Not every import at a line start: the whole file is read, and it does not parse.
    assert api.file_import_targets(path, "x = 1; import os\ndef f(:\n") is None
