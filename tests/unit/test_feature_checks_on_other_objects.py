"""``has_param_feature`` and ``param_kind_is`` on objects that are no tensor answer what
``isinstance(x, X)`` and ``type(x) is X`` answered for a former Parameter class: False,
without asking the object for attributes. A mock, an object whose ``__getattr__``
answers every name, and a wrapper forwarding attribute reads to a converted parameter
(found by the fourth adversarial review: a ``TypeError``, or True through the wrapper)."""

from __future__ import annotations

from unittest import mock

import pytest
import torch

from codemod.runtime import param_runtime as rt

FEATURE = "pkg.params.ScaleP"


def _converted() -> torch.nn.Parameter:
    rt.register_param_kind(FEATURE)
    param = torch.nn.Parameter(torch.zeros(2), requires_grad=False)
    rt.init_param_kind(param, FEATURE)
    return param


class AnswersNone:
    def __getattr__(self, name):
        return None


class Forwards:
    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)


class ScaleP(torch.nn.Parameter):
    """The former class, for the answers it gave."""


@pytest.mark.parametrize("make", [mock.Mock, mock.MagicMock, AnswersNone,
                                  lambda: Forwards(_converted()),
                                  lambda: Forwards(ScaleP(torch.zeros(2)))],
                         ids=["Mock", "MagicMock", "getattr-None", "forwards-converted",
                              "forwards-original"])
def test_no_feature_and_no_kind(make):
    obj = make()
    assert isinstance(obj, ScaleP) is False and (type(obj) is ScaleP) is False
    assert rt.has_param_feature(obj, FEATURE) is False
    assert rt.param_kind_is(obj, FEATURE) is False
    assert rt.isinstance_or_param_feature(obj, (int,), FEATURE) is False


def test_a_converted_parameter_still_answers():
    param = _converted()
    assert rt.has_param_feature(param, FEATURE) and rt.param_kind_is(param, FEATURE)
    assert not rt.has_param_feature(torch.zeros(2), FEATURE)


def test_mixed_check_asks_the_features_first():
    """``isinstance(p, (X, K))`` with ``K`` not a class (``None`` where an optional
    import failed) answered True for an ``X`` without looking at ``K``; so does the
    helper the rewrite calls (the ``or`` form the rewrite writes otherwise does too),
    and for any other object it raises as ``isinstance`` did."""
    assert rt.isinstance_or_param_feature(_converted(), None, FEATURE) is True
    with pytest.raises(TypeError):
        rt.isinstance_or_param_feature(torch.zeros(2), None, FEATURE)
