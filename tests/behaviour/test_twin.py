"""The twin loader on two copies of the *original* fixture (no converter needed).

Also runs the comparison helpers of the equivalence suite original-against-original, so a
broken helper or scenario shows up here rather than as a confusing conversion failure.
"""

from __future__ import annotations

import pickle
import sys

import pytest

torch = pytest.importorskip("torch")

from .scenarios import (  # noqa: E402
    BUILDS,
    LOAD_CASES,
    assert_same_outcome,
    assert_same_param,
    outcome,
)
from .twin import copy_tree, each_tp_rank, load_twin, snapshot, tp_grid  # noqa: E402


@pytest.fixture(scope="module")
def twin(engine_dir, tmp_path_factory):
    base = tmp_path_factory.mktemp("twin")
    before = copy_tree(engine_dir, base / "before")
    after = copy_tree(engine_dir, base / "after")
    with load_twin(before, after) as t:
        yield t


@pytest.fixture(autouse=True)
def _tp_back_to_single_rank(twin):
    twin.set_tp(0, 1)
    yield
    twin.set_tp(0, 1)


def test_copies_are_distinct(twin):
    b, a = twin.before, twin.after
    assert b.parameter is not a.parameter
    assert b.distributed is not a.distributed
    assert b.parameter.BasevLLMParameter is not a.parameter.BasevLLMParameter
    assert str(b.root) in b.parameter.__file__ and str(a.root) in a.parameter.__file__


def test_each_copy_binds_its_own_distributed(twin):
    for copy in (twin.before, twin.after):
        rank_fn = copy.parameter.get_tensor_model_parallel_rank
        assert rank_fn.__globals__ is vars(copy.distributed)


def test_tp_is_per_copy(twin):
    twin.before.set_tp(1, 2)
    try:
        assert twin.before.parameter.get_tensor_model_parallel_rank() == 1
        assert twin.after.parameter.get_tensor_model_parallel_rank() == 0
    finally:
        twin.set_tp(0, 1)
    twin.set_tp(3, 4)
    try:
        for copy in (twin.before, twin.after):
            assert copy.distributed.get_tensor_model_parallel_world_size() == 4
            assert copy.parameter.get_tensor_model_parallel_rank() == 3
    finally:
        twin.set_tp(0, 1)


def test_tp_grid_and_reset(twin):
    assert list(tp_grid()) == [(0, 1), (0, 2), (1, 2), (0, 4), (1, 4), (2, 4), (3, 4)]
    seen = [
        (twin.before.parameter.get_tensor_model_parallel_rank(),
         twin.after.distributed.get_tensor_model_parallel_world_size())
        for _ in each_tp_rank(twin)
    ]
    assert seen == list(tp_grid())
    assert twin.before.distributed._TP_RANK == 0 and twin.after.distributed._TP_SIZE == 1


def test_after_copy_owns_the_real_names(twin):
    # pickle resolves by module name: the second copy is the registered one
    assert sys.modules["minivllm.model_executor.parameter"] is twin.after.parameter
    assert sys.modules["minivllm.distributed"] is twin.after.distributed
    dumped = pickle.dumps(twin.after.parameter.permute_param_layout_)
    assert pickle.loads(dumped) is twin.after.parameter.permute_param_layout_


def test_no_bytecode_written(twin):
    for copy in (twin.before, twin.after):
        assert not any("__pycache__" in name for name in snapshot(copy.root))
        assert not list(copy.root.rglob("__pycache__"))


def test_close_restores_sys_modules(engine_dir, tmp_path):
    marker = type(sys)("minivllm")
    saved = {k: v for k, v in sys.modules.items() if k.split(".")[0] == "minivllm"}
    for k in saved:
        del sys.modules[k]
    sys.modules["minivllm"] = marker
    try:
        a = copy_tree(engine_dir, tmp_path / "a")
        b = copy_tree(engine_dir, tmp_path / "b")
        with load_twin(a, b) as t:
            assert t.after.module("minivllm") is not marker
        assert sys.modules["minivllm"] is marker
        assert "minivllm.distributed" not in sys.modules
    finally:
        for k in [k for k in sys.modules if k.split(".")[0] == "minivllm"]:
            del sys.modules[k]
        sys.modules.update(saved)


@pytest.mark.parametrize("build", BUILDS, ids=str)
def test_helpers_on_identical_copies_builds(twin, build):
    assert_same_param(build.make(twin.before.parameter), build.make(twin.after.parameter))


def test_helpers_on_identical_copies_loads(twin):
    for case in LOAD_CASES:
        for rank, size in each_tp_rank(twin):
            old, new = case.build.make(twin.before.parameter), case.build.make(twin.after.parameter)
            o = outcome(lambda: case.call(old, case.full(size)))
            n = outcome(lambda: case.call(new, case.full(size)))
            assert_same_outcome(o, n, f"{case.id} at {rank}/{size}")
            assert_same_param(old, new)


def test_helpers_detect_differences(twin):
    P = twin.before.parameter
    a = BUILDS[3].make(P)
    b = BUILDS[3].make(P, seed=5)
    with pytest.raises(AssertionError):
        assert_same_param(a, b)
    # -0.0 and 0.0 compare equal with torch.equal, but not bit for bit
    z = P.BasevLLMParameter(data=torch.zeros(2), weight_loader=None)
    nz = P.BasevLLMParameter(data=-torch.zeros(2), weight_loader=None)
    with pytest.raises(AssertionError):
        assert_same_param(z, nz)
    with pytest.raises(AssertionError):
        assert_same_outcome(outcome(lambda: 1), outcome(lambda: 1 / 0))
    with pytest.raises(AssertionError):
        assert_same_outcome(outcome(lambda: [][1]), outcome(lambda: {}[1]))
