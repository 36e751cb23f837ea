"""Golden before/after trees, one directory per pattern under ``fixtures/golden``.

Each case copies ``input/`` to a temporary directory, runs ``codemod apply`` on it and
compares every file with ``expected/`` after ``scripts/verify_tree.py`` (which imports
every added import) found nothing to fix; then applies again and requires no byte to change
(idempotence). ``UPDATE_GOLDEN=1 pytest tests/golden`` rewrites ``expected/`` (review the
diff before committing it).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from codemod.cli import main

GOLDEN = Path(__file__).resolve().parents[2] / "fixtures" / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "input").is_dir())
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*.py"))
        if "__pycache__" not in p.parts
    }


@pytest.mark.parametrize("case", CASES)
def test_golden(case: str, tmp_path: Path, assert_verified) -> None:
    work = tmp_path / "tree"
    shutil.copytree(GOLDEN / case / "input", work)
    main(["apply", str(work)])
    # The independent verifier: no class-only use left, every added import runs.
    assert_verified(GOLDEN / case / "input", work, run_imports=True)
    expected_dir = GOLDEN / case / "expected"
    if UPDATE:
        shutil.rmtree(expected_dir, ignore_errors=True)
        shutil.copytree(work, expected_dir, ignore=shutil.ignore_patterns("__pycache__"))
    got, expected = _tree(work), _tree(expected_dir)
    assert sorted(got) == sorted(expected)
    for name in expected:
        assert got[name].decode() == expected[name].decode(), name
    # Idempotence: a second run changes nothing.
    main(["apply", str(work)])
    assert _tree(work) == got


@pytest.mark.parametrize("case", CASES)
def test_golden_compiles(case: str) -> None:
    for path in (GOLDEN / case / "expected").rglob("*.py"):
        compile(path.read_text(), str(path), "exec")
