"""Shared tables of valid constructions and loader calls for the ``minivllm`` parameters.

Every ``Build`` is a valid construction of one fixture class; every ``LoadCase`` is a loader
call with the full (unsharded) checkpoint tensor that a real engine would pass, plus a few
deliberately wrong calls. ``expect`` records what the *original* fixture does, and
``test_fixture_sanity`` proves it, so an equivalence test that compares two identical
exceptions where a success was meant cannot go unnoticed.

Shapes are "per rank": the parameter is the same at every tensor-parallel size; the full
tensor grows with the size (``full_shape(size)``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from types import ModuleType
from typing import Any

import torch

from .twin import stub_weight_loader

CLASS_NAMES = (
    "BasevLLMParameter",
    "_ColumnvLLMParameter",
    "RowvLLMParameter",
    "ModelWeightParameter",
    "GroupQuantScaleParameter",
    "ChannelQuantScaleParameter",
    "PerTensorScaleParameter",
    "PackedColumnParameter",
    "PackedvLLMParameter",
)
LOADERS = (
    "load_column_parallel_weight",
    "load_row_parallel_weight",
    "load_merged_column_weight",
    "load_qkv_weight",
)
PUBLIC_METHODS = (*LOADERS, "adjust_shard_indexes_for_packing")
PUBLIC_ATTRS = (
    "output_dim",
    "input_dim",
    "packed_dim",
    "packed_factor",
    "marlin_tile_size",
    "weight_loader",
    "qkv_idxs",
)
MISSING = object()  # getattr default: "this parameter has no such attribute"
OK = "ok"  # expect: the original succeeds at every tensor-parallel position


# ---------------------------------------------------------------------------------------
# tensors


def seeded(shape: tuple[int, ...], dtype: torch.dtype, seed: int) -> torch.Tensor:
    """A deterministic tensor: full-range int32 bits, or normal floats cast to ``dtype``."""
    gen = torch.Generator().manual_seed(seed)
    if dtype == torch.int32:
        return torch.randint(-(2**31), 2**31 - 1, shape, dtype=torch.int32, generator=gen)
    return torch.randn(shape, generator=gen, dtype=torch.float32).to(dtype)


def _bits(t: torch.Tensor) -> torch.Tensor:
    # Compare floats by their bit patterns: torch.equal treats 0.0 and -0.0 as equal.
    if t.dtype.is_floating_point:
        return t.view(
            {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
        )
    return t


def assert_same_tensor(old: torch.Tensor, new: torch.Tensor, what: str = "data") -> None:
    """Same dtype, shape, strides and bit-identical values."""
    assert new.dtype == old.dtype, f"{what}: dtype {new.dtype} != {old.dtype}"
    assert new.shape == old.shape, f"{what}: shape {tuple(new.shape)} != {tuple(old.shape)}"
    assert new.stride() == old.stride(), f"{what}: strides {new.stride()} != {old.stride()}"
    assert torch.equal(_bits(old), _bits(new)), f"{what}: values differ"


def read_attr(param: Any, name: str, default: Any = MISSING) -> Any:
    """``getattr(param, name, default)`` as converted engine code reads it.

    A converted parameter holds a former property's attribute alone; code that reads the
    backing field (``p._output_dim``) is rewritten to its runtime's ``param_field``, found
    here through the parameter's copy hook. Other objects are read as they are.
    """
    hook = getattr(param, "__dict__", {}).get("__deepcopy__")
    if name.startswith("_") and hook is not None and hasattr(hook, "__func__"):
        return hook.__func__.__globals__["param_field"](param, name, default)
    return getattr(param, name, default)


def public_attrs(param: Any) -> dict[str, Any]:
    """The public attributes the fixture classes expose (``MISSING`` where absent)."""
    return {name: getattr(param, name, MISSING) for name in PUBLIC_ATTRS}


def assert_same_attrs(old: Any, new: Any) -> None:
    """Equal values *and* equal types (an ``int`` must not become a ``Fraction``)."""
    before, after = public_attrs(old), public_attrs(new)
    for name in PUBLIC_ATTRS:
        a, b = before[name], after[name]
        if a is MISSING or b is MISSING:
            assert a is b, f"{name}: present before={a is not MISSING}, after={b is not MISSING}"
            continue
        assert b == a, f"{name}: {b!r} != {a!r}"
        assert type(b) is type(a), f"{name}: type {type(b)} != {type(a)}"


def assert_same_param(old: torch.Tensor, new: torch.Tensor) -> None:
    """Same data, ``requires_grad`` and public attributes."""
    assert_same_tensor(old.data, new.data)
    assert new.requires_grad == old.requires_grad
    assert_same_attrs(old, new)


# ---------------------------------------------------------------------------------------
# outcomes


@dataclass(frozen=True)
class Outcome:
    """What a call did: returned ``value`` or raised an exception of type ``error``."""

    value: Any = None
    error: type[BaseException] | None = None
    message: str = ""


def outcome(call: Callable[[], Any]) -> Outcome:
    """Run ``call``; capture its result or the type of the exception it raised."""
    try:
        return Outcome(value=call())
    except Exception as exc:  # noqa: BLE001 - the exception type *is* the observation
        return Outcome(error=type(exc), message=f"{type(exc).__name__}: {exc}")


def assert_same_outcome(old: Outcome, new: Outcome, what: str = "call") -> None:
    """Same exception type, or (both succeeded) equal return values."""
    assert new.error is old.error, (
        f"{what}: before {old.message or 'returned'}; after {new.message or 'returned'}"
    )
    if old.error is None:
        if isinstance(old.value, torch.Tensor):
            assert_same_tensor(old.value, new.value, what)
        else:
            assert new.value == old.value, f"{what}: returned {new.value!r} != {old.value!r}"
            assert type(new.value) is type(old.value), f"{what}: return type differs"


# ---------------------------------------------------------------------------------------
# constructions


@dataclass(frozen=True)
class Build:
    """A valid construction: class name, data shape and dtype, keyword arguments."""

    cls: str
    shape: tuple[int, ...]
    dtype: torch.dtype = torch.float32
    kwargs: dict[str, Any] = field(default_factory=dict)
    id: str = ""

    def data(self, seed: int = 0) -> torch.Tensor:
        return seeded(self.shape, self.dtype, seed)

    def make(self, module: ModuleType, seed: int = 0, data: torch.Tensor | None = None):
        """Build it from ``module`` (original or converted) the way the engine does."""
        factory = getattr(module, self.cls)
        tensor = self.data(seed) if data is None else data
        return factory(data=tensor, weight_loader=stub_weight_loader, **self.kwargs)

    def __str__(self) -> str:
        return self.id or self.cls


def _b(cls, shape, dtype=torch.float32, id="", **kwargs) -> Build:
    return Build(cls=cls, shape=shape, dtype=dtype, kwargs=kwargs, id=id or cls)


I32 = torch.int32
AWQ = dict(input_dim=0, output_dim=1, packed_dim=1)  # packed along the output dimension
GPTQ = dict(input_dim=0, output_dim=1, packed_dim=0)  # packed along the input dimension

BUILDS: tuple[Build, ...] = (
    _b("BasevLLMParameter", (4, 6)),
    _b("_ColumnvLLMParameter", (8, 6), torch.float16, output_dim=0),
    _b("RowvLLMParameter", (8, 6), torch.bfloat16, input_dim=1),
    _b("ModelWeightParameter", (8, 6), output_dim=0, input_dim=1),
    _b("GroupQuantScaleParameter", (2, 8), torch.float16, output_dim=1, input_dim=0),
    _b("ChannelQuantScaleParameter", (8, 1), output_dim=0),
    _b("PerTensorScaleParameter", (3,)),
    _b("PackedColumnParameter", (4, 6), I32, output_dim=0, packed_dim=0, packed_factor=8),
    _b(
        "PackedColumnParameter", (96, 2), I32, id="PackedColumn-fraction-marlin",
        output_dim=0, packed_dim=0, packed_factor=Fraction(16, 3), marlin_tile_size=16,
    ),
    _b("PackedvLLMParameter", (6, 4), I32, id="Packed-awq", packed_factor=8, **AWQ),
    _b(
        "PackedvLLMParameter", (2, 16), I32, id="Packed-gptq-marlin-none",
        packed_factor=8, marlin_tile_size=None, **GPTQ,
    ),
    _b(
        "PackedvLLMParameter", (2, 64), I32, id="Packed-awq-marlin16",
        packed_factor=8, marlin_tile_size=16, **AWQ,
    ),
    _b(
        "PackedvLLMParameter", (6, 6), I32, id="Packed-awq-fraction",
        packed_factor=Fraction(32, 3), **AWQ,
    ),
)
ONE_PER_CLASS: dict[str, Build] = {}
for _build in BUILDS:
    ONE_PER_CLASS.setdefault(_build.cls, _build)
assert tuple(ONE_PER_CLASS) == CLASS_NAMES


# ---------------------------------------------------------------------------------------
# loader calls


def fixed(*shape: int) -> Callable[[int], tuple[int, ...]]:
    """A full tensor whose shape does not depend on the tensor-parallel size."""
    return lambda size: shape


def split(*shape: int, dim: int, groups: Callable[[int], int] = lambda size: size):
    """A full tensor holding ``groups(size)`` per-rank blocks of ``shape`` along ``dim``."""

    def full_shape(size: int) -> tuple[int, ...]:
        dims = list(shape)
        dims[dim] *= groups(size)
        return tuple(dims)

    return full_shape


def kv_groups(num_heads: int) -> Callable[[int], int]:
    """Number of distinct key/value blocks when ``num_heads`` ranks share one."""
    return lambda size: math.ceil(size / num_heads)


@dataclass(frozen=True)
class LoadCase:
    """``param.<loader>(full, **kwargs)`` on a fresh ``build``; ``expect`` is the original's."""

    id: str
    build: Build
    loader: str
    full_shape: Callable[[int], tuple[int, ...]]
    kwargs: dict[str, Any] = field(default_factory=dict)
    expect: str | type[BaseException] | None = OK  # None: depends on the rank
    full_dtype: torch.dtype | None = None

    def full(self, size: int, seed: int = 1) -> torch.Tensor:
        return seeded(self.full_shape(size), self.full_dtype or self.build.dtype, seed)

    def call(self, param: Any, full: torch.Tensor, keyword: bool = True) -> Any:
        """Call the loader as vLLM's linear layers do (``loaded_weight=``) or positionally."""
        method = getattr(param, self.loader)
        if keyword:
            return method(loaded_weight=full, **self.kwargs)
        return method(full, **self.kwargs)


