"""``verify`` on the converted fixture engine: clean, and each planted bug caught.

Each test plants one bug a hand edit or a faulty conversion could leave in the converted
``parameter.py`` and checks that ``verify_trees`` reports a difference of that kind and
exit code 1. tp sizes 1/2 and the affected classes only, to stay fast.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from codemod.verify.run import verify_trees  # noqa: E402
from tests.verify.conftest import planted  # noqa: E402

FAST = (1, 2)


def test_converted_engine_has_no_difference(engine_pair: tuple[Path, Path]) -> None:
    original, converted = engine_pair
    result = verify_trees(original, converted)
    assert result.differences == []
    assert result.exit_code == 0
    converted_classes = [cls for cls in result.classes if cls.status == "converted"]
    assert len(converted_classes) == 11
    assert all(cls.builds >= 1 and cls.cases > 20 for cls in converted_classes)
    assert result.tensors > 1000


def test_loader_narrowing_the_wrong_dimension_is_caught(
        engine_pair: tuple[Path, Path], tmp_path: Path) -> None:
    original, converted = engine_pair
    bug = planted(converted, tmp_path, (
        "piece = loaded_weight.narrow(self.output_dim, rank * width, width)",
        "piece = loaded_weight.narrow(1 - self.output_dim, rank * width, width)"))
    result = verify_trees(original, bug, tp_sizes=FAST, only={"ModelWeightParameter"})
    assert result.exit_code == 1
    cases = {diff.case.split(" ")[0] for diff in result.differences}
    assert cases == {"load_column_parallel_weight"}


def test_dropped_feature_tag_is_caught(engine_pair: tuple[Path, Path], tmp_path: Path) -> None:
    original, converted = engine_pair
    bug = planted(converted, tmp_path, (
        "    init_param_kind(param, Features.PackedvLLMParameter)\n",
        "    init_param_kind(param, Features.ModelWeightParameter)\n"))
    result = verify_trees(original, bug, tp_sizes=FAST, only={"PackedvLLMParameter"})
    assert result.exit_code == 1
    details = [diff.detail for diff in result.differences]
    assert any("isinstance/type-is PackedvLLMParameter: (True, True) vs (False, False)" in d
               for d in details), details
    assert any("isinstance/type-is ModelWeightParameter: (True, False) vs (True, True)" in d
               for d in details), details


def test_method_bound_to_the_wrong_tensor_is_caught(
        engine_pair: tuple[Path, Path], tmp_path: Path) -> None:
    original, converted = engine_pair
    bug = planted(converted, tmp_path, (
        "    param.output_dim = output_dim\n",
        "    param.output_dim = output_dim\n"
        "    other = Parameter(param.data.clone(), requires_grad=False)\n"
        "    other.output_dim = output_dim\n"
        "    method = param.__dict__['load_column_parallel_weight']\n"
        "    param.load_column_parallel_weight = type(method)(method.__func__, other)\n"
        "    param.__dict__.setdefault('_keep', []).append(other)\n"))
    result = verify_trees(original, bug, tp_sizes=FAST, only={"ModelWeightParameter"})
    assert result.exit_code == 1
    after_loads = [diff for diff in result.differences
                   if diff.case.startswith("load_column_parallel_weight")
                   and "data after" in diff.detail]
    assert after_loads, [diff.detail for diff in result.differences][:5]


def test_module_that_cannot_be_imported_is_reported_by_name(
        engine_pair: tuple[Path, Path], tmp_path: Path) -> None:
    original, converted = engine_pair
    bug = planted(converted, tmp_path, ("import logging\n",
                                        'import logging\nraise RuntimeError("planted")\n'))
    result = verify_trees(original, bug, tp_sizes=FAST)
    problems = {p.module: p for p in result.import_problems}
    assert problems["minivllm.model_executor.parameter"].side == "converted"
    assert "RuntimeError: planted" in problems["minivllm.model_executor.parameter"].error
    assert result.exit_code in (1, 2)


def test_unconverted_tree_is_a_usage_error(engine_pair: tuple[Path, Path]) -> None:
    original, _ = engine_pair
    result = verify_trees(original, original)
    assert result.exit_code == 2
    assert "no runtime module" in result.error
