"""``codemod check`` on the vLLM-shaped fixture engine, cross-checked against ``apply``.

Before: one CM001 per class ``apply`` converts and one CM002 per class-style check it
rewrites (the engine's own counts). After ``apply``: clean. Reintroducing a subclass or
an ``isinstance`` on a converted name: exit 1 again, with CM003/CM004.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from codemod import api
from codemod.cli import main
from codemod.types import Options

from .helpers import run

PARAMETER_MODULE = "minivllm.model_executor.parameter"


@pytest.fixture(scope="module")
def before(engine_dir, tmp_path_factory) -> Path:
    return Path(shutil.copytree(engine_dir, tmp_path_factory.mktemp("engine") / "before",
                                ignore=shutil.ignore_patterns("__pycache__", "*.pyc")))


@pytest.fixture(scope="module")
def after_once(before, tmp_path_factory) -> Path:
    root = Path(shutil.copytree(before, tmp_path_factory.mktemp("engine") / "after"))
    assert main(["apply", str(root)]) == 1
    return root


@pytest.fixture
def after(after_once, tmp_path) -> Path:
    return Path(shutil.copytree(after_once, tmp_path / "after"))


def _any_layer_module(root: Path) -> Path:
    """A module of the engine other than the parameter module (to add code to)."""
    candidates = sorted(p for p in root.rglob("*.py")
                        if p.name != "__init__.py" and p.name != "parameter.py")
    assert candidates
    return candidates[0]


def test_before_apply_one_finding_per_class_and_per_check(before, capsys):
    from codemod.check.planned import plan_tree

    engine = api.run([before], Options())
    converted = {p.name for p in engine.plan.converted().values()}
    assert set(plan_tree([before], Options()).plan.converted()) == set(engine.plan.converted())
    counts = engine.counts()
    result = run(capsys, "check", "--format", "json", before)
    assert result.rc == 1
    findings = json.loads(result.out)
    cm001 = [f for f in findings if f["code"] == "CM001"]
    cm002 = [f for f in findings if f["code"] == "CM002"]
    assert {re.search(r"`(\w+)`", f["message"])[1] for f in cm001} == converted
    assert len(cm001) == len(converted) == counts["class"]
    assert len(cm002) == counts["isinstance"] + counts["type-check"] + counts["issubclass"]
    assert {f["code"] for f in findings} == {"CM001", "CM002"}
    assert all(f["fixable"] for f in findings)
    for f in cm002:
        line = Path(f["path"]).read_text().splitlines()[f["line"] - 1]
        assert re.search(r"isinstance|issubclass|type\(|__class__", line[f["column"] - 1:]), line


def test_after_apply_clean(after, capsys):
    result = run(capsys, "check", after)
    assert (result.rc, result.out) == (0, "")


def test_reintroduced_subclass(after, capsys):
    module = _any_layer_module(after)
    text = module.read_text()
    module.write_text(text + (
        f"\n\nfrom {PARAMETER_MODULE} import PackedvLLMParameter as _P\n\n\n"
        "class MyPacked(_P):\n    pass\n"
    ))
    result = run(capsys, "check", after)
    assert result.rc == 1
    line = len(text.splitlines()) + 6
    assert result.findings() == [(module.name, line, "CM003")]


def test_reintroduced_isinstance(after, capsys):
    module = _any_layer_module(after)
    text = module.read_text()
    module.write_text(text + (
        f"\n\nimport {PARAMETER_MODULE} as _pm\n\n\n"
        "def _is_packed(p):\n    return isinstance(p, _pm.PackedvLLMParameter)\n"
    ))
    result = run(capsys, "check", after)
    assert result.rc == 1
    assert result.findings() == [(module.name, len(text.splitlines()) + 7, "CM004")]
    assert "has_param_feature(obj, Features.PackedvLLMParameter)" in result.out


def test_check_changes_nothing(before, capsys):
    files = {p: p.read_bytes() for p in before.rglob("*") if p.is_file()}
    run(capsys, "check", before)
    assert {p: p.read_bytes() for p in before.rglob("*") if p.is_file()} == files


def _golden_inputs() -> list[Path]:
    golden = Path(__file__).resolve().parents[2] / "fixtures" / "golden"
    return sorted(p / "input" for p in golden.iterdir() if (p / "input").is_dir())


@pytest.mark.parametrize("root", _golden_inputs(), ids=lambda p: p.parent.name)
def test_check_plans_like_apply(root):
    """``check`` plans without building texts; its decisions must be ``apply``'s."""
    from codemod.check.planned import plan_tree

    def decisions(plan):
        return {q: (p.converted, p.refusal.reason if p.refusal else None)
                for q, p in plan.classes.items()}

    assert decisions(plan_tree([root], Options()).plan) == decisions(api.run([root], Options()).plan)
