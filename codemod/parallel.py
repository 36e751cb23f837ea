"""Map a pure function over files with forked worker processes, results in input order.

Why fork: the work items are cheap to name (a path) but their inputs are not (parsed
LibCST trees and a plan that points into them). A worker forked *after* the parent built
those inherits them copy-on-write, so only the item and its small result (new text,
counts) cross the process boundary; nothing is pickled on the way in. Where fork is not
available (Windows) or not worth it (one job, one item, little work), the same function
runs in the parent process, so ``jobs=1`` and ``jobs=N`` run exactly the same code on
exactly the same inputs and return the same values in the same order.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")

#: Below this much total work (the callers' weight: characters of source), forking costs
#: more than it saves. Tests set it to 0 to exercise the worker path on small trees.
MIN_PARALLEL_WEIGHT = 200_000

# What the forked workers inherit: (function, state). Set only while a pool is alive.
_INHERITED: tuple[Callable[[Any, Any], Any], Any] | None = None


def fork_available() -> bool:
    """Whether this platform can fork worker processes (not on Windows)."""
    return "fork" in multiprocessing.get_all_start_methods()


def _call(task: tuple[int, Any]) -> tuple[int, Any]:
    index, item = task
    assert _INHERITED is not None, "worker started without inherited state"
    fn, state = _INHERITED
    return index, fn(state, item)


def pmap(
    fn: Callable[[S, T], R],
    state: S,
    items: Sequence[T],
    jobs: int,
    weight: Callable[[T], int] | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[R]:
    """``[fn(state, item) for item in items]``, computed by up to ``jobs`` processes.

    ``fn`` must be pure (its result depends only on ``state`` and ``item``) and its
    result picklable. ``weight`` estimates an item's cost: the heaviest items start first
    (so one large file does not finish last, alone), and the total decides whether
    forking pays. ``progress(done)`` is called in the parent after each item.
    """
    total = sum(weight(item) for item in items) if weight is not None else None
    workers = min(jobs, len(items))
    serial = (
        workers <= 1
        or not fork_available()
        or (total is not None and total < MIN_PARALLEL_WEIGHT)
    )
    if serial:
        results: list[R] = []
        for item in items:
            results.append(fn(state, item))
            if progress is not None:
                progress(len(results))
        return results

    global _INHERITED
    order = list(range(len(items)))
    if weight is not None:
        order.sort(key=lambda i: -weight(items[i]))  # stable: ties keep input order
    out: list[Any] = [None] * len(items)
    _INHERITED = (fn, state)
    try:
        context = multiprocessing.get_context("fork")
        with context.Pool(workers) as pool:
            tasks = [(i, items[i]) for i in order]
            for done, (index, value) in enumerate(pool.imap_unordered(_call, tasks, chunksize=1), 1):
                out[index] = value
                if progress is not None:
                    progress(done)
    finally:
        _INHERITED = None
    return out
