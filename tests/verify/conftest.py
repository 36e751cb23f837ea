"""A converted copy of the fixture engine, made once per session (``codemod apply``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ENGINE = REPO / "fixtures" / "engine"


def copy_engine(destination: Path) -> Path:
    """A copy of ``fixtures/engine`` (no bytecode); its ``minivllm`` package directory."""
    shutil.copytree(ENGINE, destination, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return destination / "minivllm"


@pytest.fixture(scope="session")
def engine_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(original, converted): the fixture engine's package and a converted copy of it."""
    from codemod.cli import main

    root = tmp_path_factory.mktemp("verify")
    original = copy_engine(root / "original")
    converted = copy_engine(root / "converted")
    assert main(["apply", str(converted)]) == 1
    return original, converted


def planted(converted: Path, tmp_path: Path, edit: tuple[str, str], count: int = 1) -> Path:
    """A copy of the converted engine with one edit in ``model_executor/parameter.py``
    (``old`` replaced by ``new``, which must occur ``count`` times)."""
    target = tmp_path / "planted" / "minivllm"
    shutil.copytree(converted, target, ignore=shutil.ignore_patterns("__pycache__"))
    path = target / "model_executor" / "parameter.py"
    text = path.read_text()
    old, new = edit
    assert text.count(old) == count, f"{old!r} occurs {text.count(old)} times"
    path.write_text(text.replace(old, new))
    return target
