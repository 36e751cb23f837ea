"""Helpers for comparing the original and the converted engine at the level of whole layers.

``ENGINE_MODULES`` is what ``load_twin`` imports from each copy: every module of the
``minivllm`` tree, so that each copy's layers, quantisation methods and plugin are bound to
that copy's own modules (checked by ``assert_block_from``).

``compare_blocks`` walks two ``TinyBlock`` objects built the same way from the two copies
and compares, parameter by parameter: the tensor bit for bit, ``requires_grad``, every
attribute the original parameter has (class properties and instance fields), that the
converted one has nothing the original lacked, and every former ``isinstance`` /
``type(p) is`` answer for every parameter class of the tree (``KINDS``). It returns how
many tensors it compared.
"""

from __future__ import annotations

import inspect
import types
from dataclasses import dataclass
from typing import Any

import torch

from .scenarios import MISSING, PUBLIC_ATTRS, assert_same_tensor, read_attr
from .twin import PACKAGE, EngineCopy, Twin, runtime_of

Parameter = torch.nn.Parameter

PARAMETER = f"{PACKAGE}.model_executor.parameter"
LINEAR = f"{PACKAGE}.model_executor.layers.linear"
FP8_BLOCK = f"{PACKAGE}.model_executor.layers.quantization.fp8_block"
PLUGIN = f"{PACKAGE}.plugins.doubled"
CHECKPOINTS = f"{PACKAGE}.checkpoints"
TINY = f"{PACKAGE}.model_executor.models.tiny"

ENGINE_MODULES = (
    f"{PACKAGE}.distributed",
    f"{PACKAGE}.model_executor",
    PARAMETER,
    f"{PACKAGE}.model_executor.utils",
    f"{PACKAGE}.model_executor.weight_utils",
    f"{PACKAGE}.model_executor.layers.quantization",
    f"{PACKAGE}.model_executor.layers.quantization.base_config",
    f"{PACKAGE}.model_executor.layers.quantization.quant_utils",
    f"{PACKAGE}.model_executor.layers.quantization.unquantized",
    f"{PACKAGE}.model_executor.layers.quantization.gptq",
    f"{PACKAGE}.model_executor.layers.quantization.awq",
    f"{PACKAGE}.model_executor.layers.quantization.marlin",
    f"{PACKAGE}.model_executor.layers.quantization.fp8",
    FP8_BLOCK,
    LINEAR,
    TINY,
    PLUGIN,
    CHECKPOINTS,
)

# The schemes of minivllm.checkpoints.SCHEMES the battery runs (all of them).
SCHEME_NAMES = (
    "unquantized",
    "gptq",
    "gptq_channelwise",
    "gptq_desc_act",
    "awq",
    "marlin",
    "marlin_channelwise",
    "gptq_marlin",
    "fp8",
    "fp8_dynamic",
    "fp8_block",
    "int8_doubled",
)
# Checkpoints storing QKV and gate/up one tensor per part, or already fused.
LAYOUTS = [False, True]
LAYOUT_IDS = ["per-part", "fused"]