def _merged(offset: int, size: int, shard: int = 0) -> dict[str, Any]:
    return dict(shard_id=shard, shard_offset=offset, shard_size=size)


def _qkv(which: str, offset: int, size: int, num_heads: int | None) -> dict[str, Any]:
    return dict(shard_id=which, shard_offset=offset, shard_size=size, num_heads=num_heads)


B = {b.id: b for b in BUILDS}
MW = _b("ModelWeightParameter", (16, 6), output_dim=0, input_dim=1, id="MW16")
GQ = _b("GroupQuantScaleParameter", (2, 16), torch.float16, output_dim=1, input_dim=0, id="GQ16")
CQ = _b("ChannelQuantScaleParameter", (16, 1), output_dim=0, id="CQ16")
COL = _b("_ColumnvLLMParameter", (16, 6), output_dim=0, id="Col16")
ROW1 = _b("RowvLLMParameter", (1,), input_dim=0, id="Row1d")
MW_T = _b("ModelWeightParameter", (6, 4), output_dim=1, input_dim=0, id="MW-transposed")
MW3 = _b("ModelWeightParameter", (2, 4, 6), output_dim=1, input_dim=2, id="MW-3d")
PC = _b("PackedColumnParameter", (4, 6), I32, output_dim=0, packed_dim=0, packed_factor=8)
PC_M = _b(
    "PackedColumnParameter", (64, 6), I32, id="PackedColumn-marlin16",
    output_dim=0, packed_dim=0, packed_factor=8, marlin_tile_size=16,
)
PC_F = _b(
    "PackedColumnParameter", (6, 6), I32, id="PackedColumn-fraction",
    output_dim=0, packed_dim=0, packed_factor=Fraction(32, 3),
)
PC_FM = B["PackedColumn-fraction-marlin"]
P_AWQ = B["Packed-awq"]
P_GPTQ = B["Packed-gptq-marlin-none"]
P_AWQ_M = B["Packed-awq-marlin16"]
P_AWQ_F = B["Packed-awq-fraction"]
# QKV layouts: q has 8 (logical) rows per rank, k and v 4 each.
P_QKV = _b("PackedvLLMParameter", (6, 16), I32, id="Packed-awq-qkv", packed_factor=8, **AWQ)
P_QKV_M = _b(
    "PackedvLLMParameter", (2, 256), I32, id="Packed-awq-qkv-marlin",
    packed_factor=8, marlin_tile_size=16, **AWQ,
)
PC_QKV_F = _b(
    "PackedColumnParameter", (9, 3), I32, id="PackedColumn-qkv-fraction",
    output_dim=0, packed_dim=0, packed_factor=Fraction(32, 3),
)
PT = B["PerTensorScaleParameter"]


