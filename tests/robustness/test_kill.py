"""SIGKILL in the middle of ``codemod apply``: no file is ever half-written.

A tree of 100 convertible files (two packages, each a copy of the hierarchy module
and 49 modules that write its backing field) is converted once to learn the expected
bytes and when the writes happen. Then several runs on fresh copies are killed with
SIGKILL at random points: one while the engine still analyses, the others at random
delays after the first file of the run was replaced (or its first temp file appeared).
After every kill each file must be byte-identical to its original or to its converted
version, with its mode, and the only other thing allowed is a leftover temp file
(``.<name>.<random>.codemod-tmp``, created by ``atomic_writes`` next to its target): SIGKILL
cannot be caught, so one that lands between creating and renaming a temp file leaves
it. A temp file is never renamed over a target before it is complete and fsynced, and
discovery never reads it (it does not end in ``.py``).

``test_rerun_after_a_partial_write`` records a consequence: ``apply`` writes files in
path order, so a kill can leave a hierarchy module converted and a module that uses it
not; a second ``apply`` then no longer knows the classes and cannot finish the job.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from codemod.discovery import iter_python_files
from codemod.types import DEFAULT_EXCLUDES

from .trees import (
    APPLY_ALL_OR_NOTHING,
    HIERARCHY,
    codemod_command,
    process_env,
    run_main,
    snapshot,
)

PACKAGES, USES = 2, 49
#: Each package's hierarchy has its own field name (``_loader0``, ``_loader1``), so that
#: every use site belongs to one package whatever else the tree holds.
USE_FIELD = '''\
"""Use site {j}: writes the backing field of a property."""


def relayout(param, loader):
    param._loader{i} = loader
    return param
'''
TEMP = re.compile(r"^\.(?P<target>.+\.py)\.[\w-]+\.codemod-tmp$")


def _make_tree(root: Path) -> Path:
    tree = root / "tree"
    for i in range(PACKAGES):
        pkg = tree / f"pkg{i}"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "params.py").write_text(HIERARCHY.replace("loader", f"loader{i}"))
        for j in range(USES):
            (pkg / f"use{j:02d}.py").write_text(USE_FIELD.format(i=i, j=j))
    return tree


def _inodes(tree: Path) -> tuple[dict[str, int], bool]:
    """Inode per ``.py`` file, and whether a temp file exists (one scandir per package)."""
    inodes: dict[str, int] = {}
    temp = False
    for pkg in os.scandir(tree):
        for entry in os.scandir(pkg.path):
            if entry.name.endswith(".codemod-tmp"):
                temp = True
            else:
                inodes[entry.path] = entry.inode()
    return inodes, temp


def _started_writing(tree: Path, original: dict[str, int]) -> bool:
    inodes, temp = _inodes(tree)
    return temp or inodes != original


class Run:
    """One ``codemod apply`` on a copy of the tree, to be killed per ``plan``."""

    def __init__(self, root: Path, source: Path, plan: str, delay: float) -> None:
        self.tree = root / "tree"
        shutil.copytree(source, self.tree)
        self.plan, self.delay = plan, delay
        self.original = _inodes(self.tree)[0]
        self.proc = subprocess.Popen([*codemod_command(), "apply", "tree"], cwd=root,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     env=process_env())
        self.started = time.monotonic()
        self.kill_at: float | None = self.started + delay if plan == "analysis" else None
        self.killed = False

    def poll(self) -> bool:
        """Advance; True once the process has ended."""
        if self.proc.poll() is not None:
            return True
        now = time.monotonic()
        if self.kill_at is None and _started_writing(self.tree, self.original):
            self.kill_at = now + self.delay
        if self.kill_at is not None and now >= self.kill_at:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
            self.killed = True
            return True
        return False


@pytest.fixture(scope="module")
def expected(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The tree before and after an uninterrupted run, and how long its writes took."""
    root = tmp_path_factory.mktemp("kill-source")
    source = _make_tree(root / "source")
    before = snapshot(source)
    work = tmp_path_factory.mktemp("kill-expected")
    run = Run(work, source, "never", 0.0)
    first_write = None
    while run.proc.poll() is None:
        if first_write is None and _started_writing(run.tree, run.original):
            first_write = time.monotonic() - run.started
        time.sleep(0.001)
    total = time.monotonic() - run.started
    assert run.proc.returncode == 1, run.proc.stderr.read()  # type: ignore[union-attr]
    after = snapshot(run.tree)
    converted = {rel for rel in after if before.get(rel) != after[rel]}
    # every params.py and use module, and each package's new runtime module
    assert len(converted) == PACKAGES * (USES + 2)
    return {"source": source, "before": before, "after": after, "converted": converted,
            "first_write": first_write if first_write is not None else total * 0.9,
            "total": total}


