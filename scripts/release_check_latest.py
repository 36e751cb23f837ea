#!/usr/bin/env python3
"""Release check on the newest vLLM: convert the whole tree, then compare in isolation.

Steps:

1. get the wheel (``pip download --no-deps vllm==0.34.0``, or ``--wheel PATH``) and
   unpack only ``vllm/**/*.py``;
2. with the default configuration (no ``[tool.codemod]`` table), copy the whole ``vllm/``
   tree and convert it as a user would (``scripts/whole_tree.py``: ``codemod apply``
   through the CLI, the files changed, the classes converted and kept; a second ``apply``
   changes nothing; ``scripts/verify_tree.py`` finds no class-only use left, every added
   import resolving and every changed file compiling; ``codemod check`` reports only the
   kept classes). This conversion is the one the next steps compare; ``codemod verify``
   (``codemod/verify``, no stubs or tables of this script) compares it with the original;
3. build two small package trees, *before* and *after*, holding the real
   ``model_executor/parameter.py``, ``layers/quantization/kv_cache.py`` and
   ``model_loader/reload/{layerwise,meta,sanitize,types,utils}.py`` (original, and as the
   whole-tree conversion left them), plus stubs for the few vLLM modules they import
   (``vllm.distributed`` with a settable tensor-parallel position, ``vllm.logger``,
   ``vllm.platforms``, ``vllm.model_executor.utils.copy_weight_``...) and a *probe*
   module of class checks written as vLLM writes them, which ``codemod apply`` rewrites
   in the *after* tree (an isolated conversion whose ``parameter.py`` and ``kv_cache.py``
   must equal the whole-tree ones), and ``scripts/verify_tree.py --import`` on them
   (every added import executed);
4. import both trees side by side (``tests/behaviour/twin.py``) and run the battery of
   ``tests/behaviour/battery_latest.py`` on them.

Prints a summary (cases, tensors compared bit for bit, failures) and exits 0 when
everything agrees, 1 on any difference, 2 when it could not run. Needs torch and the
repository's ``.venv`` (``bash scripts/setup.sh test``):

    .venv/bin/python scripts/release_check_latest.py                     # downloads the wheel
    .venv/bin/python scripts/release_check_latest.py --wheel vllm-0.34.0-*.whl
"""

from __future__ import annotations

import argparse
import filecmp
import importlib.util
import logging
import re
import shutil
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from scripts.whole_tree import changed_files, codemod, convert_whole_tree  # noqa: E402
from scripts.release_check import (  # noqa: E402 - after the sys.path entry
    fetch_wheel,
    log,
    unpack_sources,
    verify_conversion,
)

VERSION = "0.34.0"
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


def isolated_trees(sources: Path, whole: Path, workdir: Path, problems: list[str]) -> tuple[Path, Path]:
    """(before, after): the isolated trees; *after* converted on its own, checked against
    the whole-tree conversion, whose files it then holds."""
    from tests.behaviour.twin import copy_tree

    before, after = workdir / "before", workdir / "after"
    build_isolated(sources, before)
    copy_tree(before, after)
    log(f"\n== step 3: isolated trees ({len(REAL_FILES)} real files, {len(STUBS)} stubs, the probe)")
    run = codemod("apply", str(after / "vllm"))
    changed = changed_files(before / "vllm", after / "vllm")
    log(f"codemod apply on the isolated tree: exit code {run.rc} in {run.seconds:.1f} s; changed: "
        + ", ".join(changed))
    if run.rc != 1 or "release_probe.py" not in changed:
        problems.append(f"isolated tree: apply exited {run.rc}; changed {changed}")
    for rel in REAL_FILES:
        mine, theirs = after / rel, whole.parent / rel
        if not filecmp.cmp(mine, theirs, shallow=False):
            problems.append(f"isolated tree: {rel} converted alone differs from the whole-tree "
                            "conversion (the battery uses the whole-tree file)")
            shutil.copy2(theirs, mine)
    log("the real files equal the whole-tree conversion"
        if not any(p.startswith("isolated tree: vllm/") for p in problems) else "see problems below")
    from scripts.verify_tree import verify

    verified = verify(before, after, run_imports=True)
    log(f"scripts/verify_tree.py --import on the isolated trees: {len(verified.class_only_uses)} "
        f"class-only use(s) left, {verified.added_imports} added import(s) executed, "
        f"{len(verified.changed)} changed file(s)")
    if not verified.ok:
        problems.append("isolated tree: scripts/verify_tree.py --import found problems:\n"
                        + "\n".join(f"    {line}" for line in verified.problems))
    return before, after


# ---------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", type=Path, help="use this vllm wheel instead of downloading")
    parser.add_argument("--version", default=VERSION, help=f"vllm version to download ({VERSION})")
    parser.add_argument("--keep", type=Path, help="build the trees here and keep them")
    parser.add_argument("--compile-backend", default="aot_eager",
                        help="torch.compile backend for the compile cases ('none' to skip)")
    args = parser.parse_args(argv)

    if importlib.util.find_spec("torch") is None:
        log("torch is not installed: run `bash scripts/setup.sh test` and use .venv/bin/python")
        return 2
    import torch

    from tests.behaviour.battery_latest import SHADOW, run_latest_battery
    from tests.behaviour.twin import load_twin

    workdir = args.keep if args.keep else Path(tempfile.mkdtemp(prefix="codemod-release-latest-"))
    workdir.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    started = time.perf_counter()
    try:
        log(f"== step 1: vllm {args.version} sources")
        wheel = args.wheel if args.wheel else fetch_wheel(workdir, args.version)
        log(f"wheel: {wheel}")
        sources = workdir / "sources"
        log(f"unpacked {unpack_sources(wheel, sources)} vllm/**/*.py files into {sources}")
        missing = [rel for rel in REAL_FILES if not (sources / rel).is_file()]
        if missing:
            log(f"this wheel lacks {', '.join(missing)}: the check is written for vllm {VERSION}")
            return 2

        log("\n== step 2 (default configuration): codemod apply on a copy of the whole tree")
        whole = convert_whole_tree(sources / "vllm", workdir / "whole-default", problems,
                                   allow_value_uses=False).target
        log("\n== step 2b: codemod verify on the original and the whole-tree conversion")
        verified = verify_conversion(sources / "vllm", whole, problems)
        before, after = isolated_trees(sources, whole, workdir, problems)

        log(f"\n== step 4: equivalence battery (torch {torch.__version__}, "
            f"compile backend {args.compile_backend})")
        backend = None if args.compile_backend == "none" else args.compile_backend
        logging.getLogger("vllm").setLevel(logging.ERROR)  # the stub logger's warnings
        warnings.filterwarnings("ignore", message=".*lru_cache.*", category=UserWarning)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # tiny tensors: extra threads only add overhead
        try:
            with load_twin(before, after, submodules=SUBMODULES, package="vllm") as twin:
                if not isinstance(twin.after.parameter.BasevLLMParameter, type):
                    problems.append(f"{SHADOW} was converted: this battery expects it kept (a shadow)")
                report = run_latest_battery(twin, compile_backend=backend)
        finally:
            torch.set_num_threads(threads)

        log("")
        log(f"release check of vllm {args.version} ({time.perf_counter() - started:.0f} s)")
        log(f"codemod verify: {verified.cases} cases, {verified.tensors} tensors, "
            f"{len(verified.differences)} differences")
        log(report.summary())
        if problems:
            log(f"pipeline problems: {len(problems)}")
            for problem in problems:
                log(f"  {problem}")
        ok = report.ok and not problems
        log("PASS" if ok else "FAIL")
        return 0 if ok else 1
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
