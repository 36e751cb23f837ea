"""The tensor's member names ``codemod`` keeps (it never imports torch while converting)
are those of the installed torch's ``Parameter``."""

from __future__ import annotations

import pytest

from codemod.analysis.tensor_members import TENSOR_MEMBERS
from codemod.types import TENSOR_DATA_DESCRIPTORS


def test_every_member_of_torchs_parameter_is_listed():
    torch = pytest.importorskip("torch")
    missing = sorted(set(dir(torch.nn.Parameter)) - TENSOR_MEMBERS)
    assert not missing, f"regenerate codemod/analysis/tensor_members.py: {missing[:10]}"


def test_the_data_descriptors_are_members():
    assert TENSOR_DATA_DESCRIPTORS <= TENSOR_MEMBERS
