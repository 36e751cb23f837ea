"""``rebind_param_methods``: after an attribute-dict copy, methods act on the copy."""

from __future__ import annotations

import gc
import types

import torch

from codemod.runtime import param_runtime as rt


def _load(param, value):
    param.data.fill_(value)


def _param() -> torch.nn.Parameter:
    p = torch.nn.Parameter(torch.zeros(3), requires_grad=False)
    rt.bind_param_methods(p, load=_load)
    rt.add_param_feature(p, "Weight")
    p.output_dim = 0
    return p


def test_copied_methods_act_on_the_copy():
    p = _param()
    t = torch.nn.Parameter(torch.zeros(3), requires_grad=False)
    t.__dict__.update(p.__dict__)
    rt.rebind_param_methods(t)
    t.load(5.0)
    assert t.tolist() == [5.0] * 3 and p.tolist() == [0.0] * 3
    assert t.output_dim == 0 and rt.has_param_feature(t, "Weight")
    # The copy hooks follow too: a deep copy of the copy copies the copy.
    assert torch.equal(__import__("copy").deepcopy(t).data, t.data)
    # The source's own methods are untouched.
    p.load(2.0)
    assert p.tolist() == [2.0] * 3 and t.tolist() == [5.0] * 3


def test_source_freed_first():
    p = _param()
    t = torch.nn.Parameter(torch.zeros(3), requires_grad=False)
    t.__dict__ = p.__dict__.copy()
    del p
    gc.collect()
    rt.rebind_param_methods(t)
    t.load(1.0)
    assert t.tolist() == [1.0] * 3


def test_other_objects_and_values_untouched():
    bound = types.MethodType(_load, object())
    holder = types.SimpleNamespace(a=1, f=_load, m=bound)
    before = dict(holder.__dict__)
    rt.rebind_param_methods(holder)
    assert holder.__dict__ == before and holder.m is bound
    rt.rebind_param_methods(3)  # no __dict__: nothing to do


def test_methods_of_another_converted_module():
    """Each defining module carries its own copy of the runtime (its own class)."""
    namespace: dict = {}
    source = rt.__loader__.get_source(rt.__name__)  # type: ignore[union-attr]
    exec(compile(source, "other_runtime", "exec"), namespace)
    p = torch.nn.Parameter(torch.zeros(2), requires_grad=False)
    namespace["bind_param_methods"](p, load=_load)
    t = torch.nn.Parameter(torch.zeros(2), requires_grad=False)
    t.__dict__.update(p.__dict__)
    rt.rebind_param_methods(t)
    t.load(3.0)
    assert t.tolist() == [3.0, 3.0] and p.tolist() == [0.0, 0.0]
    assert type(t.__dict__["load"]) is namespace["BoundParamMethod"]
