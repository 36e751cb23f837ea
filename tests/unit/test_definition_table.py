"""Each shape of a class definition as an inline before/after row, in the manner of
LibCST's ``CodemodTest``: one module of small Parameter classes is converted once, and
each row names a class and the exact text ``apply`` makes of it.

The rows are the pieces ``transforms/definitions.py`` and ``transforms/registrations.py``
write: a class without ``__init__`` (no wrap: the base's), a property over a field (one
attribute), statements after ``super().__init__`` (the wrap runs the base's first),
a literal passed to ``super().__init__`` (the wrap calls the chain itself), a class
constant (a module constant, set by the wrap), an override that calls ``super()``'s
method (the base's function), a static method (an attribute), and a class that is not a
Parameter (no-op). Whole-tree behaviour is the golden trees' and the behaviour suite's.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from codemod.cli import main

BEFORE = '''
    import torch
    from torch.nn import Parameter


    class Base(Parameter):
        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data=data, requires_grad=False)

        def __init__(self, data, weight_loader):
            self._weight_loader = weight_loader

        @property
        def weight_loader(self):
            return self._weight_loader

        def load(self, w):
            self.data.copy_(w)


    class Plain(Base):
        """No __init__ of its own."""


    class WithField(Base):
        def __init__(self, output_dim, **kwargs):
            self._output_dim = output_dim
            super().__init__(**kwargs)

        @property
        def output_dim(self):
            return self._output_dim


    class After(Base):
        def __init__(self, scale, **kwargs):
            super().__init__(**kwargs)
            self.scale = scale * 2


    class Literal(WithField):
        def __init__(self, **kwargs):
            super().__init__(output_dim=0, **kwargs)


    class Const(Base):
        PACK = 8

        def packed(self):
            return self.data.shape[0] * self.PACK


    class Override(Base):
        def load(self, w):
            super().load(w * 2)


    class Static(Base):
        @staticmethod
        def width(n):
            return n + 1


    class Settings:
        PACK = 8

        def __init__(self, data):
            self.data = data
'''

#: (row, exact text the converted module holds). Blank lines inside a row are the
#: module's own (two between top-level statements).
ROWS: list[tuple[str, str]] = [
    ("root: the factory builds the tensor as __new__ did, the wrap runs __init__", '''
        def Base(data, **kwargs) -> Parameter:
            check_param_kwargs("Base", kwargs, ("weight_loader",))
            param = Parameter(data=data, requires_grad=False)
            init_param_kind(param, Features.Base)
            wrap_base(param, data=data, **kwargs)
            return param


        def wrap_base(param, data, weight_loader, **kwargs):
            param.weight_loader = weight_loader


        register_param_fields(Features.Base, {"_weight_loader": "weight_loader"})
    '''),
    ("a method becomes a function, registered with its kind", '''
        def load_of_base(self, w):
            self.data.copy_(w)


        register_param_kind(Features.Base, methods={"load": load_of_base})
    '''),
    ("no __init__: no wrap, the base's runs; the docstring moves to the factory", '''
        def Plain(data, **kwargs) -> Parameter:
            """No __init__ of its own."""
            check_param_kwargs("Plain", kwargs, ("weight_loader",))
            param = Parameter(data=data, requires_grad=False)
            init_param_kind(param, Features.Plain)
            wrap_base(param, data=data, **kwargs)
            return param
    '''),
    ("a property over a field: the attribute, stored once", '''
        def wrap_with_field(param, output_dim, **kwargs):
            param.output_dim = output_dim


        register_param_fields(
            Features.WithField, {"_weight_loader": "weight_loader", "_output_dim": "output_dim"}
        )
    '''),
    ("statements after super().__init__: the base's wrap first, then the rest", '''
            wrap_base(param, data=data, **kwargs)
            wrap_after(param, **kwargs)
            return param


        def wrap_after(param, scale, **kwargs):
            param.scale = scale * 2
    '''),
    ("a literal passed up: the wrap calls the chain with it", '''
        def wrap_literal(param, **kwargs):
            wrap_base(param, **kwargs)
            wrap_with_field(param, output_dim=0, **kwargs)
    '''),
    ("a class constant: a module constant, given to each parameter by the wrap", '''
        _CONST_PACK = 8
    '''),
    ("a class constant, set by the wrap", '''
        def wrap_const(param, **kwargs):
            param.PACK = _CONST_PACK
    '''),
    ("super().load(...) in an override: the base's function", '''
        def load_of_override(self, w):
            load_of_base(self, w * 2)
    '''),
    ("a static method: a function, set as an attribute by the wrap", '''
        def wrap_static(param, **kwargs):
            param.width = width_of_static
    '''),
    ("a class that is not a Parameter: left as it is", '''
        class Settings:
            PACK = 8

            def __init__(self, data):
                self.data = data
    '''),
]


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("definitions")
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "params.py").write_text(textwrap.dedent(BEFORE).lstrip("\n"))
    assert main(["apply", str(root / "pkg")]) == 1
    return Path(root / "pkg" / "params.py").read_text()


@pytest.mark.parametrize(("row", "after"), ROWS, ids=[row for row, _ in ROWS])
def test_definition_row(converted: str, row: str, after: str) -> None:
    expected = textwrap.dedent(after).strip("\n") + "\n"
    assert expected in converted, f"{row}:\n{expected}\n--- not in ---\n{converted}"


def test_no_class_of_the_family_is_left(converted: str) -> None:
    for name in ("Base", "Plain", "WithField", "After", "Literal", "Const", "Override", "Static"):
        assert f"class {name}" not in converted and f"def {name}(" in converted, name