def _c(id, build, loader, full_shape, expect=OK, **kwargs) -> LoadCase:
    return LoadCase(id=id, build=build, loader=loader, full_shape=full_shape,
                    kwargs=kwargs, expect=expect)


COLUMN = "load_column_parallel_weight"
ROW = "load_row_parallel_weight"
MERGED = "load_merged_column_weight"
QKV = "load_qkv_weight"

LOAD_CASES: tuple[LoadCase, ...] = (
    # --- column parallel -------------------------------------------------------------
    _c("col-base", B["BasevLLMParameter"], COLUMN, fixed(4, 6)),
    _c("col-column", B["_ColumnvLLMParameter"], COLUMN, split(8, 6, dim=0)),
    _c("col-row-is-plain-copy", B["RowvLLMParameter"], COLUMN, fixed(8, 6)),
    _c("col-modelweight", B["ModelWeightParameter"], COLUMN, split(8, 6, dim=0)),
    _c("col-modelweight-dim1", MW_T, COLUMN, split(6, 4, dim=1)),
    _c("col-modelweight-3d", MW3, COLUMN, split(2, 4, 6, dim=1)),
    _c("col-groupquant", B["GroupQuantScaleParameter"], COLUMN, split(2, 8, dim=1)),
    _c("col-channelquant", B["ChannelQuantScaleParameter"], COLUMN, split(8, 1, dim=0)),
    _c("col-pertensor", PT, COLUMN, fixed(3)),
    _c("col-packedcolumn", PC, COLUMN, split(4, 6, dim=0)),
    _c("col-packed-awq", P_AWQ, COLUMN, split(6, 4, dim=1)),
    _c("col-packed-gptq", P_GPTQ, COLUMN, split(2, 16, dim=1)),
    _c("col-base-wrong-shape", B["BasevLLMParameter"], COLUMN, fixed(5, 6), AssertionError),
    _c("col-modelweight-wrong-width", B["ModelWeightParameter"], COLUMN,
       split(8, 5, dim=0), AssertionError),
    _c("col-modelweight-too-short", B["ModelWeightParameter"], COLUMN,
       lambda size: (8 * size - 2, 6), None),
    _c("col-pertensor-wrong-shape", PT, COLUMN, fixed(1), AssertionError),
    # --- row parallel ----------------------------------------------------------------
    _c("row-base", B["BasevLLMParameter"], ROW, fixed(4, 6)),
    _c("row-column-is-plain-copy", B["_ColumnvLLMParameter"], ROW, fixed(8, 6)),
    _c("row-row", B["RowvLLMParameter"], ROW, split(8, 6, dim=1)),
    _c("row-row-1d", ROW1, ROW, split(1, dim=0)),
    _c("row-modelweight", B["ModelWeightParameter"], ROW, split(8, 6, dim=1)),
    _c("row-modelweight-3d", MW3, ROW, split(2, 4, 6, dim=2)),
    _c("row-groupquant", B["GroupQuantScaleParameter"], ROW, split(2, 8, dim=0)),
    _c("row-channelquant", B["ChannelQuantScaleParameter"], ROW, fixed(8, 1)),
    _c("row-pertensor", PT, ROW, fixed(3)),
    _c("row-packedcolumn", PC, ROW, fixed(4, 6)),
    _c("row-packed-awq", P_AWQ, ROW, split(6, 4, dim=0)),
    _c("row-packed-fraction", P_AWQ_F, ROW, split(6, 6, dim=0)),
    _c("row-row-wrong-height", B["RowvLLMParameter"], ROW, split(7, 6, dim=1), AssertionError),
    _c("row-pertensor-wrong-shape", PT, ROW, fixed(4), AssertionError),
    # --- merged column (two logical parts side by side) ------------------------------
    _c("merged-base", B["BasevLLMParameter"], MERGED, fixed(4, 6), **_merged(0, 2)),
    _c("merged-row-is-plain-copy", B["RowvLLMParameter"], MERGED, fixed(8, 6), **_merged(0, 4)),
    _c("merged-column-part1", COL, MERGED, split(8, 6, dim=0), **_merged(8, 8, 1)),
    _c("merged-modelweight-part0", MW, MERGED, split(8, 6, dim=0), **_merged(0, 8)),
    _c("merged-modelweight-part1", MW, MERGED, split(8, 6, dim=0), **_merged(8, 8, 1)),
    _c("merged-groupquant-part1", GQ, MERGED, split(2, 8, dim=1), **_merged(8, 8, 1)),
    _c("merged-channelquant-part0", CQ, MERGED, split(8, 1, dim=0), **_merged(0, 8)),
    _c("merged-packedcolumn", PC, MERGED, split(2, 6, dim=0), **_merged(16, 16, 1)),
    _c("merged-packedcolumn-marlin16", PC_M, MERGED, split(32, 6, dim=0), **_merged(16, 16, 1)),
    _c("merged-packedcolumn-fraction", PC_F, MERGED, split(3, 6, dim=0), **_merged(32, 32, 1)),
    _c("merged-packedcolumn-fraction-marlin", PC_FM, MERGED, split(48, 2, dim=0),
       **_merged(16, 16, 1)),
    _c("merged-packed-awq", P_AWQ, MERGED, split(6, 2, dim=1), **_merged(16, 16, 1)),
    _c("merged-packed-gptq-no-adjust", P_GPTQ, MERGED, split(2, 8, dim=1), **_merged(8, 8, 1)),
    _c("merged-packed-awq-marlin16", P_AWQ_M, MERGED, split(2, 32, dim=1), **_merged(16, 16, 1)),
    _c("merged-packed-awq-fraction", P_AWQ_F, MERGED, split(6, 3, dim=1), **_merged(32, 32, 1)),
    _c("merged-pertensor-int-0d", PT, MERGED, fixed(), shard_id=1),
    _c("merged-pertensor-int-1", PT, MERGED, fixed(1), shard_id=2),
    _c("merged-pertensor-str", PT, MERGED, fixed(1), shard_id="k"),
    _c("merged-modelweight-past-end", MW, MERGED, split(8, 6, dim=0), RuntimeError,
       **_merged(12, 8, 1)),
    _c("merged-modelweight-no-size", MW, MERGED, split(8, 6, dim=0), TypeError,
       shard_id=0, shard_offset=0),
    _c("merged-packed-no-size", P_AWQ, MERGED, split(6, 2, dim=1), TypeError,
       shard_id=0, shard_offset=0),
    _c("merged-pertensor-bad-name", PT, MERGED, fixed(), AssertionError, shard_id="x"),
    _c("merged-pertensor-float-id", PT, MERGED, fixed(), AssertionError, shard_id=1.0),
    _c("merged-pertensor-index-out-of-range", PT, MERGED, fixed(), IndexError, shard_id=3),
    _c("merged-pertensor-leading-2", PT, MERGED, fixed(2), AssertionError, shard_id=0),
    _c("merged-pertensor-no-shard-id", PT, MERGED, fixed(), TypeError),
    # --- fused QKV (q: 8 rows per rank at 0, k: 4 at 8, v: 4 at 12) ------------------
    _c("qkv-base", B["BasevLLMParameter"], QKV, fixed(4, 6), **_qkv("q", 0, 4, 1)),
    _c("qkv-modelweight-q", MW, QKV, split(8, 6, dim=0), **_qkv("q", 0, 8, 1)),
    _c("qkv-modelweight-k", MW, QKV, split(4, 6, dim=0), **_qkv("k", 8, 4, 1)),
    _c("qkv-modelweight-v-shared2", MW, QKV, split(4, 6, dim=0, groups=kv_groups(2)),
       **_qkv("v", 12, 4, 2)),
    _c("qkv-modelweight-q-heads-ignored", MW, QKV, split(8, 6, dim=0), **_qkv("q", 0, 8, None)),
    _c("qkv-groupquant-k-shared2", GQ, QKV, split(2, 4, dim=1, groups=kv_groups(2)),
       **_qkv("k", 8, 4, 2)),
    _c("qkv-channelquant-v-shared4", CQ, QKV, split(4, 1, dim=0, groups=kv_groups(4)),
       **_qkv("v", 12, 4, 4)),
    _c("qkv-column-q", COL, QKV, split(8, 6, dim=0), **_qkv("q", 0, 8, 1)),
    _c("qkv-packed-awq-q", P_QKV, QKV, split(6, 8, dim=1), **_qkv("q", 0, 64, 1)),
    _c("qkv-packed-awq-k-shared2", P_QKV, QKV, split(6, 4, dim=1, groups=kv_groups(2)),
       **_qkv("k", 64, 32, 2)),
    _c("qkv-packed-awq-marlin-v", P_QKV_M, QKV, split(2, 64, dim=1), **_qkv("v", 96, 32, 1)),
    _c("qkv-packedcolumn-fraction-v", PC_QKV_F, QKV, split(3, 3, dim=0), **_qkv("v", 64, 32, 1)),
    _c("qkv-packed-gptq-no-adjust", P_GPTQ, QKV, split(2, 8, dim=1), **_qkv("k", 8, 8, 1)),
    _c("qkv-pertensor-q", PT, QKV, fixed(), **_qkv("q", 0, 1, 1)),
    _c("qkv-pertensor-v", PT, QKV, fixed(1), **_qkv("v", 0, 1, 1)),
    _c("qkv-pertensor-int", PT, QKV, fixed(1), **_qkv(0, 0, 1, 1)),  # type: ignore[arg-type]
    _c("qkv-modelweight-k-no-heads", MW, QKV, split(4, 6, dim=0), TypeError,
       **_qkv("k", 8, 4, None)),
    _c("qkv-modelweight-k-short", MW, QKV, fixed(4, 6), None, **_qkv("k", 8, 4, 1)),
    _c("qkv-pertensor-bad-name", PT, QKV, fixed(), AssertionError, **_qkv("o", 0, 1, 1)),
)
assert len({case.id for case in LOAD_CASES}) == len(LOAD_CASES)
assert {case.build.cls for case in LOAD_CASES} == set(CLASS_NAMES)


