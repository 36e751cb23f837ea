"""The mini engine's linear layers and checkpoints on their own (no converter).

The equivalence battery compares the original engine with its conversion; these tests pin
down that what is compared is meaningful: every parameter of every scheme is filled from
the checkpoint, a single rank reproduces the generator's reference matrices, and the ranks
of tensor-parallel sizes 2 and 4 together give back the single-rank result (column outputs
side by side, key/value heads shared by replicas, row outputs summed).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from .linear_support import (  # noqa: E402
    CHECKPOINTS,
    ENGINE_MODULES,
    LAYOUT_IDS,
    LAYOUTS,
    SCHEME_NAMES,
    TINY,
    sample_input,
)
from .twin import open_copy  # noqa: E402

# Relative error of a single rank against x @ reference^T: exact up to float32 rounding,
# except FP8 (requantisation to one scale per fused layer; FP8 activations).
TOLERANCE = {"fp8": 0.05, "fp8_dynamic": 0.05}
NEVER_ON_DISK = {"workspace"}  # Marlin scratch space


@pytest.fixture(scope="module")
def engine(engine_dir):
    with open_copy(engine_dir, ENGINE_MODULES) as copy:
        yield copy


@pytest.fixture(autouse=True)
def _tp_back_to_single_rank(engine):
    engine.set_tp(0, 1)
    yield
    engine.set_tp(0, 1)


def _run(engine, scheme, tensors, rank, size):
    engine.set_tp(rank, size)
    try:
        block = engine.module(CHECKPOINTS).build_block(scheme)
        loaded = block.load_weights(tensors.items())
        expected = {n for n in dict(block.named_parameters()) if n.rsplit(".", 1)[1] not in NEVER_ON_DISK}
        assert loaded == expected, f"never loaded: {sorted(expected - loaded)}"
        block.process_weights_after_loading()
        return block(sample_input("cpu"))
    finally:
        engine.set_tp(0, 1)


def _assemble(engine, outputs: list[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """The single-rank outputs, rebuilt from the outputs of every rank of one group."""
    config = engine.module(TINY).TinyConfig()
    size = len(outputs)
    head = config.head_size
    q_heads = config.num_heads // size
    kv_heads = max(1, config.num_kv_heads // size)
    replicas = max(1, size // config.num_kv_heads)
    qkv = [o["qkv_proj"] for o in outputs]
    q = torch.cat([t[:, : q_heads * head] for t in qkv], -1)
    owners = range(0, size, replicas)  # one rank per distinct key/value head block
    k = torch.cat([qkv[r][:, q_heads * head : (q_heads + kv_heads) * head] for r in owners], -1)
    v = torch.cat([qkv[r][:, (q_heads + kv_heads) * head :] for r in owners], -1)
    gate_up = [o["gate_up_proj"].chunk(2, -1) for o in outputs]
    return {
        "qkv_proj": torch.cat([q, k, v], -1),
        "o_proj": sum(o["o_proj"] for o in outputs),
        "gate_up_proj": torch.cat([g for g, _ in gate_up] + [u for _, u in gate_up], -1),
        "down_proj": sum(o["down_proj"] for o in outputs),
        "proj": torch.cat([o["proj"] for o in outputs], -1),
    }


@pytest.mark.parametrize("fused", LAYOUTS, ids=LAYOUT_IDS)
@pytest.mark.parametrize("scheme", SCHEME_NAMES)
def test_ranks_reproduce_the_reference(engine, scheme, fused, tmp_path):
    generator = engine.module(CHECKPOINTS)
    checkpoint = generator.make_checkpoint(scheme, seed=7, fused=fused)
    path = generator.save_checkpoint(checkpoint.tensors, tmp_path / "ckpt.pt")
    tensors = generator.load_checkpoint(path)
    assert tensors.keys() == checkpoint.tensors.keys()

    single = _run(engine, scheme, tensors, 0, 1)
    x = sample_input("cpu")
    for layer, reference in checkpoint.references.items():
        want = x @ reference.t()
        if layer in checkpoint.biases:
            want = want + checkpoint.biases[layer].float()
        error = ((single[layer] - want).norm() / want.norm()).item()
        assert error <= TOLERANCE.get(scheme, 1e-5), f"{layer}: relative error {error:.2e}"

    for size in (2, 4):
        rebuilt = _assemble(engine, [_run(engine, scheme, tensors, r, size) for r in range(size)])
        for layer, out in rebuilt.items():
            torch.testing.assert_close(out, single[layer], rtol=1e-4, atol=1e-4, msg=f"tp{size} {layer}")


def test_checkpoint_generator_is_deterministic(engine):
    generator = engine.module(CHECKPOINTS)
    a = generator.make_checkpoint("awq", seed=3).tensors
    b = generator.make_checkpoint("awq", seed=3).tensors
    c = generator.make_checkpoint("awq", seed=4).tensors
    assert a.keys() == b.keys() == c.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)
