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

import contextlib
import gc
import multiprocessing
from collections.abc import Callable, Iterator, Sequence
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


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the cyclic garbage collector less often while the engine works.

    Parsing and transforming allocate millions of CST nodes, and every 700 allocations
    CPython's collector walks the young ones (and, now and then, the whole heap): about
    a fifth of the run. The nodes form no reference cycles worth collecting early, so
    the first generation's threshold goes up for the duration and comes back after.
    """
    thresholds = gc.get_threshold()
    gc.set_threshold(max(thresholds[0], _GC_THRESHOLD), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


#: Allocations between two young-generation collections during a run (CPython: 700).
_GC_THRESHOLD = 100_000


def _without_collector() -> None:
    """A worker runs without the cyclic garbage collector: what it inherits is never
    garbage, and what an item allocates (parsed trees, mostly without cycles) is freed
    by reference counting when the item is done. Its collections walked the inherited
    heap and touched its pages (copying them, copy-on-write): ~4% of the workers' CPU
    on vLLM 0.34, with the same peak memory. Results are the same either way."""
    gc.disable()


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
    global _INHERITED
    total = sum(weight(item) for item in items) if weight is not None else None
    workers = min(jobs, len(items))
    serial = (
        workers <= 1
        or not fork_available()
        or (total is not None and total < MIN_PARALLEL_WEIGHT)
    )
    order = list(range(len(items)))
    if weight is not None:
        order.sort(key=lambda i: -weight(items[i]))  # stable: ties keep input order
    out: list[Any] = [None] * len(items)
    if serial:
        for done, index in enumerate(order, 1):
            out[index] = fn(state, items[index])
            if progress is not None:
                progress(done)
        return out

    context = multiprocessing.get_context("fork")
    _INHERITED = (fn, state)
    try:
        with context.Pool(workers, initializer=_without_collector) as pool:
            tasks = [(i, items[i]) for i in order]
            for done, (index, value) in enumerate(pool.imap_unordered(_call, tasks, chunksize=1), 1):
                out[index] = value
                if progress is not None:
                    progress(done)
    finally:
        _INHERITED = None
    return out


class Background:
    """``fn()`` computed by a forked process while the caller goes on; ``result()``
    waits for it. Without fork, with ``jobs`` <= 1, or if the process dies, ``fn`` runs
    in the caller when the result is asked for: the value is the same either way (``fn``
    must be pure and its result picklable). Like a pool worker, the forked process runs
    without the cyclic collector (``_without_collector``): the class-value proofs of
    vLLM 0.34 took ~15% less CPU there."""

    def __init__(self, fn: Callable[[], Any], jobs: int) -> None:
        self._fn = fn
        self._process: Any = None
        self._reader: Any = None
        if jobs > 1 and fork_available():
            context = multiprocessing.get_context("fork")
            self._reader, writer = context.Pipe(duplex=False)
            self._process = context.Process(target=_send_result, args=(fn, writer), daemon=True)
            self._process.start()
            writer.close()

    def pending(self) -> bool:
        """Whether a forked process is still computing the value (the caller has time)."""
        return self._process is not None and not self._reader.poll()

    def result(self) -> Any:
        """The value of ``fn()``; an exception it raised is raised here."""
        if self._process is None:
            return self._fn()
        try:
            ok, value = self._reader.recv()
        except (EOFError, OSError):
            ok, value = True, self._fn()  # the process died: compute it here
        finally:
            self._reader.close()
            self._process.join()
            self._process = None
        if not ok:
            raise value
        return value

    def discard(self) -> None:
        """The value is not wanted: stop the process (nothing is computed here)."""
        if self._process is not None:
            self._process.terminate()
            self._process.join()
            self._reader.close()
            self._process = None


def _send_result(fn: Callable[[], Any], writer: Any) -> None:
    _without_collector()  # as in a pool worker: the inherited heap stays untouched
    try:
        message: tuple[bool, Any] = (True, fn())
    except BaseException as exc:  # noqa: BLE001 - re-raised in the parent
        message = (False, exc)
    writer.send(message)
    writer.close()