def test_sigkill_never_leaves_a_half_written_file(
    expected: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    write_phase = max(expected["total"] - expected["first_write"], 0.05)
    plans = [
        ("analysis", rng.uniform(0.2, 0.8) * expected["first_write"]),
        ("first-write", 0.0),  # as soon as the first temp file or replaced file shows
        *[("write-phase", rng.uniform(0.0, write_phase)) for _ in range(2)],
    ]
    runs = [Run(tmp_path / f"run{i}", expected["source"], plan, delay)
            for i, (plan, delay) in enumerate(plans)]
    pending = list(runs)
    deadline = time.monotonic() + 600
    while pending:
        pending = [run for run in pending if not run.poll()]
        assert time.monotonic() < deadline, "a run did not end"
        time.sleep(0.001)

    before, after = expected["before"], expected["after"]
    report = []
    for run in runs:
        now = snapshot(run.tree)
        new = old = 0
        temps = []
        for rel, entry in now.items():
            name = rel.rsplit("/", 1)[-1]
            match = TEMP.match(name)
            if match:
                temps.append(rel)
                # The target of a leftover temp file is intact (checked below as well).
                target = rel.rsplit("/", 1)[0] + "/" + match["target"]
                assert now.get(target) in (before.get(target), after.get(target))
                continue
            assert rel in before or rel in after, f"seed {seed}, {run.plan}: unexpected {rel}"
            if entry == before.get(rel):
                old += rel in expected["converted"]
            elif entry == after[rel]:
                new += 1
            else:
                pytest.fail(f"seed {seed}, {run.plan} +{run.delay:.3f}s: {rel} is neither "
                            "the original nor the converted file")
        assert set(before) <= set(now), f"seed {seed}: a file disappeared"
        # A runtime module not written yet is absent: still "original".
        old += sum(1 for rel in expected["converted"] if rel not in before and rel not in now)
        assert old + new == len(expected["converted"])
        # Discovery never picks up a temp file.
        assert not [p for p in iter_python_files([run.tree], DEFAULT_EXCLUDES)
                    if TEMP.match(p.name)]
        report.append(f"{run.plan}+{run.delay:.3f}s: killed={run.killed} "
                      f"converted={new} original={old} temp files={len(temps)}")
    with capsys.disabled():
        print(f"\n[kill test, seed {seed}] " + "; ".join(report))


def _write_order(source: Path, work: Path, capsys: pytest.CaptureFixture[str],
                 monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files an uninterrupted ``apply`` replaces, in the order it replaces them."""
    import codemod.atomic_writes

    tree = work / "tree"
    shutil.copytree(source, tree)
    order: list[str] = []
    real_replace = os.replace

    def replace(src: str, dst: object) -> None:
        target = Path(os.fspath(dst))  # type: ignore[arg-type]
        order.append(target.relative_to(tree.resolve()).as_posix())
        real_replace(src, dst)  # type: ignore[arg-type]

    with monkeypatch.context() as patch:
        patch.setattr(codemod.atomic_writes.os, "replace", replace)
        assert run_main(["apply", "tree"], work, capsys)[0] == 1
    return order


@pytest.mark.xfail(not APPLY_ALL_OR_NOTHING, strict=True, reason=(
    "apply writes in path order, so a kill can leave pkg0/params.py converted and its "
    "use sites not; a rerun no longer sees the classes and leaves them unconverted. "
    "Writing the modules that define converted classes last (after their use sites) "
    "makes a rerun finish the job (see the report)"))
@pytest.mark.parametrize("written", [1, 60], ids=["first-file", "past-the-first-package"])
def test_rerun_after_a_partial_write(
    expected: dict, written: int, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What a kill after ``written`` replaced files leaves, then ``apply`` again."""
    order = _write_order(expected["source"], tmp_path / "order", capsys, monkeypatch)
    assert sorted(order) == sorted(expected["converted"])
    tree = tmp_path / "tree"
    shutil.copytree(expected["source"], tree)
    for rel in order[:written]:
        (tree / rel).write_bytes(expected["after"][rel][0])
    run_main(["apply", "tree"], tmp_path, capsys)
    now = snapshot(tree)
    assert {k: now[k] for k in expected["after"]} == expected["after"]
