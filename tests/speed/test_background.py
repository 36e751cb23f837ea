"""``parallel.Background``: the class-value proofs run in a forked process while the
parent plans; the value (or the exception) is the one computing it inline gives."""

from __future__ import annotations

import os

import pytest

from codemod import parallel


def _pid_and_square() -> tuple[int, int]:
    return os.getpid(), 7 * 7


def _fails() -> None:
    raise ValueError("proof failed")


@pytest.mark.skipif(not parallel.fork_available(), reason="no fork on this platform")
def test_background_computes_in_another_process() -> None:
    pid, value = parallel.Background(_pid_and_square, jobs=2).result()
    assert value == 49
    assert pid != os.getpid()


def test_one_job_computes_inline() -> None:
    pid, value = parallel.Background(_pid_and_square, jobs=1).result()
    assert (pid, value) == (os.getpid(), 49)


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_exception_reaches_the_caller(jobs: int) -> None:
    with pytest.raises(ValueError, match="proof failed"):
        parallel.Background(_fails, jobs=jobs).result()


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_discarded_result_is_never_computed_here(jobs: int) -> None:
    calls: list[int] = []

    def record() -> None:
        calls.append(1)

    parallel.Background(record, jobs=jobs).discard()
    assert calls == []


def test_pending_while_computing_elsewhere_only() -> None:
    assert not parallel.Background(_pid_and_square, jobs=1).pending()
    if parallel.fork_available():
        background = parallel.Background(_pid_and_square, jobs=2)
        background.result()
        assert not background.pending()


@pytest.mark.skipif(not parallel.fork_available(), reason="needs fork")
def test_the_forked_process_runs_without_the_cyclic_collector() -> None:
    """Like a pool worker, the process leaves the heap it inherited untouched (a
    collection would walk it and copy its pages); the caller's collector is unchanged."""
    import gc

    assert parallel.Background(gc.isenabled, jobs=2).result() is False
    assert gc.isenabled()
