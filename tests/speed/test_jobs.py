"""``--jobs 1`` and ``--jobs 2`` give byte-identical results on every fixture tree.

The worker path is forced (``parallel.MIN_PARALLEL_WEIGHT = 0``: the fixture trees are far
below the size where forking pays) and checked to have run in other processes.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from codemod import api, parallel
from codemod.cli import main
from codemod.pipeline import workers as worker_stage
from codemod.types import Options

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
TREES = sorted(p / "input" for p in (FIXTURES / "golden").iterdir() if (p / "input").is_dir())
TREES.append(FIXTURES / "engine")
IDS = [p.parent.name if p.name == "input" else p.name for p in TREES]

pytestmark = pytest.mark.skipif(not parallel.fork_available(), reason="needs fork")


@pytest.fixture(autouse=True)
def always_fork(monkeypatch):
    monkeypatch.setattr(parallel, "MIN_PARALLEL_WEIGHT", 0)


def snapshot(result: api.RunResult) -> list[tuple[object, ...]]:
    return [
        (str(f.path), f.outcome, f.old_text, f.new_text, f.error, f.refusals, f.counts)
        for f in result.files
    ] + [("refusals", tuple(r.render() for r in result.refusals), result.parsed)]


@pytest.mark.parametrize("tree", TREES, ids=IDS)
def test_run_same_with_one_and_two_jobs(tree, tmp_path, monkeypatch):
    pids = tmp_path / "pids"
    convert_one = worker_stage._convert_one

    batch_size = [0]  # of the pmap call running now; forked workers inherit it

    def spy(state, path):
        if batch_size[0] > 1 or jobs_now[0] == 1:
            with open(pids, "a") as handle:
                handle.write(f"{os.getpid()}\n")
        return convert_one(state, path)

    monkeypatch.setattr(worker_stage, "_convert_one", spy)
    batches: list[int] = []
    pmap = parallel.pmap

    def counting(fn, state, items, *args, **kwargs):
        batches.append(len(items))
        batch_size[0] = len(items)
        return pmap(fn, state, items, *args, **kwargs)

    monkeypatch.setattr(parallel, "pmap", counting)
    jobs_now = [1]
    one = api.run([tree], Options(jobs=1))
    assert set(pids.read_text().split()) == {str(os.getpid())}
    pids.unlink()
    batches.clear()
    jobs_now[0] = 2
    two = api.run([tree], Options(jobs=2))
    assert snapshot(one) == snapshot(two)
    # A batch of one file runs in the parent (nothing to share), so only batches of
    # several files are recorded: they must have run in workers.
    workers = set(pids.read_text().split()) if pids.exists() else set()
    if max(batches) > 1:
        assert str(os.getpid()) not in workers, "the conversion did not run in workers"


@pytest.mark.parametrize("tree", TREES, ids=IDS)
def test_cli_diff_and_writes_same_with_one_and_two_jobs(tree, tmp_path, capsys):
    codes, diffs, trees = [], [], []
    for jobs in ("1", "2"):
        codes.append(main(["apply", "--dry-run", "--jobs", jobs, str(tree)]))
        diffs.append(capsys.readouterr().out)
        work = tmp_path / f"jobs{jobs}"
        shutil.copytree(tree, work)
        main(["apply", "--jobs", jobs, str(work)])
        capsys.readouterr()
        trees.append({
            str(p.relative_to(work)): p.read_bytes()
            for p in sorted(work.rglob("*.py")) if "__pycache__" not in p.parts
        })
    assert codes[0] == codes[1]
    assert diffs[0] == diffs[1]
    assert trees[0] == trees[1]


def test_pmap_keeps_input_order_and_runs_in_parallel():
    items = list(range(20))
    weights = {i: (i * 7) % 5 for i in items}  # heaviest first, finishing out of order
    out = parallel.pmap(_square_with_pid, 3, items, jobs=2, weight=weights.__getitem__)
    assert [value for value, _ in out] == [3 * i * i for i in items]
    assert os.getpid() not in {pid for _, pid in out}


def _collector_enabled(state, item):
    import gc

    return gc.isenabled(), os.getpid()


def test_pmap_workers_run_without_the_cyclic_collector_and_the_parent_keeps_it():
    import gc

    out = parallel.pmap(_collector_enabled, None, list(range(4)), jobs=2)
    assert {enabled for enabled, _ in out} == {False}
    assert os.getpid() not in {pid for _, pid in out}
    assert gc.isenabled()


def test_pmap_serial_when_one_job_or_one_item():
    assert parallel.pmap(_square_with_pid, 1, [4], jobs=8) == [(16, os.getpid())]
    assert parallel.pmap(_square_with_pid, 1, [1, 2], jobs=1) == [(1, os.getpid()), (4, os.getpid())]


def test_pmap_reports_progress_in_the_parent():
    seen: list[int] = []
    parallel.pmap(_square_with_pid, 1, list(range(5)), jobs=2, progress=seen.append)
    assert seen == [1, 2, 3, 4, 5]


def _square_with_pid(factor: int, item: int) -> tuple[int, int]:
    return factor * item * item, os.getpid()


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("tree", TREES, ids=IDS)
def test_settle_plan_without_converting_plans_as_run(tree, jobs):
    """``check``'s view (leftovers only, no conversion) is ``apply``'s plan."""
    applied = api.run([tree], Options(jobs=jobs))
    result = api.read_tree([tree], Options(jobs=jobs))
    index = api.analyse(result.sources, result)
    plan, _, conversions = api.settle_plan(result, index, Options(jobs=jobs), convert=False)
    assert [r.render() for r in plan.refusals()] == [r.render() for r in applied.refusals]
    assert sorted(plan.converted()) == sorted(applied.plan.converted())
    assert all(done.conversion is None for done in conversions.values())
