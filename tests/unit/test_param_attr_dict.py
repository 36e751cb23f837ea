"""``param_attr_dict``: the attribute dict a converted parameter's old instance had."""

from __future__ import annotations

import torch

from codemod.runtime import param_runtime as rt


def _load(param, value):
    param.data.fill_(value)


rt.register_param_fields("Weight", {"_output_dim": "output_dim", "_weight_loader": "weight_loader"},
                         none_deletes=("weight_loader",))


def _converted(output_dim: int = 0) -> torch.nn.Parameter:
    """What a wrap leaves: feature tags, copy hooks, a method, former properties as attributes."""
    p = torch.nn.Parameter(torch.zeros(3), requires_grad=False)
    rt.add_param_feature(p, "Weight")
    rt.bind_param_methods(p, load=_load)
    p.output_dim = output_dim
    p.weight_loader = _load
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
    assert "weight_loader" not in rt.param_attr_dict(p)
    assert rt.param_attr_dict(p)["_weight_loader"] is None


def test_the_view_follows_writes_of_the_attribute():
    """The old setter wrote the field: the view's ``_f`` is the attribute's current value."""
    p, other = _converted(), lambda param, weight: None
    p.weight_loader = other
    p.output_dim = 1
    assert rt.param_attr_dict(p) == {"_output_dim": 1, "_weight_loader": other, "tag": "kept"}


def test_field_reads_and_writes_answer_as_the_field_did():
    p = _converted(1)
    assert rt.param_field(p, "_output_dim") == 1 and rt.has_param_field(p, "_output_dim")
    rt.set_param_field(p, "_output_dim", "output_dim", 0)
    assert p.output_dim == 0 and "_output_dim" not in p.__dict__
    rt.set_param_field(p, "_weight_loader", "weight_loader", None, none_deletes=True)
    assert not hasattr(p, "weight_loader") and rt.param_field(p, "_weight_loader") is None
    assert rt.has_param_field(p, "_weight_loader")  # the field stayed, holding None
    del p.output_dim  # a deleter that removed the field
    assert not rt.has_param_field(p, "_output_dim")
    assert rt.param_field(p, "_output_dim", "gone") == "gone"


def test_other_objects_keep_their_own_fields():
    """A kind without the property, and any other object, get and read the field itself."""
    plain = torch.nn.Parameter(torch.zeros(1))
    rt.set_param_field(plain, "_output_dim", "output_dim", 2)
    assert plain._output_dim == 2 and not hasattr(plain, "output_dim")
    assert rt.param_field(plain, "_output_dim") == 2
    other_kind = torch.nn.Parameter(torch.zeros(1))
    rt.add_param_feature(other_kind, "NoProperties")
    rt.set_param_field(other_kind, "_output_dim", "output_dim", 3)
    assert other_kind._output_dim == 3 and not hasattr(other_kind, "output_dim")
    assert not rt.has_param_field(torch.nn.Parameter(torch.zeros(1)), "_output_dim")


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
