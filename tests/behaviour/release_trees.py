"""The small isolated vLLM trees the engine-cost benchmark (``bench/engine_cost.py``) and
the battery of ``battery_latest.py`` import.

``build_tree``: vLLM 0.6.4's ``parameter.py`` with stubs of ``vllm.distributed`` and
``vllm.logger``. ``build_isolated``, for vLLM 0.34: the real ``parameter.py``, ``kv_cache.py``, ``reload/`` and
mixed-precision kernel modules of a vLLM 0.34 source tree, stubs for the few vLLM modules
they import (a settable tensor-parallel position, the logger, the platform...) and a probe
module of class checks written as vLLM writes them.

The release checks (``scripts/release_check*.py``) used to build these and run batteries on
them; they are now thin uses of ``codemod verify``, which needs none of this.
"""

from __future__ import annotations

import shutil
from pathlib import Path

PARAMETER = "vllm/model_executor/parameter.py"
KV_CACHE = "vllm/model_executor/layers/quantization/kv_cache.py"
RELOAD = "vllm/model_executor/model_loader/reload"
# The real files the isolated trees hold (everything else there is a stub).
MIXED_PRECISION = "vllm/model_executor/kernels/linear/mixed_precision"
REAL_FILES = (
    PARAMETER,
    KV_CACHE,
    "vllm/model_executor/utils.py",
    "vllm/model_executor/layers/quantization/utils/__init__.py",
    "vllm/model_executor/layers/quantization/utils/layer_utils.py",
    f"{MIXED_PRECISION}/MPLinearKernel.py",
    f"{MIXED_PRECISION}/conch.py",
    f"{MIXED_PRECISION}/exllama.py",
    *(f"{RELOAD}/{name}.py" for name in ("layerwise", "meta", "sanitize", "types", "utils")),
)
PROBE = "vllm/release_probe.py"
SUBMODULES = (
    "vllm.distributed",
    "vllm.model_executor.parameter",
    "vllm.model_executor.layers.quantization.kv_cache",
    "vllm.model_executor.model_loader.reload.layerwise",
    "vllm.model_executor.model_loader.reload.meta",
    "vllm.model_executor.kernels.linear.mixed_precision.conch",
    "vllm.model_executor.kernels.linear.mixed_precision.exllama",
    "vllm.release_probe",
)

STUB_DISTRIBUTED = '''"""Stub of vllm.distributed for the release check: a settable tensor-parallel position."""

_TP_RANK = 0
_TP_SIZE = 1


def set_tensor_parallel(rank: int, size: int) -> None:
    global _TP_RANK, _TP_SIZE
    if size < 1 or not 0 <= rank < size:
        raise ValueError(f"invalid tensor-parallel position: rank {rank} of {size}")
    _TP_RANK, _TP_SIZE = rank, size


def get_tensor_model_parallel_rank() -> int:
    return _TP_RANK


def get_tensor_model_parallel_world_size() -> int:
    return _TP_SIZE
'''

STUB_LOGGER = '''"""Stub of vllm.logger for the release check (with vLLM's *_once methods)."""

import logging


def init_logger(name: str) -> logging.Logger:
    logger = logging.getLogger(name)
    for level in ("debug", "info", "warning"):
        setattr(logger, f"{level}_once", getattr(logger, level))
    return logger
'''

STUB_PLATFORMS = '''"""Stub of vllm.platforms: a platform that needs no synced weight loader (CPU/CUDA)."""


class _Platform:
    @classmethod
    def use_sync_weight_loader(cls) -> bool:
        return False

    @classmethod
    def make_synced_weight_loader(cls, original_weight_loader):
        return original_weight_loader

    @classmethod
    def is_fp8_fnuz(cls) -> bool:
        return False

    @classmethod
    def is_integrated_gpu(cls, device_index=None) -> bool:
        return False

    @classmethod
    def is_cuda_alike(cls) -> bool:
        return True


current_platform = _Platform()
'''

STUB_BASE_CONFIG = '''"""Stub of vllm.model_executor.layers.quantization.base_config."""


class QuantizationConfig:
    pass


class QuantizeMethodBase:
    def process_weights_after_loading(self, layer) -> None:
        return None
'''

STUB_KV_CACHE_INTERFACE = '''"""Stub of vllm.v1.kv_cache_interface."""


def is_quantized_kv_cache(kv_cache_dtype) -> bool:
    return str(kv_cache_dtype).startswith("fp8")


def kv_cache_uses_per_token_head_scales(kv_cache_dtype) -> bool:
    return False
'''

