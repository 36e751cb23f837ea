"""Shared test setup. Keep torch out of here: only tests/behaviour needs it."""

from __future__ import annotations

import os
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

# ``codemod check`` caches its result per tree: tests that patch the engine and check the
# same tree twice must see the engine run. tests/check/test_check_cache.py turns it on.
os.environ.setdefault("CODEMOD_NO_CACHE", "1")


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



def _assert_verified(original: Path, converted: Path, run_imports: bool = False) -> None:
    """``scripts/verify_tree.py`` finds nothing to fix in ``converted`` (``original`` after
    ``codemod apply``): no class-only use of a converted name, every added import resolves
    (and with ``run_imports``, executes), every changed file compiles."""
    from scripts.verify_tree import verify

    report = verify(original, converted, run_imports=run_imports)
    assert report.ok, "\n".join(report.problems)


@pytest.fixture(scope="session")
def assert_verified():
    """The independent verifier as an assertion: ``assert_verified(original, converted)``."""
    return _assert_verified
