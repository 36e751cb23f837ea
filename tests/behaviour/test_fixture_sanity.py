"""The fixture engine on its own: hand-computed loader results, and the scenario tables.

These run without the converter. They pin down that ``fixtures/engine/minivllm`` behaves
like vLLM 0.6.4's ``parameter.py`` in the cases the equivalence suite relies on, and that
each scenario's ``expect`` is what the original really does.
"""

from __future__ import annotations

import copy
from fractions import Fraction

import pytest

torch = pytest.importorskip("torch")

from .scenarios import (  # noqa: E402
    BUILDS,
    CLASS_NAMES,
    LOAD_CASES,
    OK,
    PERMUTE_CASES,
    LoadCase,
    PermuteCase,
    outcome,
)
from .twin import each_tp_rank, open_copy, stub_weight_loader  # noqa: E402


@pytest.fixture(scope="module")
def engine(engine_dir):
    with open_copy(engine_dir) as copy:
        yield copy


@pytest.fixture(autouse=True)
def _tp_back_to_single_rank(engine):
    engine.set_tp(0, 1)
    yield
    engine.set_tp(0, 1)


@pytest.fixture(scope="module")
def P(engine):
    """The original ``parameter`` module."""
    return engine.parameter


def _arange(*shape, dtype=torch.float32):
    n = 1
    for d in shape:
        n *= d
    return torch.arange(n, dtype=torch.float32).reshape(shape).to(dtype)


def test_hierarchy_matches_vllm(P):
    mro = {name: [c.__name__ for c in getattr(P, name).__mro__[:-4]] for name in CLASS_NAMES}
    assert getattr(P, "BasevLLMParameter").__mro__[1] is torch.nn.Parameter
    assert mro["ModelWeightParameter"] == [
        "ModelWeightParameter", "_ColumnvLLMParameter", "RowvLLMParameter", "BasevLLMParameter",
    ]
    assert mro["PackedvLLMParameter"][:2] == ["PackedvLLMParameter", "ModelWeightParameter"]
    assert mro["PackedColumnParameter"][:2] == ["PackedColumnParameter", "_ColumnvLLMParameter"]
    assert mro["PerTensorScaleParameter"] == ["PerTensorScaleParameter", "BasevLLMParameter"]
    assert set(P.__all__) == set(CLASS_NAMES) - {"_ColumnvLLMParameter"}


def test_construction(P):
    data = _arange(4, 6)
    p = P.ModelWeightParameter(
        data=data, output_dim=0, input_dim=1, weight_loader=stub_weight_loader
    )
    assert type(p) is P.ModelWeightParameter
    assert p.requires_grad is False
    assert p.data_ptr() == data.data_ptr()  # shares storage with the given tensor
    assert (p.output_dim, p.input_dim, p.weight_loader) == (0, 1, stub_weight_loader)
    assert p._output_dim == 0 and p._input_dim == 1
    with pytest.raises(AttributeError):
        p.output_dim = 1  # read-only property
    s = P.PerTensorScaleParameter(data=torch.zeros(3), weight_loader=stub_weight_loader)
    assert s.qkv_idxs == {"q": 0, "k": 1, "v": 2}
    q = P.PackedvLLMParameter(
        data=torch.zeros(2, 4, dtype=torch.int32), packed_factor=8, packed_dim=1,
        output_dim=1, input_dim=0, weight_loader=stub_weight_loader,
    )
    assert (q.packed_factor, q.packed_dim, q.marlin_tile_size) == (8, 1, None)


@pytest.mark.parametrize("build", BUILDS, ids=str)
def test_every_build_is_valid(P, build):
    p = build.make(P)
    assert type(p).__name__ == build.cls
    assert p.requires_grad is False


def test_column_parallel_takes_this_ranks_band(engine, P):
    full = _arange(8, 3)
    p = P.ModelWeightParameter(data=torch.zeros(4, 3), output_dim=0, input_dim=1,
                               weight_loader=stub_weight_loader)
    engine.set_tp(1, 2)
    try:
        p.load_column_parallel_weight(full)
    finally:
        engine.set_tp(0, 1)
    assert torch.equal(p.data, full[4:8])


def test_row_parallel_takes_this_ranks_columns(engine, P):
    full = _arange(2, 8)
    p = P.RowvLLMParameter(data=torch.zeros(2, 2), input_dim=1, weight_loader=stub_weight_loader)
    engine.set_tp(2, 4)
    try:
        p.load_row_parallel_weight(loaded_weight=full)
    finally:
        engine.set_tp(0, 1)
    assert torch.equal(p.data, full[:, 4:6])


