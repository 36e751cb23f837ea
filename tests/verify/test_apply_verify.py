"""``codemod apply --verify``: verifies what it wrote; on a difference the tree is restored."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from codemod.cli import main  # noqa: E402
from tests.behaviour.twin import snapshot  # noqa: E402
from tests.verify.conftest import copy_engine  # noqa: E402


def test_apply_verify_keeps_a_conversion_that_verifies(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    package = copy_engine(tmp_path / "engine")
    before = snapshot(package)
    assert main(["apply", "--verify", str(package)]) == 1  # changes made, verified
    after = snapshot(package)
    assert after != before
    assert "model_executor/parameter_features.py" in after
    assert "0 difference(s)" in capsys.readouterr().err


def test_apply_verify_restores_the_tree_on_a_difference(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import codemod.verify.command as command

    package = copy_engine(tmp_path / "engine")
    before = snapshot(package)
    seen: list[tuple[Path, Path]] = []

    def differing(original: Path, converted: Path, *args: object, **kwargs: object):
        seen.append((original, converted))
        assert snapshot(original) == before  # the rebuilt original is the tree as it was
        assert snapshot(converted) != before
        return 1, None

    monkeypatch.setattr(command, "run_verify", differing)
    assert main(["apply", "--verify", str(package)]) == 1
    assert seen
    assert snapshot(package) == before


def test_apply_verify_puts_its_result_in_the_report(tmp_path: Path) -> None:
    """The report's ``verify`` section is what verify found on the written tree (null
    without ``--verify``), and the report still validates against its schema."""
    import json

    import jsonschema

    schema = json.loads((Path(__file__).parents[2] / "docs" / "report.schema.json").read_text())
    package = copy_engine(tmp_path / "engine")
    report_path = tmp_path / "report.json"
    assert main(["apply", "--verify", "--report", str(report_path), str(package)]) == 1
    report = json.loads(report_path.read_text())
    jsonschema.Draft202012Validator(schema).validate(report)
    verified = report["verify"]
    assert verified is not None and verified["exit_code"] == 0
    assert verified["cases"] > 0 and verified["tensors"] > 0
    assert not any(cls["differences"] for cls in verified["classes"])
