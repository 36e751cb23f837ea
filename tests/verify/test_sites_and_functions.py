"""``verify`` asks the tree's rewritten class checks (and comparisons of two objects'
types, of pairs of parameters) and calls the family modules' functions.

On the converted fixture engine: the class checks of ``layers/linear.py`` (rewritten to
``has_param_feature`` / ``param_kind_is``) are evaluated for every built parameter on both
sides, and ``permute_param_layout_`` (a function of the parameter module annotated with a
family class) is called on every parameter; a planted bug in either is caught.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

from codemod.verify.check_sites import find_check_sites  # noqa: E402
from codemod.verify.families import find_families  # noqa: E402
from codemod.verify.run import verify_trees  # noqa: E402

FAST = (1, 2)
LINEAR = "minivllm/model_executor/layers/linear.py"


def plant(converted: Path, tmp_path: Path, rel: str, old: str, new: str) -> Path:
    """A copy of the converted engine with the first ``old`` of file ``rel`` replaced."""
    target = tmp_path / "planted" / "minivllm"
    shutil.copytree(converted, target, ignore=shutil.ignore_patterns("__pycache__"))
    path = target.parent / rel
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))
    return target


def _write_pair(root: Path, files: dict[str, str]) -> tuple[Path, Path]:
    from codemod.cli import main

    for side in ("original", "converted"):
        for rel, text in files.items():
            path = root / side / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text).lstrip())
    assert main(["apply", str(root / "converted" / "pkg")]) == 1
    return root / "original" / "pkg", root / "converted" / "pkg"


def test_clean_run_asks_every_check_site_and_calls_the_function(
        engine_pair: tuple[Path, Path]) -> None:
    original, converted = engine_pair
    result = verify_trees(original, converted, tp_sizes=FAST)
    assert result.differences == []
    linear_sites = [site for site in result.check_sites if site.startswith(LINEAR)]
    assert len(linear_sites) >= 8, result.check_sites
    assert result.check_sites_skipped == []
    assert result.functions == ["minivllm.model_executor.parameter.permute_param_layout_"]
    weight = next(cls for cls in result.classes if cls.name == "ModelWeightParameter")
    assert weight.cases > 0


def test_wrong_feature_in_a_rewritten_check_is_caught(
        engine_pair: tuple[Path, Path], tmp_path: Path) -> None:
    original, converted = engine_pair
    bug = plant(converted, tmp_path, LINEAR,
                "elif has_param_feature(param, Features.BlockQuantScaleParameter):",
                "elif has_param_feature(param, Features.PerTensorScaleParameter):")
    result = verify_trees(original, bug, tp_sizes=(1,),
                          only={"BlockQuantScaleParameter", "PerTensorScaleParameter"})
    assert result.exit_code == 1
    cases = {diff.case.split(" #")[0] for diff in result.differences}
    assert len(cases) == 1 and cases.pop().startswith(f"check {LINEAR}:"), cases
    assert {diff.cls for diff in result.differences} == {"BlockQuantScaleParameter",
                                                           "PerTensorScaleParameter"}


def test_bug_in_a_module_function_taking_a_parameter_is_caught(
        engine_pair: tuple[Path, Path], tmp_path: Path) -> None:
    original, converted = engine_pair
    bug = plant(converted, tmp_path, "minivllm/model_executor/parameter.py",
                'set_param_field(param, "_output_dim", "output_dim", output_dim)',
                'set_param_field(param, "_output_dim", "output_dim", input_dim)')
    result = verify_trees(original, bug, tp_sizes=(1,), only={"ModelWeightParameter"})
    assert result.exit_code == 1
    cases = {diff.case.split(" ")[0] for diff in result.differences}
    assert cases == {"permute_param_layout_()"}, cases
    assert any(".output_dim after" in diff.detail for diff in result.differences)


SMALL_FAMILY = {
    "pkg/__init__.py": "",
    "pkg/params.py": '''
        import torch


        class Base(torch.nn.Parameter):
            def __new__(cls, data):
                return super().__new__(cls, data, requires_grad=False)


        class Scale(Base):
            pass
    ''',
    "pkg/use.py": '''
        from pkg.params import Base, Scale


        def kind(p):
            if isinstance(p, Scale):
                return "scale"
            if type(p) is Base:
                return "base"
            return "other" if not isinstance(p.data, Base) else "never"
    ''',
}


def test_sites_that_cannot_be_driven_are_listed_with_the_reason(tmp_path: Path) -> None:
    original, converted = _write_pair(tmp_path, SMALL_FAMILY)
    families = find_families(original, converted)
    sites = find_check_sites(families)
    where = {site.where: site for site in sites.sites}
    assert set(where) == {"pkg/use.py:5", "pkg/use.py:7", "pkg/use.py:9"}, sites
    assert "has_param_feature" in where["pkg/use.py:5"].converted
    assert "param_kind_is" in where["pkg/use.py:7"].converted
    # a name of the module's own (not from the family's modules) cannot be bound
    use = converted / "use.py"
    text = use.read_text()
    use.write_text(text.replace("Features.Scale)", "Features.Scale) or p is HELPER")
                   + "\nHELPER = None\n")
    result = verify_trees(original, converted)
    assert result.differences == []
    assert [skip for skip in result.check_sites_skipped if "`HELPER`" in skip] == [
        "pkg/use.py:5: `HELPER` is not from the family's modules"]
    assert result.check_sites == ["pkg/use.py:7", "pkg/use.py:9"]


def test_compile_mode_catches_a_loader_that_no_longer_compiles_as_one_graph(
        engine_pair: tuple[Path, Path], tmp_path: Path) -> None:
    original, converted = engine_pair
    clean = verify_trees(original, converted, tp_sizes=(1,), only={"ModelWeightParameter"},
                         compile_loaders=True)
    assert clean.exit_code == 0 and clean.compiled
    bug = plant(converted, tmp_path, "minivllm/model_executor/parameter.py",
                "    piece = loaded_weight.narrow(self.output_dim, rank * width, width)",
                "    torch._dynamo.graph_break()\n"
                "    piece = loaded_weight.narrow(self.output_dim, rank * width, width)")
    eager_only = verify_trees(original, bug, tp_sizes=(1,), only={"ModelWeightParameter"})
    assert eager_only.exit_code == 0  # eagerly a graph break changes nothing
    result = verify_trees(original, bug, tp_sizes=(1,), only={"ModelWeightParameter"},
                          compile_loaders=True)
    assert result.exit_code == 1
    assert [diff.case for diff in result.differences] == [
        "compile load_column_parallel_weight tp 1/2 (build #0)"]
    assert "does not compile as one graph" in result.differences[0].detail


COPYING_FAMILY = {
    "pkg/__init__.py": "",
    "pkg/params.py": '''
        import torch


        class Base(torch.nn.Parameter):
            def __new__(cls, data):
                return super().__new__(cls, data, requires_grad=False)

            def __init__(self, data):
                self.scale = 2

            def doubled(self):
                return self.data * self.scale
    ''',
    "pkg/copies.py": '''
        import torch


        def shallow(tensor: torch.Tensor) -> torch.Tensor:
            """A new tensor that keeps the parameter's class and attributes."""
            out = torch.zeros_like(tensor.data)
            out.__class__ = tensor.__class__
            out.__dict__ = tensor.__dict__.copy()
            return out
    ''',
}


def test_function_copying_a_parameter_dict_is_called_and_a_dropped_rebind_caught(
        tmp_path: Path) -> None:
    original, converted = _write_pair(tmp_path, COPYING_FAMILY)
    copies = converted / "copies.py"
    assert "rebind_param_methods(out)" in copies.read_text()
    clean = verify_trees(original, converted, tp_sizes=(1,))
    assert clean.differences == [] and clean.exit_code == 0
    assert clean.rewritten_functions == ["pkg.copies.shallow"]
    copies.write_text(copies.read_text().replace("    rebind_param_methods(out)\n", ""))
    result = verify_trees(original, converted, tp_sizes=(1,))
    assert result.exit_code == 1
    details = [diff.detail for diff in result.differences]
    assert "shallow() #0: method doubled of the copy acts on the source" in details, details
    assert {diff.case for diff in result.differences} == {"shallow() #0"}


COMPARED = {
    **SMALL_FAMILY,
    "pkg/swap.py": '''
        def same_kind(old, new):
            return type(old) is type(new)


        def other_kind(a, b):
            return a.__class__ != type(b)


        def itself(a):
            return type(a) is type(a)
    ''',
}


def test_type_comparisons_are_asked_of_pairs_of_parameters(tmp_path: Path) -> None:
    """``type(a) is type(b)`` (rewritten to ``param_type``) is a site of two objects: each
    class's first parameter against every class's before it, itself, a plain Parameter
    and a plain tensor, both ways round; a comparison of one object with itself is not."""
    original, converted = _write_pair(tmp_path, COMPARED)
    assert "param_type(old) is param_type(new)" in (converted / "swap.py").read_text()
    result = verify_trees(original, converted, tp_sizes=(1,))
    assert result.exit_code == 0 and result.differences == []
    assert [site for site in result.check_sites if "swap" in site] == ["pkg/swap.py:2", "pkg/swap.py:6"]
    asked = {cls.name: cls.cases for cls in result.classes}
    assert asked["Scale"] > asked["Base"]  # the later class is paired with more objects
    # Left as it was, the comparison holds for a Base and a Scale, and for either and a
    # plain Parameter: caught, both ways round.
    swap = converted / "swap.py"
    swap.write_text(swap.read_text().replace("param_type(old) is param_type(new)",
                                             "type(old) is type(new)"))
    broken = verify_trees(original, converted, tp_sizes=(1,))
    assert broken.exit_code == 1
    assert {diff.case for diff in broken.differences} == {
        f"compare pkg/swap.py:2 {first} with {second}"
        for one, other in [("Scale", "Base"), ("Base", "a plain Parameter"),
                           ("Scale", "a plain Parameter")]
        for first, second in [(one, other), (other, one)]}


WITH_PARAMETER = {
    **SMALL_FAMILY,
    "pkg/fast.py": '''
        import torch
        from torch import nn
        from torch.nn import Parameter


        def plain(p):
            return type(p) is not nn.Parameter


        def exact(p):
            return Parameter == p.__class__


        def spelled(p):
            return type(p) == torch.nn.Parameter
    ''',
}


def test_type_compared_with_parameter_is_asked_of_every_parameter(tmp_path: Path) -> None:
    """``type(p) is not nn.Parameter`` (rewritten on its type operand to ``param_type``):
    a site of one object, asked of every built parameter with ``nn``, ``Parameter`` and
    ``torch`` bound from torch in both trees; left as it was, it answers differently for
    every converted parameter, and that is caught."""
    original, converted = _write_pair(tmp_path, WITH_PARAMETER)
    fast = converted / "fast.py"
    assert "param_type(p) is not nn.Parameter" in fast.read_text()
    result = verify_trees(original, converted, tp_sizes=(1,))
    assert result.exit_code == 0 and result.differences == []
    assert [site for site in result.check_sites if "fast" in site] == \
        ["pkg/fast.py:7", "pkg/fast.py:11", "pkg/fast.py:15"]
    assert not [skip for skip in result.check_sites_skipped if "fast" in skip]
    fast.write_text(fast.read_text().replace("param_type(p) is not nn.Parameter",
                                             "type(p) is not nn.Parameter"))
    broken = verify_trees(original, converted, tp_sizes=(1,))
    assert broken.exit_code == 1
    cases = [diff.case for diff in broken.differences]
    assert cases and all("pkg/fast.py:7" in case for case in cases), cases
