"""``__new__`` that builds its own data: what converts (and behaves the same), what is refused.

Converted shapes are run before and after conversion by the same script, which must
print the same lines. Refused shapes name the class and a reason precise enough to act on.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from codemod.cli import main

pytest.importorskip("torch")


def _tree(root: Path, params: str) -> Path:
    for rel, text in {"pkg/__init__.py": "", "pkg/params.py": params}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return root / "pkg"


def _refusals(capsys: pytest.CaptureFixture[str], pkg: Path) -> dict[str, str]:
    capsys.readouterr()
    main(["apply", "--dry-run", str(pkg)])
    out = {}
    for line in capsys.readouterr().err.splitlines():
        if line.startswith("  ") and ": " in line:
            _where, cls, reason = line.strip().split(": ", 2)
            out[cls] = reason
    return out


def _same_output(tmp_path: Path, capsys: pytest.CaptureFixture[str], params: str,
                 script: str) -> list[str]:
    """Convert ``params``; run ``script`` on both trees; return the (equal) output lines."""
    before = _tree(tmp_path / "before", params).parent
    after = tmp_path / "after"
    shutil.copytree(before, after)
    capsys.readouterr()
    main(["apply", str(after / "pkg")])
    err = capsys.readouterr().err
    assert "refused" not in err, err
    assert "__new__" not in (after / "pkg" / "params.py").read_text()
    outputs = []
    for root in (before, after):
        env = dict(os.environ, PYTHONPATH=str(root), PYTHONWARNINGS="ignore")
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=root,
                              env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout.splitlines())
    assert outputs[0] == outputs[1]
    return outputs[0]


def test_make_subclass_without_requires_grad_keeps_its_false(tmp_path, capsys):
    """``_make_subclass``'s default is ``requires_grad=False``; ``Parameter``'s is True."""
    params = '''
        import torch
        from torch.nn import Parameter


        class Frozen(Parameter):
            def __new__(cls, data):
                return torch.Tensor._make_subclass(cls, data)
    '''
    lines = _same_output(tmp_path, capsys, params, '''
        import torch
        from pkg.params import Frozen
        data = torch.ones(2)
        p = Frozen(data)
        print(p.requires_grad, p.data_ptr() == data.data_ptr())
    ''')
    assert lines == ["False True"]
    assert "Parameter(data, requires_grad=False)" in (tmp_path / "after/pkg/params.py").read_text()


def test_post_statements_of_every_new_run_innermost_first(tmp_path, capsys):
    """Each ``__new__`` sets attributes after ``super().__new__`` returns: the base's first."""
    params = '''
        import torch
        from torch.nn import Parameter


        class Tagged(Parameter):
            def __new__(cls, data, **kwargs):
                obj = torch.Tensor._make_subclass(cls, data, False)
                obj.tag = "base"
                return obj


        class Child(Tagged):
            def __new__(cls, rows, label="child"):
                data = torch.zeros(rows)
                self = super().__new__(cls, data)
                self.tag = self.tag + "+" + label
                self.rows = rows
                return self
    '''
    lines = _same_output(tmp_path, capsys, params, '''
        from pkg.params import Child, Tagged
        import torch
        c = Child(3, label="x")
        print(c.tag, c.rows, c.tolist(), c.requires_grad)
        t = Tagged(torch.ones(1))
        print(t.tag, t.requires_grad)
    ''')
    assert lines == ["base+x 3 [0.0, 0.0, 0.0] False", "base False"]


def test_import_error_comes_when_the_factory_is_called(tmp_path, capsys):
    params = '''
        import torch
        from torch.nn import Parameter


        class Optional(Parameter):
            def __new__(cls, n):
                try:
                    import not_installed_anywhere
                except ImportError as err:
                    raise ImportError("needs not_installed_anywhere") from err
                self = torch.Tensor._make_subclass(cls, torch.zeros(n), False)
                self.backend = not_installed_anywhere
                return self
    '''
    lines = _same_output(tmp_path, capsys, params, '''
        import pkg.params
        print("imported")
        try:
            pkg.params.Optional(2)
        except ImportError as exc:
            print("raised", exc, type(exc.__cause__).__name__)
    ''')
    assert lines == ["imported", "raised needs not_installed_anywhere ModuleNotFoundError"]


BASE = '''
    import torch
    from torch.nn import Parameter


    class Base(Parameter):
        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data=data, requires_grad=False)


'''


@pytest.mark.parametrize(("leaf", "reason"), [
    ('''
    class Leaf(Base):
        def __new__(cls, data):
            print(cls.__name__)
            return super().__new__(cls, data)
    ''', "Leaf.__new__ uses cls other than to create the tensor"),
    ('''
    class Leaf(Base):
        def __new__(cls, data):
            super().__new__(cls, data)
            return data
    ''', "Leaf.__new__ does more than build the data and then `return super().__new__(cls, "
         "...)` (or create the tensor, set attributes on it and return it)"),
    ('''
    REGISTRY = []


    class Leaf(Base):
        def __new__(cls, data):
            self = super().__new__(cls, data)
            REGISTRY.append(self)
            return self
    ''', "Leaf.__new__ uses the new tensor 'self' other than as self.attr; a plain Parameter "
         "is not an instance of Leaf"),
    ('''
    class Leaf(Base):
        def __new__(cls, data):
            self = super().__new__(cls, data)
            self.setup()
            return self

        def setup(self):
            self.ready = True
    ''', "__new__ uses self.setup before the wraps give a plain Parameter the class's members"),
    ('''
    class Leaf(Base):
        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data, **kwargs)
    ''', "Leaf.__new__ passes **kwargs on to Base.__new__; the factory could not tell what "
         "each parameter receives"),
    ('''
    class Leaf(Base):
        def __new__(cls, data, loader):
            data = data.float()
            return super().__new__(cls, data)

        def __init__(self, data, loader):
            self.loader = loader
    ''', "__new__ rebinds its parameter 'data', which __init__ received unchanged; the "
         "factory passes one name to both"),
])
def test_refused_new_shapes_say_why(tmp_path, capsys, leaf, reason):
    pkg = _tree(tmp_path, textwrap.dedent(BASE) + textwrap.dedent(leaf))
    assert _refusals(capsys, pkg)["Leaf"] == reason


