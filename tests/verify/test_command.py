"""``codemod verify`` through the CLI: the table, JSON and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from codemod.cli import main  # noqa: E402


def test_json_output_lists_every_class_with_its_counts(
        engine_pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    original, converted = engine_pair
    capsys.readouterr()
    assert main(["verify", "--format", "json", str(original), str(converted)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["exit_code"] == 0 and data["difference_count"] == 0
    assert data["cases"] == sum(cls["cases"] for cls in data["classes"]) > 1000
    assert {cls["name"] for cls in data["classes"]} >= {"BasevLLMParameter", "PackedvLLMParameter"}
    assert "minivllm.model_executor.parameter" in data["real_modules"]
    assert "minivllm.distributed" in data["stubbed_modules"]  # its tp getters are driven


def test_unconverted_pair_exits_2(engine_pair: tuple[Path, Path],
                                  capsys: pytest.CaptureFixture[str]) -> None:
    original, _ = engine_pair
    assert main(["verify", str(original), str(original)]) == 2
    assert "no runtime module" in capsys.readouterr().err


def test_json_stays_parseable_when_engine_modules_print(
        engine_pair: tuple[Path, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    from tests.verify.conftest import planted

    original, converted = engine_pair
    noisy = planted(converted, tmp_path, ("import logging\n",
                                          "import logging\nprint('engine says hello')\n"))
    capsys.readouterr()
    assert main(["verify", "--format", "json", str(original), str(noisy)]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["exit_code"] == 0
    assert "engine says hello" in captured.err
