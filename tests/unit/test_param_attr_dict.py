"""``param_attr_dict``: the attribute dict a converted parameter's old instance had."""

from __future__ import annotations

import torch

from codemod.runtime import param_runtime as rt


def _load(param, value):
    param.data.fill_(value)


def _converted(output_dim: int = 0) -> torch.nn.Parameter:
    """What a wrap leaves: feature tags, copy hooks, a method, a property and its field."""
    p = torch.nn.Parameter(torch.zeros(3), requires_grad=False)
    rt.add_param_feature(p, "Weight")
    rt.bind_param_methods(p, load=_load)
    p._output_dim = p.output_dim = output_dim
    p._weight_loader = p.weight_loader = _load
    p.tag = "kept"
    return p


def test_view_holds_only_what_the_old_instance_held():
    assert rt.param_attr_dict(_converted(1)) == {"_output_dim": 1, "_weight_loader": _load, "tag": "kept"}


def test_two_parameters_of_one_kind_compare_equal_again():
    a, b, c = _converted(1), _converted(1), _converted(0)
    assert a.__dict__ != b.__dict__  # each holds its own methods and hooks
    assert rt.param_attr_dict(a) == rt.param_attr_dict(b)
    assert rt.param_attr_dict(a) != rt.param_attr_dict(c)


def test_deleted_nullable_property_reads_as_the_none_field():
    p = _converted()
    del p.weight_loader
    p._weight_loader = None
    assert "weight_loader" not in rt.param_attr_dict(p)
    assert rt.param_attr_dict(p)["_weight_loader"] is None


def test_other_objects_get_their_own_dict_itself():
    plain = torch.nn.Parameter(torch.zeros(1))
    plain.weight_loader = _load
    assert rt.param_attr_dict(plain) is plain.__dict__

    class Holder:
        pass

    h = Holder()
    h.x = 1
    assert rt.param_attr_dict(h) is h.__dict__


def test_a_copy_bound_to_another_parameter_keeps_its_methods_visible():
    """Methods copied from another parameter (no rebind) were no method of this one."""
    p, t = _converted(), torch.nn.Parameter(torch.zeros(3))
    t.__dict__.update(p.__dict__)
    assert "load" in rt.param_attr_dict(t)
    rt.rebind_param_methods(t)
    assert "load" not in rt.param_attr_dict(t)
