"""Parameters whose ``__new__`` builds the data, before and after conversion (golden case
``new_builds_data``): the same bytes, dtype, shape, ``requires_grad``, attributes and
method results; ``copy.deepcopy``, which the old classes could not do (``Parameter``'s
``__deepcopy__`` calls the class with ``(data, requires_grad)``), now copies everything.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

CASE = Path(__file__).resolve().parents[2] / "fixtures" / "golden" / "new_builds_data"

PROBE = r'''
import copy, json, sys, types
import torch
sys.path.insert(0, SCENARIO_DIR)
from pkg.parameter import ScaleParameter, TrellisParameter, is_engine, kind_name
import pkg.quant.compressed as compressed


class Quantizer:
    def __init__(self, group_size):
        self.group_size = group_size

    def quantize(self, tensor, q_bits):
        return (tensor.reshape(-1, self.group_size) * 10).round().to(torch.int8).repeat(1, 2)[:, :self.group_size + 4]

    def dequantize(self, data, fp_out=None, q_bits=8):
        return (data[:, :self.group_size].float() / 10).reshape(self.orig_shape).to(self.orig_dtype)

    def selective_dequantize(self, data, indices, fp_out=None, q_bits=8):
        return self.dequantize(data).index_select(0, indices)


fq = types.ModuleType("fastquant"); fq.__version__ = "2.0"
ops = types.ModuleType("fastquant.ops"); ops.GroupQuantizer = Quantizer; fq.ops = ops
sys.modules.update({"fastquant": fq, "fastquant.ops": ops})


def raw(t):
    return bytes(t.detach().contiguous().view(torch.uint8).flatten().tolist()).hex()


def describe(p):
    return {"bytes": raw(p), "dtype": str(p.dtype), "shape": list(p.shape),
            "requires_grad": p.requires_grad, "is_parameter": isinstance(p, torch.nn.Parameter)}


def deepcopied(p, check):
    try:
        c = copy.deepcopy(p)
    except Exception as exc:  # the old subclasses cannot be rebuilt from (data, requires_grad)
        return {"error": type(exc).__name__}
    return {**describe(c), "shares": c.data_ptr() == p.data_ptr(), **check(c)}


config = compressed.CompressedConfig(weight_bits=8, group_size=4)
w = compressed.CompressedFPParameter(torch.Size((2, 4)), torch.float32, config)
w.quantize_(torch.arange(8.0).reshape(2, 4) / 4)
s = ScaleParameter(rows=2, weight_loader=print, fill=0.25)
t = TrellisParameter(weight_loader=print)
out = {
    "compressed": {**describe(w), "orig_shape": list(w.orig_shape),
                   "config": w.quant_config is config,
                   "quantizer": [w.quantizer.group_size, list(w.quantizer.orig_shape),
                                 str(w.quantizer.orig_dtype)],
                   "dequantized": w.dequantize().tolist(),
                   "selected": w.selective_dequantize(torch.tensor([0])).tolist()},
    "scale": {**describe(s), "engine": is_engine(s), "kind": kind_name(s),
              "loader": s.weight_loader is print},
    "trellis": {**describe(t), "engine": is_engine(t), "kind": kind_name(t),
                "packed": t.packed_bytes()},
    "copies": {
        "compressed": deepcopied(w, lambda c: {
            "dequantized": c.dequantize().tolist(), "config": c.quant_config.group_size,
            "acts_on_copy": c.quantize_(torch.zeros(2, 4)) is not None and raw(w) != raw(c)}),
        "scale": deepcopied(s, lambda c: {"engine": is_engine(c), "kind": kind_name(c),
                                          "loader": c.weight_loader is print}),
    },
}
print(json.dumps(out))
'''


def _observe(side: str) -> dict:
    root = CASE / side
    env = dict(os.environ, PYTHONPATH=str(root), PYTHONWARNINGS="ignore",
               PYTHONDONTWRITEBYTECODE="1")
    code = PROBE.replace("SCENARIO_DIR", repr(str(root)))
    done = subprocess.run([sys.executable, "-c", code], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_same_tensor_attributes_and_results_before_and_after() -> None:
    before, after = _observe("input"), _observe("expected")
    copies_before, copies_after = before.pop("copies"), after.pop("copies")
    assert after == before
    assert before["compressed"]["dtype"] == "torch.int8" and before["compressed"]["shape"] == [2, 8]
    assert before["trellis"]["dtype"] == "torch.uint8" and before["trellis"]["shape"] == [0]
    assert not before["scale"]["requires_grad"] and before["scale"]["kind"] == "scale"
    # The old classes could not be deep-copied; the factories' parameters copy whole.
    assert copies_before == {"compressed": {"error": "TypeError"}, "scale": {"error": "TypeError"}}
    assert copies_after["compressed"] == {
        **{k: before["compressed"][k] for k in ("bytes", "dtype", "shape", "requires_grad",
                                                "is_parameter", "dequantized")},
        "shares": False, "config": 4, "acts_on_copy": True,
    }
    assert copies_after["scale"] == {
        **{k: before["scale"][k] for k in ("bytes", "dtype", "shape", "requires_grad",
                                           "is_parameter", "engine", "kind", "loader")},
        "shares": False,
    }