STUB_TORCH_UTILS = '''"""Stub of vllm.utils.torch_utils."""

import re

import torch


def is_torch_equal_or_newer(target: str) -> bool:
    def release(version: str) -> tuple[int, ...]:
        return tuple(int(n) for n in re.findall(r"\\d+", version.split("+")[0])[:3])

    return release(torch.__version__) >= release(target)
'''

STUB_SCALAR_TYPE = '''"""Stub of vllm.scalar_type: the weight types the mixed-precision kernels name."""


class ScalarType:
    def __init__(self, name: str, size_bits: int, bias: int = 0) -> None:
        self.name, self.size_bits, self.bias = name, size_bits, bias

    def has_bias(self) -> bool:
        return self.bias != 0

    def __repr__(self) -> str:
        return self.name


class scalar_types:
    uint4 = ScalarType("uint4", 4)
    uint8 = ScalarType("uint8", 8)
    uint4b8 = ScalarType("uint4b8", 4, 8)
    uint8b128 = ScalarType("uint8b128", 8, 128)
'''

STUB_DIRECT = '''"""Stub of vllm.model_executor.model_loader.reload.direct (VLLM_RELOAD_MODE unset)."""


def direct_reload_enabled() -> bool:
    return False
'''

STUB_CUSTOM_OPS = '''"""Stub of vllm._custom_ops: the CUDA kernels the post-load transforms call."""


def gptq_shuffle(q_weight, bit: int) -> None:
    # In place on the GPU; a no-op here (both engines call the same stub).
    return None
'''

STUB_QUANT_UTILS = '''"""Stub of vllm.model_executor.layers.quantization.utils.quant_utils."""


def pack_quantized_values_into_int32(w_q, wtype, packed_dim: int = 0):
    raise NotImplementedError("not needed by the release check")
'''

STUB_CONFIG = '''"""Stub of vllm.config."""


class ModelConfig:
    pass
'''

STUB_ATTENTION = '''"""Stub of vllm.model_executor.layers.attention."""


def is_deferred_attention_layer(layer) -> bool:
    return False
'''

STUB_WEIGHT_UTILS = '''"""Stub of vllm.model_executor.model_loader.weight_utils (vLLM's default loader)."""

import torch

from vllm.model_executor.utils import copy_weight_


def default_weight_loader(param: torch.Tensor, loaded_weight: torch.Tensor) -> None:
    if param.numel() == 1 and loaded_weight.numel() == 1:
        copy_weight_(param.data, loaded_weight.view(param.shape))
    else:
        assert param.size() == loaded_weight.size()
        copy_weight_(param.data, loaded_weight)


def finalize_model_weights(model, target_device=None) -> None:
    # vLLM runs each module's own post-load hook here; the check's layers have none.
    for module in model.modules():
        hook = getattr(module, "process_weights_after_loading", None)
        if callable(hook):
            hook()
'''

# Class checks written as vLLM writes them; `codemod apply` rewrites them in the *after*
# tree, so the battery compares what the converter's own rewrite answers.
PROBE_SOURCE = '''"""Class checks on parameters, written the way vLLM writes them (release check probe)."""

from vllm.model_executor.layers.quantization.kv_cache import KVCacheScaleParameter
from vllm.model_executor.parameter import (
    BasevLLMParameter,
    BlockQuantScaleParameter,
    ChannelQuantScaleParameter,
    GroupQuantScaleParameter,
    ModelWeightParameter,
    PackedColumnParameter,
    PackedvLLMParameter,
    PerTensorScaleParameter,
    RowvLLMParameter,
    SharedWeightParameter,
    _ColumnvLLMParameter,
)


def isinstance_answers(p) -> dict:
    return {
        "BasevLLMParameter": isinstance(p, BasevLLMParameter),
        "_ColumnvLLMParameter": isinstance(p, _ColumnvLLMParameter),
        "RowvLLMParameter": isinstance(p, RowvLLMParameter),
        "ModelWeightParameter": isinstance(p, ModelWeightParameter),
        "GroupQuantScaleParameter": isinstance(p, GroupQuantScaleParameter),
        "ChannelQuantScaleParameter": isinstance(p, ChannelQuantScaleParameter),
        "PerTensorScaleParameter": isinstance(p, PerTensorScaleParameter),
        "PackedColumnParameter": isinstance(p, PackedColumnParameter),
        "PackedvLLMParameter": isinstance(p, PackedvLLMParameter),
        "BlockQuantScaleParameter": isinstance(p, BlockQuantScaleParameter),
        "SharedWeightParameter": isinstance(p, SharedWeightParameter),
        "KVCacheScaleParameter": isinstance(p, KVCacheScaleParameter),
    }


def type_answers(p) -> dict:
    return {
        "BasevLLMParameter": type(p) is BasevLLMParameter,
        "_ColumnvLLMParameter": type(p) is _ColumnvLLMParameter,
        "RowvLLMParameter": type(p) is RowvLLMParameter,
        "ModelWeightParameter": type(p) is ModelWeightParameter,
        "GroupQuantScaleParameter": type(p) is GroupQuantScaleParameter,
        "ChannelQuantScaleParameter": type(p) is ChannelQuantScaleParameter,
        "PerTensorScaleParameter": type(p) is PerTensorScaleParameter,
        "PackedColumnParameter": type(p) is PackedColumnParameter,
        "PackedvLLMParameter": type(p) is PackedvLLMParameter,
        "BlockQuantScaleParameter": type(p) is BlockQuantScaleParameter,
        "SharedWeightParameter": type(p) is SharedWeightParameter,
        "KVCacheScaleParameter": type(p) is KVCacheScaleParameter,
    }


def vllm_checks(p) -> dict:
    """The compound checks of vllm/model_executor/layers/linear.py, verbatim."""
    return {
        "packed": isinstance(p, (PackedColumnParameter, PackedvLLMParameter)),
        "row-or-base-exact": type(p) in (RowvLLMParameter, BasevLLMParameter),
        "not-base": not isinstance(p, BasevLLMParameter),
    }


def kv_cache_static_loader(param, loaded_weight) -> None:
    """The static loader called through the class, as `X.loader(param, w)`."""
    KVCacheScaleParameter.weight_loader(param, loaded_weight)
'''

