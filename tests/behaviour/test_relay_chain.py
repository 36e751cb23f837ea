"""Relays: ``super().__init__`` passed something other than the class's own arguments.

``fixtures/golden/relay_init_args`` is converted here with ``codemod apply`` and imported
side by side with its original (``twin.py``). Its relays pass positional arguments and a
literal (``NibbleWeight``), and expressions of their own arguments and a read of
``self.data`` (``TransposedWeight``), into a chain through the cooperative
multiple-inheritance class ``ModelWeight(_ColumnWeight, RowWeight)``; ``GroupedNibbleWeight``
forwards to a relay. At every simulated tensor-parallel rank of sizes 1, 2 and 4 the
loaders must leave bit-identical data, and construction must give the same attributes,
kinds and ``TypeError``s.
"""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from .twin import copy_tree, each_tp_rank, load_twin  # noqa: E402

CASE = Path(__file__).resolve().parents[2] / "fixtures" / "golden" / "relay_init_args" / "input"
PACKAGE = "relaypkg"
SUBMODULES = ("relaypkg.distributed", "relaypkg.model_executor.parameter",
              "relaypkg.model_executor.quant")
ATTRIBUTES = ("output_dim", "input_dim", "packed_factor", "packed_dim", "tile_size", "bits",
              "in_features", "out_features", "group_size", "history")


def shard_loader(param, loaded):
    """A model's weight loader (module level: one object for both copies)."""
    param.data.copy_(loaded)


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    from codemod.cli import main

    base = tmp_path_factory.mktemp("relay")
    before = copy_tree(CASE, base / "before")
    after = copy_tree(CASE, base / "after")
    assert main(["apply", str(after)]) == 1
    quant = (after / "relaypkg" / "model_executor" / "quant.py").read_text()
    assert "class NibbleWeight" not in quant and "class TransposedWeight" not in quant
    with load_twin(before, after, SUBMODULES, PACKAGE) as loaded:
        yield loaded


def _quant(copy):
    return copy.module("relaypkg.model_executor.quant")


def _checkpoint(shape, dim, size, start, dtype):
    """A checkpoint tensor: ``shape`` with dimension ``dim`` ``size`` times as long."""
    shape = list(shape)
    shape[dim] *= size
    count = 1
    for n in shape:
        count *= n
    return ((torch.arange(count) * 7 + start) % 256).reshape(shape).to(dtype)


def _same(old, new):
    """Same data bit for bit, same attributes and kinds; ``new`` is a plain Parameter."""
    assert type(new) is torch.nn.Parameter
    assert old.dtype == new.dtype and old.shape == new.shape
    assert torch.equal(old.data.view(torch.uint8), new.data.view(torch.uint8))
    assert old.requires_grad == new.requires_grad
    for name in ATTRIBUTES:
        assert getattr(old, name, None) == getattr(new, name, None), name
    assert old.loader is new.loader is shard_loader


def _nibbles(quant, kind, **extra):
    return getattr(quant, kind)(
        data=torch.zeros(4, 6, dtype=torch.uint8), packed_factor=2, packed_dim=0, bits=4,
        output_dim=0, input_dim=1, loader=shard_loader, **extra)


@pytest.mark.parametrize("kind, extra", [("NibbleWeight", {}),
                                         ("GroupedNibbleWeight", {"group_size": 64})])
def test_packed_relay_loads_the_same_at_every_rank(twin, kind, extra):
    old_q, new_q = _quant(twin.before), _quant(twin.after)
    seen = 0
    for rank, size in each_tp_rank(twin):
        old, new = _nibbles(old_q, kind, **extra), _nibbles(new_q, kind, **extra)
        _same(old, new)
        assert old_q.kinds_of(old) == new_q.kinds_of(new)
        for shard_offset in (0, 2):
            packed = _checkpoint((2, 6), 0, size, rank, torch.uint8)
            old.load_merged(packed, shard_offset, 2)
            new.load_merged(packed, shard_offset, 2)
            _same(old, new)
        rows = _checkpoint((2, 6), 1, size, 3 * rank, torch.uint8)
        old.load_row(rows)
        new.load_row(rows)
        _same(old, new)
        cols = _checkpoint((4, 6), 0, size, 5, torch.uint8)
        old.load_column(cols)
        new.load_column(cols)
        _same(old, new)
        seen += 1
    assert seen == 1 + 2 + 4


@pytest.mark.parametrize("transposed", [False, True])
def test_relay_with_expressions_and_self_data_loads_the_same(twin, transposed):
    old_q, new_q = _quant(twin.before), _quant(twin.after)
    for rank, size in each_tp_rank(twin):
        data = torch.randn(2, 3, generator=torch.Generator().manual_seed(rank + 10 * size))
        old = old_q.TransposedWeight(data.clone(), loader=shard_loader, transposed=transposed)
        new = new_q.TransposedWeight(data.clone(), loader=shard_loader, transposed=transposed)
        _same(old, new)
        assert old_q.kinds_of(old) == new_q.kinds_of(new)
        column = _checkpoint(old.shape, old.output_dim, size, rank, torch.float32) / 3
        old.load_column(column)
        new.load_column(column)
        _same(old, new)
        row = _checkpoint(old.shape, old.input_dim, size, 11, torch.float32) / 7
        old.load_row(row)
        new.load_row(row)
        _same(old, new)
        assert new.history == ["created", f"dims {int(transposed)},{1 - int(transposed)}", "column"]


@pytest.mark.parametrize("kind, kwargs", [
    ("NibbleWeight", {"packed_factor": 2, "packed_dim": 0, "bits": 4, "output_dim": 0,
                      "input_dim": 1, "loader": shard_loader, "tile_size": 16}),
    ("NibbleWeight", {"packed_factor": 2, "packed_dim": 0, "bits": 4, "output_dim": 0,
                      "input_dim": 1, "loader": shard_loader, "group_size": 1}),
    ("NibbleWeight", {"packed_dim": 0, "bits": 4, "output_dim": 0, "input_dim": 1,
                      "loader": shard_loader}),
    ("GroupedNibbleWeight", {"group_size": 1, "packed_factor": 2, "packed_dim": 0, "bits": 4,
                             "output_dim": 0, "input_dim": 1, "loader": shard_loader,
                             "tile_size": None}),
    ("TransposedWeight", {"loader": shard_loader, "output_dim": 1}),
    ("TransposedWeight", {"loader": shard_loader, "data": None}),
])
def test_rejected_keywords_raise_typeerror_on_both_sides(twin, kind, kwargs):
    """``tile_size`` is passed by the relay itself (as ``None``): a second one was a
    ``TypeError`` in the old chain, and must still be, before any wrap runs."""
    for copy in (twin.before, twin.after):
        with pytest.raises(TypeError):
            getattr(_quant(copy), kind)(torch.zeros(2, 2, dtype=torch.uint8), **kwargs)
