"""Fixtures shared by the behaviour suite: one conversion of ``fixtures/engine`` per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from . import tally
from .twin import copy_tree


def run_cli(argv: list[str]) -> int:
    """``codemod.cli.main(argv)``; a ``SystemExit`` from click counts as its exit code."""
    from codemod.cli import main

    try:
        return main(argv)
    except SystemExit as exc:  # pragma: no cover - main() is meant to return
        return exc.code if isinstance(exc.code, int) else 2


@pytest.fixture(scope="session")
def converted_trees(engine_dir, tmp_path_factory, assert_verified) -> tuple[Path, Path]:
    """(before, after): two copies of ``fixtures/engine``; ``after`` converted in place,
    then checked by ``scripts/verify_tree.py`` (every added import executed).

    Shared by every behaviour module; nothing may write to either tree.
    """
    base = tmp_path_factory.mktemp("conversion")
    before = copy_tree(engine_dir, base / "before")
    after = copy_tree(engine_dir, base / "after")
    rc = run_cli(["apply", str(after)])
    assert rc == 1, f"codemod apply should report changes (1), returned {rc}"
    assert_verified(before, after, run_imports=True)
    return before, after


@pytest.fixture(scope="session", autouse=True)
def _single_torch_thread():
    """Run torch on one intra-op thread while the behaviour suite runs.

    Every tensor here is tiny: extra OpenMP threads only add overhead, and on a busy
    2-core machine their spinning made a 3 x 64 matmul take milliseconds.
    """
    try:
        import torch
    except ImportError:  # the behaviour modules skip themselves
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def pytest_terminal_summary(terminalreporter) -> None:
    lines = tally.summary_lines()
    if lines:
        terminalreporter.section("behaviour comparisons")
        for line in lines:
            terminalreporter.write_line(line)