# Every Parameter class of the tree: name -> defining module.
KINDS: dict[str, str] = {
    **{
        name: PARAMETER
        for name in (
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
    },
    "BlockQuantScaleParameter": FP8_BLOCK,
    "DoubledScaleParameter": PLUGIN,
}
# Attributes a converted parameter carries for the runtime, with no counterpart before.
RUNTIME_ATTRS = frozenset({"_param_features", "_param_kind", "__deepcopy__", "__reduce_ex__"})
# Attributes the original classes define beyond scenarios.PUBLIC_ATTRS.
EXTRA_ATTRS = ("factor",)


def assert_block_from(copy: EngineCopy, block: torch.nn.Module) -> None:
    """Every layer and quantisation method of ``block`` comes from ``copy``'s files."""
    for module in block.modules():
        for obj in (module, getattr(module, "quant_method", None)):
            if obj is None:
                continue
            cls = type(obj)
            if not cls.__module__.startswith(PACKAGE):
                continue
            # By identity: ``inspect.getfile`` would ask ``sys.modules``, which holds
            # only one of the two copies.
            owner = copy.modules.get(cls.__module__)
            assert owner is not None and getattr(owner, cls.__qualname__, None) is cls, (
                f"{cls.__qualname__} does not come from {copy.root}"
            )


@dataclass
class Pairing:
    """How objects of the original block correspond to objects of the converted one."""

    layers: dict[int, torch.nn.Module]  # id(original layer) -> converted layer

    @classmethod
    def of(cls, old: torch.nn.Module, new: torch.nn.Module) -> Pairing:
        old_mods, new_mods = dict(old.named_modules()), dict(new.named_modules())
        assert old_mods.keys() == new_mods.keys()
        return cls({id(module): new_mods[name] for name, module in old_mods.items()})


def assert_same_value(a: Any, b: Any, pairing: Pairing, what: str) -> None:
    """Equal values; bound methods of layers must be the same method of paired layers."""
    if isinstance(a, types.MethodType) or isinstance(b, types.MethodType):
        assert isinstance(a, types.MethodType) and isinstance(b, types.MethodType), what
        assert a.__func__.__qualname__ == b.__func__.__qualname__, what
        assert pairing.layers.get(id(a.__self__)) is b.__self__, f"{what}: bound to another layer"
        return
    if isinstance(a, torch.Tensor):
        assert_same_tensor(a, b, what)
        return
    assert type(b) is type(a), f"{what}: type {type(b).__name__} != {type(a).__name__}"
    assert b == a, f"{what}: {b!r} != {a!r}"


def attribute_names(old: torch.Tensor) -> list[str]:
    """What to compare on a parameter: its class's public attributes and its own fields."""
    names = dict.fromkeys((*PUBLIC_ATTRS, *EXTRA_ATTRS))
    names.update(dict.fromkeys(vars(old)))
    return list(names)


def assert_same_attributes(old: torch.Tensor, new: torch.Tensor, pairing: Pairing, where: str) -> None:
    """Every attribute of ``old`` on ``new`` with the same value; nothing extra on ``new``."""
    for name in attribute_names(old):
        a, b = getattr(old, name, MISSING), read_attr(new, name)
        if a is MISSING or b is MISSING:
            assert a is b, f"{where}.{name}: present before={a is not MISSING}, after={b is not MISSING}"
            continue
        if callable(a) and not isinstance(a, types.MethodType) or inspect.ismethod(a) and a.__self__ is old:
            continue  # a method of the old class: compared by behaviour, not identity
        assert_same_value(a, b, pairing, f"{where}.{name}")
    for name, value in vars(new).items():
        if name in RUNTIME_ATTRS:
            continue
        assert hasattr(old, name), f"{where}.{name}: new attribute the original did not have"
        if callable(value) and not isinstance(value, types.MethodType):
            assert callable(getattr(old, name)), f"{where}.{name}: callable only after"


def kind_answers(copy: EngineCopy, converted: bool, param: Any) -> dict[str, tuple[bool, bool]]:
    """``{class: (isinstance answer, exact-type answer)}`` for every class in ``KINDS``."""
    answers = {}
    for name, module_name in KINDS.items():
        module = copy.module(module_name)
        if converted:
            runtime = runtime_of(copy.module(PARAMETER))
            feature = getattr(runtime.Features, name)
            answers[name] = (
                bool(runtime.has_param_feature(param, feature)),
                bool(runtime.param_kind_is(param, feature)),
            )
        else:
            cls = getattr(module, name)
            answers[name] = (isinstance(param, cls), type(param) is cls)
    return answers


def assert_same_kind(twin: Twin, old: Any, new: Any, where: str) -> None:
    """Every former ``isinstance`` / ``type(p) is`` answer is kept."""
    before = kind_answers(twin.before, False, old)
    after = kind_answers(twin.after, True, new)
    wrong = [
        f"{name}: isinstance {before[name][0]} -> {after[name][0]}, "
        f"exact {before[name][1]} -> {after[name][1]}"
        for name in KINDS
        if before[name] != after[name]
    ]
    assert not wrong, f"{where}: " + "; ".join(wrong)


def kind_name(param: Any) -> str:
    """The original parameter's class name (``Parameter`` for plain ones)."""
    return type(param).__name__


def compare_params(twin: Twin, old_block: torch.nn.Module, new_block: torch.nn.Module, where: str) -> int:
    """Compare every parameter of the two blocks (see module doc); return how many."""
    pairing = Pairing.of(old_block, new_block)
    old_params = dict(old_block.named_parameters())
    new_params = dict(new_block.named_parameters())
    assert old_params.keys() == new_params.keys(), f"{where}: parameter names differ"
    for name, old in old_params.items():
        new = new_params[name]
        at = f"{where} {name} ({kind_name(old)})"
        assert type(new) is Parameter, f"{at}: converted param is {type(new).__name__}"
        assert_same_tensor(old.data, new.data, at)
        assert new.requires_grad == old.requires_grad, at
        assert new.device == old.device, at
        assert_same_attributes(old, new, pairing, at)
        assert_same_kind(twin, old, new, at)
    compare_layer_state(old_block, new_block, where)
    return len(old_params)


_SIMPLE = (int, float, str, bool, type(None), list, tuple, dict)


def compare_layer_state(old_block: torch.nn.Module, new_block: torch.nn.Module, where: str) -> None:
    """Plain attributes the quantisation methods set on the layers are equal too."""
    new_mods = dict(new_block.named_modules())
    for name, old in old_block.named_modules():
        new = new_mods[name]
        for attr, a in vars(old).items():
            if attr.startswith("_") or attr == "training":
                continue
            b = getattr(new, attr)
            if isinstance(a, _SIMPLE):
                assert type(b) is type(a) and b == a, f"{where} {name}.{attr}: {b!r} != {a!r}"
            elif hasattr(a, "name") and type(a).__name__ == type(b).__name__:  # enums
                assert a.name == b.name, f"{where} {name}.{attr}"


def compare_outputs(old: dict[str, torch.Tensor], new: dict[str, torch.Tensor], where: str) -> int:
    """The two blocks' forward outputs, layer by layer, bit for bit; return how many."""
    assert old.keys() == new.keys()
    for layer in old:
        assert_same_tensor(old[layer], new[layer], f"{where} forward {layer}")
    return len(old)


def sample_input(device: str, seed: int = 11) -> torch.Tensor:
    """The block's forward input: 3 tokens of 64 features."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(3, 64, generator=gen).to(device)
