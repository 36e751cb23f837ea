"""What the runtime shares between parameters instead of building per parameter.

A kind's feature set is made once and shared by its parameters, and one hook object
serves as both ``__deepcopy__`` and ``__reduce_ex__``; the answers (features, kinds,
copies, pickles, no reference cycle) stay as they were.
"""

from __future__ import annotations

import copy
import gc
import io
import pickle
import weakref

import torch

from codemod.runtime import param_runtime as rt


def _fill(param, value):
    param.data.fill_(value)


def _build(*features: str) -> torch.nn.Parameter:
    """A parameter tagged with ``features`` in order, as the wraps of a factory tag it."""
    param = torch.nn.Parameter(torch.zeros(2), requires_grad=False)
    for feature in features:
        rt.add_param_feature(param, feature)
        rt.bind_param_methods(param, fill=_fill)
    return param


def test_parameters_of_one_kind_share_one_feature_set():
    first, second = _build("Base", "Column", "Weight"), _build("Base", "Column", "Weight")
    assert first._param_features is second._param_features
    assert first._param_features == frozenset({"Base", "Column", "Weight"})
    other = _build("Base", "Row")
    assert other._param_features == frozenset({"Base", "Row"})
    assert rt.has_param_feature(first, "Column") and not rt.has_param_feature(other, "Column")
    assert rt.param_kind_is(first, "Weight") and rt.param_kind_is(other, "Row")


def test_a_copied_feature_set_still_grows_by_value():
    param = copy.deepcopy(_build("Base"))
    assert rt.param_kind_is(param, "Base")
    rt.add_param_feature(param, "Weight")
    assert param._param_features == frozenset({"Base", "Weight"})
    assert param._param_features is _build("Base", "Weight")._param_features


def test_one_hook_object_serves_deepcopy_and_pickle():
    param = _build("Base", "Weight")
    attrs = param.__dict__
    assert attrs["__deepcopy__"] is attrs["__reduce_ex__"]
    clone = copy.deepcopy(param)
    clone.fill(3.0)
    assert clone.tolist() == [3.0, 3.0] and param.tolist() == [0.0, 0.0]
    assert clone.__dict__["__deepcopy__"] is clone.__dict__["__reduce_ex__"]
    assert clone.__dict__["__deepcopy__"].__self__ is clone
    again = copy.deepcopy(clone)  # the copy's own hooks copy the copy
    again.fill(4.0)
    assert again.tolist() == [4.0, 4.0] and clone.tolist() == [3.0, 3.0]
    buffer = io.BytesIO()
    torch.save(torch.nn.ParameterList([clone]), buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=False)[0]
    assert rt.param_kind_is(loaded, "Weight") and loaded.tolist() == [3.0, 3.0]
    loaded.fill(5.0)
    assert loaded.tolist() == [5.0, 5.0]
    unpickled = pickle.loads(pickle.dumps(param))
    assert unpickled.__dict__["__deepcopy__"].__self__ is unpickled
    assert copy.copy(param).__dict__["fill"].__self__ is not param


def test_shared_parts_make_no_reference_cycle():
    gc.disable()
    try:
        param = _build("Base", "Weight")
        alive = weakref.ref(param)
        del param
        assert alive() is None
    finally:
        gc.enable()


def test_param_type_is_one_object_per_kind_also_after_a_copy_or_pickling():
    """``type(a) is type(b)`` becomes ``param_type(a) is param_type(b)``: a deep copy and
    an unpickled parameter are of the same former class as the original."""
    weight = _build("Base", "Weight")
    kind = "".join(["Wei", "ght"])  # an equal string that is not the tag object itself
    copied = copy.deepcopy(weight)
    unpickled = pickle.loads(pickle.dumps(weight))
    assert unpickled._param_kind == "Weight"
    assert rt.param_type(weight) is rt.param_type(copied) is rt.param_type(unpickled)
    assert rt.param_type(weight) == kind
    assert rt.param_type(weight) is not rt.param_type(_build("Base", "Scale"))
    plain = torch.nn.Parameter(torch.zeros(2), requires_grad=False)
    assert rt.param_type(plain) is torch.nn.Parameter is not rt.param_type(weight)
    assert rt.param_type(torch.zeros(1)) is torch.Tensor
    assert rt.param_type(3) is int and rt.param_type(None) is type(None)
