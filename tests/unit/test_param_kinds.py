"""A converted kind is made once, when its module is imported; a factory gives each new
parameter all of it in one call, before the wraps run the former ``__init__`` bodies.

* ``register_param_kind`` orders a kind's bases as Python ordered the former classes (C3),
  so each method name gets the function the MRO chose; parameters of one kind share one
  feature set.
* ``init_param_kind`` builds one method object per method of the kind (not one per
  method of every class in the MRO) and one copy hook; copies, pickles and the freeing
  of a dropped parameter answer as before.
* While the former ``__init__`` bodies run, the parameter already is of its final kind,
  as an instance had its class before ``__init__`` ran: ``isinstance(self, Sub)`` inside
  a base's ``__init__`` answers as before.
"""

from __future__ import annotations

import copy
import gc
import os
import pickle
import subprocess
import sys
import textwrap
import weakref
from pathlib import Path

import torch

from codemod.cli import main
from codemod.runtime import param_runtime as rt


def _named(tag: str):
    def method(param):
        return tag
    method.__name__ = method.__qualname__ = f"method_{tag}"
    return method


def _diamond() -> dict[str, type]:
    """Classes ``Root <- Left, Right <- Both`` (and ``Tail(Right)``) and their kinds."""

    class Root:
        def which(self):
            return "root"

        def row(self):
            return "root"

        def left(self):
            return "root"

    class Left(Root):
        def which(self):
            return "left"

    class Right(Root):
        def which(self):
            return "right"

        def row(self):
            return "right"

    class Both(Left, Right):
        pass

    class Tail(Right):
        def left(self):
            return "tail"

    classes = {c.__name__: c for c in (Root, Left, Right, Both, Tail)}
    for name, cls in classes.items():
        own = {m: _named(getattr(cls, m)(None)) for m in ("which", "row", "left") if m in vars(cls)}
        bases = [f"kinds.{b.__name__}" for b in cls.__bases__ if b is not object]
        rt.register_param_kind(f"kinds.{name}", bases=bases, methods=own)
    return classes


def _param() -> torch.nn.Parameter:
    return torch.nn.Parameter(torch.zeros(2), requires_grad=False)


def test_a_kind_takes_each_method_from_its_former_mro():
    for name, cls in _diamond().items():
        kind = rt.PARAM_KINDS[f"kinds.{name}"]
        assert kind.mro == tuple(f"kinds.{c.__name__}" for c in cls.__mro__[:-1])
        param = _param()
        rt.init_param_kind(param, f"kinds.{name}")
        instance = cls()
        for method in ("which", "row", "left"):
            assert getattr(param, method)() == getattr(instance, method)(), (name, method)
        assert rt.param_kind_is(param, f"kinds.{name}")
        assert param._param_features == frozenset(kind.mro)


def test_one_method_object_per_method_of_the_kind_and_a_shared_feature_set():
    _diamond()
    first, second = _param(), _param()
    built: list[object] = []
    original_init = rt.BoundParamMethod.__init__

    def counting(self, func, param):
        built.append(func)
        original_init(self, func, param)

    rt.BoundParamMethod.__init__ = counting  # type: ignore[method-assign]
    try:
        rt.init_param_kind(first, "kinds.Both")
    finally:
        rt.BoundParamMethod.__init__ = original_init  # type: ignore[method-assign]
    rt.init_param_kind(second, "kinds.Both")
    assert len(built) == 4  # which, row, left and one hook for deepcopy and pickle
    assert first._param_features is second._param_features
    assert first.__dict__["__deepcopy__"] is first.__dict__["__reduce_ex__"]


def _load(param, w):
    param.data.copy_(w)
    return "load"


def _row(param):
    return "row"


