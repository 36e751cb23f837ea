"""Each use-site rewrite as an inline before/after row, in the manner of LibCST's
``CodemodTest``: one package is converted once, and each row checks one line of its user.

The rows are the rewrites ``transforms/use_sites.py`` names (checks, tuples, type checks,
``issubclass``, unbound members, annotations, backing fields, attribute-dict copies) and
lines no rewrite may touch. Golden trees cover whole files; these rows say, one line each,
what becomes of one spelling.
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import pytest

from codemod.cli import main

FAMILY = '''
    import torch
    from torch.nn import Parameter


    class BaseParam(Parameter):
        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data=data, requires_grad=False)

        def __init__(self, data, weight_loader):
            self._weight_loader = weight_loader

        @property
        def weight_loader(self):
            return self._weight_loader

        def load_weight(self, loaded_weight):
            self.data.copy_(loaded_weight)


    class ColumnParam(BaseParam):
        def __init__(self, output_dim, **kwargs):
            self._output_dim = output_dim
            super().__init__(**kwargs)

        @property
        def output_dim(self):
            return self._output_dim

        def load_column(self, loaded_weight):
            self.data.copy_(loaded_weight)


    class RowParam(BaseParam):
        pass
'''

#: (before, after): one statement of ``uses(p, t)`` each; after None: unchanged.
ROWS: list[tuple[str, str | None]] = [
    ("isinstance(p, ColumnParam)", "has_param_feature(p, Features.ColumnParam)"),
    ("isinstance(p.weight, ColumnParam)", "has_param_feature(p.weight, Features.ColumnParam)"),
    ("not isinstance(p, BaseParam)", "not has_param_feature(p, Features.BaseParam)"),
    ("isinstance(p, (ColumnParam, RowParam))",
     "has_param_feature(p, Features.ColumnParam, Features.RowParam)"),
    ("isinstance(p, (RowParam,))", "has_param_feature(p, Features.RowParam)"),
    ("isinstance(p, (ColumnParam, torch.Tensor))",
     "has_param_feature(p, Features.ColumnParam) or isinstance(p, torch.Tensor)"),
    ("isinstance(p, (ColumnParam, torch.Tensor, int))",
     "has_param_feature(p, Features.ColumnParam) or isinstance(p, (torch.Tensor, int))"),
    ("isinstance(get(p), (ColumnParam, torch.Tensor))",
     "isinstance_or_param_feature(get(p), torch.Tensor, Features.ColumnParam)"),
    # A subject that may be a property, a member that may run code or raise: each is
    # evaluated once, in its order, as the tuple evaluated it.
    ("isinstance(p.weight, (ColumnParam, torch.Tensor))",
     "isinstance_or_param_feature(p.weight, torch.Tensor, Features.ColumnParam)"),
    ("isinstance(p, (ColumnParam, t.cls))",
     "isinstance_or_param_feature(p, t.cls, Features.ColumnParam)"),
    ("isinstance(p, (t[0], ColumnParam))",
     "isinstance_or_param_feature(p, t[0], Features.ColumnParam)"),
    # An ``or`` that replaces one operand stays one operand.
    ("not isinstance(p, (ColumnParam, torch.Tensor))",
     "not (has_param_feature(p, Features.ColumnParam) or isinstance(p, torch.Tensor))"),
    ("t and isinstance(p, (ColumnParam, torch.Tensor))",
     "t and (has_param_feature(p, Features.ColumnParam) or isinstance(p, torch.Tensor))"),
    ("type(p) in (ColumnParam, torch.Tensor)",
     "type(p) is torch.Tensor or param_kind_is(p, Features.ColumnParam)"),
    ("type(p) in (ColumnParam, torch.Tensor, int)",
     "type(p) in (torch.Tensor, int) or param_kind_is(p, Features.ColumnParam)"),
    ("not type(p) in (ColumnParam, torch.Tensor)",
     "not (type(p) is torch.Tensor or param_kind_is(p, Features.ColumnParam))"),
    ("t and type(p) in (ColumnParam, torch.Tensor)",
     "t and (type(p) is torch.Tensor or param_kind_is(p, Features.ColumnParam))"),
    ("type(p) not in (ColumnParam, torch.Tensor)",
     "not (type(p) is torch.Tensor or param_kind_is(p, Features.ColumnParam))"),
    ("[isinstance(x, RowParam) for x in p]", "[has_param_feature(x, Features.RowParam) for x in p]"),
    ("type(p) is RowParam", "param_kind_is(p, Features.RowParam)"),
    ("type(p) is not RowParam", "not param_kind_is(p, Features.RowParam)"),
    ("type(p) == RowParam", "param_kind_is(p, Features.RowParam)"),
    ("type(p) != RowParam", "not param_kind_is(p, Features.RowParam)"),
    ("type(p) in (ColumnParam, RowParam)",
     "param_kind_is(p, Features.ColumnParam, Features.RowParam)"),
    ("type(p) not in (ColumnParam, RowParam)",
     "not param_kind_is(p, Features.ColumnParam, Features.RowParam)"),
    ("p.__class__ is ColumnParam", "param_kind_is(p, Features.ColumnParam)"),
    ("issubclass(ColumnParam, BaseParam)", "True"),
    ("issubclass(RowParam, ColumnParam)", "False"),
    ("ColumnParam.load_column", "load_column_of_column_param"),
    ("RowParam.load_weight", "load_weight_of_base_param"),  # found through the MRO
    ("p._output_dim", 'param_field(p, "_output_dim")'),
    ('getattr(p, "_output_dim")', 'param_field(p, "_output_dim")'),
    ('hasattr(p, "_output_dim")', 'has_param_field(p, "_output_dim")'),
    ('setattr(p, "_output_dim", 2)', 'set_param_field(p, "_output_dim", "output_dim", 2)'),
    # Left alone: factory calls keep the class's name, other classes, text.
    ("ColumnParam(output_dim=0, data=torch.zeros(2), weight_loader=None)", None),
    ("isinstance(p, torch.Tensor)", None),
    ('"ColumnParam"', None),
    ("p.output_dim", None),
]


def _one_line(code: str) -> str:
    """``code`` laid out over several lines, as on one line."""
    joined = " ".join(code.split())
    return re.sub(r"\s+\)", ")", re.sub(r"\(\s+", "(", joined))


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Before -> after line of every row, from one conversion of the package."""
    root = tmp_path_factory.mktemp("table")
    body = "\n".join(f"    v{i} = {before}" for i, (before, _) in enumerate(ROWS))
    use = (
        "import torch\n\nfrom pkg.parameter import BaseParam, ColumnParam, RowParam\n\n\n"
        "def get(p):\n    return p\n\n\n"
        f"def uses(p, t):\n{body}\n    p._output_dim = 1\n"
        "    t.__dict__.update(p.__dict__)\n\n\n"
        "def annotated(q: ColumnParam, r: RowParam | None = None) -> BaseParam:\n    return q\n"
    )
    files = {"pkg/__init__.py": "", "pkg/parameter.py": textwrap.dedent(FAMILY).lstrip("\n"),
             "pkg/use.py": use}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    assert main(["apply", str(root / "pkg")]) == 1
    text = (root / "pkg/use.py").read_text()
    # Each row's value on one line: a rewrite that made its line too long is laid out
    # over several (``def_layout``), which is not what this table is about.
    uses_def = next(node for node in ast.parse(text).body
                    if isinstance(node, ast.FunctionDef) and node.name == "uses")
    lines = {node.targets[0].id: _one_line(ast.get_source_segment(text, node.value) or "")
             for node in uses_def.body
             if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)}
    out = {before: lines[f"v{i}"] for i, (before, _) in enumerate(ROWS)}
    out["<file>"] = text
    return out


