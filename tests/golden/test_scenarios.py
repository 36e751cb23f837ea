"""Behaviour of each golden case, before and after: the same script, the same output.

A case directory may hold ``scenario.py``: it imports the case's package, exercises it
(construction, loaders, former isinstance/type answers, attribute semantics) and prints
what it observes. It runs once against ``input/`` (the subclass style) and once against
``expected/`` (the converted code); the two outputs must be identical, line for line.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("torch")

GOLDEN = Path(__file__).resolve().parents[2] / "fixtures" / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "scenario.py").is_file())


def _run(tree: Path, script: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1",
               PYTHONWARNINGS="ignore")
    return subprocess.run(
        [sys.executable, str(script)], cwd=tree, env=env, capture_output=True, text=True,
        timeout=300,
    )


@pytest.mark.parametrize("case", CASES)
def test_same_behaviour_before_and_after(case: str) -> None:
    script = GOLDEN / case / "scenario.py"
    with ThreadPoolExecutor(2) as pool:
        before, after = pool.map(
            lambda side: _run(GOLDEN / case / side, script), ["input", "expected"]
        )
    assert before.returncode == 0, before.stderr
    assert after.returncode == 0, after.stderr
    assert before.stdout.strip(), "the scenario printed nothing"
    assert after.stdout.splitlines() == before.stdout.splitlines()


def test_scenarios_exist_for_converting_cases() -> None:
    """Every case whose expected tree differs from its input has a scenario."""
    missing = []
    for case_dir in sorted(GOLDEN.iterdir()):
        if not (case_dir / "input").is_dir():
            continue
        changed = any(
            (case_dir / "expected" / p.relative_to(case_dir / "input")).read_bytes() != p.read_bytes()
            for p in (case_dir / "input").rglob("*.py")
        )
        if changed and not (case_dir / "scenario.py").is_file():
            missing.append(case_dir.name)
    assert not missing, f"converting cases without a behaviour scenario: {missing}"