def test_base_new_reading_kwargs_or_computed_default_is_refused(tmp_path, capsys):
    pkg = _tree(tmp_path, '''
        import torch
        from torch.nn import Parameter


        class Reads(Parameter):
            def __new__(cls, data, **kwargs):
                return super().__new__(cls, data, kwargs.get("grad", False))


        class A(Reads):
            def __new__(cls, n):
                return super().__new__(cls, torch.zeros(n), grad=True)


        class Typed(Parameter):
            def __new__(cls, data, dtype=torch.float16):
                return super().__new__(cls, data.to(dtype), False)


        class B(Typed):
            def __new__(cls, n):
                return super().__new__(cls, torch.zeros(n))
    ''')
    reasons = _refusals(capsys, pkg)
    assert reasons["A"] == "Reads.__new__ reads **kwargs, which A.__new__ fills"
    assert reasons["B"] == ("Typed.__new__'s default for 'dtype' was computed once, when the "
                            "class was created")


def test_locals_a_later_new_rebinds_are_refused(tmp_path, capsys):
    pkg = _tree(tmp_path, '''
        import torch
        from torch.nn import Parameter


        class Base(Parameter):
            def __new__(cls, n):
                shape = (n, 2)
                return super().__new__(cls, torch.zeros(shape), False)


        class Leaf(Base):
            def __new__(cls, n):
                shape = (n,)
                self = super().__new__(cls, n)
                self.shape_asked = shape
                return self
    ''')
    assert _refusals(capsys, pkg)["Leaf"] == (
        "Leaf.__new__ uses 'shape' after creating the tensor, which a later __new__ of the "
        "MRO rebinds")


def test_base_new_from_another_module_using_its_globals_is_refused(tmp_path, capsys):
    pkg = _tree(tmp_path, '''
        import torch
        from torch.nn import Parameter


        class Base(Parameter):
            def __new__(cls, n):
                return super().__new__(cls, torch.zeros(n), False)
    ''')
    (pkg / "leaf.py").write_text(textwrap.dedent('''
        from torch.nn import Parameter as P

        from pkg.params import Base


        class Leaf(Base):
            def __new__(cls, n):
                return super().__new__(cls, n + 1)
    ''').lstrip("\n"))
    assert _refusals(capsys, pkg)["Leaf"] == (
        "Base.__new__ uses 'torch' from its module pkg.params; the factory is in another module")


def test_factory_signature_is_laid_out_as_written_by_hand(tmp_path, capsys):
    """``__new__``'s continuation lines were aligned under ``def __new__(``."""
    pkg = _tree(tmp_path, '''
        import torch
        from torch.nn import Parameter


        class Grid(Parameter):
            def __new__(cls, rows: int,
                        cols: int = 2):
                return super().__new__(cls, torch.zeros(rows, cols), False)


        class WideGridWithAVeryLongName(Parameter):
            def __new__(cls, rows: int, cols: int, depth: int,
                        dtype: torch.dtype = torch.float32):
                return super().__new__(cls, torch.zeros(rows, cols, depth, dtype=dtype), False)
    ''')
    main(["apply", str(pkg)])
    text = (pkg / "params.py").read_text()
    assert "\ndef Grid(rows: int, cols: int = 2) -> Parameter:\n" in text
    assert ("\ndef WideGridWithAVeryLongName(\n    rows: int,\n    cols: int,\n    depth: int,\n"
            "    dtype: torch.dtype = torch.float32,\n) -> Parameter:\n") in text


def test_wrap_and_method_signatures_are_laid_out_as_written_by_hand(tmp_path, capsys):
    """``__init__``'s and methods' continuation lines were aligned under the old ``def``;
    the wrap and the module-level method function get one line when it fits in 88
    columns, else one parameter per line (vLLM's PackedvLLMParameter shape)."""
    pkg = _tree(tmp_path, '''
        from typing import Optional

        import torch
        from torch.nn import Parameter


        class Packed(Parameter):
            def __new__(cls, data, **kwargs):
                return super().__new__(cls, data=data, requires_grad=False)

            def __init__(self,
                         packed_factor: int,
                         packed_dim: int,
                         marlin_tile_size: Optional[int] = None,
                         **kwargs):
                self.packed_factor = packed_factor
                self.packed_dim = packed_dim
                self.marlin_tile_size = marlin_tile_size

            def shard(self, loaded_weight: torch.Tensor,
                      shard_id: int) -> torch.Tensor:
                return loaded_weight
    ''')
    main(["apply", str(pkg)])
    text = (pkg / "params.py").read_text()
    assert ("\ndef wrap_packed(\n    param,\n    packed_factor: int,\n    packed_dim: int,\n"
            "    marlin_tile_size: Optional[int] = None,\n    **kwargs,\n):\n") in text
    assert ("\ndef shard_of_packed(self, loaded_weight: torch.Tensor, shard_id: int) -> "
            "torch.Tensor:\n") in text