@pytest.mark.parametrize(("before", "after"), ROWS, ids=[before for before, _ in ROWS])
def test_use_site_rewrite(converted: dict[str, str], before: str, after: str | None) -> None:
    assert converted[before] == (before if after is None else after)


def test_statements_and_annotations(converted: dict[str, str]) -> None:
    """A backing-field write, an attribute-dict copy and annotations, in place."""
    text = converted["<file>"]
    assert '    set_param_field(p, "_output_dim", "output_dim", 1)\n' in text
    assert "    t.__dict__.update(p.__dict__)\n    rebind_param_methods(t)\n" in text
    # The rewritten header no longer fits 88 columns: one parameter per line.
    assert ("def annotated(\n    q: torch.nn.Parameter,\n    r: torch.nn.Parameter | None = None,\n"
            ") -> torch.nn.Parameter:") in text


def test_imports_name_what_the_rewrites_use(converted: dict[str, str]) -> None:
    """The user imports the factory (still called) and the helpers the rewrites call, and
    no longer the classes only checked against."""
    text = converted["<file>"]
    head = text.split("\n\n\ndef ")[0]
    assert "from pkg.parameter import (\n    ColumnParam,\n" in head
    assert "load_column_of_column_param" in head and "load_weight_of_base_param" in head
    assert "BaseParam" not in head and "RowParam" not in head
    for helper in ("Features", "has_param_feature", "has_param_field",
                   "isinstance_or_param_feature", "param_field", "param_kind_is",
                   "rebind_param_methods", "set_param_field"):
        assert helper in head, helper