def test_merged_packed_marlin(engine, P):
    # shard_size 16 / packed_factor 8 = 2, times tile 16 = 32 packed columns; offset likewise.
    p = P.PackedvLLMParameter(
        data=torch.zeros(1, 64, dtype=torch.int32), packed_factor=8, packed_dim=1,
        marlin_tile_size=16, output_dim=1, input_dim=0, weight_loader=stub_weight_loader,
    )
    full = _arange(1, 64, dtype=torch.int32)
    engine.set_tp(1, 2)
    try:
        p.load_merged_column_weight(full, shard_id=1, shard_offset=16, shard_size=16)
    finally:
        engine.set_tp(0, 1)
    assert torch.equal(p.data[:, 32:], full[:, 32:64])
    assert not p.data[:, :32].any()


def test_adjust_shard_indexes(P):
    def packed(factor, tile):
        return P.PackedColumnParameter(
            data=torch.zeros(1, dtype=torch.int32), packed_factor=factor, packed_dim=0,
            marlin_tile_size=tile, output_dim=0, weight_loader=stub_weight_loader,
        )

    plain, tiled = packed(8, None), packed(8, 16)
    assert plain.adjust_shard_indexes_for_packing(shard_size=64, shard_offset=128) == (8, 16)
    assert tiled.adjust_shard_indexes_for_packing(shard_size=64, shard_offset=128) == (128, 256)
    size, offset = packed(Fraction(32, 3), None).adjust_shard_indexes_for_packing(
        shard_size=32, shard_offset=64
    )
    assert (size, offset) == (3, 6) and type(size) is int


def test_qkv_kv_heads_shared_by_ranks(engine, P):
    # 4 ranks, each key head shared by 2 ranks: rank 3 loads key block 1.
    p = P.ModelWeightParameter(data=torch.zeros(6, 2), output_dim=0, input_dim=1,
                               weight_loader=stub_weight_loader)
    full_k = _arange(4, 2)
    engine.set_tp(3, 4)
    try:
        p.load_qkv_weight(full_k, shard_id="k", shard_offset=4, shard_size=2, num_heads=2)
    finally:
        engine.set_tp(0, 1)
    assert torch.equal(p.data[4:6], full_k[2:4])
    assert not p.data[:4].any()


def test_per_tensor_scale_slots(P):
    s = P.PerTensorScaleParameter(data=torch.zeros(3), weight_loader=stub_weight_loader)
    s.load_qkv_weight(torch.tensor(5.0), shard_id="v")
    s.load_merged_column_weight(torch.tensor([7.0]), shard_id=0)
    assert s.data.tolist() == [7.0, 0.0, 5.0]
    s.load_column_parallel_weight(torch.tensor([1.0, 2.0, 3.0]))
    assert s.data.tolist() == [1.0, 2.0, 3.0]


def test_permute_updates_backing_fields(P):
    p = P.PackedvLLMParameter(
        data=_arange(3, 4, dtype=torch.int32), packed_factor=8, packed_dim=1,
        output_dim=1, input_dim=0, weight_loader=stub_weight_loader,
    )
    before = p.data.clone()
    assert P.permute_param_layout_(p, input_dim=1, output_dim=0, packed_dim=0) is p
    assert (p.input_dim, p.output_dim, p.packed_dim) == (1, 0, 0)
    assert torch.equal(p.data, before.t())


def test_deepcopy_of_original_raises(P):
    # docs/ARCHITECTURE.md, "The contract": Parameter.__deepcopy__ calls type(self)(data, requires_grad),
    # which the subclasses' __new__/__init__ cannot take.
    p = BUILDS[0].make(P)
    with pytest.raises(TypeError):
        copy.deepcopy(p)


def _check_expect(case_expect, got, where):
    if case_expect is None:
        return
    if case_expect == OK:
        assert got.error is None, f"{where}: expected success, got {got.message}"
    else:
        assert got.error is case_expect, (
            f"{where}: expected {case_expect.__name__}, got {got.message or 'success'}"
        )


@pytest.mark.parametrize("case", LOAD_CASES, ids=lambda c: c.id)
def test_load_case_expectation(engine, case: LoadCase):
    for rank, size in each_tp_rank(engine):
        p = case.build.make(engine.parameter)
        before = p.data.clone()
        full = case.full(size)
        got = outcome(lambda: case.call(p, full))
        _check_expect(case.expect, got, f"rank {rank} of {size}")
        if got.error is None:
            assert got.value is None
            assert not torch.equal(p.data, before), f"rank {rank} of {size}: nothing was loaded"


@pytest.mark.parametrize("case", PERMUTE_CASES, ids=lambda c: c.id)
def test_permute_case_expectation(engine, case: PermuteCase):
    P = engine.parameter
    p = case.build.make(P)
    got = outcome(lambda: P.permute_param_layout_(p, **case.kwargs))
    _check_expect(case.expect, got, "permute")
    for then in case.then:
        for rank, size in each_tp_rank(engine):
            q = case.build.make(P)
            P.permute_param_layout_(q, **case.kwargs)
            before = q.data.clone()
            res = outcome(lambda: then.call(q, then.full(size)))
            assert res.error is None, f"{then.loader} at rank {rank} of {size}: {res.message}"
            assert not torch.equal(q.data, before)
