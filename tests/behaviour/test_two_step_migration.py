"""A migration finished by a second run: ``fixtures/engine`` converted first with
``allow-classes = ["PackedvLLMParameter"]`` (which keeps it and its bases, three of them as
shadows with a wrap and registered kinds), then again without it.

The second run puts each former shadow's factory, wrap and registrations in place of what
the first wrote beside the class (``analysis/earlier_shadows.py``); before, the wraps the
first run wrote clashed with the names the second generates, and every class of the
module stayed a class. The result must be what one run gives: every class a factory,
the independent verifier satisfied, every checkpoint of the loading battery loaded bit for
bit as by the original engine at every tensor-parallel rank, the same ``isinstance`` and
``type`` answers, and a third run with nothing to do.
"""

from __future__ import annotations

import ast
import shutil
import textwrap
from collections import Counter
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from .conftest import run_cli  # noqa: E402
from .linear_support import ENGINE_MODULES, KINDS, LAYOUT_IDS, LAYOUTS, SCHEME_NAMES  # noqa: E402
from .test_linear_equivalence import _load_and_compare  # noqa: E402
from .twin import copy_tree, each_tp_rank, load_twin, runtime_of  # noqa: E402

KEPT_FIRST = "PackedvLLMParameter"


@pytest.fixture(scope="module")
def two_step_trees(engine_dir, tmp_path_factory, assert_verified):
    """(original, converted in two runs)."""
    base = tmp_path_factory.mktemp("two-step")
    before = copy_tree(engine_dir, base / "before")
    after = copy_tree(engine_dir, base / "after")
    config = after / "pyproject.toml"
    config.write_text(textwrap.dedent(f"""\
        [tool.codemod]
        allow-classes = ["{KEPT_FIRST}"]
    """))
    assert run_cli(["apply", str(after / "minivllm")]) == 1
    first = (after / "minivllm" / "model_executor" / "parameter.py").read_text()
    assert f"class {KEPT_FIRST}(" in first and "class BasevLLMParameter(" in first
    assert "def wrap_base_vllm_parameter(" in first  # written for the shadow
    config.unlink()
    assert run_cli(["apply", str(after / "minivllm")]) == 1
    assert_verified(before, after, run_imports=True)
    return before, after


@pytest.fixture(scope="module")
def twin(two_step_trees):
    with load_twin(*two_step_trees, submodules=ENGINE_MODULES) as loaded:
        yield loaded


@pytest.fixture(autouse=True)
def _tp_back_to_single_rank(twin):
    twin.set_tp(0, 1)
    yield
    twin.set_tp(0, 1)


def test_every_class_became_a_factory(twin):
    for name, module_name in KINDS.items():
        new = getattr(twin.after.module(module_name), name)
        assert not isinstance(new, type) and callable(new), name
        assert hasattr(runtime_of(twin.after.module(module_name)).Features, name), name


def test_each_wrap_and_kind_written_once(two_step_trees):
    tree = ast.parse((two_step_trees[1] / "minivllm" / "model_executor" / "parameter.py").read_text())
    defined = Counter(s.name for s in tree.body if isinstance(s, ast.FunctionDef))
    registered = Counter(
        (s.value.func.id, s.value.args[0].attr) for s in tree.body
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
        and isinstance(s.value.func, ast.Name) and s.value.func.id.startswith("register_param_"))
    for wrap, feature in (("wrap_base_vllm_parameter", "BasevLLMParameter"),
                          ("wrap_column_vllm_parameter", "_ColumnvLLMParameter"),
                          ("wrap_row_vllm_parameter", "RowvLLMParameter")):
        assert defined[wrap] == 1, wrap
        assert registered["register_param_kind", feature] == 1, feature
        assert registered["register_param_fields", feature] == 1, feature


def test_a_third_run_has_nothing_to_do(two_step_trees, tmp_path):
    copy = shutil.copytree(two_step_trees[1], tmp_path / "again")
    assert run_cli(["apply", str(copy / "minivllm")]) == 0
    assert run_cli(["check", "--no-cache", str(copy / "minivllm")]) == 0


@pytest.mark.parametrize("fused", LAYOUTS, ids=LAYOUT_IDS)
@pytest.mark.parametrize("scheme", SCHEME_NAMES)
def test_checkpoint_loads_identically(twin, scheme, fused):
    generator = twin.before.module("minivllm.checkpoints")
    tensors = generator.make_checkpoint(scheme, seed=11, fused=fused).tensors
    for rank, size in each_tp_rank(twin):
        _load_and_compare(twin, tensors, scheme, "cpu", rank, size)


def test_the_same_text_as_one_run(two_step_trees, tmp_path):
    """Every file as one run writes it; the runtime module lists the same members (in the
    order the runs met them)."""
    one = copy_tree(two_step_trees[0], tmp_path / "one")
    assert run_cli(["apply", str(one / "minivllm")]) == 1
    two = two_step_trees[1]
    texts = {p.relative_to(one): p.read_text() for p in one.rglob("*.py")}
    assert texts.keys() == {p.relative_to(two) for p in two.rglob("*.py")}
    runtime = Path("minivllm/model_executor/parameter_features.py")
    for rel, text in texts.items():
        if rel != runtime:
            assert (two / rel).read_text() == text, rel
    members = [_features_members((root / runtime).read_text()) for root in (one, two)]
    assert members[0] == members[1] and set(members[0]) >= set(KINDS)


def _features_members(text: str) -> dict[str, str]:
    """``Features``' members of a runtime module: name -> value."""
    features = next(s for s in ast.parse(text).body if isinstance(s, ast.ClassDef) and s.name == "Features")
    return {s.targets[0].id: s.value.value for s in features.body
            if isinstance(s, ast.Assign) and isinstance(s.value, ast.Constant)}