STUBS: dict[str, str] = {
    "vllm/__init__.py": '"""vllm, reduced for the release check."""\n',
    "vllm/distributed/__init__.py": STUB_DISTRIBUTED,
    "vllm/logger.py": STUB_LOGGER,
    "vllm/platforms/__init__.py": STUB_PLATFORMS,
    "vllm/config/__init__.py": STUB_CONFIG,
    "vllm/v1/__init__.py": "",
    "vllm/v1/kv_cache_interface.py": STUB_KV_CACHE_INTERFACE,
    "vllm/model_executor/__init__.py": "",
    "vllm/utils/__init__.py": "",
    "vllm/utils/torch_utils.py": STUB_TORCH_UTILS,
    "vllm/scalar_type.py": STUB_SCALAR_TYPE,
    "vllm/_custom_ops.py": STUB_CUSTOM_OPS,
    "vllm/model_executor/layers/quantization/utils/quant_utils.py": STUB_QUANT_UTILS,
    "vllm/model_executor/layers/__init__.py": "",
    "vllm/model_executor/layers/attention/__init__.py": STUB_ATTENTION,
    "vllm/model_executor/layers/quantization/__init__.py": "",
    "vllm/model_executor/layers/quantization/base_config.py": STUB_BASE_CONFIG,
    "vllm/model_executor/model_loader/__init__.py": "",
    "vllm/model_executor/model_loader/weight_utils.py": STUB_WEIGHT_UTILS,
    f"{RELOAD}/__init__.py": "",
    f"{RELOAD}/direct.py": STUB_DIRECT,
    "vllm/model_executor/kernels/__init__.py": "",
    "vllm/model_executor/kernels/linear/__init__.py": "",
    f"{MIXED_PRECISION}/__init__.py": "",
}


# ---------------------------------------------------------------------------------------
# step 3: the isolated trees


def build_isolated(sources: Path, root: Path) -> None:
    """``root/vllm``: the real files of ``REAL_FILES`` from ``sources``, stubs, the probe."""
    for rel, text in STUBS.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for rel in REAL_FILES:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(sources / rel, path)
    (root / PROBE).write_text(PROBE_SOURCE)


PARAMETER_064 = "vllm/model_executor/parameter.py"


def build_tree(sources: Path, root: Path) -> None:
    """``root/vllm``: vLLM 0.6.4's parameter.py from ``sources``, its package files, and the
    stubs of ``vllm.distributed`` and ``vllm.logger`` it imports."""
    package = root / "vllm"
    (package / "model_executor").mkdir(parents=True)
    (package / "distributed").mkdir()
    (package / "__init__.py").write_text('"""vllm, reduced to parameter.py."""\n')
    (package / "model_executor" / "__init__.py").write_text("")
    shutil.copy2(sources / PARAMETER_064, root / PARAMETER_064)
    (package / "distributed" / "__init__.py").write_text(STUB_DISTRIBUTED)
    (package / "logger.py").write_text(STUB_LOGGER)