# ---------------------------------------------------------------------------------------
# permute_param_layout_ followed by loads that must see the new dimensions


@dataclass(frozen=True)
class PermuteCase:
    """``permute_param_layout_(param, **kwargs)`` on ``build``, then each of ``then``."""

    id: str
    build: Build
    kwargs: dict[str, Any]
    then: tuple[LoadCase, ...] = ()
    expect: str | type[BaseException] = OK


def _then(build: Build, loader: str, full_shape, **kwargs) -> LoadCase:
    return LoadCase(id=loader, build=build, loader=loader, full_shape=full_shape,
                    kwargs=kwargs, expect=None)


BASE2D = B["BasevLLMParameter"]
MW8 = B["ModelWeightParameter"]
CQ8 = B["ChannelQuantScaleParameter"]

PERMUTE_CASES: tuple[PermuteCase, ...] = (
    PermuteCase(
        "packed-awq-transpose", P_AWQ, dict(input_dim=1, output_dim=0, packed_dim=0),
        then=(
            _then(P_AWQ, MERGED, split(2, 6, dim=0), **_merged(16, 16, 1)),
            _then(P_AWQ, COLUMN, split(4, 6, dim=0)),
            _then(P_AWQ, ROW, split(4, 6, dim=1)),
        ),
    ),
    PermuteCase(
        # packed_dim not passed: it stays 0, which now equals output_dim, so the merged
        # loader starts adjusting for packing. Odd, but it is what the original does.
        "packed-gptq-transpose-keep-packed-dim", P_GPTQ, dict(input_dim=1, output_dim=0),
        then=(
            _then(P_GPTQ, MERGED, split(1, 2, dim=0), **_merged(8, 8, 1)),
            _then(P_GPTQ, QKV, split(1, 2, dim=0), **_qkv("q", 8, 8, 1)),
        ),
    ),
    PermuteCase(
        "packed-same-layout", P_AWQ, dict(input_dim=0, output_dim=1, packed_dim=1),
        then=(_then(P_AWQ, MERGED, split(6, 2, dim=1), **_merged(16, 16, 1)),),
    ),
    PermuteCase(
        "modelweight-transpose", MW8, dict(input_dim=0, output_dim=1),
        then=(
            _then(MW8, COLUMN, split(6, 8, dim=1)),
            _then(MW8, ROW, split(6, 8, dim=0)),
            _then(MW8, QKV, split(6, 4, dim=1), **_qkv("k", 4, 4, 1)),
        ),
    ),
    PermuteCase(
        "modelweight-3d", MW3, dict(input_dim=0, output_dim=1),
        then=(_then(MW3, COLUMN, split(6, 4, 2, dim=1)), _then(MW3, ROW, split(6, 4, 2, dim=0))),
    ),
    PermuteCase(
        # only output_dim is known: input_dim is inferred, and nothing stores it
        "channelquant-transpose", CQ8, dict(input_dim=0, output_dim=1),
        then=(_then(CQ8, COLUMN, split(1, 8, dim=1)),),
    ),
    PermuteCase("packed-repack-refused", P_AWQ, dict(input_dim=1, output_dim=0, packed_dim=1),
                expect=AssertionError),
    PermuteCase("packed-dim-on-unpacked", MW8, dict(input_dim=1, output_dim=0, packed_dim=0),
                expect=AssertionError),
    PermuteCase("base-no-dims", BASE2D, dict(input_dim=1, output_dim=0), expect=AssertionError),
    PermuteCase("pertensor-1d", PT, dict(input_dim=0, output_dim=0), expect=AssertionError),
)
