"""Shared test setup. Keep torch out of here: only tests/behaviour needs it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURES_DIR = REPO_ROOT / "fixtures"
ENGINE_DIR = FIXTURES_DIR / "engine"

# Make ``import codemod`` work under a bare ``pytest`` too, not only ``python -m pytest``
# (the package is not necessarily installed into the environment).
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository checkout."""
    return REPO_ROOT


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """``fixtures/``: golden pairs and the mini engine."""
    return FIXTURES_DIR


@pytest.fixture(scope="session")
def engine_dir() -> Path:
    """``fixtures/engine``: the directory that contains the ``minivllm`` package."""
    return ENGINE_DIR