def test_copies_pickles_and_freeing_answer_as_before():
    rt.register_param_kind("kinds.Weight", methods={"load": _load, "row": _row})
    rt.register_param_kind("kinds.Packed", bases=["kinds.Weight"], methods={"row": _row})
    param = _param()
    rt.init_param_kind(param, "kinds.Packed")
    param.extra = 5
    clone = copy.deepcopy(param)
    assert clone.load(torch.ones(2)) == "load" and clone.__dict__["load"].__self__ is clone
    assert clone.tolist() == [1.0, 1.0] and param.tolist() == [0.0, 0.0]
    assert clone.extra == 5 and rt.param_kind_is(clone, "kinds.Packed")
    again = pickle.loads(pickle.dumps(param))
    assert again.row() == "row" and again.__dict__["row"].__self__ is again
    assert rt.has_param_feature(again, "kinds.Weight") and again.extra == 5
    gc.disable()
    try:
        alive = weakref.ref(param)
        del param
        assert alive() is None
    finally:
        gc.enable()


FAMILY = '''
    from torch.nn import Parameter


    class Base(Parameter):
        def __new__(cls, data, **kwargs):
            return super().__new__(cls, data=data, requires_grad=False)

        def __init__(self, data, seen=None):
            self.sub_while_init = isinstance(self, Sub)

        def load(self, w):
            return "base"

        def row(self):
            return "base"


    class Mid(Base):
        def load(self, w):
            return "mid"


    class Sub(Mid):
        def row(self):
            return "sub"
'''

SCRIPT = '''
import torch
from pkg import params
built = []
try:
    from pkg.params_features import BoundParamMethod
except ImportError:  # the original tree
    pass
else:
    original = BoundParamMethod.__init__
    def counting(self, func, param):
        built.append(func)
        original(self, func, param)
    BoundParamMethod.__init__ = counting
p = params.Sub(data=torch.zeros(2))
print(p.sub_while_init, p.load(None), p.row(), len(built))
'''


def test_a_base_init_sees_the_final_kind_and_methods_are_built_once(tmp_path, capsys):
    """Before conversion ``isinstance(self, Sub)`` was true in ``Base.__init__``; the
    converted wraps run after ``init_param_kind``, so it still is. The factory builds one
    method object per method of the kind and one copy hook (3, not one per class)."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "params.py").write_text(textwrap.dedent(FAMILY).lstrip())
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    before = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                            env=env, timeout=300)
    assert before.returncode == 0, before.stderr
    main(["apply", str(pkg)])
    capsys.readouterr()
    after = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                           env=env, timeout=300)
    assert after.returncode == 0, after.stderr
    assert before.stdout.split()[:3] == ["True", "mid", "sub"]
    assert after.stdout.split() == [*before.stdout.split()[:3], "3"]
    assert "init_param_kind(param, Features.Sub)" in (pkg / "params.py").read_text()


ORDERS = '''
import sys, torch
from minivllm.model_executor import parameter
try:
    from minivllm.model_executor.parameter_features import PARAM_KINDS as kinds
except ImportError:  # the original tree
    kinds = {}
for name, value in sorted(vars(parameter).items()):
    if isinstance(value, type) and issubclass(value, torch.nn.Parameter) \
            and value is not torch.nn.Parameter:
        print(name, [c.__name__ for c in value.__mro__ if issubclass(c, torch.nn.Parameter)
                     and c.__module__ == parameter.__name__])
    elif callable(value) and f"{parameter.__name__}.{name}" in kinds:
        print(name, [q.rpartition(".")[2] for q in kinds[f"{parameter.__name__}.{name}"].mro])
'''


def test_the_fixture_engine_kinds_keep_the_former_mro(tmp_path, capsys):
    """Each kind of the converted fixture engine orders its classes as the original
    class's ``__mro__`` did (the runtime's C3 over the ``bases`` the module names)."""
    import shutil

    root = Path(__file__).resolve().parents[2] / "fixtures" / "engine"
    before, after = tmp_path / "before", tmp_path / "after"
    shutil.copytree(root, before)
    shutil.copytree(root, after)
    main(["apply", str(after)])
    capsys.readouterr()
    outputs = []
    for tree in (before, after):
        done = subprocess.run([sys.executable, "-c", ORDERS], capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(tree)}, timeout=300)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout.splitlines())
    assert len(outputs[0]) >= 9
    assert outputs[0] == outputs[1]
