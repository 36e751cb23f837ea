"""The generated functions read as if written by hand (inline before/after tables).

Each case converts a small package and checks the exact text of the functions it expects:
method implementations named ``<method>_of_<class>`` (private only for a private method),
no boilerplate docstrings on wraps (the ``__init__``'s own docstring is kept), one
compact ``check_param_kwargs`` call per factory, and a plugin that imports no private
generated function to call the implementation ``super()`` reached.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from codemod.cli import main
from codemod.planning import naming


def _dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def _convert(tmp_path: Path, capsys: pytest.CaptureFixture[str],
             files: dict[str, str]) -> dict[str, str]:
    """Apply the codemod to a package made of ``files``; return the converted texts."""
    for rel, text in {"pkg/__init__.py": "", **files}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_dedent(text))
    capsys.readouterr()
    main(["apply", str(tmp_path / "pkg")])
    err = capsys.readouterr().err
    assert "refused" not in err, err
    return {rel: (tmp_path / rel).read_text() for rel in files}


@pytest.mark.parametrize(("class_name", "method", "expected"), [
    ("_ColumnvLLMParameter", "load_qkv_weight", "load_qkv_weight_of_column_vllm_parameter"),
    ("BasevLLMParameter", "_assert_and_load", "_assert_and_load_of_base_vllm_parameter"),
    ("PackedvLLMParameter", "adjust_shard_indexes_for_packing",
     "adjust_shard_indexes_for_packing_of_packed_vllm_parameter"),
    ("Doubled", "__restored", "_restored_of_doubled"),  # never a mangled ``__`` name
])
def test_method_implementation_names(class_name: str, method: str, expected: str) -> None:
    assert naming.method_function_name(class_name, method) == expected


@pytest.mark.parametrize(("names", "expected"), [
    (["weight_loader"],
     'check_param_kwargs("Base", kwargs, ("weight_loader",))'),
    (["output_dim", "input_dim", "weight_loader"],
     'check_param_kwargs(\n'
     '    "GroupQuantScaleParameter", kwargs, ("output_dim", "input_dim", "weight_loader")\n'
     ')'),
    (["packed_factor", "packed_dim", "marlin_tile_size", "output_dim", "input_dim",
      "weight_loader"],
     'check_param_kwargs("PackedvLLMParameter", kwargs, (\n'
     '    "packed_factor", "packed_dim", "marlin_tile_size", "output_dim", "input_dim",\n'
     '    "weight_loader",\n'
     '))'),
])
def test_kwargs_check_is_one_compact_call(names: list[str], expected: str) -> None:
    from codemod.transforms.code_layout import kwargs_check_call

    kind = {1: "Base", 3: "GroupQuantScaleParameter"}.get(len(names), "PackedvLLMParameter")
    code = kwargs_check_call("check_param_kwargs", kind, "kwargs", names)
    assert code == expected
    assert len(code.splitlines()) <= 4
    ast.parse(code)


BASE = '''
    import torch
    from torch.nn import Parameter


    class Base(Parameter):
        """Holds a tensor and its loader."""

        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data, requires_grad=False)

        def __init__(self, data, loader):
            self.loader = loader

        def _check(self, w):
            assert self.data.shape == w.shape

        def load(self, w):
            """Copy ``w`` into this parameter."""
            self._check(w)
            self.data.copy_(w)


    class Packed(Base):
        def __init__(self, packed_factor, packed_dim, marlin_tile_size=None, output_dim=0,
                     input_dim=1, **kwargs):
            """Remember how the tensor is packed."""
            self.packed_factor = packed_factor
            self.packed_dim = packed_dim
            self.marlin_tile_size = marlin_tile_size
            self.output_dim = output_dim
            self.input_dim = input_dim
            super().__init__(**kwargs)
'''

#: (converted module text must contain each of these, exactly)
BASE_AFTER = [
    # The wrap of an ``__init__`` without a docstring has none; methods are named
    # ``<method>_of_<class>``, private only for a private method.
    # The factory gives the new parameter its kind (tags and methods) in one call, before
    # the wraps run the ``__init__`` bodies.
    '''
    def Base(data, **kwargs) -> Parameter:
        """Holds a tensor and its loader."""
        check_param_kwargs("Base", kwargs, ("loader",))
        param = Parameter(data, requires_grad=False)
        init_param_kind(param, Features.Base)
        wrap_base(param, data=data, **kwargs)
        return param


    def wrap_base(param, data, loader, **kwargs):
        param.loader = loader
    ''',
    # The kind is recorded once, after the functions it names: its bases and its methods.
    '''
    register_param_kind(
        Features.Base, methods={"_check": _check_of_base, "load": load_of_base}
    )
    ''',
    '''
    register_param_kind(Features.Packed, bases=(Features.Base,))
    ''',
    # A method's docstring stays on its function.
    '''
    def load_of_base(self, w):
        """Copy ``w`` into this parameter."""
        self._check(w)
        self.data.copy_(w)
    ''',
    '''
    def _check_of_base(self, w):
        assert self.data.shape == w.shape
    ''',
    # The ``__init__``'s docstring is the wrap's; the keyword check is one short call.
    '''
    def Packed(data, **kwargs) -> Parameter:
        check_param_kwargs("Packed", kwargs, (
            "packed_factor", "packed_dim", "marlin_tile_size", "output_dim", "input_dim",
            "loader",
        ))
        param = Parameter(data, requires_grad=False)
    ''',
    '''
        **kwargs,
    ):
        """Remember how the tensor is packed."""
        param.packed_factor = packed_factor
    ''',
]


def test_generated_functions_of_a_hierarchy(tmp_path, capsys):
    params = _convert(tmp_path, capsys, {"pkg/params.py": BASE})["pkg/params.py"]
    for expected in BASE_AFTER:
        assert _dedent(expected) in params, _dedent(expected)
    assert "Give ``param``" not in params
    assert "_base_load" not in params and "_base__check" not in params


PLUGIN = '''
    from pkg.params import Base


    class Doubled(Base):
        def load(self, w):
            super().load(w * 2)
'''


def test_a_plugin_imports_no_private_generated_function(tmp_path, capsys):
    """``super().load(...)`` calls the base's implementation by a public name, as the
    public method could be called before; the plugin imports nothing private."""
    out = _convert(tmp_path, capsys, {"pkg/params.py": BASE, "pkg/plugin.py": PLUGIN})
    plugin = out["pkg/plugin.py"]
    assert "def load_of_doubled(self, w):\n    load_of_base(self, w * 2)\n" in plugin
    imported = [alias.name for node in ast.walk(ast.parse(plugin))
                if isinstance(node, ast.ImportFrom) for alias in node.names]
    assert "load_of_base" in imported
    assert [n for n in imported if n.startswith("_")] == []


SHADOWED = '''
    import torch
    from torch.nn import Parameter


    class Base(Parameter):
        def __init__(self, data, *, loader=None):
            self.loader = loader

        def load(self, w):
            self.data.copy_(w)


    class Kept(Base):
        @property
        def data(self):
            return super().data


    class Column(Base):
        pass
'''


def test_a_kept_class_wrap_says_whom_it_serves(tmp_path, capsys):
    pkg = tmp_path / "pkg"
    for rel, text in {"__init__.py": "", "params.py": SHADOWED}.items():
        pkg.mkdir(exist_ok=True)
        (pkg / rel).write_text(_dedent(text))
    capsys.readouterr()
    main(["apply", str(pkg)])
    params = (pkg / "params.py").read_text()
    assert _dedent('''
    def wrap_base(param, data, *, loader=None, **kwargs):
        """``Base``'s attributes, for its converted subclasses."""
        param.loader = loader


    register_param_kind(Features.Base, methods={"load": Base.load})
    ''') in params
    # ``Column`` has nothing of its own to give a parameter: no wrap, no call to one.
    assert "wrap_column" not in params
    assert "register_param_kind(Features.Column, bases=(Features.Base,))" in params
