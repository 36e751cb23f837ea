"""Stand-ins for the parts of an engine ``verify`` does not import."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemod.verify.stubs import TensorParallel, stub_module, tp_getter_kind


@pytest.mark.parametrize(("name", "kind"), [
    ("get_tensor_model_parallel_rank", "rank"),
    ("get_tensor_model_parallel_world_size", "size"),
    ("get_tp_rank", "rank"),
    ("get_attention_tp_size", "size"),
    ("get_tp_group", None),
    ("get_pipeline_model_parallel_rank", None),
    ("init_logger", None),
])
def test_tp_getters_are_recognised_by_name(name: str, kind: str | None) -> None:
    assert tp_getter_kind(name) == kind


def test_stub_module_answers_tp_getters_with_the_driven_position(tmp_path: Path) -> None:
    position = TensorParallel()
    module = stub_module("eng.distributed", None, position)
    rank, size = module.get_tensor_model_parallel_rank, module.get_tensor_model_parallel_world_size
    position.rank, position.size = 3, 4
    assert (rank(), size()) == (3, 4)


def test_stand_ins_pass_functions_through_and_can_be_subclassed(tmp_path: Path) -> None:
    module = stub_module("eng.utils", None, TensorParallel())

    def loader(param, weight):
        return None

    assert module.make_synced_weight_loader(loader) is loader  # a wrapper passes it through
    assert module.cache()(loader) is loader  # a decorator with arguments too
    logger = module.init_logger(__name__)
    logger.warning("ignored")
    assert not module.envs.VLLM_FLAG

    class Method(module.QuantizeMethodBase):
        def own(self) -> int:
            return 1

    assert Method().own() == 1 and isinstance(Method(), module.QuantizeMethodBase)


def test_stub_package_leaves_its_real_submodules_to_the_import_system(tmp_path: Path) -> None:
    (tmp_path / "layers").mkdir()
    (tmp_path / "utils.py").write_text("")
    package = stub_module("eng", tmp_path, TensorParallel())
    assert package.__path__ == [str(tmp_path)]
    for submodule in ("layers", "utils"):
        with pytest.raises(AttributeError):
            getattr(package, submodule)
    assert package.anything_else is not None
